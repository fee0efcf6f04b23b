"""SFT records in the layout verl's multi-turn SFT trainer reads (``verl/utils/dataset/multiturn_sft_dataset.py``):
one parquet row per conversation with

=================  =============================================================================================
``messages``       the conversation (``data.messages_key``, default ``messages``): ``role``, ``content`` (text),
                   assistant ``tool_calls`` (``[{"id", "type": "function", "function": {"name", "arguments":
                   {...}}}]``, arguments as an object, as verl's agent loop records them) and the tool messages'
                   ``tool_call_id``; it ends with the last assistant message (trailing tool results and the user's
                   stop message carry no loss). A value parquet cannot store as its column's one type (an argument
                   that is a number in one call and text in another, arguments that are ``{}`` in every call, an
                   integer beyond int64) is stored as its JSON text, in every row at that place (text stays text)
``tools``          the tool schemas (``data.tools_key``, default ``tools``), exactly what the agent gets in
                   training: the tool config of ``prepare`` loaded by verl's own ``initialize_tools_from_config``
                   and dumped as verl's ``ToolAgentLoop`` does (``model_dump(exclude_unset=True, exclude_none=True)``)
``messages_json``  the same two as JSON text. Parquet stores a list of objects as a list of one struct type, so
``tools_json``     reading ``messages`` / ``tools`` back gives every object the keys of all the others, set to
                   ``null`` (a tool's ``properties`` list every other tool's parameters); chat templates render
                   those nulls. :class:`~verl_rewards.gold.sft_dataset.GoldSFTDataset` (``data.custom_cls``) reads
                   these exact copies instead; verl's stock class reads the columns above
``data_source``, ``task_id``, ``split``, ``mode``, ``source``, ``reward``: where the conversation comes from
=================  =============================================================================================
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..engine.errors import TrajectoryError
from ..engine.trajectory import Message, parse_messages

MESSAGES_JSON = "messages_json"
TOOLS_JSON = "tools_json"


class SftInputError(ValueError):
    """A conversation that cannot become SFT data; the message names the message and the field."""


def sft_messages(messages: Sequence[Mapping[str, Any] | Message]) -> list[dict[str, Any]]:
    """The conversation as the SFT data holds it (text content, content parts joined as the engine joins them,
    OpenAI tool calls with object arguments), cut after its last assistant message. Messages are read by the
    engine's rule (:func:`~verl_rewards.engine.trajectory.parse_messages`); a malformed message or tool call is a
    :class:`SftInputError` naming its index (``message 3: tool_calls[0]: ...``)."""
    try:
        parsed = parse_messages(messages)
    except TrajectoryError as exc:
        raise SftInputError(str(exc)) from None
    out = [_sft_message(m) for m in parsed]
    while out and out[-1]["role"] != "assistant":
        out.pop()
    return out


def _sft_message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content or ""}
    if message.role == "tool":
        if message.tool_call_id is not None:
            out["tool_call_id"] = message.tool_call_id
        return out
    calls = []
    for k, call in enumerate(message.tool_calls):
        if call.error is not None or call.arguments is None:
            raise SftInputError(f"message {message.index}: tool_calls[{k}]: {call.error}")
        body: dict[str, Any] = {"type": "function", "function": {"name": call.name, "arguments": dict(call.arguments)}}
        calls.append({"id": call.id, **body} if call.id else body)
    if calls:
        out["tool_calls"] = calls
    return out


def sft_record(
    messages: Sequence[Mapping[str, Any] | Message], tools: Sequence[Mapping[str, Any]], **meta: Any
) -> dict[str, Any]:
    """One parquet row (see the module doc); ``meta``: ``data_source``, ``task_id``, ``split``, ``mode``,
    ``source``, ``reward``."""
    msgs = sft_messages(messages)
    tool_list = [dict(t) for t in tools]
    return {
        "messages": msgs,
        "tools": tool_list,
        MESSAGES_JSON: json.dumps(msgs, ensure_ascii=False),
        TOOLS_JSON: json.dumps(tool_list, ensure_ascii=False),
        "data_source": str(meta.get("data_source", "")),
        "task_id": str(meta.get("task_id", "")),
        "split": str(meta.get("split", "")),
        "mode": str(meta.get("mode", "")),
        "source": str(meta.get("source", "")),
        "reward": float(meta.get("reward", 0.0)),
    }


def conversation_key(record: Mapping[str, Any]) -> str:
    """Identity of a conversation for de-duplication: its messages (tool-call ids left out: servers number them
    per request, and the order already pairs calls with results) and tools, canonically serialised."""
    messages = []
    for m in record["messages"]:
        m = {k: v for k, v in m.items() if k != "tool_call_id"}
        if m.get("tool_calls"):
            m["tool_calls"] = [{k: v for k, v in c.items() if k != "id"} for c in m["tool_calls"]]
        messages.append(m)
    return json.dumps([messages, record["tools"]], sort_keys=True, ensure_ascii=False)


def training_tool_schemas(tool_config_text: str) -> list[dict[str, Any]]:
    """The tool schemas the agent gets in training from a tool config (``prepare``'s ``tool_config.yaml`` text):
    verl's ``initialize_tools_from_config`` builds the tools, dumped as verl's ``ToolAgentLoop`` does."""
    from verl.tools.tool_registry import initialize_tools_from_config

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tool_config.yaml"
        path.write_text(tool_config_text, encoding="utf-8")
        with contextlib.redirect_stdout(io.StringIO()):  # verl's BaseTool prints every schema it builds
            tools = initialize_tools_from_config(str(path))
    return [tool.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for tool in tools]


def write_sft_parquet(records: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write the records as one parquet file, atomically (a temporary file renamed into place)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..files import atomic_path

    target = Path(path)
    try:
        rows = storable([dict(r) for r in records])
    except RecursionError:
        raise SftInputError("a conversation nested too deeply to store in parquet") from None
    table = pa.Table.from_pylist(rows)
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp)
    return target


_INT64 = 2**63
_EXACT_INT = 2**53  # the largest integer a double holds exactly: int and float mix in one column up to it


def storable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with every value parquet cannot store as its column's one type replaced by its JSON text, at that
    place in every row (text stays text, null stays null): a place holding two JSON types (a bool and a number, text
    and a number, an object and a list...), an integer beyond int64 (or beyond 2**53 next to a float), an object
    that is empty everywhere (parquet has no struct without fields). A place is a path of keys; a list's items
    share one place. The rows are returned unchanged when every place has one type."""
    kinds: dict[tuple[str | None, ...], set[str]] = {}
    keyed: set[tuple[str | None, ...]] = set()  # object places with a key somewhere
    inexact: set[tuple[str | None, ...]] = set()  # places with an integer beyond 2**53

    def walk(value: Any, place: tuple[str | None, ...]) -> None:
        kind = _kind(value)
        if kind is None:
            return
        kinds.setdefault(place, set()).add(kind)
        if kind == "object":
            if value:
                keyed.add(place)
            for key, item in value.items():
                walk(item, (*place, str(key)))
        elif kind == "list":
            for item in value:
                walk(item, (*place, None))
        elif kind == "int" and abs(value) > _EXACT_INT:
            inexact.add(place)

    for row in rows:
        walk(row, ())
    text = {place for place, found in kinds.items() if _mixed(found, place in inexact, place in keyed)}
    if not text:
        return rows

    def rebuild(value: Any, place: tuple[str | None, ...]) -> Any:
        if value is None or isinstance(value, str):
            return value
        if place in text:
            return json.dumps(value, ensure_ascii=False, default=str)
        if isinstance(value, Mapping):
            return {key: rebuild(item, (*place, str(key))) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [rebuild(item, (*place, None)) for item in value]
        return value

    return [rebuild(row, ()) for row in rows]


def _mixed(found: set[str], inexact: bool, keyed: bool) -> bool:
    """Whether a place holding these kinds must be stored as text (see :func:`storable`)."""
    if found & {"huge", "other"} or ("object" in found and not keyed):
        return True
    if found == {"int", "float"}:
        return inexact
    return len(found) > 1


def _kind(value: Any) -> str | None:
    """The parquet-relevant type of a JSON value (None for null)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if -_INT64 <= value < _INT64 else "huge"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "list"
    return "other"
