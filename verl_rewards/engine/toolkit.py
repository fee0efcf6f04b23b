"""Tools of a tau2 domain: the ``@tool`` marker, the toolkit base class and tool-output serialisation.

A domain writes one :class:`Toolkit` subclass per side (agent, and user where the domain has a user DB).
Methods marked with :func:`tool` are the tools a policy may call; other public methods (``assert_*``,
initialisation helpers) are reachable only from task initialisation and env assertions, as in tau2.
A tool reports a failure by raising :class:`ToolError` (or any exception); the environment turns it into
the observation ``"Error: <message>"``. Tools validate before they mutate, so a failed call leaves the
state unchanged, except where tau2's own tool writes before it fails (noted at that tool).
"""

from __future__ import annotations

import datetime as _dt
import enum
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .state import DBState

READ = "read"
WRITE = "write"
GENERIC = "generic"
_KINDS = (READ, WRITE, GENERIC)


class ToolError(Exception):
    """A tool refused the call; the message becomes the observation ``"Error: <message>"``."""


@dataclass(frozen=True)
class ToolSpec:
    """What the registry knows of one tool: its type (tau2's ``ToolType``, what metrics and ``action_checks`` report)
    and whether a replay re-runs it (``mutates_state``: the type is WRITE, unless the tool says otherwise)."""

    name: str
    kind: str  # READ | WRITE | GENERIC
    description: str
    func: Callable[..., Any]
    mutates: bool | None = None

    @property
    def mutates_state(self) -> bool:
        return self.kind == WRITE if self.mutates is None else self.mutates


def tool(kind: str, *, mutates_state: bool | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a toolkit method as a tool of type ``kind`` (``"read"``, ``"write"`` or ``"generic"``).
    ``mutates_state`` (default: ``kind == "write"``), as tau2's ``is_tool``: whether replays re-run it."""
    if kind not in _KINDS:
        raise ValueError(f"tool kind must be one of {_KINDS}, got {kind!r}")

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__tau2_tool_kind__ = kind  # type: ignore[attr-defined]
        fn.__tau2_tool_mutates__ = mutates_state  # type: ignore[attr-defined]
        return fn

    return mark


def spec_of(name: str, fn: Callable[..., Any]) -> ToolSpec | None:
    """The :class:`ToolSpec` of a method marked with :func:`tool` (None for any other attribute)."""
    kind = getattr(fn, "__tau2_tool_kind__", None)
    if kind is None:
        return None
    mutates = getattr(fn, "__tau2_tool_mutates__", None)
    return ToolSpec(name=name, kind=kind, description=inspect.getdoc(fn) or "", func=fn, mutates=mutates)


class Toolkit:
    """Base of a domain's toolkit: holds the :class:`DBState` and lists the marked tools."""

    def __init__(self, db: DBState):
        self.db = db

    @classmethod
    def tool_specs(cls) -> dict[str, ToolSpec]:
        """Every ``@tool`` method of the class, by name, in definition order."""
        cached = cls.__dict__.get("_tool_specs_cache")
        if cached is not None:
            return cached
        specs: dict[str, ToolSpec] = {}
        for klass in reversed(cls.__mro__):
            for name, fn in vars(klass).items():
                spec = spec_of(name, fn)
                if spec is not None:
                    specs[name] = spec
        cls._tool_specs_cache = specs  # type: ignore[attr-defined]
        return specs

    def has_tool(self, name: str) -> bool:
        """Whether a model's call of ``name`` reaches a tool of this toolkit (the listed tools, and the tools a
        toolkit lets a model call without listing them)."""
        return name in self.tool_specs()

    def tool_mutates_state(self, name: str) -> bool:
        """tau2's ``tool_mutates_state``: whether a replay re-runs a call of ``name`` (a tool of :meth:`has_tool`)."""
        return self.tool_specs()[name].mutates_state

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call any public method (tool or helper) by name with keyword arguments."""
        if name.startswith("_") or not hasattr(self, name):
            raise ToolError(f"Tool '{name}' not found.")
        fn = getattr(self, name)
        if not callable(fn):
            raise ToolError(f"Tool '{name}' not found.")
        return fn(**arguments)


class Record(dict):
    """A dict a tool returns where tau2 returns a pydantic model: its numbers stay native in the observation."""


def clone_json(value: Any) -> Any:
    """Deep copy of JSON-like data (dicts, lists, scalars); faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: clone_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone_json(v) for v in value]
    return value


def detached_record(value: dict[str, Any]) -> Record:
    """A :class:`Record` copy of a DB record, so the caller can never mutate the state through it."""
    return Record(clone_json(value))


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return dict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def serialise_result(value: Any) -> str:
    """Observation text of a tool's return value, as tau2's ``to_json_str`` writes it.

    A string is returned as is. A :class:`Record` (tau2: a pydantic model), alone or nested in plain
    containers, keeps native numbers; numbers and booleans directly inside plain dicts and lists become
    strings (tau2 turns ``{"charge": 10.0}`` into ``{"charge": "10.0"}``).
    """
    if isinstance(value, str):
        return value
    return json.dumps(_plain(value), default=str)
