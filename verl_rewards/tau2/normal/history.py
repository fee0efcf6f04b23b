"""A task that starts from a message history (tau2's ``initial_state.message_history``, e.g. mock's
``update_task_with_message_history``), in normal mode.

As tau2's orchestrator does (``src/tau2/orchestrator/orchestrator.py``, ``initialize``): the environment starts with
the history's calls applied (:meth:`Domain.make_env <verl_rewards.tau2.domain.Domain.make_env>` replays them), there
is no greeting, the history opens the trajectory, and each side sees its part of it; the run continues from the
history's last message (:meth:`Conversation.start <verl_rewards.engine.conversation.Conversation.start>`).

:func:`history_messages` is the history in trajectory format (the conversation's ``history``); :func:`history_prompt`
is what the agent sees of it, in the shape of a verl prompt row (after the system prompt): tool-call arguments as
JSON text, so that a parquet column holds one type whatever the tools (the ``tau2_agent`` loop reads them back into
objects, :func:`prompt_for_template`, as verl's own loop writes an assistant message for the chat template).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...engine.trajectory import pair_tool_calls
from ..tasks import Task


def history_messages(task: Task) -> list[dict[str, Any]]:
    """The task's initial messages as trajectory messages: tool calls in OpenAI shape (arguments as JSON text), tool
    messages with the requestor of the call they answer and tau2's ``error`` flag."""
    history = task.history
    raw = ((task.raw.get("initial_state") or {}).get("message_history")) or []
    requestor = {answer.index: call.requestor for call, answer in pair_tool_calls(history).pairs}
    out: list[dict[str, Any]] = []
    for m in history:
        if m.role == "tool":
            extra = raw[m.index] if m.index < len(raw) and isinstance(raw[m.index], dict) else {}
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": m.tool_call_id,
                    "content": m.content,
                    "requestor": requestor.get(m.index, "assistant"),
                    "error": bool(extra.get("error", False)),
                }
            )
            continue
        message: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments or {}, ensure_ascii=False)},
                }
                for c in m.tool_calls
            ]
        out.append(message)
    return out


def history_prompt(task: Task) -> list[dict[str, Any]]:
    """What the agent sees of the history (its messages, the user's text, the results of its own calls), as prompt
    messages: ``content`` "" where there is none (verl's assistant messages), arguments as JSON text."""
    prompt = []
    for m in history_messages(task):
        if m["role"] == "tool":
            if m["requestor"] == "assistant":
                prompt.append({"role": "tool", "content": m["content"] or "", "tool_call_id": m["tool_call_id"]})
        elif m["role"] == "assistant" or not m.get("tool_calls"):
            message = {"role": m["role"], "content": m["content"] or ""}
            if m.get("tool_calls"):
                message["tool_calls"] = m["tool_calls"]
            prompt.append(message)
    return prompt


def prompt_for_template(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A prompt row's messages with tool-call arguments as objects (JSON text read back), as verl's agent loop hands
    assistant messages to the chat template; arguments that are not a JSON object stay text."""
    out = []
    for message in messages:
        calls = message.get("tool_calls")
        if not calls:
            out.append(message)
            continue
        rewritten = []
        for call in calls:
            fn = dict(call.get("function") or {})
            if isinstance(fn.get("arguments"), str):
                try:
                    value = json.loads(fn["arguments"])
                except (ValueError, RecursionError):
                    value = None
                if isinstance(value, dict):
                    fn["arguments"] = value
            rewritten.append(dict(call, function=fn))
        out.append(dict(message, tool_calls=rewritten))
    return out
