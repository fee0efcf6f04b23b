"""``verl-rewards smoke FAMILY``: a real ``main_ppo`` run of a benchmark's recipe on the CPU, in minutes.

It builds a tiny Qwen2 and a tokenizer on this machine (:mod:`verl_rewards.cpu.model`), a small dataset from the
benchmark's real ``prepare`` output, and runs its recipe script (which runs ``python -m verl.trainer.main_ppo``) with
the CPU overrides after the recipe's own and the user's overrides last: N steps, validation before and after, one
checkpoint, verl's file logger (``DIR/metrics.jsonl``), wandb offline on request. Each training group mixes
scripted gold rollouts and sampled ones (``--script-ratio``), so its rewards differ and the update gets a real
advantage. It exits non-zero naming the stage that failed (set-up, sft, rollout, reward, update, validation,
checkpoint or resume) and the cause, also when ``main_ppo`` exited 0 but every reward of a step failed, no step had
a non-zero advantage or ``actor/pg_loss`` was 0 throughout (:mod:`verl_rewards.smoke.checks`); the first reward
error of the log is printed either way.

This module is the command (options, the run's order, what it prints); the work is the smoke driver's
(:mod:`verl_rewards.smoke`), and which benchmarks it runs, with which recipe, modes and domains, is their records'
``smoke`` settings (:class:`verl_rewards.benchmark.SmokeSpec`).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..benchmark import Benchmark, SmokeSpec
from ..coerce import finite_float
from ..smoke.checks import check_run, check_signal, failed_stage, first_reward_error, stage_timings
from ..smoke.data import (
    build_data,
    family_data_dir,
    prepare_rows,
    prompt_tokens,
    read_metrics,
    smoke_benchmarks,
    wrap_loops,
)
from ..smoke.errors import SmokeError
from ..smoke.modes import MODES, resumed_from, run_resume
from ..smoke.process import ended, stream
from ..smoke.recipe import REPO, WARM_START_RECIPE, cpu_overrides, recipe_env, write_command
from ..smoke.sft_stage import check_sft, sft_checkpoint, sft_data, sft_env
from .common import fail
from .help_texts import data_dir_help, domain_help, mode_choices, mode_help

HELP = "run a family's recipe through verl's real main_ppo on the CPU (tiny model, a few steps)"
OVERRIDES_HELP = "-- OVERRIDES: Hydra overrides for main_ppo, after ours (yours win), passed on unchanged"
#: the default share of scripted rollouts per training group: with two rollouts per prompt one gold, one sampled
SCRIPT_RATIO = 0.5


def _with_domains() -> list[Benchmark]:
    """The smoke benchmarks whose rows come from a domain of a data folder (``--domain``, ``--mode``,
    ``--data-dir``)."""
    return [b for b in smoke_benchmarks() if b.data is not None]


def _settings(bench: Benchmark) -> SmokeSpec:
    spec = bench.smoke
    assert spec is not None  # smoke_benchmarks() lists only records with smoke settings
    return spec


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``smoke`` subcommand to the ``verl-rewards`` subparsers."""
    p = sub.add_parser("smoke", help=HELP, description=HELP, epilog=OVERRIDES_HELP)
    p.passthrough = "overrides"  # what follows the first "--", unparsed (verl-rewards' CliParser)
    p.set_defaults(overrides=[])
    _add_options(p)
    p.add_argument("family", choices=sorted(b.name for b in smoke_benchmarks()), help="the family whose recipe runs")
    return p


