"""Deprecated: moved to :mod:`verl_rewards.engine.trajectory` (the engine tau2 and
tau-bench share); this path goes in 0.3.0."""

from __future__ import annotations

from ..deprecation import moved_module

__getattr__ = moved_module(
    __name__,
    "verl_rewards.engine.trajectory",
    (
        "MAX_ARGUMENTS_CHARS",
        "MAX_MESSAGES",
        "MAX_NAME_CHARS",
        "MAX_TOOL_CALLS",
        "Message",
        "Pairing",
        "ROLES",
        "ToolCall",
        "check_tool_name",
        "pair_tool_calls",
        "parse_arguments",
        "parse_messages",
        "parse_tool_call",
        "strip_history",
        "tool_calls_of",
    ),
)
