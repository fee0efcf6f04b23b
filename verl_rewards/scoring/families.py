"""The registry of built-in reward families: rewards chosen by a row's data source, configured by one section.

A family (ToolRL for sources containing ``"rlla"``, tau2 for ``tau2/<domain>``, tau-bench v1 for
``tau_bench/<domain>``) is a :class:`Family`: how it recognises a data source, how it builds its scorer from its
``reward.reward_kwargs.<name>`` section (raising :class:`~verl_rewards.scoring.contract.ConfigError` for a bad
option) and every extra key its scorer may report. :mod:`verl_rewards.catalog` registers the built-in families
explicitly, in the order they are tried.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .contract import Scorer
from .registries import register_unique


@dataclass(frozen=True)
class Family:
    """A reward family (see the module doc)."""

    name: str  # also its section in reward.reward_kwargs
    matches: Callable[[str], bool]
    make_scorer: Callable[[Mapping[str, Any] | None, Any], Scorer]  # (section, tokenizer) -> scorer
    extra_keys: tuple[str, ...]
    #: the extra keys that hold text (a sample without one reports ``""``)
    text_keys: tuple[str, ...] = ()


_FAMILIES: dict[str, Family] = {}
_LOCK = threading.Lock()


def register_family(family: Family, *, replace: bool = False) -> Family:
    """Add ``family``, tried after those registered before it. The same family again is a no-op; a different one
    under a taken name is an error unless ``replace`` (it then takes the old one's place in the order)."""
    with _LOCK:
        return register_unique(
            _FAMILIES,
            family.name,
            family,
            kind="reward family",
            replace=replace,
            hint="register_family(..., replace=True)",
        )


def unregister_family(name: str) -> None:
    """Remove the family registered as ``name`` (none: nothing to do); for tests that register their own."""
    with _LOCK:
        _FAMILIES.pop(name, None)


def families() -> list[Family]:
    """The registered families, in the order they are tried."""
    with _LOCK:
        return list(_FAMILIES.values())
