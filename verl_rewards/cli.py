"""The verl-rewards command: doctor (is the plugin active here?), demo, score (offline), prepare (datasets to verl
parquet), simulate (tau2 or tau-bench normal mode against served models), eval (pass^k and tau2 statistics of verl
dumps / tau2 results / tau-bench results), check (a main_ppo config, as a run's start-up would), smoke (verl's
main_ppo on the CPU with a tiny model), export-sft (verl multi-turn SFT data from gold or successful runs)."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from .engine.client import Endpoint


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit code 2), like every other error of this command."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _fail(command: str, exc: BaseException) -> int:
    """Print ``verl-rewards <command>: error: <message>`` as one line on stderr; exit code 2."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    print(f"verl-rewards {command}: error: {message}", file=sys.stderr)
    return 2


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def doctor() -> int:
    """Print whether the manager and both metrics hooks are installed in this environment; 0 if all are."""
    checks: list[tuple[str, bool, str]] = []
    print("verl-rewards doctor")
    for dist in ("verl-rewards", "verl", "torch", "ray", "transformers", "TransferQueue"):
        print(f"  {dist:<14} {_version(dist)}")
    eps = [ep for ep in importlib.metadata.entry_points(group="verl.plugins") if ep.value.startswith("verl_rewards")]
    checks.append(("entry point verl.plugins", bool(eps), eps[0].value if eps else "missing: reinstall the package"))
    raw_policy = os.getenv("VERL_USE_EXTERNAL_PLUGINS", "auto")
    policy = raw_policy.strip().lower()  # as verl/__init__.py reads it
    ep_name = eps[0].name if eps else "verl_rewards"
    allowed = policy == "auto" or (policy != "none" and ep_name in {p.strip() for p in policy.split(",")})
    fix = (
        f"unset VERL_USE_EXTERNAL_PLUGINS (or set it to auto, or add {ep_name} to its list) in every process of the run"
    )
    checks.append(("VERL_USE_EXTERNAL_PLUGINS", allowed, raw_policy if allowed else f"{raw_policy} (fix: {fix})"))

    import verl  # noqa: F401 - runs the entry points

    loaded = "verl_rewards.plugin" in sys.modules
    if loaded:
        detail = "yes"
    elif not allowed:
        detail = "no: VERL_USE_EXTERNAL_PLUGINS keeps verl from loading it"
    elif not eps:
        detail = "no: the entry point is missing (reinstall the package)"
    else:
        detail = "no: loading it failed; verl logs why at debug level (VERL_LOGGING_LEVEL=DEBUG)"
    checks.append(("plugin loaded by `import verl`", loaded, detail))
    from . import plugin

    plugin.install()  # what follows checks our code; without verl loading the plugin, a run would have none of it
    first_plugin_check = len(checks)
    try:
        from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls

        cls = get_reward_manager_cls("contribution")
        checks.append(("reward manager 'contribution'", True, f"{cls.__module__}.{cls.__name__}"))
    except Exception as exc:  # noqa: BLE001 - report, don't crash
        checks.append(("reward manager 'contribution'", False, f"{type(exc).__name__}: {exc}"))
    try:
        from .verl_compat import agent_loop_registry

        for loop_name in ("tau2_agent", "tau_bench_agent"):
            entry = agent_loop_registry().get(loop_name)
            checks.append(
                (f"agent loop '{loop_name}'", entry is not None, (entry or {}).get("_target_", "not registered"))
            )
    except Exception as exc:  # noqa: BLE001 - report, don't crash
        checks.append(("agent loop 'tau2_agent'", False, f"{type(exc).__name__}: {exc}"))
    try:
        from .metrics import compute_data_metrics_hooked

        hooked = compute_data_metrics_hooked()
        checks.append(("metrics hook, legacy trainer (use_v1=False)", hooked, "compute_data_metrics wrapped"))
        from .metrics import validation_hooked

        checks.append(("metrics hook, validation", validation_hooked(), "process_validation_metrics wrapped"))
    except Exception as exc:  # noqa: BLE001
        checks.append(("metrics hook, legacy trainer (use_v1=False)", False, f"{type(exc).__name__}: {exc}"))
    try:
        from .metrics import v1_hooked

        hooked = v1_hooked()
        checks.append(("metrics hook, V1 trainer", hooked, "PPOTrainer._compute_metrics wrapped (every trainer_mode)"))
    except ImportError as exc:
        checks.append(("metrics hook, V1 trainer", False, f"{exc} (install verl[verl-core] for the V1 trainer)"))
    except Exception as exc:  # noqa: BLE001
        checks.append(("metrics hook, V1 trainer", False, f"{type(exc).__name__}: {exc}"))
    for name, status in sorted(plugin.STATUS.items()):
        if status.startswith("error"):
            checks.append((f"plugin hook {name}", False, status))
    if not loaded:  # doctor installed these itself; `main_ppo` would not have them
        checks[first_plugin_check:] = [
            (name, False, f"{detail}; only in this process (doctor loaded the plugin itself), not in a verl run")
            for name, _, detail in checks[first_plugin_check:]
        ]
    ok = all(passed for _, passed, _ in checks)
    for name, passed, detail in checks:
        print(f"  [{'ok' if passed else 'FAIL'}] {name}: {detail}")
    print("all good" if ok else "problems found")
    return 0 if ok else 1


