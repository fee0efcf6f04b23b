"""``verl-rewards score FILE``: score a JSONL of rollouts offline through the training core
(see :mod:`verl_rewards.offline`), print a per-component table, and on request write a histogram and the scores."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..contribution import CONTRIB_TYPES, DEFAULT_BETA
from ..manager.config import ManagerConfig
from ..scoring.executors.base import EXECUTORS
from .common import default_of, fail

HELP = "score a JSONL of rollouts offline with a registered reward (a per-component table)"

#: the reward_kwargs settings behind this command's options, named by their flags in errors
FLAGS = {
    "reward.reward_kwargs.modules": "--module",
    "reward.reward_kwargs.contribution.beta": "--beta",
    "reward.reward_kwargs.contribution.type": "--contrib-type",
    "reward.reward_kwargs.timeout_s": "--timeout-s",
    "reward.reward_kwargs.executor": "--executor",
    "reward.reward_kwargs.reward_fn": "--reward",
}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``score`` subcommand to the ``verl-rewards`` subparsers."""
    p = sub.add_parser(
        "score",
        help=HELP,
        description=HELP + " through the same scoring core as training; optionally a histogram and the scored rows",
    )
    p.add_argument(
        "input",
        help="JSONL: verl's trainer.rollout_data_dir dump or the plain format (docs: Writing your own reward, "
        "'Offline scoring')",
    )
    p.add_argument("--reward", help="registered reward name (default: the built-in routing by data_source)")
    p.add_argument(
        "--module", action="append", default=[], help="module name or .py file to import (repeat for several)"
    )
    p.add_argument(
        "--timeout-s",
        type=float,
        default=default_of(ManagerConfig, "timeout_s"),
        help="seconds one reward call may take before it scores the fallback",
    )
    p.add_argument(
        "--executor",
        choices=EXECUTORS,
        default=default_of(ManagerConfig, "executor"),
        help="where reward calls run: threads, or worker processes (killed and replaced when a call hangs)",
    )
    p.add_argument("--contrib-type", choices=CONTRIB_TYPES, default="none", help="the contribution term added")
    p.add_argument("--beta", type=float, default=DEFAULT_BETA, help="weight of the contribution term")
    p.add_argument(
        "--hist",
        default="",
        metavar="FILE",
        help="write a histogram of the rewards to FILE, format from the extension: .png, .svg, .pdf, ... "
        "(default: none)",
    )
    p.add_argument(
        "--out", default="", metavar="FILE", help="write the rows with their scores as JSONL (may be the input)"
    )
    return p


def run(args: argparse.Namespace) -> int:
    """0 after the table printed; 2 with one line (naming the option) on bad input, output paths or options."""
    from ..files import OutputPathError
    from ..manager import ManagerConfigError, RewardInputError
    from ..offline import OfflineInputError

    try:
        return _score(args)
    except (ManagerConfigError, RewardInputError, OfflineInputError, OutputPathError, LookupError, OSError) as exc:
        return fail("score", exc, FLAGS)


def _score(args: argparse.Namespace) -> int:
    """Output paths and the histogram format are checked before anything is scored."""
    from ..files import OutputPathError, check_output_path, image_format
    from ..offline import read_rollouts, score_samples, write_histogram, write_scored

    source = Path(args.input).resolve()
    if args.hist:
        image_format(args.hist, "--hist")
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
