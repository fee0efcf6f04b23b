"""The one rule of every registry of named things in this package: rewards (:mod:`.spec`), reward families
(:mod:`.families`) and tau2 domains (:mod:`verl_rewards.tau2.registry`).

Registering the same entry again under its name is accepted (loading a module twice is harmless); registering a
*different* entry under a taken name is an error naming both, unless the caller asks to replace it. What "the
same" means is the registry's: the same object for families and domains; for rewards the same definition (source
file and qualified name), because verl may import a reward file twice under two module names.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, MutableMapping
from typing import TypeVar

T = TypeVar("T")

__all__ = ["register_unique"]


def register_unique(
    table: MutableMapping[str, T],
    key: str,
    entry: T,
    *,
    kind: str,
    same: Callable[[T, T], bool] = operator.is_,
    describe: Callable[[T], str] | None = None,
    error: type[Exception] = ValueError,
    replace: bool = False,
    hint: str = "",
) -> T:
    """Put ``entry`` in ``table`` under ``key`` by the rule above (the caller holds the registry's lock).

    An entry already there stays in its place (a dict keeps the position of a replaced key), so an ordered
    registry keeps its order.
    """
    existing = table.get(key)
    if existing is not None and not replace and not same(existing, entry):
        old = f" by {describe(existing)}" if describe else ""
        new = f" ({describe(entry)})" if describe else ""
        raise error(
            f"{kind} {key!r} is already registered{old}; a different one{new} cannot take its name"
            + (f" ({hint})" if hint else "")
        )
    table[key] = entry
    return entry
