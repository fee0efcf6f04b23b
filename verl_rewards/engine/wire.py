"""How a benchmark's runner writes a conversation's messages into a chat-completions request (the rule set's ``wire``).

The conversation engine keeps its views in plain chat-completions shape (``content`` always present, tool calls as
``{"id", "type", "function": {"name", "arguments"}}``). What reaches the endpoint is what the benchmark's own runner
sends, so a model (and its chat template) sees the same request under both:

* ``"tau2"``: tau2-bench's ``to_litellm_messages`` as litellm then sends it (requests recorded from tau2-bench 1.0.1
  with litellm 1.82.6 in ``tests/data/reference/tau2_runs.json``): keys whose value is None are left out (an agent
  message with tool calls and no text has no ``content``; a text message has no ``tool_calls``), each tool call is
  ``{"id", "name", "function": {"name", "arguments"}, "type": "function"}`` with the arguments written again by
  ``json.dumps`` from their parsed value (``{"a":1}`` is sent as ``{"a": 1}``), a tool message is
  ``{"role", "content", "tool_call_id"}``;
* ``"plain"``: the views as they are (tau-bench v1).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

WIRES = ("tau2", "plain")


def encode(messages: Sequence[dict[str, Any]], wire: str) -> list[dict[str, Any]]:
    """``messages`` (a conversation view) as the ``wire`` rule writes them into a request."""
    if wire == "plain":
        return [dict(m) for m in messages]
    if wire == "tau2":
        return [_tau2(m) for m in messages]
    raise ValueError(f"wire must be one of {WIRES}, got {wire!r}")


def _tau2(message: dict[str, Any]) -> dict[str, Any]:
    role = message.get("role")
    if role == "tool":
        out = {"role": "tool", "content": message.get("content"), "tool_call_id": message.get("tool_call_id")}
        return {k: v for k, v in out.items() if v is not None}
    out = {"role": role, "content": message.get("content")}
    if role == "assistant" and message.get("tool_calls"):
        out["tool_calls"] = [_tau2_call(c) for c in message["tool_calls"]]
    return {k: v for k, v in out.items() if v is not None}


def _tau2_call(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function") or {}
    name = fn.get("name")
    return {
        "id": call.get("id"),
        "name": name,
        "function": {"name": name, "arguments": _rewritten(fn.get("arguments"))},
        "type": "function",
    }


def _rewritten(arguments: Any) -> Any:
    """tau2 keeps a call's arguments parsed and sends ``json.dumps`` of them; text that does not parse (kept by
    training's ``agent_error`` rule) is sent as it is."""
    if isinstance(arguments, dict):
        return json.dumps(arguments)
    try:
        return json.dumps(json.loads(arguments))
    except (TypeError, ValueError, RecursionError):
        return arguments