def _add_options(p: argparse.ArgumentParser) -> None:
    with_domains = _with_domains()
    names = [b.name for b in with_domains]
    defaults = ", ".join(b.source(_settings(b).domains[0]) for b in with_domains)
    p.add_argument("--domain", default=None, help=f"{domain_help(*names)} (default: {defaults})")
    p.add_argument(
        "--mode",
        choices=mode_choices(*names),
        default=None,
        help=mode_help(*names, default="normal"),
    )
    p.add_argument(
        "--retrieval",
        default=None,
        help="tau2 banking_knowledge: the retrieval configuration, passed to prepare (default: bm25)",
    )
    p.add_argument(
        "--steps",
        type=int,
        default=2,
        help="training steps; validation runs before the first and after the last, the checkpoint after the last "
        "(default: 2)",
    )
    p.add_argument(
        "--policy",
        choices=["auto", "script", "sample"],
        default="auto",
        help="script: the task's gold turns are played (scored under the current weights); sample: the model "
        "generates; auto: script when the gold module is installed",
    )
    p.add_argument(
        "--script-ratio",
        type=float,
        default=SCRIPT_RATIO,
        help=f"share of each training group's rollouts played by the script, the rest sampled (default: "
        f"{SCRIPT_RATIO}; with --n 2 one of each, so the group's rewards differ and GRPO has an advantage); "
        "validation plays the script",
    )
    p.add_argument(
        "--script-source",
        default=None,
        metavar="MODULE:FUNC",
        help="where scripted turns come from (default: verl_rewards.gold:gold_assistant_turns)",
    )
    p.add_argument(
        "--user",
        choices=["scripted", "policy"],
        default="scripted",
        help="normal mode's user: scripted (the task's instructions first, ###STOP### after the agent's last "
        "message) or policy (the policy plays it)",
    )
    p.add_argument("--batch-size", type=int, default=2, help="prompts per step (default: 2)")
    p.add_argument("--n", type=int, default=2, help="rollouts per prompt (default: 2)")
    p.add_argument(
        "--val-rows", type=int, default=2, help="validation prompts, 2 trials each: pass^1, pass^2 (default: 2)"
    )
    p.add_argument(
        "--data-dir",
        default=None,
        help=data_dir_help(*names),
    )
    p.add_argument(
        "--out",
        default=None,
        help="output folder, which must not hold an earlier run (default: ./smoke/<EXPERIMENT_NAME or "
        "family-domain-mode>-<time>)",
    )
    p.add_argument(
        "--wandb", action="store_true", help="also log to wandb, offline (OUT/wandb; `wandb sync` uploads it later)"
    )
    p.add_argument(
        "--sft",
        action="store_true",
        help="tau2 / tau_bench: first verl's SFT trainer on the split's gold conversations (export-sft gold), then "
        "GRPO from its checkpoint, both through recipes/warm_start (SFT losses in OUT/sft_metrics.jsonl, its "
        "checkpoint in OUT/sft/)",
    )
    p.add_argument("--sft-steps", type=int, default=2, help="SFT steps with --sft (default: 2)")
    p.add_argument(
        "--trainer-mode",
        choices=MODES,
        default="sync",
        help="verl's V1 trainer mode, run by the CPU trainer of that mode (cpu_<mode>; separate_async: two logical "
        "GPUs, trainer and standalone rollout) (default: sync)",
    )
    p.add_argument(
        "--resume", action="store_true", help="then run main_ppo again from the last checkpoint for one more step"
    )
    p.add_argument(
        "--timeout-s",
        type=_seconds,
        default=1800.0,
        help="seconds (at most a week) before the run is stopped, with every process it started; it then fails "
        "saying 'timed out after N s'",
    )
    p.add_argument("--recipe", default=None, help="the recipe script to run (default: the family's, in recipes/)")


#: the longest --timeout-s (one week, as reward.reward_kwargs.timeout_s)
MAX_TIMEOUT_S = 7 * 24 * 3600.0


def _seconds(text: str) -> float:
    """An argparse ``type=``: a positive, finite number of seconds up to :data:`MAX_TIMEOUT_S` (usage error)."""
    try:
        return finite_float(text, positive=True, maximum=MAX_TIMEOUT_S)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def split_arguments(args: argparse.Namespace) -> list[str]:
    """The Hydra overrides given after ``--``: the smoke parser (a ``CliParser`` with ``passthrough``) hands them
    over unparsed, as argparse alone cannot (it drops a ``--`` right after FAMILY)."""
    return list(args.overrides or [])


# -- set-up ----------------------------------------------------------------------------------------------------
def _resolve(args: argparse.Namespace) -> tuple[Benchmark, str, str]:
    """The benchmark, domain and mode of a run, its options checked (a set-up :class:`SmokeError` names the wrong
    one)."""
    bench = next(b for b in smoke_benchmarks() if b.name == args.family)  # argparse's choices: one of them
    spec = _settings(bench)
    domain = (args.domain or spec.domains[0]).removeprefix(f"{bench.name}/")  # tau2/airline: the data source
    mode = args.mode or spec.modes[0]
    if domain not in spec.domains:
        raise SmokeError("set-up", f"{args.family}: --domain must be one of {', '.join(spec.domains)}, got {domain!r}")
    if mode not in spec.modes:
        raise SmokeError("set-up", f"{args.family}: --mode must be one of {', '.join(spec.modes)}, got {mode!r}")
    if domain == "banking_knowledge" and mode != "normal":
        raise SmokeError("set-up", f"{args.family}: banking_knowledge runs in normal mode only, got --mode {mode}")
    if args.retrieval is not None and domain != "banking_knowledge":
        raise SmokeError("set-up", f"--retrieval is a banking_knowledge option, not {args.family} {domain}'s")
    if args.steps < 1 or args.batch_size < 1 or args.n < 1 or args.val_rows < 1:
        raise SmokeError("set-up", "--steps, --batch-size, --n and --val-rows must be at least 1")
    if not 0.0 <= args.script_ratio <= 1.0:
        raise SmokeError("set-up", f"--script-ratio must be within [0, 1], got {args.script_ratio}")
    if args.sft and not spec.sft:
        warm = " or ".join(b.name for b in smoke_benchmarks() if _settings(b).sft)
        raise SmokeError("set-up", f"--sft needs {warm}: its data are the gold conversations of export-sft")
    if args.sft and args.sft_steps < 1:
        raise SmokeError("set-up", f"--sft-steps must be at least 1, got {args.sft_steps}")
    return bench, domain, mode


