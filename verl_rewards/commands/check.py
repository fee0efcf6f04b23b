"""``verl-rewards check -- HYDRA_OVERRIDES...``: a training config checked in seconds, on a laptop, before a GPU
allocation.

It does what ``python -m verl.trainer.main_ppo`` does at start-up, in this process and without Ray or a model:

1. ``import verl`` (verl loads its plugins, this one included, through the ``verl.plugins`` entry point: when verl
   would not load it, every later step fails as the run would);
2. composes verl's ``ppo_trainer.yaml`` with Hydra and the overrides (``hydra.searchpath=[pkg://verl_rewards.configs]``
   and ``+verl_rewards=contribution`` included), then runs ``main_ppo``'s driver checks: ``auto_set_device`` and
   ``validate_config``;
3. the task runner's: the V1 trainer class of ``trainer.v1.trainer_mode``, the config resolved; for the async modes
   (``colocate_async``, ``separate_async`` and trainers built on them) what their trainer, replay buffer and
   checkpoint engine assert at start-up;
4. builds the reward manager the way each reward worker does (``load_reward_manager``: the manager by name, the
   custom reward function, every ``reward.reward_kwargs`` key and family section; the tokenizer too when
   ``actor_rollout_ref.model`` names a local folder);
5. the agent-loop side: the tools of ``multi_turn.tool_config_path`` / ``function_tool_path`` (loaded as each
   agent-loop worker loads them), ``agent.agent_loop_config_path``, the default agent loop and every ``agent_name``
   of the data registered, and the settings of the loops that read their own (``custom.tau2``, ``custom.tau_bench``);
6. the data: ``data.train_files`` / ``data.val_files`` exist and are readable; which reward scores each
   ``data_source`` they hold, and every row-level ``reward_fn`` names a registered reward;
7. what the first step runs (:mod:`verl_rewards.checking.first_step`): ``algorithm.adv_estimator`` in verl's
   registry, every row's ``reward_fn`` field and its reward's required inputs, and no row choosing an endpoint,
   credential or path.
8. the contribution terms: per data source, what records the step dicts the configured terms read (the rows'
   own columns, or the agent loop that plays them: ``tool_agent`` with the tau2 / tau-bench tools, ``tau2_agent``,
   ``tau_bench_agent``); a term that can never fire there (verl's ``single_turn_agent`` records none) fails, and
   so does a ``value_source: critic`` term in a run without a critic.

The first failure is printed as one line (``verl-rewards check: error: <stage>: <message>``, exit code 2); a good
config prints its verdict line (exit code 0); ``-v`` adds the summary and what verl printed while building.

This module is the command (its options, the verdict, the one error path :func:`~verl_rewards.commands.common.fail`);
the stages are the check library's, :mod:`verl_rewards.checking`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from typing import Any

from ..checking.errors import CheckError
from .common import fail

HELP = "check a main_ppo config (Hydra overrides) as a run's start-up would, without Ray or a model"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``check`` subcommand to the ``verl-rewards`` subparsers."""
    p = sub.add_parser("check", help=HELP, description=HELP)
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print the summary (trainer, reward manager, agent loops, data, routing) and what verl printed",
    )
    p.add_argument(
        "overrides",
        nargs=argparse.REMAINDER,
        metavar="-- HYDRA_OVERRIDES",
        help="the overrides you would give main_ppo (after --)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """0 and a summary when the config would start; 2 and one line naming the stage that failed."""
    overrides = list(args.overrides or [])
    if overrides and overrides[0] == "--":
        overrides = overrides[1:]
    bad = [o for o in overrides if o.startswith("-")]
    if bad:
        return fail(
            "check", CheckError("arguments", f"{bad[0]!r} is not a Hydra override (check takes overrides only)")
        )
    from ..checking.startup import check

    printed = io.StringIO()  # what verl prints while it builds (tool schemas, configs): shown with -v only
    try:
        with contextlib.redirect_stdout(sys.stdout if args.verbose else printed):
            lines = check(overrides)
    except CheckError as exc:
        return fail("check", exc)
    print("\n".join(lines if args.verbose else lines[:1]))
    return 0
