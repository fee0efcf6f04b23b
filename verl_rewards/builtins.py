"""Deprecated (removed in 0.3.0): renamed :mod:`verl_rewards.catalog`; ``load()`` is
:func:`verl_rewards.catalog.register_builtins`."""

from __future__ import annotations

import warnings

from .catalog import BUILTIN_FAMILIES, MODULE, register_builtins

__all__ = ["BUILTIN_FAMILIES", "MODULE", "load", "register_builtins"]

warnings.warn("verl_rewards.builtins is deprecated; use verl_rewards.catalog", DeprecationWarning, stacklevel=2)


def load() -> None:
    """Deprecated: :func:`verl_rewards.catalog.register_builtins`."""
    warnings.warn(
        "verl_rewards.builtins.load() is deprecated; use verl_rewards.catalog.register_builtins()",
        DeprecationWarning,
        stacklevel=2,
    )
    register_builtins()
