"""A small scripted-turn source for smoke tests: ToolRL's ground truth as the one assistant turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def toolrl_turns(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The row's ground-truth response as the assistant's only message."""
    return [{"content": str((row.get("reward_model") or {}).get("ground_truth") or "")}]
