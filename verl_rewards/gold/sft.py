"""SFT records in the layout verl's multi-turn SFT trainer reads (``verl/utils/dataset/multiturn_sft_dataset.py``):
one parquet row per conversation with

=================  =============================================================================================
``messages``       the conversation (``data.messages_key``, default ``messages``): ``role``, ``content`` (text),
                   assistant ``tool_calls`` (``[{"id", "type": "function", "function": {"name", "arguments":
                   {...}}}]``, arguments as an object, as verl's agent loop records them) and the tool messages'
                   ``tool_call_id``; it ends with the last assistant message (trailing tool results and the user's
                   stop message carry no loss)
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

MESSAGES_JSON = "messages_json"
TOOLS_JSON = "tools_json"


def sft_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One chat message as the SFT data holds it (text content, OpenAI tool calls with object arguments)."""
    role = str(message.get("role"))
    content = message.get("content")
    out: dict[str, Any] = {"role": role, "content": content if isinstance(content, str) else ""}
    if role == "tool":
        call_id = message.get("tool_call_id", message.get("id"))
        if call_id is not None:
            out["tool_call_id"] = str(call_id)
        return out
    calls = []
    for raw in message.get("tool_calls") or ():
        fn = raw.get("function") if isinstance(raw.get("function"), Mapping) else raw
        args = fn.get("arguments")
        if isinstance(args, str):
            args = json.loads(args) if args.strip() else {}
        call: dict[str, Any] = {"type": "function", "function": {"name": fn.get("name"), "arguments": dict(args or {})}}
        if raw.get("id") is not None:
            call = {"id": str(raw["id"]), **call}
        calls.append(call)
    if calls:
        out["tool_calls"] = calls
    return out


def sft_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The conversation cleaned with :func:`sft_message` and cut after its last assistant message."""
    out = [sft_message(m) for m in messages]
    while out and out[-1]["role"] != "assistant":
        out.pop()
    return out


def sft_record(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], **meta: Any
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
    table = pa.Table.from_pylist([dict(r) for r in records])
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp)
    return target