def score_command(args: argparse.Namespace) -> int:
    """``verl-rewards score``: print a per-component table, write a histogram (and optionally the scores).

    Output paths and the histogram format are checked before anything is scored.
    """
    from .files import OutputPathError, check_output_path
    from .offline import histogram_format, read_rollouts, score_samples, write_histogram, write_scored

    source = Path(args.input).resolve()
    if args.hist:
        histogram_format(args.hist)
        if check_output_path(args.hist, "--hist").resolve() == source:
            raise OutputPathError(f"--hist {args.hist} is the input file")
    if args.out:
        target = check_output_path(args.out, "--out").resolve()
        if args.hist and target == Path(args.hist).resolve():
            raise OutputPathError(f"--out and --hist are the same file: {args.out}")
    kwargs: dict = {
        "modules": list(args.module),
        "timeout_s": args.timeout_s,
        "executor": args.executor,
        "contribution": {"type": args.contrib_type, "beta": args.beta},
    }
    if args.reward:
        kwargs["reward_fn"] = args.reward
    samples = read_rollouts(args.input)
    result = score_samples(samples, kwargs)
    print(f"{len(samples)} rollouts from {args.input}, reward={args.reward or 'by data_source'}")
    print(result.table())
    if args.out:
        write_scored(samples, result, args.out)
        print(f"scores: {args.out}")
    if args.hist:
        write_histogram(result.rewards, args.hist, title=args.reward or "rewards")
        print(f"histogram: {args.hist}")
    return 0


def prepare_command(args: argparse.Namespace) -> int:
    """``verl-rewards prepare <dataset>``: 0 when every row converted, 1 when some were bad, 2 on errors."""
    if args.dataset == "toolrl":
        from .toolrl.data import ToolRLDataError, prepare_toolrl

        try:
            report = prepare_toolrl(args.input, args.out, split=args.split, strict=args.strict)
        except (ToolRLDataError, OSError, ValueError) as exc:  # NothingConvertedError: an all-bad input
            return _fail("prepare toolrl", exc)
        return 0 if report.bad == 0 else 1
    if args.dataset == "tau2":
        from .tau2.data import prepare_tau2
        from .tau2.errors import Tau2Error

        try:
            tau2_report = prepare_tau2(
                args.data_dir,
                args.domain,
                args.out,
                args.split.split(","),
                mode=args.mode,
                retrieval=args.retrieval,
                holdout=args.holdout,
                seed=args.holdout_seed,
            )
        except (Tau2Error, OSError, ValueError) as exc:  # Tau2PrepareError is a ValueError
            return _fail("prepare tau2", exc)
        for split, n in tau2_report.rows.items():
            print(f"{split}: {n} rows -> {tau2_report.files[split]}")
        print(f"tool config ({tau2_report.num_tools} tools): {tau2_report.tool_config}")
        return 0
    if args.dataset == "tau_bench":
        from .tau_bench.data import TauBenchPrepareError, prepare_tau_bench

        try:
            tb_report = prepare_tau_bench(args.data_dir, args.domain, args.out, args.split.split(","), mode=args.mode)
        except (TauBenchPrepareError, OSError) as exc:
            print(f"verl-rewards prepare tau_bench: error: {exc}", file=sys.stderr)
            return 2
        for split, n in tb_report.rows.items():
            print(f"{split}: {n} rows -> {tb_report.files[split]}")
        print(f"tool config ({tb_report.num_tools} tools): {tb_report.tool_config}")
        return 0
    print(f"unknown dataset {args.dataset}", file=sys.stderr)
    return 2


