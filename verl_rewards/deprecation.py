"""Old import paths kept for one release (CHANGELOG, 0.2.0, "Deprecated"): the one rule and wording for every name
or module that moved or was renamed. Reading an old name gives the very object at its new path and emits a
:class:`DeprecationWarning` naming that path."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["REMOVED_IN", "moved", "moved_module", "renamed_module", "warn_deprecated"]

REMOVED_IN = "0.3.0"


def warn_deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` (a dotted path, a call or a keyword) is deprecated in favour of ``new``."""
    warnings.warn(
        f"{old} is deprecated; use {new} (the old path goes in {REMOVED_IN})", DeprecationWarning, stacklevel=stacklevel
    )


def moved(old_module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``old_module``: ``names`` maps each moved name to the module that now holds it under
    the same name, or to ``"module:attribute.path"`` where it now has another name."""

    def __getattr__(name: str) -> Any:
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        new_module, _, path = target.partition(":")
        path = path or name
        warn_deprecated(f"{old_module}.{name}", f"{new_module}.{path}")
        value: Any = importlib.import_module(new_module)
        for part in path.split("."):
            value = getattr(value, part)
        return value

    return __getattr__


def moved_module(old_module: str, new_module: str, names: Iterable[str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of a module whose names all moved to ``new_module``."""
    return moved(old_module, dict.fromkeys(names, new_module))


def renamed_module(old_module: str, new: ModuleType, submodules: Iterable[str] = ()) -> None:
    """Make the module being imported as ``old_module`` the very module ``new`` (and ``old_module.<sub>`` the same
    submodule of ``new`` for each of ``submodules``), warning once, at that first import."""
    warn_deprecated(old_module, new.__name__, stacklevel=4)
    for sub in submodules:
        sys.modules[f"{old_module}.{sub}"] = importlib.import_module(f"{new.__name__}.{sub}")
    sys.modules[old_module] = new
