"""Old import paths of names that moved between the tau2 domain modules, kept until 0.3.0.

A module whose names moved sets ``__getattr__ = moved_names(__name__, {name: "new.module"})`` (or
``"new.module:new_name"`` for a renamed one): reading a moved name from the old module still works and warns with a
:class:`DeprecationWarning` naming the new path.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def moved_names(module: str, targets: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving each name of ``targets`` from its new module, with a DeprecationWarning."""

    def __getattr__(name: str) -> Any:
        target = targets.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new_module, _, new_name = target.partition(":")
        new_name = new_name or name
        warnings.warn(
            f"{module}.{name} is deprecated; use {new_module}.{new_name} (removed in 0.3.0)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new_module), new_name)

    return __getattr__
