"""Old import paths of moved names, kept for one release: a module-level ``__getattr__`` that serves each moved
name from its new module with a ``DeprecationWarning`` (CHANGELOG, 0.2.0, "Deprecated")."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

REMOVED_IN = "0.3.0"


def moved(old_module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``old_module``: ``names`` maps each moved name to the module that now holds it under
    the same name, or to ``"module:attribute.path"`` where it now has another name."""

    def __getattr__(name: str) -> Any:
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        new_module, _, path = target.partition(":")
        path = path or name
        warnings.warn(
            f"{old_module}.{name} moved to {new_module}.{path}; the old path goes in {REMOVED_IN}",
            DeprecationWarning,
            stacklevel=2,
        )
        value: Any = importlib.import_module(new_module)
        for part in path.split("."):
            value = getattr(value, part)
        return value

    return __getattr__


def moved_module(old_module: str, new_module: str, names: Iterable[str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of a module that moved whole: every name of ``names`` now lives in ``new_module``."""
    return moved(old_module, dict.fromkeys(names, new_module))
