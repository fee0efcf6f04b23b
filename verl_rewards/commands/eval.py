"""``verl-rewards eval PATH...``: pass^k, component and termination statistics of verl dumps and tau2 results."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from .common import fail

HELP = "pass^k, components and termination stats of verl validation/rollout dumps and tau2 results"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``eval`` subcommand to the ``verl-rewards`` subparsers."""
    p = sub.add_parser("eval", help=HELP, description=HELP)
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="verl dump (<step>.jsonl) or dump folder, tau2 results JSON (or its folder)",
    )
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        default=None,
        metavar="FILE",
        help="--json alone: print JSON instead of the tables; --json FILE: print the tables and write the JSON to FILE",
    )
    p.add_argument(
        "--plot",
        metavar="OUT.png",
        help="image (format from the extension: .png, .svg, .pdf, ...): pass^k vs k, reward/component bars, "
        "per-step curves",
    )
    p.add_argument("--baseline", metavar="PATH", help="another run (same kinds of input): print the differences")
    p.add_argument(
        "--success-threshold",
        type=float,
        default=None,
        help="a trial succeeds when its task reward >= this (every source); default: tau2 / tau-bench "
        "sources succeed within 1e-6 of 1.0, other sources report the mean reward only",
    )
    p.add_argument(
        "--k",
        type=int,
        default=None,
        help="report pass^1..k (error when a task has fewer trials); default: up to the fewest trials",
    )
    p.add_argument(
        "--data-source",
        default=None,
        help="label for rows without a data_source (verl dumps carry none), e.g. tau2/airline",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """0 on success; 2 with a one-line message on bad input or options."""
    # the evaluation library (numpy, the reward extras' layout) only for a run: building the parser stays light
    from ..evaluation.readers import read_inputs
    from ..evaluation.report import evaluate, format_tables, to_json, write_json, write_plot
    from ..evaluation.runs import EvalError
    from ..files import OutputPathError, image_format

    try:
        if args.success_threshold is not None and not math.isfinite(args.success_threshold):
            raise EvalError(f"--success-threshold must be a finite number, got {args.success_threshold}")
        if args.k is not None and args.k < 1:
            raise EvalError(f"--k must be at least 1, got {args.k}")
        if args.plot:
            image_format(args.plot, "--plot")  # before any input is read: a typo costs nothing
        results = evaluate(read_inputs(args.paths, args.data_source), args.success_threshold, args.k)
        baseline = None
        if args.baseline:
            baseline = evaluate(read_inputs([args.baseline], args.data_source), args.success_threshold, args.k)[-1]
        if args.json == "-":
            print(json.dumps(to_json(results, baseline), indent=2))
        else:  # the tables stay on screen when the JSON goes to a file
            print(format_tables(results, baseline))
            if args.json is not None:
                write_json(to_json(results, baseline), args.json)
                print(f"json: {args.json}")
        if args.plot:
            write_plot(results, args.plot, baseline)
            print(f"plot: {args.plot}", file=sys.stderr if args.json == "-" else sys.stdout)
    except (EvalError, OutputPathError, OSError) as exc:
        return fail("eval", exc)
    return 0
