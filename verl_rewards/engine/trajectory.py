"""Trajectory format: the chat messages a tau2 reward reads.

A trajectory is a list of OpenAI-style chat messages (plain dicts):

* ``{"role": "system" | "developer", "content": ...}`` — ignored by every reward.
* ``{"role": "user", "content": str | None, "tool_calls": [...]?}`` — user text; ``tool_calls`` here are *user*
  tool calls (requestor ``"user"``, e.g. mock's ``dismiss_notification``).
* ``{"role": "assistant", "content": str | None, "tool_calls": [...]?}`` — agent text and agent tool calls.
* ``{"role": "tool", "tool_call_id": str, "content": str}`` — the observation of one earlier tool call.

A tool call is either OpenAI's ``{"id", "type": "function", "function": {"name", "arguments"}}`` or tau2's flat
``{"id", "name", "arguments"}``; a tool message may carry tau2's ``"id"`` instead of ``"tool_call_id"``.
``content`` may also be a list of OpenAI content parts; their ``text`` fields are joined with newlines.

``arguments`` may be a dict or a JSON string. Model output is untrusted, so parsing is defensive:

* ``None``, a missing key, or a blank string mean ``{}`` (some servers send ``""`` for no-argument calls);
* a string longer than :data:`MAX_ARGUMENTS_CHARS`, invalid JSON (including nesting too deep to parse), or JSON
  that is not an object makes the call *invalid*. It is kept (``ToolCall.error`` says why) but behaves like a
  call whose execution failed: :meth:`Environment.step` answers ``"Error: <why>"`` and changes nothing, replay
  skips it (a no-op, as tau2 treats a call that errored), and it never matches a gold action in ACTION;
* a tool name that is not a non-empty string of at most :data:`MAX_NAME_CHARS` characters makes the call invalid.

Only things the *caller* controls raise :class:`TrajectoryError`: a non-list trajectory, a message that is not a
dict, an unknown role, non-text content, or more than :data:`MAX_MESSAGES` messages /
:data:`MAX_TOOL_CALLS` tool calls.

Tool calls are paired with tool messages by id (:func:`pair_tool_calls`); a tool message without an id, or any
tool message when the pending call has no id, takes the oldest unanswered call. A call never answered was never
executed and is not replayed; a tool message that answers nothing is ignored. Both are reported.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import TrajectoryError

MAX_MESSAGES = 10_000
MAX_TOOL_CALLS = 10_000
MAX_ARGUMENTS_CHARS = 65_536
MAX_NAME_CHARS = 256

ROLES = ("system", "developer", "user", "assistant", "tool")


@dataclass(frozen=True)
class ToolCall:
    """One parsed tool call. ``arguments`` is None exactly when the call is invalid (``error`` says why)."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    requestor: str = "assistant"
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Message:
    """One parsed message; ``index`` is its position in the input list."""

    role: str
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    index: int = -1

    def has_text(self) -> bool:
        """True when the message carries non-blank text (tau2's ``has_text_content``)."""
        return isinstance(self.content, str) and self.content.strip() != ""


@dataclass
class Pairing:
    """Tool calls matched with the tool messages that answer them, in execution (answer) order."""

    pairs: list[tuple[ToolCall, Message]] = field(default_factory=list)
    unanswered: list[ToolCall] = field(default_factory=list)
    orphan_tool_messages: list[Message] = field(default_factory=list)


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """``(arguments, None)`` for usable arguments, ``(None, reason)`` otherwise (see module doc)."""
    if raw is None:
        return {}, None
    if isinstance(raw, dict):
        try:
            size = len(json.dumps(raw, default=str))
        except (TypeError, ValueError, RecursionError) as exc:
            return None, f"Invalid tool arguments: {type(exc).__name__}"
        if size > MAX_ARGUMENTS_CHARS:
            return None, f"Invalid tool arguments: longer than {MAX_ARGUMENTS_CHARS} characters"
        return raw, None
    if isinstance(raw, str):
        if len(raw) > MAX_ARGUMENTS_CHARS:
            return None, f"Invalid tool arguments: longer than {MAX_ARGUMENTS_CHARS} characters"
        if raw.strip() == "":
            return {}, None
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            return None, f"Invalid tool arguments: not valid JSON ({reason})"
        if not isinstance(value, dict):
            return None, f"Invalid tool arguments: expected a JSON object, got {type(value).__name__}"
        return value, None
    return None, f"Invalid tool arguments: expected a JSON object, got {type(raw).__name__}"


def check_tool_name(name: Any) -> str | None:
    """The reason a tool name is unusable, or None when it is a sane string."""
    if not isinstance(name, str) or not name:
        return "Invalid tool call: missing tool name"
    if len(name) > MAX_NAME_CHARS:
        return f"Invalid tool call: tool name longer than {MAX_NAME_CHARS} characters"
    return None


