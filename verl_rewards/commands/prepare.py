"""``verl-rewards prepare <benchmark>``: a dataset to verl parquet (and the tool config of the tool agent loop), one
subcommand per benchmark of the catalog, each built from the benchmark's :class:`~verl_rewards.benchmark.PrepareEntry`
(``toolrl/benchmark.py``, ``tau2/benchmark.py``, ``tau_bench/benchmark.py``)."""

from __future__ import annotations

import argparse
from typing import Any

from ..benchmark_list import benchmark_named, benchmarks
from .common import DATA_DIR_FLAGS, domain_type, fail
from .help_texts import data_dir_help, domain_help, split_help

HELP = "convert a dataset (ToolRL, tau2, tau-bench) to verl parquet"
#: prepare arguments named by their flags in errors
FLAGS = {**DATA_DIR_FLAGS, "holdout": "--holdout", "retrieval": "--retrieval"}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``prepare`` subcommand (and one subcommand per benchmark) to the ``verl-rewards`` subparsers."""
    prepare = sub.add_parser(
        "prepare",
        help=HELP,
        description=HELP + "; tau2 and tau-bench also get the tool config of verl's tool agent loop",
    )
    datasets = prepare.add_subparsers(dest="dataset", required=True, metavar="DATASET")
    for benchmark in benchmarks():
        entry = benchmark.prepare
        if entry is None:
            continue
        p = datasets.add_parser(benchmark.name, help=entry.about, description=entry.about)
        if entry.data_dir:
            p.add_argument("--data-dir", default=None, help=data_dir_help(benchmark.name))
        if entry.domains:
            choices = {"choices": sorted(benchmark.domains()), "metavar": "DOMAIN"} if entry.domain_choices else {}
            p.add_argument(
                "--domain", required=True, type=domain_type(benchmark.name), help=domain_help(benchmark.name), **choices
            )
        if entry.split_default is not None:
            p.add_argument(
                "--split",
                default=entry.split_default,
                help=split_help(
                    benchmark.name, default=entry.split_default, why=entry.split_why, several=entry.split_several
                ),
            )
        for option in entry.options:
            option.add_to(p)
    return prepare


def run(args: argparse.Namespace) -> int:
    """0 when every row converted, 1 when some were bad, 2 on errors (one line naming the option)."""
    benchmark = benchmark_named(args.dataset)
    assert benchmark is not None and benchmark.prepare is not None  # argparse offered only these
    entry = benchmark.prepare
    try:
        lines, bad = entry.run(vars(args))
    except entry.errors as exc:
        return fail(f"prepare {benchmark.name}", exc, FLAGS)
    for line in lines:
        print(line)
    return 0 if bad == 0 else 1
