"""The discoverable-tool protocol of ``banking_knowledge`` and the base every banking toolkit part builds on.

Discoverable tools (marked :func:`discoverable`) are not offered to the model: the agent is meant to reach them
through ``unlock_discoverable_agent_tool`` + ``call_discoverable_agent_tool``, the user through
``give_discoverable_user_tool`` (agent) + ``call_discoverable_user_tool``. Their definitions (shown on unlock and
give) are tau2's parsed docstrings, shipped in ``discoverable_tools.json``. As in tau2 (whose toolkit lists them
among its tools), a model may also call one by its own name, on its own side: the tool runs without being unlocked
or given, with its arguments as sent, and ``call_discoverable_agent_tool``'s log record is not written (a user tool
still checks that it was given and logs its call itself). A replay re-runs such a call when the tool writes.

The agent's discoverable tools are written in one class per concern (accounts, credit cards, debit cards, ...),
all :class:`BankTools`; the toolkit combines them. Python words a bad call's ``TypeError`` with the method's
qualified name, and tau2's texts name its own classes (``KnowledgeTools.x() missing 1 required positional
argument: ...``), so :func:`tau2_method_names` gives every discoverable method the combined class's name.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from ....engine.state import DBState
from ....engine.toolkit import GENERIC, WRITE, Toolkit
from .catalog import HISTORY_READERS, NOTICES
from .checks import executed
from .common import Tables, by_field, found

DISCOVERABLE_ATTR = "__bank_discoverable__"

_T = TypeVar("_T", bound=type)


def discoverable(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a toolkit method as a discoverable tool of type ``kind`` (reachable only through the protocol)."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        setattr(fn, DISCOVERABLE_ATTR, kind)
        return fn

    return mark


@cache
def discoverable_definitions() -> dict[str, dict[str, Any]]:
    """``{"agent": {name: definition}, "user": {...}}``: tau2's parsed docstrings of the discoverable tools."""
    text = resources.files(__package__).joinpath("discoverable_tools.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return {"agent": data["agent"], "user": data["user"]}


def discoverable_methods(cls: type) -> dict[str, Callable[..., Any]]:
    """The discoverable methods of ``cls`` and its bases by name (unbound functions; cached on the class)."""
    cached = cls.__dict__.get("_bank_discoverable_cache")
    if cached is None:
        cached = {}
        for klass in reversed(cls.__mro__):
            for name, fn in vars(klass).items():
                if getattr(fn, DISCOVERABLE_ATTR, None) is not None:
                    cached[name] = fn
        cls._bank_discoverable_cache = cached  # type: ignore[attr-defined]
    return cached


def parse_arguments(arguments: Any, *, floats: bool) -> tuple[Any, str | None]:
    """``(arguments, None)`` from a tool's JSON ``arguments`` (every integer a float when ``floats``: tau2 PR #397),
    or ``(None, tau2's error text)``."""
    try:
        return json.loads(arguments, parse_int=float if floats else None), None
    except json.JSONDecodeError as exc:
        return None, f"Error: Invalid JSON in arguments: {exc}"


def unexpected_parameter(args: Any, params: Mapping[str, Any]) -> str | None:
    """tau2's error for the first argument the tool's signature (``params``) does not have."""
    for key in args:
        if key not in params:
            return f"Error: Unexpected parameter: {key}"
    return None


def notice_tool(name: str) -> Callable[..., str]:
    """The GENERIC discoverable tool ``name`` without arguments: its notice (:data:`~.catalog.NOTICES`), then its
    ``Executed`` lines."""

    def answer(self) -> str:  # self unannotated, as in the methods written out (the same signature)
        return f"{NOTICES[name]}\n\n{executed(name)}"

    answer.__name__ = answer.__qualname__ = name
    return discoverable(GENERIC)(answer)


def tau2_method_names(cls: _T) -> _T:
    """Class decorator: every discoverable method of ``cls`` (its parts' included) is named ``<cls>.<method>``."""
    for name, fn in discoverable_methods(cls).items():
        fn.__qualname__ = f"{cls.__name__}.{name}"
    return cls


class BankTools(Toolkit):
    """What every banking toolkit part has: the tables of its DB state and tau2's query-text helpers."""

    def __init__(self, db: DBState):
        super().__init__(db)
        self.t = Tables(db)

    @classmethod
    def discoverable_tools(cls) -> dict[str, Callable[..., Any]]:
        """This toolkit's discoverable tools by name (unbound functions)."""
        return discoverable_methods(cls)

    def has_tool(self, name: str) -> bool:
        """The listed tools and, as in tau2, the discoverable tools called by their own names."""
        return super().has_tool(name) or name in self.discoverable_tools()

    def tool_mutates_state(self, name: str) -> bool:
        """A discoverable tool is re-run by a replay when it writes (tau2's ``is_discoverable_tool`` default)."""
        fn = self.discoverable_tools().get(name)
        if fn is None or super().has_tool(name):
            return super().tool_mutates_state(name)
        return bool(getattr(fn, DISCOVERABLE_ATTR) == WRITE)

    def _q(self, table: str, field: str, value: Any) -> str:
        """tau2's query text of the records whose ``field`` is ``value``."""
        return self.t.query(table, by_field(field, value))

    def _owned(self, table: str, record_id: Any, user_id: Any, label: str) -> tuple[dict[str, Any], str | None]:
        """``(record, None)`` for a record of ``table`` that belongs to ``user_id``, else ``({}, tau2's error)``
        naming the record ``label`` (not found, or another user's)."""
        records = self.t.r(table)
        if record_id not in records:
            return {}, f"Error: {label} '{record_id}' not found."
        record = records[record_id]
        if record.get("user_id") != user_id:
            return {}, f"Error: {label} '{record_id}' does not belong to user '{user_id}'."
        return record, None

    def _closed_account_error(self, card: dict[str, Any], done: str) -> str | None:
        """tau2's refusal to act on a debit card whose linked checking account is no longer open."""
        account_id = card.get("account_id")
        accounts = self.t.r("accounts")
        if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
            return f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be {done}."
        return None

    def _history(self, tool_name: str, value: str) -> str:
        """Run the ``get_*_history`` reader ``tool_name`` of :data:`~.catalog.HISTORY_READERS` on its argument."""
        reader = HISTORY_READERS[tool_name]
        if not value:
            return f"Error: Missing required parameter: {reader.field}"
        result = self._q(reader.table, reader.field, value)
        parts = [reader.header, "", f"Executed: {tool_name}", reader.title.format(value)]
        parts.append(result if found(result) else reader.none)
        return "\n".join(parts)
