"""``verl-rewards demo``: one GRPO reward step through verl's real reward loop on this CPU (see ``demo.py``)."""

from __future__ import annotations

import argparse
from typing import Any

from ..contribution import CONTRIB_TYPES
from ..demo import run_demo
from .common import default_of, fail

HELP = "score a GRPO batch through verl's real reward loop on CPU (a local Ray cluster, a tiny tokenizer)"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``demo`` subcommand to the ``verl-rewards`` subparsers."""
    p = sub.add_parser(
        "demo",
        help=HELP,
        description=HELP + "; prints the per-rollout rewards and the metrics verl's compute_data_metrics logs",
    )
    p.add_argument("--prompts", type=int, default=default_of(run_demo, "n_prompts"), help="prompts (GRPO groups)")
    p.add_argument("--n", type=int, default=default_of(run_demo, "rollout_n"), help="rollouts per prompt")
    p.add_argument(
        "--contrib-type",
        default=default_of(run_demo, "contrib_type"),
        choices=CONTRIB_TYPES,
        help="the contribution term added to the reward",
    )
    p.add_argument("--beta", type=float, default=default_of(run_demo, "beta"), help="weight of the contribution term")
    p.add_argument(
        "--workers", type=int, default=default_of(run_demo, "num_workers"), help="reward workers (reward.num_workers)"
    )
    return p


def run(args: argparse.Namespace) -> int:
    """0 after the demo ran; 2 with one line for a setting it cannot run with (checked before Ray starts)."""
    from ..demo import DemoArgumentError

    try:
        run_demo(
            n_prompts=args.prompts,
            rollout_n=args.n,
            contrib_type=args.contrib_type,
            beta=args.beta,
            num_workers=args.workers,
        )
    except DemoArgumentError as exc:
        return fail("demo", exc)
    return 0
