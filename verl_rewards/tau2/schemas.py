"""OpenAI function schemas of tau2 tools: read from a domain's schema file, or generated from the tool methods.

The built-in domains (mock, airline, retail, telecom) show the model exactly what tau2-bench shows it: each
tool's ``Tool.openai_schema`` (its docstring as description, its pydantic parameter schema with ``title``,
``$defs``, ``items`` and defaults), in tau2's order. These schemas are data, written by tau2-bench's own code
(``tool_schemas/*.json`` in this package, see ``tool_schemas/PROVENANCE.md``) and read by
:func:`load_schema_file`; the toolkits here stay our own code.

A domain without a schema file (a domain someone registers) gets schemas generated from its tool methods by
:func:`function_schema`: the description is the docstring's summary; each parameter's JSON type comes from its
annotation (``Literal`` becomes an ``enum``) and its description from the docstring's ``Args:`` section.
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).with_name("tool_schemas")
"""Where a bare ``DomainSpec.tool_schemas`` file name is looked up."""

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object"}
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Examples?|Notes?):\s*$")
_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: description})`` from a Google-style docstring."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    base_indent: int | None = None
    for line in lines:
        header = _SECTION.match(line.strip()) if not line.startswith(" ") else None
        if header:
            section = header.group(1)
            current, base_indent = None, None
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if base_indent is None:
            base_indent = indent
        match = _PARAM.match(line.strip()) if indent <= base_indent else None
        if match:
            current = match.group(1).lstrip("*")
            params[current] = match.group(2).strip()
        elif current is not None:
            params[current] = (params[current] + " " + line.strip()).strip()
    return " ".join(" ".join(summary).split()), params


def _json_type(annotation: Any) -> tuple[str, list[Any] | None]:
    """JSON schema ``type`` (and ``enum`` for ``Literal``) of a parameter annotation."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        values = list(typing.get_args(annotation))
        kinds = {_json_type(type(v))[0] for v in values}
        return (kinds.pop() if len(kinds) == 1 else "string"), values
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _json_type(args[0]) if args else ("string", None)
    if origin in (list, tuple, set, frozenset, Sequence, Iterable) or annotation in (list, tuple, set):
        return "array", None
    if origin is dict or annotation is dict:
        return "object", None
    return _JSON_TYPES.get(annotation, "string"), None


def function_schema(name: str, func: Callable[..., Any], description: str | None = None) -> dict[str, Any]:
    """OpenAI ``{"type": "function", "function": {...}}`` schema of a tool method (``self`` skipped)."""
    summary, arg_docs = _parse_docstring(inspect.getdoc(func) or "")
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - unresolvable annotations fall back to strings
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in inspect.signature(func).parameters.items():
        if pname == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        kind, enum = _json_type(hints.get(pname, str))
        prop: dict[str, Any] = {"type": kind}
        text = arg_docs.get(pname)
        if text:
            prop["description"] = text
        if enum is not None:
            prop["enum"] = enum
        properties[pname] = prop
        if param.default is inspect.Parameter.empty:
            required.append(pname)
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description or summary or name.replace("_", " "),
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def load_schema_file(
    path: str, domain: str, agent_tools: Sequence[str], user_tools: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """``{"agent": [...], "user": [...]}`` from a domain's schema file, checked against its toolkits: every tool
    has exactly one schema, every schema names a tool (ValueError naming the domain and the file otherwise)."""
    file = Path(path) if Path(path).is_absolute() else SCHEMA_DIR / path
    where = f"tau2 domain {domain!r}: tool schema file {file}"
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{where}: cannot read it: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object with 'agent' (and 'user') schema lists")
    out: dict[str, list[dict[str, Any]]] = {}
    for side, tools in (("agent", agent_tools), ("user", user_tools)):
        schemas = data.get(side, [])
        if not isinstance(schemas, list) or not all(_is_schema(s) for s in schemas):
            raise ValueError(f"{where}: {side!r} must be a list of {{type: function, function: {{name, ...}}}}")
        names = [s["function"]["name"] for s in schemas]
        if sorted(names) != sorted(tools):
            raise ValueError(
                f"{where}: the {side} schemas name {sorted(names)}, but the toolkit's tools are {sorted(tools)}"
            )
        out[side] = schemas
    return out


def _is_schema(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    fn = value.get("function")
    return (
        value.get("type") == "function"
        and isinstance(fn, dict)
        and isinstance(fn.get("name"), str)
        and isinstance(fn.get("description"), str)
        and isinstance(fn.get("parameters"), dict)
    )
