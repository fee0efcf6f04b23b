"""Deprecated (removed in 0.3.0): renamed :mod:`verl_rewards.catalog`; ``load()`` is
:func:`verl_rewards.catalog.register_builtins`."""

from __future__ import annotations

from .catalog import BUILTIN_FAMILIES, MODULE, register_builtins
from .deprecation import warn_deprecated

__all__ = ["BUILTIN_FAMILIES", "MODULE", "load", "register_builtins"]

warn_deprecated(__name__, "verl_rewards.catalog", stacklevel=2)


def load() -> None:
    """Deprecated: :func:`verl_rewards.catalog.register_builtins`."""
    warn_deprecated("verl_rewards.builtins.load()", "verl_rewards.catalog.register_builtins()")
    register_builtins()
