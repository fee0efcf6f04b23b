"""Old import paths of names that moved between the tau2 domain modules, kept until 0.3.0.

A module whose names moved sets ``__getattr__ = moved_names(__name__, {name: "new.module"})``
(``"new.module:new_name"`` for a renamed one): reading a moved name from the old module still works and warns with a
:class:`DeprecationWarning` naming the new path. It is the engine's rule for every moved name
(:func:`verl_rewards.engine.deprecation.moved`).
"""

from __future__ import annotations

from ...engine.deprecation import moved as moved_names

__all__ = ["moved_names"]
