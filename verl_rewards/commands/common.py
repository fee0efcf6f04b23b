"""What every ``verl-rewards`` command shares: the parser class (one-line usage errors, defaults in ``--help``, no
RST markup), the one-line error, the flag names of the settings behind an option, and the spelling of a domain."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter with each option's default appended (unless the help already states it or there is
    none worth showing) and RST double backticks removed from docstring-derived text."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        nothing = default is None or default is False or default is argparse.SUPPRESS or default in ("", [])
        shown = not nothing and "%(default)" not in text
        if shown and action.option_strings and "default" not in text.lower():
            text += " (default: %(default)s)"
        return text

    def _format_text(self, text: str) -> str:
        return super()._format_text(text.replace("``", ""))

    def _expand_help(self, action: argparse.Action) -> str:
        return super()._expand_help(action).replace("``", "")


class CliParser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit code 2), like every other error of a command, and
    :class:`HelpFormatter`; subcommand parsers made from it are of this class too.

    A command that passes arguments on (Hydra overrides) sets :attr:`passthrough` to an attribute name: everything
    after the first ``--`` lands there unparsed. argparse alone cannot keep that ``--``: it drops one that follows a
    positional (``smoke tau2 -- a=1`` gives ``[a=1]``, as ``smoke tau2 a=1`` does) and keeps one after options."""

    passthrough: str | None = None

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self.passthrough is None or args is None or "--" not in args:
            return super().parse_known_args(args, namespace)
        cut = list(args).index("--")
        parsed, extras = super().parse_known_args(list(args)[:cut], namespace)
        setattr(parsed, self.passthrough, list(args)[cut + 1 :])
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def name_flags(message: str, flags: Mapping[str, str]) -> str:
    """``message`` with each setting name behind an option (a config path such as
    ``reward.reward_kwargs.contribution.beta``, an API argument such as ``data_dir=``) replaced by the flag the user
    typed (``--beta``, ``--data-dir``)."""
    for name in sorted(flags, key=len, reverse=True):  # longest first: a.b.c before a.b
        message = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w])", flags[name], message)
    return message


def fail(command: str, exc: BaseException | str, flags: Mapping[str, str] | None = None, code: int = 2) -> int:
    """Print ``verl-rewards <command>: error: <message>`` as one line on stderr (settings named by their flags);
    the exit code ``code``: 2 for usage and configuration errors, 1 for a run that failed."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    if flags:
        message = name_flags(message, flags)
    print(f"verl-rewards {command}: error: {message}", file=sys.stderr)
    return code


#: API arguments of the data loaders and the flags that set them (every command with --data-dir)
DATA_DIR_FLAGS = {"data_dir=": "--data-dir", "data_dir": "--data-dir"}


def default_of(owner: Callable[..., Any] | type, name: str) -> Any:
    """The default the code that owns a setting gives it: a dataclass field's or a function parameter's."""
    if dataclasses.is_dataclass(owner):
        for f in dataclasses.fields(owner):
            if f.name == name:
                if f.default is dataclasses.MISSING:
                    break
                return f.default
        raise LookupError(f"{owner.__name__}.{name} has no default")
    param = inspect.signature(owner).parameters[name]
    if param.default is inspect.Parameter.empty:
        raise LookupError(f"{getattr(owner, '__name__', owner)}({name}=...) has no default")
    return param.default


class DomainError(ValueError):
    """A ``--domain`` value that names no domain of the command's benchmark."""


def split_domain(value: str, benchmark: str | None = None) -> tuple[str, str]:
    """``(benchmark, domain)`` of a ``--domain`` value: the data-source form (``tau2/airline``,
    ``tau_bench/retail``: a benchmark of the catalog with domains) or the bare domain (``airline``) of ``benchmark``
    (when a command serves several, the first of them in the catalog: tau2).

    A data-source form of another benchmark than the command's is a :class:`DomainError` naming the right one.
    """
    from ..benchmark_list import benchmarks

    names = [b.name for b in benchmarks() if b.load_domain is not None]
    head, sep, tail = value.partition("/")
    if sep and head in names:
        if not tail:
            raise DomainError(f"{value!r}: no domain after {head}/")
        if benchmark is not None and head != benchmark:
            raise DomainError(f"{value!r} is a {head} domain; this command takes {benchmark} domains")
        return head, tail
    return benchmark or names[0], value


def domain_type(benchmark: str) -> Callable[[str], str]:
    """An argparse ``type=``: the bare domain of ``benchmark`` from either spelling (usage error otherwise)."""

    def parse(value: str) -> str:
        try:
            return split_domain(value, benchmark)[1]
        except DomainError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = f"{benchmark} domain"
    return parse
