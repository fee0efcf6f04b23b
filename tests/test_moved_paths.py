"""CHANGELOG.md's "Moved in 0.2.0" table is true: every new path it names exists, and no old one is served any more
(the package carries no aliases of moved names; a name an old module still imports for its own use is not part of
its ``__all__``)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from repo_paths import REPO

_SPAN = re.compile(r"`([^`]+)`")


def _pairs() -> list[tuple[str, str]]:
    """(old path, new path) for every ``verl_rewards`` path on the table's old side."""
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    section = text.split("### Moved in 0.2.0", 1)[1].split("\n### ", 1)[0]
    pairs = []
    for line in section.splitlines():
        if not line.startswith("| `verl_rewards."):
            continue
        old_cell, new_cell = line.strip("|").split(" | ", 1)
        head, *names = (span.removesuffix("()") for span in _SPAN.findall(old_cell))
        new = _SPAN.findall(new_cell)[0].removesuffix("()")
        if "and its modules" in old_cell:  # a renamed package and its modules
            pairs += [(head, new), *((f"{head}.{name}", f"{new}.{name}") for name in names)]
        elif names:  # `module`: `name`, ... -> the module that now holds each name under the same name
            pairs += [(f"{head}.{name}", f"{new}.{name}") for name in names]
        else:
            pairs.append((head, new))
    return pairs


def _resolve(path: str) -> tuple[Any, ModuleType | None]:
    """The object at a dotted path, and the module it is an attribute of (None when it is a module itself)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        owner = None
        for part in parts[cut:]:
            owner, value = value, getattr(value, part)
        return value, owner
    raise ModuleNotFoundError(path)


PAIRS = _pairs()


def test_the_table_lists_every_moved_path():
    olds = [old for old, _ in PAIRS]
    assert len(olds) == len(set(olds)) == 222


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[old for old, _ in PAIRS])
def test_the_new_path_exists_and_the_old_one_is_not_served(old: str, new: str) -> None:
    _resolve(new)
    try:
        value, owner = _resolve(old)
    except (ImportError, AttributeError):
        return
    module = value if owner is None else owner
    file = getattr(module, "__file__", None)
    # a folder left with only compiled files imports as an empty namespace package, and an editable install's finder
    # may find a module in another checkout: neither is served by this tree
    if file is None or REPO not in Path(file).resolve().parents:
        return
    name = old.rsplit(".", 1)[1]
    assert owner is not None, f"{old} still imports"
    # a name the old module imports for its own use is a binding of its own, but no part of its API
    assert name in vars(owner) and name not in getattr(owner, "__all__", ()), f"{old} is still served"