def parse_tool_call(raw: Any, requestor: str) -> ToolCall:
    """Parse one OpenAI-style or tau2-flat tool call (never raises)."""
    if not isinstance(raw, dict):
        return ToolCall(id="", name="", arguments=None, requestor=requestor, error="Invalid tool call: not an object")
    call_id = raw.get("id")
    call_id = call_id if isinstance(call_id, str) else ("" if call_id is None else str(call_id))
    fn = raw.get("function")
    if isinstance(fn, dict):
        name, args = fn.get("name"), fn.get("arguments")
    else:
        name, args = raw.get("name"), raw.get("arguments")
    bad_name = check_tool_name(name)
    if bad_name is not None:
        shown = name[:MAX_NAME_CHARS] if isinstance(name, str) else ""
        return ToolCall(id=call_id, name=shown, arguments=None, requestor=requestor, error=bad_name)
    arguments, error = parse_arguments(args)
    return ToolCall(id=call_id, name=str(name), arguments=arguments, requestor=requestor, error=error)


def _content(raw: Any, i: int) -> str | None:
    if raw is None or isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        parts = []
        for part in raw:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    raise TrajectoryError(f"message {i}: content must be a string, a list of parts or null, got {type(raw).__name__}")


def parse_messages(messages: Any) -> list[Message]:
    """Parse a trajectory (see module doc). Raises :class:`TrajectoryError` only for caller bugs."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TrajectoryError(f"trajectory must be a list of messages, got {type(messages).__name__}")
    if len(messages) > MAX_MESSAGES:
        raise TrajectoryError(f"trajectory has {len(messages)} messages (limit {MAX_MESSAGES})")
    out: list[Message] = []
    n_calls = 0
    for i, raw in enumerate(messages):
        if isinstance(raw, Message):
            out.append(raw)
            n_calls += len(raw.tool_calls)
            continue
        if not isinstance(raw, dict):
            raise TrajectoryError(f"message {i}: expected a dict, got {type(raw).__name__}")
        role = raw.get("role")
        if role not in ROLES:
            raise TrajectoryError(f"message {i}: unknown role {role!r} (expected one of {list(ROLES)})")
        content = _content(raw.get("content"), i)
        if role == "tool":
            tid = raw.get("tool_call_id", raw.get("id"))
            tid = tid if isinstance(tid, str) else (None if tid is None else str(tid))
            out.append(Message(role="tool", content=content, tool_call_id=tid or None, index=i))
            continue
        calls: tuple[ToolCall, ...] = ()
        raw_calls = raw.get("tool_calls")
        if role in ("user", "assistant") and raw_calls:
            if not isinstance(raw_calls, list):
                raise TrajectoryError(f"message {i}: tool_calls must be a list")
            n_calls += len(raw_calls)
            if n_calls > MAX_TOOL_CALLS:
                raise TrajectoryError(f"trajectory has more than {MAX_TOOL_CALLS} tool calls")
            calls = tuple(parse_tool_call(c, role) for c in raw_calls)
        out.append(Message(role=role, content=content, tool_calls=calls, index=i))
    return out


def pair_tool_calls(messages: Iterable[Message]) -> Pairing:
    """Match tool calls with the tool messages that answer them (see module doc). Linear in the input."""
    result = Pairing()
    pending: dict[int, ToolCall] = {}  # insertion-ordered: oldest unanswered call first
    by_id: dict[str, deque[int]] = {}
    seq = 0
    for msg in messages:
        if msg.role in ("assistant", "user"):
            for c in msg.tool_calls:
                pending[seq] = c
                by_id.setdefault(c.id, deque()).append(seq)
                seq += 1
        elif msg.role == "tool":
            key = None
            tid = msg.tool_call_id
            if tid:
                queue = by_id.get(tid)
                while queue and key is None:
                    k = queue.popleft()
                    key = k if k in pending else None
            if key is None and pending:
                oldest = next(iter(pending))
                if not tid or not pending[oldest].id:
                    key = oldest
            if key is None:
                result.orphan_tool_messages.append(msg)
                continue
            result.pairs.append((pending.pop(key), msg))
    result.unanswered = list(pending.values())
    return result


def tool_calls_of(messages: Iterable[Message]) -> list[ToolCall]:
    """Every tool call of every assistant and user message, in order (what tau2's ACTION check reads)."""
    return [c for m in messages if m.role in ("assistant", "user") for c in m.tool_calls]


def _fingerprint(msg: Message) -> tuple[Any, ...]:
    calls = tuple((c.name, json.dumps(c.arguments, sort_keys=True, default=str)) for c in msg.tool_calls)
    if msg.role == "tool":
        return ("tool",)
    return (msg.role, (msg.content or "").strip(), calls)


def strip_history(messages: Sequence[Message], history: Sequence[Message]) -> list[Message]:
    """``messages`` without system messages and, when it starts with ``history``, without that prefix.

    tau2 scores the *full* trajectory, initial message history included. Callers may pass either the full
    trajectory or only what happened after the history; both give the same reward.
    """
    body = [m for m in messages if m.role not in ("system", "developer")]
    hist = [m for m in history if m.role not in ("system", "developer")]
    if (
        len(hist)
        and len(body) >= len(hist)
        and all(_fingerprint(a) == _fingerprint(b) for a, b in zip(body, hist, strict=False))
    ):
        return body[len(hist) :]
    return body
