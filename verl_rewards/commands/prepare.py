"""``verl-rewards prepare toolrl|tau2|tau_bench``: a dataset to verl parquet (and the tool config of the tool agent
loop), through :mod:`verl_rewards.toolrl.data`, :mod:`verl_rewards.tau2.data` and :mod:`verl_rewards.tau_bench.data`."""

from __future__ import annotations

import argparse
from typing import Any

from ..tau2 import data as tau2_data
from ..tau_bench import data as tau_bench_data
from ..tau_bench.domain import DOMAINS as TAU_BENCH_DOMAINS
from ..toolrl import data as toolrl_data
from .common import DATA_DIR_FLAGS, data_dir_help, default_of, domain_help, domain_type, fail, split_help

HELP = "convert a dataset (ToolRL, tau2, tau-bench) to verl parquet"
#: prepare_tau2 / prepare_tau_bench arguments named by their flags in errors
FLAGS = {**DATA_DIR_FLAGS, "holdout": "--holdout", "retrieval": "--retrieval"}
#: why ``prepare``'s splits default to train,test
TRAIN_AND_VAL = "the training and validation files of a recipe, data.train_files and data.val_files"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``prepare`` subcommand (and one subcommand per dataset) to the ``verl-rewards`` subparsers."""
    prepare = sub.add_parser(
        "prepare",
        help=HELP,
        description=HELP + "; tau2 and tau-bench also get the tool config of verl's tool agent loop",
    )
    datasets = prepare.add_subparsers(dest="dataset", required=True, metavar="DATASET")
    _add_toolrl(datasets)
    _add_tau2(datasets)
    _add_tau_bench(datasets)
    return prepare


def _add_toolrl(datasets: Any) -> None:
    about = "ToolRL rows (instruction/input/output) -> verl parquet"
    p = datasets.add_parser("toolrl", help=about, description=about)
    p.add_argument("--input", required=True, help=".json, .jsonl or .parquet (docs: Getting started, 'Data')")
    p.add_argument("--out", required=True, help="output directory (<out>/<split>.parquet)")
    p.add_argument(
        "--split",
        default=default_of(toolrl_data.prepare_toolrl, "split"),
        help=split_help("toolrl", default=default_of(toolrl_data.prepare_toolrl, "split"), why="the training file"),
    )
    p.add_argument("--strict", action="store_true", help="stop at the first malformed row")


def _add_tau2(datasets: Any) -> None:
    about = "tau2 tasks -> verl parquet + tool config for the tool agent loop"
    p = datasets.add_parser("tau2", help=about, description=about)
    p.add_argument(
        "--data-dir",
        default=None,
        help=data_dir_help("tau2"),
    )
    p.add_argument(
        "--domain",
        required=True,
        type=domain_type("tau2"),
        help=domain_help("tau2"),
    )
    p.add_argument("--out", required=True, help="output directory (<out>/<split>.parquet, <out>/tool_config.yaml)")
    p.add_argument(
        "--split",
        default=",".join(default_of(tau2_data.prepare_tau2, "splits")),
        help=split_help(
            "tau2", default=",".join(default_of(tau2_data.prepare_tau2, "splits")), why=TRAIN_AND_VAL, several=True
        ),
    )
    p.add_argument(
        "--mode",
        default=None,
        choices=tau2_data.MODES,
        help="normal: a simulated user talks to the agent (tau2_agent loop; default for "
        f"{', '.join(tau2_data.NORMAL_DEFAULT_DOMAINS)}); solo: the agent works from a ticket "
        "(tool_agent; default for the others)",
    )
    p.add_argument(
        "--retrieval",
        default=None,
        help="banking_knowledge: the retrieval configuration (bm25, the default; bm25_grep, grep_only, full_kb, "
        "golden_retrieval, no_knowledge)",
    )
    p.add_argument(
        "--holdout",
        type=float,
        default=None,
        help="write train/test from a seeded random fraction of all tasks held out as test (for domains "
        "without a split, such as banking_knowledge)",
    )
    p.add_argument(
        "--holdout-seed", type=int, default=default_of(tau2_data.prepare_tau2, "seed"), help="seed of --holdout's draw"
    )


def _add_tau_bench(datasets: Any) -> None:
    about = "tau-bench (v1) tasks -> verl parquet + tool config"
    p = datasets.add_parser("tau_bench", help=about, description=about)
    p.add_argument(
        "--data-dir",
        default=None,
        help=data_dir_help("tau_bench"),
    )
    p.add_argument(
        "--domain",
        required=True,
        type=domain_type("tau_bench"),
        choices=sorted(TAU_BENCH_DOMAINS),
        metavar="DOMAIN",
        help=domain_help("tau_bench"),
    )
    p.add_argument(
        "--split",
        default=",".join(default_of(tau_bench_data.prepare_tau_bench, "splits")),
        help=split_help(
            "tau_bench",
            default=",".join(default_of(tau_bench_data.prepare_tau_bench, "splits")),
            why=TRAIN_AND_VAL,
            several=True,
        ),
    )
    p.add_argument(
        "--mode",
        default=default_of(tau_bench_data.prepare_tau_bench, "mode"),
        choices=tau_bench_data.MODES,
        help="normal: tau-bench's simulated user talks to the agent (tau_bench_agent loop, a user model needed); "
        "instruction: the task instruction is the first user message and a text reply ends (tool_agent loop, "
        "no user model)",
    )
    p.add_argument("--out", required=True, help="output directory (<out>/<split>.parquet, tool_config.yaml)")


def run(args: argparse.Namespace) -> int:
    """0 when every row converted, 1 when some were bad, 2 on errors (one line naming the option)."""
    if args.dataset == "toolrl":
        try:
            report = toolrl_data.prepare_toolrl(args.input, args.out, split=args.split, strict=args.strict)
        except (toolrl_data.ToolRLDataError, OSError, ValueError) as exc:  # NothingConvertedError: all rows bad
            return fail("prepare toolrl", exc)
        return 0 if report.bad == 0 else 1
    if args.dataset == "tau2":
        from ..tau2.errors import Tau2Error

        try:
            tau2_report = tau2_data.prepare_tau2(
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
            return fail("prepare tau2", exc, FLAGS)
        for split, n in tau2_report.rows.items():
            print(f"{split}: {n} rows -> {tau2_report.files[split]}")
        print(f"tool config ({tau2_report.num_tools} tools): {tau2_report.tool_config}")
        return 0
    try:
        tb_report = tau_bench_data.prepare_tau_bench(
            args.data_dir, args.domain, args.out, args.split.split(","), mode=args.mode
        )
    except (tau_bench_data.TauBenchPrepareError, OSError) as exc:
        return fail("prepare tau_bench", exc, FLAGS)
    for split, n in tb_report.rows.items():
        print(f"{split}: {n} rows -> {tb_report.files[split]}")
    print(f"tool config ({tb_report.num_tools} tools): {tb_report.tool_config}")
    return 0
