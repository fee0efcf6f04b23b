"""The verl-rewards command: doctor (is the plugin active here?), data (get the benchmarks' data files), demo, score
(offline), prepare (datasets to verl parquet), simulate (tau2 or tau-bench normal mode against served models), eval
(pass^k and tau2 statistics of verl dumps / tau2 results / tau-bench results), check (a main_ppo config, as a run's
start-up would), smoke (verl's main_ppo on the CPU with a tiny model), learn (a tiny model taught by our reward on
the CPU: SFT, then GRPO), export-sft (verl multi-turn SFT data from gold or successful runs)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from . import check as _check
from .benchmark_data import command as _data
from .commands import demo as _demo
from .commands import doctor as _doctor
from .commands import prepare as _prepare
from .commands import score as _score
from .commands import simulate as _simulate
from .commands.common import CliParser
from .cpu import command as _smoke
from .deprecation import moved
from .evaluation import command as _eval
from .gold import command as _export_sft
from .learning import command as _learn

__all__ = ["COMMANDS", "build_parser", "main"]

#: every command, in the order ``--help`` lists them: a module with ``add_parser(subparsers)`` and ``run(args)``
COMMANDS: tuple[ModuleType, ...] = (
    _doctor,
    _data,
    _demo,
    _score,
    _prepare,
    _simulate,
    _eval,
    _check,
    _smoke,
    _learn,
    _export_sft,
)


def build_parser() -> CliParser:
    """The ``verl-rewards`` parser, one subcommand per module of :data:`COMMANDS`."""
    parser = CliParser(prog="verl-rewards", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(sub).set_defaults(command_handler=module.run)
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """Give every (sub)command without a description of its own its one-line help as one."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not sub.description:
                    sub.description = helps.get(name)
                _describe(sub)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (2 for usage and configuration errors, printed as one line)."""
    args = build_parser().parse_args(argv)
    return int(args.command_handler(args))


#: names this module held before the commands moved to their own modules (deprecated, removed in 0.3.0)
__getattr__ = moved(
    __name__,
    {
        "doctor": "verl_rewards.commands.doctor",
        "score_command": "verl_rewards.commands.score:run",
        "prepare_command": "verl_rewards.commands.prepare:run",
        "simulate_command": "verl_rewards.commands.simulate:run",
    },
)


if __name__ == "__main__":
    sys.exit(main())
