"""Deprecated: moved to :mod:`verl_rewards.engine.toolkit` (the engine tau2 and
tau-bench share); this path goes in 0.3.0."""

from __future__ import annotations

from ..deprecation import moved_module

__getattr__ = moved_module(
    __name__,
    "verl_rewards.engine.toolkit",
    (
        "GENERIC",
        "READ",
        "Record",
        "ToolError",
        "ToolSpec",
        "Toolkit",
        "WRITE",
        "clone_json",
        "detached_record",
        "serialise_result",
        "tool",
    ),
)
