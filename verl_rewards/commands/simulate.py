"""``verl-rewards simulate``: a served model in normal mode (a simulated user) on tau2 (tau2-bench's Results JSON,
:mod:`verl_rewards.tau2.normal.simulate`) or tau-bench v1 (tau-bench's results list,
:mod:`verl_rewards.tau_bench.simulate`).

One parser serves both benchmarks; each benchmark's record (:class:`~verl_rewards.benchmark.SimulateEntry`) declares
the options only it takes, so a run of one with another's option is refused naming both instead of silently ignoring
the option, and runs the simulation."""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from typing import Any

from ..benchmark import Benchmark
from ..benchmark_list import benchmark_named, benchmarks
from ..engine.client import Endpoint
from ..engine.conversation import AGENT_MESSAGE_ERRORS
from ..engine.simulate import RunConfig, SimulateError
from ..engine.termination import TerminationReason
from ..tau2.normal.simulate import DEFAULT_SPLIT as TAU2_SPLIT
from ..tau2.normal.simulate import SimulateConfig
from ..tau_bench.simulate import DEFAULT_SPLIT as TAU_BENCH_SPLIT
from ..tau_bench.simulate import TauBenchSimulateConfig
from .common import DATA_DIR_FLAGS, DomainError, default_of, fail, split_domain
from .help_texts import data_dir_help, domain_help, split_help

#: seconds one model call attempt may take (the endpoints' own default is shorter; a run's long turns need more)
CALL_TIMEOUT_S = 120.0
#: the endpoints' default sampling temperature (tau2's)
TEMPERATURE = dict(default_of(Endpoint, "sampling"))["temperature"]

HELP = (
    "score a served model in normal mode (a simulated user) on tau2 (tau2-bench's Results JSON) or "
    "tau-bench v1 (tau-bench's results list)"
)


def simulate_benchmarks() -> list[Benchmark]:
    """The benchmarks ``simulate`` runs (those whose record has a :class:`~verl_rewards.benchmark.SimulateEntry`)."""
    return [b for b in benchmarks() if b.simulate is not None]


def _given(args: argparse.Namespace, option: str) -> bool:
    return getattr(args, option.lstrip("-").replace("-", "_")) not in (None, False)