def simulate_command(args: argparse.Namespace) -> int:
    """``verl-rewards simulate``: 0 when the run finished, 2 on configuration errors, 130 when interrupted."""
    import asyncio

    from .engine.client import Endpoint
    from .engine.simulate import SimulateError, all_failed
    from .tau2.normal.simulate import SimulateConfig, simulate, summary
    from .tau_bench.simulate import is_tau_bench_domain

    tau_bench = is_tau_bench_domain(args.domain)
    if bool(args.task_ids) and bool(args.split) and not tau_bench:
        return _fail("simulate", ValueError("give --task-ids or --split, not both"))
    tau2_only = {
        "--max-steps": args.max_steps is not None,
        "--max-errors": args.max_errors is not None,
        "--enforce-communication-protocol": args.enforce_communication_protocol,
        "--judge-model": bool(args.judge_model),
    }
    if tau_bench and any(tau2_only.values()):
        given = [k for k, v in tau2_only.items() if v]
        return _fail(
            "simulate", ValueError(f"{', '.join(given)}: tau2 options; tau-bench's only limit is --max-num-steps")
        )
    if not tau_bench and args.max_num_steps is not None:
        return _fail("simulate", ValueError("--max-num-steps is for tau-bench domains (tau2: --max-steps)"))
    try:
        common = {
            "api_key_env": args.api_key_env,
            "timeout_s": args.timeout_s,
            "retries": args.retries,
            "max_concurrency": args.concurrency,
        }
        agent = Endpoint.from_mapping(
            {
                "base_url": args.agent_base_url,
                "model": args.agent_model,
                "temperature": args.agent_temperature,
                **common,
            },
            "--agent",
        )
        user = Endpoint.from_mapping(
            {"base_url": args.user_base_url, "model": args.user_model, "temperature": args.user_temperature, **common},
            "--user",
        )
        if tau_bench:
            return _simulate_tau_bench(args, agent, user)
        judge = None
        if args.judge_model:
            judge = Endpoint.from_mapping(
                {"base_url": args.judge_base_url or args.user_base_url, "model": args.judge_model, **common}, "--judge"
            )
        config = SimulateConfig(
            domain=args.domain,
            agent=agent,
            user=user,
            out=args.out,
            data_dir=args.data_dir,
            task_ids=args.task_ids,
            split=args.split,
            num_trials=args.num_trials,
            seed=args.seed,
            max_steps=200 if args.max_steps is None else args.max_steps,
            max_errors=10 if args.max_errors is None else args.max_errors,
            enforce_communication_protocol=args.enforce_communication_protocol,
            concurrency=args.concurrency,
            judge=judge,
            agent_message_errors=args.agent_message_errors,
            domain_options={"retrieval": args.retrieval} if args.retrieval else None,
        )
        results = asyncio.run(simulate(config))
    except (SimulateError, ValueError, OSError) as exc:
        return _fail("simulate", exc)
    except KeyboardInterrupt:
        print(f"interrupted: finished simulations are in {args.out}; run again to resume", file=sys.stderr)
        return 130
    print(summary(results))
    print(f"results: {args.out}")
    sims = results.get("simulations") or []
    return _all_failed_exit(
        [
            (s.get("termination_reason"), (s.get("info") or {}).get("end_cause") or (s.get("info") or {}).get("error"))
            for s in sims
        ],
        all_failed,
    )


def _all_failed_exit(outcomes: list, all_failed: Callable[[list], str | None]) -> int:
    """1 with the first cause on stderr when every simulation ended at an endpoint (a typo'd model name, a
    dead server), else 0."""
    message = all_failed(outcomes)
    if message is None:
        return 0
    print(f"verl-rewards simulate: error: {message}", file=sys.stderr)
    return 1