def _policy(args: argparse.Namespace) -> tuple[str, str]:
    from ..cpu.policy import DEFAULT_SCRIPT_SOURCE, load_script_source

    source = args.script_source or DEFAULT_SCRIPT_SOURCE
    if args.policy == "sample":
        return "sample", source
    try:
        load_script_source(source)
    except (ImportError, TypeError, ValueError) as exc:
        if args.policy == "script":
            raise SmokeError("set-up", f"--policy script: {exc}") from exc
        print(f"smoke: no scripted turns ({exc}); using --policy sample", file=sys.stderr)
        return "sample", source
    return "script", source


# -- the run ---------------------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    reward_error: str | None = None
    try:
        overrides = split_arguments(args)
        bench, domain, mode = _resolve(args)
        spec = _settings(bench)
        policy, source = _policy(args)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = os.environ.get("EXPERIMENT_NAME") or f"{args.family}-{domain}-{mode}"
        out = Path(args.out or f"smoke/{name}-{stamp}").resolve()
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a usage error, as argparse's: one line, exit code 2
            return fail("smoke", f"--out {out}: cannot create this folder ({exc.strerror})")
        for stale in ("metrics.jsonl", "checkpoints", "sft_metrics.jsonl", "sft"):
            if (out / stale).exists():
                raise SmokeError("set-up", f"{out / stale} exists: use a fresh --out folder")
        recipe = Path(args.recipe) if args.recipe else REPO / (WARM_START_RECIPE if args.sft else spec.recipe)
        if not recipe.is_file():
            raise SmokeError("set-up", f"recipe not found: {recipe} (smoke runs the recipes of a source checkout)")
        data_dir = family_data_dir(args.data_dir, bench)  # --data-dir, the variable, the installed folder
        t0 = time.monotonic()
        prepared, tools = prepare_rows(bench, domain, mode, data_dir, out / "data" / "prepared", args.retrieval)
        data = build_data(prepared, tools, out / "data", args.batch_size * args.steps, args.val_rows, policy, source)
        loops = wrap_loops(data, policy, args.script_ratio, source, out / "data")
        sft = None
        if args.sft:
            sft = sft_data(bench.name, domain, mode, data_dir, prepared.stem, out / "data" / "sft", args.sft_steps)
            data.texts += sft.texts
        from ..cpu.model import build_tiny_qwen2

        model = build_tiny_qwen2(out / "model", data.texts)
        longest = prompt_tokens(model, data)
        prompt_len = 256 * math.ceil((longest + 64) / 256)
        response_len = spec.response_length or (8192 if policy == "script" else 1024)
        setup_s = time.monotonic() - t0
        env = recipe_env(bench, domain, mode, data_dir, data, model, out, args.user, args.batch_size)
        if sft is not None:  # recipes/warm_start: SFT from the tiny model, then GRPO from the SFT checkpoint
            env.update(sft_env(sft, out))
            for unset in ("SFT_MODEL_PATH", "SFT_VAL_FILES"):  # the caller's would replace the smoke's checkpoint/data
                env.pop(unset, None)
        cmd = ["bash", str(recipe)] + cpu_overrides(
            model=str(sft_checkpoint(out, sft.steps)) if sft is not None else model,
            out=out,
            steps=args.steps,
            batch=args.batch_size,
            n=args.n,
            prompt_len=prompt_len,
            response_len=response_len,
            policy=policy if args.script_ratio >= 1.0 or policy == "sample" else "mixed",
            loops_yaml=loops,
            wandb=args.wandb,
            trainer_mode=args.trainer_mode,
        )
        cmd += overrides
        write_command(out, env, cmd)
        print(
            f"smoke: {args.family} {domain} {mode}, policy {policy}, {args.steps} steps, trainer mode "
            f"{args.trainer_mode} -> {out}"
        )
        print(f"smoke: data {data.train} ({args.batch_size * args.steps} rows), {data.val}; dropped {data.dropped}")
        print(f"smoke: model {model} (prompt <= {longest} tokens)")
        if sft is not None:
            print(
                f"smoke: SFT first, {sft.steps} steps on {sft.files} ({sft.rows} gold conversations, {sft.dropped} "
                f"dropped), then GRPO from {sft_checkpoint(out, sft.steps)}"
            )
        t1 = time.monotonic()
        code = stream(cmd, env, out / "run.log", args.timeout_s, REPO)
        run_s = time.monotonic() - t1
        records = read_metrics(out / "metrics.jsonl")
        steps_logged = sum(1 for r in records if any(k.startswith("actor/") for k in r.get("data") or {}))
        sft_losses: list[float] = []
        if sft is not None and (code == 0 or sft_checkpoint(out, sft.steps).is_dir()):
            sft_losses = check_sft(out, sft.steps)
        log = (out / "run.log").read_text(encoding="utf-8", errors="replace")
        reward_error = first_reward_error(log)
        if code != 0:
            if sft is not None and not sft_checkpoint(out, sft.steps).is_dir():
                raise SmokeError("sft", f"the SFT stage {ended(code, args.timeout_s)}; see {out / 'run.log'}")
            stage = failed_stage(log, steps_logged)
            raise SmokeError(stage, f"main_ppo {ended(code, args.timeout_s)}; see {out / 'run.log'}")
        check_run(out, args.steps, records)
        check_signal(records, out / "run.log")
        if args.resume:
            t2 = time.monotonic()
            run_resume(cmd, env, out, args.steps, args.timeout_s, REPO)
            print(f"smoke: resumed {resumed_from(out, args.steps)} in {time.monotonic() - t2:.0f} s")
    except SmokeError as exc:
        print(f"smoke: FAILED at stage {exc.stage}: {exc}", file=sys.stderr)
        if reward_error and "first error:" not in str(exc):
            print(f"smoke: first reward error: {reward_error}", file=sys.stderr)
        return 1
    _summary(out, args.steps, records, setup_s, run_s, time.monotonic() - started, args.wandb, bool(sft_losses))
    if reward_error:
        print(f"  first reward error  {reward_error}")
    if sft_losses:
        print(f"  SFT         {sft_checkpoint(out, len(sft_losses))} ({out / 'sft_metrics.jsonl'})")
        print(f"  {'SFT train/loss by step':<40} {', '.join(f'{x:.4g}' for x in sft_losses)}")
    return 0