def check_options(args: argparse.Namespace, benchmark: Benchmark) -> None:
    """Refuse the options of another benchmark than ``benchmark`` (ValueError naming them), then its own check."""
    assert benchmark.simulate is not None
    for other in simulate_benchmarks():
        assert other.simulate is not None
        given = [o for o in other.simulate.own_options if other is not benchmark and _given(args, o)]
        if given:
            raise ValueError(
                f"{', '.join(given)}: {other.label} options; a {benchmark.label} run takes none of them "
                f"({benchmark.simulate.limits})"
            )
    benchmark.simulate.check(vars(args))


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``simulate`` subcommand to the ``verl-rewards`` subparsers."""
    names = [b.name for b in simulate_benchmarks()]
    p = sub.add_parser(
        "simulate",
        help=HELP,
        description=HELP + "; resumed when --out holds a run with the same settings",
    )
    p.add_argument(
        "--domain",
        required=True,
        help=domain_help(*names) + f" (a bare domain is {names[0]}'s)",
    )
    p.add_argument(
        "--data-dir",
        default=None,
        help=data_dir_help(*names),
    )
    p.add_argument(
        "--task-ids",
        nargs="+",
        default=None,
        metavar="ID",
        help="tasks to run (default: those of --split; tau-bench: '<split>/<index>' or an index of --split)",
    )
    p.add_argument(
        "--split",
        default=None,
        help=split_help(
            *names,
            default=f"tau2 {TAU2_SPLIT}, tau_bench {TAU_BENCH_SPLIT}",
            why="each benchmark's own runner's default; instead of --task-ids",
        ),
    )
    p.add_argument(
        "--retrieval", default=None, help="tau2 banking_knowledge: the retrieval configuration (default: bm25)"
    )
    p.add_argument("--num-trials", type=int, default=default_of(SimulateConfig, "num_trials"), help="trials per task")
    p.add_argument(
        "--seed",
        type=int,
        default=default_of(SimulateConfig, "seed"),
        help="run seed; per-trial seeds derived as tau2 does",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help=f"tau2's step limit (default: {default_of(SimulateConfig, 'max_steps')})",
    )
    p.add_argument(
        "--max-errors",
        type=int,
        default=None,
        help=f"tau2's tool-error limit (default: {default_of(SimulateConfig, 'max_errors')})",
    )
    p.add_argument(
        "--max-num-steps",
        type=int,
        default=None,
        help=f"tau-bench: the agent's turns (default: {default_of(TauBenchSimulateConfig, 'max_num_steps')})",
    )
    p.add_argument(
        "--enforce-communication-protocol",
        action="store_true",
        help="tau2: a message with text and tool calls ends the run (agent_error / user_error)",
    )
    p.add_argument(
        "--agent-message-errors",
        choices=AGENT_MESSAGE_ERRORS,
        default=TerminationReason.INFRASTRUCTURE_ERROR,
        help="tau2: malformed tool-call JSON or an empty agent message ends the simulation as "
        "infrastructure_error (tau2's runner; left out of pass^k, the default) or agent_error (training's rule: "
        "scored 0)",
    )
    p.add_argument(
        "--max-retries",
        type=int,
        default=None,
        help="tau2: more attempts of a simulation that failed (an endpoint, an agent message that cannot be played, "
        "the judge) before it is recorded as infrastructure_error "
        f"(default: {default_of(SimulateConfig, 'max_retries')}, tau2's)",
    )
    p.add_argument(
        "--retry-delay",
        type=float,
        default=None,
        help=f"tau2: seconds between those attempts (default: {default_of(SimulateConfig, 'retry_delay')})",
    )
    p.add_argument(
        "--agent-base-url", required=True, help="OpenAI-compatible endpoint of the agent, e.g. http://127.0.0.1:8000/v1"
    )
    p.add_argument("--agent-model", required=True, help="the agent's model name at --agent-base-url")
    p.add_argument("--agent-temperature", type=float, default=TEMPERATURE, help="the agent's sampling temperature")
    p.add_argument("--user-base-url", required=True, help="OpenAI-compatible endpoint of the user simulator")
    p.add_argument("--user-model", required=True, help="the user simulator's model name at --user-base-url")
    p.add_argument(
        "--user-temperature", type=float, default=TEMPERATURE, help="the user simulator's sampling temperature"
    )
    p.add_argument(
        "--judge-model",
        default=None,
        help="tau2: grade NL assertions with this model (tau2: gpt-4.1-2025-04-14); a run of tasks graded on them "
        "needs it, or --skip-nl-assertions",
    )
    p.add_argument("--judge-base-url", default=None, help="tau2: the judge's endpoint (default: --user-base-url)")
    p.add_argument(
        "--skip-nl-assertions",
        action="store_true",
        help="tau2: without a judge, score tasks graded on NL assertions on their other components (not tau2's "
        "score; recorded in the results' info and the summary)",
    )
    p.add_argument(
        "--api-key-env",
        default=default_of(Endpoint, "api_key_env"),
        help="environment variable holding the API key (none sent when it is unset)",
    )
    p.add_argument("--timeout-s", type=float, default=CALL_TIMEOUT_S, help="seconds per model call attempt")
    p.add_argument("--retries", type=int, default=default_of(Endpoint, "retries"), help="retries of a failed call")
    p.add_argument(
        "--concurrency",
        type=int,
        default=default_of(SimulateConfig, "concurrency"),
        help="simulations (and calls per endpoint) at once",
    )
    p.add_argument("--out", required=True, help="results JSON (resumed when it exists with the same settings)")
    return p


#: Endpoint settings -> the flags that set them (role: agent, user, judge)
def _endpoint_flags(role: str) -> dict[str, str]:
    return {
        "base_url": f"--{role}-base-url",
        "model": f"--{role}-model",
        "temperature": f"--{role}-temperature",
        "api_key_env": "--api-key-env",
        "timeout_s": "--timeout-s",
        "retries": "--retries",
        "max_concurrency": "--concurrency",
    }


def _endpoint(args: argparse.Namespace, role: str, base_url: str, model: str, temperature: float | None) -> Endpoint:
    from .common import name_flags

    section = {
        "base_url": base_url,
        "model": model,
        "temperature": temperature,
        "api_key_env": args.api_key_env,
        "timeout_s": args.timeout_s,
        "retries": args.retries,
        "max_concurrency": args.concurrency,
    }
    try:
        return Endpoint.from_mapping(section, role)
    except ValueError as exc:
        message = str(exc).removeprefix(f"{role}: ").removeprefix(f"{role}.")
        raise ValueError(name_flags(message, _endpoint_flags(role))) from None


def run(args: argparse.Namespace) -> int:
    """0 when the run finished, 1 when every simulation ended at an endpoint, 2 on configuration errors, 130 when
    interrupted."""
    from ..engine.client import asyncio_only_http

    asyncio_only_http()  # this process runs its HTTP on asyncio only
    try:
        name, domain = split_domain(args.domain)
        benchmark = benchmark_named(name)
        if benchmark is None or benchmark.simulate is None:
            raise ValueError(f"{args.domain!r}: simulate runs {', '.join(b.name for b in simulate_benchmarks())}")
        check_options(args, benchmark)
    except (DomainError, ValueError) as exc:
        return fail("simulate", exc)
    try:
        agent = _endpoint(args, "agent", args.agent_base_url, args.agent_model, args.agent_temperature)
        user = _endpoint(args, "user", args.user_base_url, args.user_model, args.user_temperature)
        judge = None
        if args.judge_model:
            judge = _endpoint(args, "judge", args.judge_base_url or args.user_base_url, args.judge_model, None)
        text, outcomes = benchmark.simulate.run(vars(args) | {"judge": judge}, domain, _run_settings(args, agent, user))
    except (SimulateError, ValueError, OSError) as exc:
        return fail("simulate", exc, DATA_DIR_FLAGS)
    except KeyboardInterrupt:
        print(f"interrupted: finished simulations are in {args.out}; run again to resume", file=sys.stderr)
        return 130
    print(text)
    print(f"results: {args.out}")
    return _all_failed_exit(outcomes)


def _run_settings(args: argparse.Namespace, agent: Endpoint, user: Endpoint) -> dict[str, Any]:
    """What both benchmarks' runs take from the command line: :class:`RunConfig`'s fields (their flags carry the
    same names) and ``--concurrency``."""
    named = {f.name: getattr(args, f.name) for f in fields(RunConfig) if f.name not in {"domain", "agent", "user"}}
    return {**named, "agent": agent, "user": user, "concurrency": args.concurrency}


def _all_failed_exit(outcomes: list) -> int:
    """1 with the first cause on stderr when every simulation ended at an endpoint (a typo'd model name, a
    dead server), else 0."""
    from ..engine.simulate import all_failed

    message = all_failed(outcomes)
    if message is None:
        return 0
    return fail("simulate", message, code=1)