def _simulate_tau_bench(args: argparse.Namespace, agent: Endpoint, user: Endpoint) -> int:
    """``simulate --domain tau_bench/<domain>``: tau-bench's run, its results list (see
    :mod:`verl_rewards.tau_bench.simulate`)."""
    import asyncio

    from .engine.simulate import all_failed
    from .tau_bench.normal import MAX_NUM_STEPS
    from .tau_bench.simulate import TauBenchSimulateConfig, simulate_tau_bench, summary

    config = TauBenchSimulateConfig(
        domain=args.domain,
        agent=agent,
        user=user,
        out=args.out,
        data_dir=args.data_dir,
        task_ids=args.task_ids,
        split=args.split,
        num_trials=args.num_trials,
        seed=args.seed,
        max_num_steps=MAX_NUM_STEPS if args.max_num_steps is None else args.max_num_steps,
        concurrency=args.concurrency,
    )
    results = asyncio.run(simulate_tau_bench(config))
    print(summary(results))
    print(f"results: {args.out}")
    infos = [s.get("info") or {} for s in results]
    return _all_failed_exit([(i.get("termination"), i.get("end_cause")) for i in infos], all_failed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="verl-rewards", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="check that the manager and metrics hooks are active in this environment")
    demo = sub.add_parser("demo", help="score a GRPO batch through verl's real reward loop on CPU")
    demo.add_argument("--prompts", type=int, default=8, help="number of prompts (GRPO groups)")
    demo.add_argument("--n", type=int, default=4, help="rollouts per prompt")
    demo.add_argument("--contrib-type", default="C1", choices=["C0", "C1", "C2", "none"])
    demo.add_argument("--beta", type=float, default=0.05)
    demo.add_argument("--workers", type=int, default=2, help="reward.num_workers")
    score = sub.add_parser("score", help="score a JSONL of rollouts offline with a registered reward")
    score.add_argument("input", help="JSONL: verl's trainer.rollout_data_dir dump or the plain format (README)")
    score.add_argument("--reward", help="registered reward name (default: built-in routing by data_source)")
    score.add_argument("--module", action="append", default=[], help="module name or .py file to import (repeat)")
    score.add_argument("--timeout-s", type=float, default=60.0)
    score.add_argument("--executor", choices=["thread", "process"], default="thread")
    score.add_argument("--contrib-type", choices=["C0", "C1", "C2", "none"], default="none")
    score.add_argument("--beta", type=float, default=0.05)
    score.add_argument(
        "--hist",
        default="rewards.png",
        help="histogram image of the rewards, format from the extension: .png, .svg, .pdf, ... ('' to skip)",
    )
    score.add_argument("--out", default="", help="write the rows with their scores as JSONL (may be the input)")
    prepare = sub.add_parser("prepare", help="convert a dataset to verl parquet")
    prep = prepare.add_subparsers(dest="dataset", required=True)
    toolrl = prep.add_parser("toolrl", help="ToolRL rows (instruction/input/output) -> verl parquet")
    toolrl.add_argument("--input", required=True, help=".json, .jsonl or .parquet (see README 'Data')")
    toolrl.add_argument("--out", required=True, help="output directory (<out>/<split>.parquet)")
    toolrl.add_argument("--split", default="train")
    toolrl.add_argument("--strict", action="store_true", help="stop at the first malformed row")
    tau2 = prep.add_parser("tau2", help="tau2 tasks -> verl parquet + tool config for the tool agent loop")
    tau2.add_argument("--data-dir", default=None, help="tau2-bench data/tau2/domains (default: $TAU2_DATA_DIR)")
    tau2.add_argument("--domain", required=True, help="airline, retail, mock, ...")
    tau2.add_argument("--out", required=True, help="output directory (<out>/<split>.parquet, <out>/tool_config.yaml)")
    tau2.add_argument("--split", default="train,test", help="comma-separated splits of split_tasks.json, or 'all'")
    tau2.add_argument(
        "--mode",
        default=None,
        choices=["normal", "solo"],
        help="normal: a simulated user talks to the agent (tau2_agent loop; default for airline, "
        "retail, telecom); solo: the agent works from a ticket (tool_agent; default for mock)",
    )
    tau2.add_argument(
        "--retrieval",
        default=None,
        help="banking_knowledge: the retrieval configuration (bm25, the default; bm25_grep, grep_only, full_kb, "
        "golden_retrieval, no_knowledge)",
    )
    tau2.add_argument(
        "--holdout",
        type=float,
        default=None,
        help="write train/test from a seeded random fraction of all tasks held out as test (for domains "
        "without a split, such as banking_knowledge)",
    )
    tau2.add_argument("--holdout-seed", type=int, default=0, help="seed of --holdout's draw (default 0)")
    tau_bench = prep.add_parser("tau_bench", help="tau-bench (v1) tasks -> verl parquet + tool config")
    tau_bench.add_argument("--data-dir", default=None, help="holds retail/ and airline/ (default: $TAU_BENCH_DATA_DIR)")
    tau_bench.add_argument("--domain", required=True, choices=["retail", "airline"])
    tau_bench.add_argument("--split", default="train", help="comma-separated: train, test, dev (airline: test)")
    tau_bench.add_argument(
        "--mode",
        default="normal",
        choices=["normal", "instruction"],
        help="normal (default): tau-bench's simulated user talks to the agent (tau_bench_agent "
        "loop, a user model needed); instruction: the task instruction is the first user "
        "message and a text reply ends (tool_agent loop, no user model)",
    )
    tau_bench.add_argument("--out", required=True, help="output directory (<out>/<split>.parquet, tool_config.yaml)")
    from . import check as check_cmd
    from .evaluation import command as eval_cmd

    eval_cmd.add_parser(sub)
    from .cpu import command as smoke_cmd

    smoke_cmd.add_parser(sub)
    from .gold import command as export_sft_cmd

    export_sft_cmd.add_parser(sub)
    check_cmd.add_parser(sub)
    sim = sub.add_parser(
        "simulate",
        help="score a served model in normal mode (simulated user) on tau2 (tau2-bench's "
        "Results JSON) or tau-bench v1 (tau-bench's results list)",
    )
    sim.add_argument(
        "--domain",
        required=True,
        help="tau2: airline, retail, telecom, mock; tau-bench v1: tau_bench/retail, tau_bench/airline",
    )
    sim.add_argument(
        "--data-dir",
        default=None,
        help="tau2-bench data/tau2/domains (default: $TAU2_DATA_DIR); "
        "tau-bench: the folder holding retail/ and airline/ "
        "(default: $TAU_BENCH_DATA_DIR)",
    )
    sim.add_argument(
        "--task-ids",
        nargs="+",
        default=None,
        metavar="ID",
        help="tasks to run (default: all; tau-bench: '<split>/<index>' or an index of --split)",
    )
    sim.add_argument(
        "--split",
        default=None,
        help="tau2: a split of split_tasks.json (instead of --task-ids); tau-bench: train, test (default) or dev",
    )
    sim.add_argument(
        "--retrieval", default=None, help="tau2 banking_knowledge: the retrieval configuration (default bm25)"
    )
    sim.add_argument("--num-trials", type=int, default=1)
    sim.add_argument("--seed", type=int, default=300, help="run seed; per-trial seeds derived as tau2 does")
    sim.add_argument("--max-steps", type=int, default=None, help="tau2's step limit (default 200)")
    sim.add_argument("--max-errors", type=int, default=None, help="tau2's tool-error limit (default 10)")
    sim.add_argument("--max-num-steps", type=int, default=None, help="tau-bench: the agent's turns (default 30)")
    sim.add_argument(
        "--enforce-communication-protocol",
        action="store_true",
        help="a message with text and tool calls ends the run (agent_error / user_error)",
    )
    sim.add_argument(
        "--agent-message-errors",
        choices=("infrastructure_error", "agent_error"),
        default="infrastructure_error",
        help="tau2: malformed tool-call JSON or an empty agent message ends the simulation as "
        "infrastructure_error (tau2's runner; left out of pass^k, the default) or agent_error (training's rule: "
        "scored 0)",
    )
    sim.add_argument(
        "--agent-base-url", required=True, help="OpenAI-compatible endpoint of the agent, e.g. http://127.0.0.1:8000/v1"
    )
    sim.add_argument("--agent-model", required=True)
    sim.add_argument("--agent-temperature", type=float, default=0.0)
    sim.add_argument("--user-base-url", required=True)
    sim.add_argument("--user-model", required=True)
    sim.add_argument("--user-temperature", type=float, default=0.0)
    sim.add_argument(
        "--judge-model",
        default=None,
        help="grade retail's NL assertions with this model (default: NL assertions are skipped)",
    )
    sim.add_argument("--judge-base-url", default=None, help="default: --user-base-url")
    sim.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    sim.add_argument("--timeout-s", type=float, default=120.0, help="per model call attempt")
    sim.add_argument("--retries", type=int, default=3)
    sim.add_argument("--concurrency", type=int, default=8, help="simulations (and calls per endpoint) at once")
    sim.add_argument("--out", required=True, help="Results JSON (resumed when it exists with the same settings)")
    args = parser.parse_args(argv)
    if args.command == "eval":
        return eval_cmd.run(args)
    if args.command == "smoke":
        return smoke_cmd.run(args)
    if args.command == "export-sft":
        return export_sft_cmd.run(args)
    if args.command == "check":
        return check_cmd.run(args)
    if args.command == "prepare":
        return prepare_command(args)
    if args.command == "simulate":
        return simulate_command(args)
    if args.command == "score":
        from .files import OutputPathError
        from .manager import ManagerConfigError, RewardInputError
        from .offline import OfflineInputError

        try:
            return score_command(args)
        except (ManagerConfigError, RewardInputError, OfflineInputError, OutputPathError, LookupError, OSError) as exc:
            return _fail("score", exc)
    if args.command == "doctor":
        return doctor()
    if args.command == "demo":
        from .demo import DemoArgumentError, run_demo

        try:
            run_demo(
                n_prompts=args.prompts,
                rollout_n=args.n,
                contrib_type=args.contrib_type,
                beta=args.beta,
                num_workers=args.workers,
            )
        except DemoArgumentError as exc:  # checked before Ray starts
            return _fail("demo", exc)
        return 0
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
