"""``verl-rewards export-sft gold|results``: verl multi-turn SFT parquet from the gold policy or from scored runs
(:mod:`verl_rewards.gold.export`)."""

from __future__ import annotations

import argparse
from typing import Any

from ..benchmark import GOLD_CONCURRENCY, MIN_REWARD, ExportError
from ..benchmark_list import gold_benchmarks, results_benchmarks
from .common import DATA_DIR_FLAGS, fail, split_domain
from .help_texts import data_dir_help, domain_help, mode_choices, mode_help, split_help

#: the split ``export-sft gold`` exports when none is named
GOLD_SPLIT = "train"
HELP = "write verl multi-turn SFT parquet: gold trajectories, or successful runs of simulate results"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``export-sft`` subcommand to the ``verl-rewards`` subparsers."""
    p = sub.add_parser("export-sft", help=HELP, description=HELP)
    kinds = p.add_subparsers(dest="export_kind", required=True)
    gold = kinds.add_parser("gold", help="one gold conversation per task, re-scored with our reward")
    tasks = [b.name for b in gold_benchmarks() if b.load_domain is not None]  # played from their tasks
    rows = [b.name for b in gold_benchmarks() if b.load_domain is None]  # played from the rows of --rows
    gold.add_argument(
        "benchmark",
        choices=sorted(b.name for b in gold_benchmarks()),
        help=f"the benchmark whose gold is played ({' / '.join(rows)}: the rows of --rows, each answered with its "
        "ground truth)",
    )
    gold.add_argument(
        "--domain",
        default=None,
        help=f"{' / '.join(tasks)} (required): " + domain_help(*tasks),
    )
    gold.add_argument("--rows", default=None, help="toolrl (required): a parquet of `verl-rewards prepare toolrl`")
    gold.add_argument(
        "--split",
        default=GOLD_SPLIT,
        help=split_help(
            *tasks,
            *rows,
            default=GOLD_SPLIT,
            why="gold conversations are training data; a held-out split is exported only when named",
        ),
    )
    gold.add_argument(
        "--mode",
        choices=mode_choices(*tasks),
        default=None,
        help=mode_help(*tasks, default="as `prepare`"),
    )
    gold.add_argument(
        "--data-dir",
        default=None,
        help=data_dir_help(*tasks),
    )
    gold.add_argument("--user-base-url", default=None, help="normal mode: an OpenAI-compatible user model endpoint")
    gold.add_argument("--user-model", default=None, help="normal mode: the user model's name (with --user-base-url)")
    gold.add_argument(
        "--concurrency",
        type=int,
        default=GOLD_CONCURRENCY,
        help="conversations played at once (with a user model)",
    )
    gold.add_argument("--out", required=True, help="output folder: <out>/<split>.parquet")
    gold.add_argument("--force", action="store_true", help="replace an existing export")
    res = kinds.add_parser(
        "results", help="successful trajectories of tau2 Results / tau-bench results files / verl validation dumps"
    )
    res.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="tau2 Results JSON (or its folder), tau-bench results, verl validation dumps (<step>.jsonl of a run "
        "with +reward.reward_kwargs.record_trajectory=true)",
    )
    res.add_argument(
        "--min-reward",
        type=float,
        default=MIN_REWARD,
        help="keep trajectories with at least this reward",
    )
    res.add_argument("--per-task", type=int, default=None, help="at most N trajectories per task")
    res.add_argument(
        "--allow-split-mix",
        action="store_true",
        help="export tasks of a held-out split (tau2 test, tau-bench test/dev) into the training file anyway",
    )
    res.add_argument("--benchmark", default=None, help="expected source: tau2, tau_bench or e.g. tau2/airline")
    res.add_argument(
        "--data-dir",
        default=None,
        help=data_dir_help(*(b.name for b in results_benchmarks())),
    )
    res.add_argument("--out", required=True, help="output folder: <out>/train.parquet")
    res.add_argument("--force", action="store_true", help="replace an existing export")
    return p


def _user_factory(args: argparse.Namespace) -> Any:
    if not args.user_base_url:
        if args.user_model:
            raise ValueError("--user-model needs --user-base-url")
        return None
    from ..engine.client import Endpoint, shared_client
    from ..engine.users import OpenAIUser

    if not args.user_model:
        raise ValueError("--user-base-url needs --user-model")
    endpoint = Endpoint.from_mapping({"base_url": args.user_base_url, "model": args.user_model}, "user")
    return lambda: OpenAIUser(shared_client(endpoint))


def run(args: argparse.Namespace) -> int:
    """0 on success; 2 with a one-line message on bad input (nothing written)."""
    # the gold library (numpy, the rewards) only for a run: building the parser reads the records alone
    from ..catalog import benchmark_named
    from ..gold.export import export_gold, export_results

    try:
        if args.export_kind == "gold":
            bench = benchmark_named(args.benchmark)
            assert bench is not None  # argparse offered only these
            has_domains = bench.load_domain is not None
            if has_domains and not args.domain:
                raise ExportError(f"{args.benchmark} needs --domain")
            if not has_domains and args.domain:
                raise ExportError(f"{args.benchmark} has no domains: its rows come from --rows")
            if has_domains and args.rows:
                rows = " / ".join(b.name for b in gold_benchmarks() if b.load_domain is None)
                raise ExportError(f"--rows is {rows}'s; {args.benchmark} plays the tasks of --domain and --split")
            report = export_gold(
                args.benchmark,
                split_domain(args.domain, args.benchmark)[1] if args.domain else "",  # tau2/airline: the source
                args.split,
                args.out,
                mode=args.mode,
                data_dir=args.data_dir,
                user_factory=_user_factory(args),
                concurrency=args.concurrency,
                force=args.force,
                rows_file=args.rows,
            )
        else:
            report = export_results(
                args.files,
                args.out,
                min_reward=args.min_reward,
                per_task=args.per_task,
                allow_split_mix=args.allow_split_mix,
                benchmark=args.benchmark,
                data_dir=args.data_dir,
                force=args.force,
            )
    except (ExportError, ValueError, OSError) as exc:  # DomainError is a ValueError
        return fail("export-sft", exc, DATA_DIR_FLAGS)
    notes = f" ({'; '.join(report.notes)})" if report.notes else ""
    print(f"wrote {report.written} conversation(s) to {report.out}; dropped {report.dropped}{notes}")
    for line in report.dropped_tasks[:20]:
        print(f"  dropped: {line}")
    if len(report.dropped_tasks) > 20:
        print(f"  ... and {len(report.dropped_tasks) - 20} more")
    return 0
