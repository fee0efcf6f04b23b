"""The verl-rewards command: doctor (is the plugin active here?), data (get the benchmarks' data files), demo, score
(offline), prepare (datasets to verl parquet), simulate (tau2 or tau-bench normal mode against served models), eval
(pass^k and tau2 statistics of verl dumps / tau2 results / tau-bench results), check (a main_ppo config, as a run's
start-up would), smoke (verl's main_ppo on the CPU with a tiny model), learn (a tiny model taught by our reward on
the CPU: SFT, then GRPO), export-sft (verl multi-turn SFT data from gold or successful runs)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from .commands.common import CliParser

__all__ = ["COMMAND_MODULES", "build_parser", "entry", "main"]  # and COMMANDS (see __getattr__)

#: every command, in the order ``--help`` lists them: its name and the module with ``add_parser(subparsers)`` and
#: ``run(args)``, imported only when needed (a run of one command imports that command's module only)
COMMAND_MODULES: dict[str, str] = {
    "doctor": "verl_rewards.commands.doctor",
    "data": "verl_rewards.commands.data",
    "demo": "verl_rewards.commands.demo",
    "score": "verl_rewards.commands.score",
    "prepare": "verl_rewards.commands.prepare",
    "simulate": "verl_rewards.commands.simulate",
    "eval": "verl_rewards.commands.eval",
    "check": "verl_rewards.commands.check",
    "smoke": "verl_rewards.commands.smoke",
    "learn": "verl_rewards.commands.learn",
    "export-sft": "verl_rewards.commands.export_sft",
}


def build_parser(only: str | None = None) -> CliParser:
    """The ``verl-rewards`` parser, one subcommand per module of :data:`COMMAND_MODULES` (``only``: just that
    command's, which imports no other command's module)."""
    parser = CliParser(prog="verl-rewards", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, path in COMMAND_MODULES.items():
        if only is None or name == only:
            module = importlib.import_module(path)
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
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv[0] if argv and argv[0] in COMMAND_MODULES else None).parse_args(argv)
    return int(args.command_handler(args))


def entry() -> NoReturn:
    """The ``verl-rewards`` console script (and ``python -m verl_rewards.cli``): :func:`main`, then the process ends.
    What the command built stays in memory to the end, so the interpreter's last garbage collection is told to skip
    it (``gc.freeze``: ~0.1 s after a command that loaded telecom's 2,285 tasks). :func:`main` itself, called in a
    longer-lived process, leaves the collector alone."""
    import gc

    code = main()
    gc.freeze()
    sys.exit(code)


def __getattr__(name: str) -> Any:
    """``COMMANDS``: the command modules (imported on first access), in ``--help`` order."""
    if name == "COMMANDS":
        commands: tuple[ModuleType, ...] = tuple(importlib.import_module(p) for p in COMMAND_MODULES.values())
        return commands
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    entry()