def _summary(
    out: Path,
    steps: int,
    records: Sequence[Mapping[str, Any]],
    setup_s: float,
    run_s: float,
    total_s: float,
    wb: bool,
    sft: bool = False,
) -> None:
    timings = stage_timings(records)
    in_steps = timings.get("steps total", 0.0) + timings.get("validation", 0.0)
    print("smoke: PASSED")
    print(f"  metrics     {out / 'metrics.jsonl'} ({len(records)} records)")
    print(f"  checkpoint  {out / 'checkpoints' / f'global_step_{steps}'}")
    print(f"  log         {out / 'run.log'}")
    print(f"  command     {out / 'command.sh'}")
    if wb:
        print(f"  wandb       {out / 'wandb'} (offline)")
    ran = "SFT + main_ppo" if sft else "main_ppo"
    print(f"  time        {total_s:.0f} s: set-up {setup_s:.0f} s, {ran} {run_s:.0f} s")
    for name, seconds in timings.items():
        print(f"    {name:<34} {seconds:7.1f} s")
    rest = "SFT, Ray, actors, models starting" if sft else "Ray, actors and models starting"
    print(f"    {rest:<34} {max(0.0, run_s - in_steps):7.1f} s (the rest of {ran})")
    train = [r["data"] for r in records if "actor/grad_norm" in (r.get("data") or {})]
    last: Mapping[str, Any] = train[-1] if train else {}
    first: Mapping[str, Any] = train[0] if train else {}
    for key in ("reward_extra/base_score/max", "reward_extra/base_score/min"):
        if key in first:
            # max: the gold reward of the scripted rollouts (1.0 for tau2 / tau-bench rows whose gold episode
            # scores 1.0 under the scripted user; not every row's does: docs/guides/smoke-and-check.md); min: a
            # sampled one's
            print(f"  {'step 1 ' + key:<40} {first[key]:.6g}")
    for key in ("critic/advantages/max", "critic/advantages/min", "actor/pg_loss", "actor/grad_norm",
                "training/rollout_probs_diff_max", "training/off_policy/trajectory_staleness_worst/max"):  # fmt: skip
        if key in last:
            print(f"  {key:<40} {last[key]:.6g}")
