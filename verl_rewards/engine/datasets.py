"""What the tau2 and tau-bench dataset builders (``verl-rewards prepare tau2|tau_bench``) share: the per-row tool
arguments verl hands each tool's ``create``, and the report of what was written."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: the splits a ``prepare`` writes when none are named: a recipe's training and validation files
DEFAULT_SPLITS = ("train", "test")


def tools_kwargs(names: Iterable[str], create: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A row's ``tools_kwargs``: the same ``create_kwargs`` (task id, domain, data folder) for every tool."""
    return {name: {"create_kwargs": dict(create)} for name in names}


@dataclass
class PrepareReport:
    """What a ``prepare`` wrote: rows per split, the files, the tool config and its number of tools."""

    domain: str
    data_dir: str
    rows: dict[str, int] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    tool_config: str = ""
    num_tools: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict form (for JSON logs), fields in order."""
        return dataclasses.asdict(self)
