"""tau-bench's Python data files as the JSON our loaders read, by parsing them with :mod:`ast`: the literal
structure only, never importing or running them.

* a task list (``tau_bench/envs/<domain>/tasks_<split>.py``: ``TASKS_TEST = [Task(user_id=..., actions=[Action(
  name=..., kwargs={...}), ...], instruction=..., outputs=[...]), ...]``) becomes the list of what tau-bench's
  ``Task.model_dump()`` gives: the keys ``user_id``, ``actions`` (``[{name, kwargs}]``), ``instruction``,
  ``outputs`` in that order; ``annotator=`` is dropped, as tau-bench's ``Task`` model drops it;
* a tool list (``tau_bench/envs/<domain>/tools/__init__.py``: ``ALL_TOOLS = [Calculate, ...]`` with each class
  imported from a module of the folder) becomes the list of each class's ``get_info()`` return value, a dict
  literal, in ``ALL_TOOLS`` order (tau-bench's ``env.tools_info``).

Both are written as ``json.dumps(value, indent=2, ensure_ascii=False)`` plus a newline. Anything else in those
places (a call, a name, a computed value) is refused with :class:`ConvertError` naming the file and line.
"""

from __future__ import annotations

import ast
import json
import posixpath
from collections.abc import Mapping
from typing import Any

#: tau-bench's models: their fields in declaration order (``tau_bench/types.py``) and the keywords they ignore
TASK_FIELDS = ("user_id", "actions", "instruction", "outputs")
ACTION_FIELDS = ("name", "kwargs")
IGNORED_KEYWORDS = frozenset({"annotator"})
#: the largest source file parsed (tau-bench's largest, retail's tasks_train.py, is 472 KB)
MAX_SOURCE_CHARS = 4 * 1024 * 1024


class ConvertError(ValueError):
    """A source file whose data is not the literal structure expected."""


def to_json(value: Any) -> str:
    """The JSON text of a converted file."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _parse(text: str, where: str) -> ast.Module:
    if len(text) > MAX_SOURCE_CHARS:
        raise ConvertError(f"{where}: {len(text)} characters, more than the {MAX_SOURCE_CHARS} a data file may have")
    try:
        return ast.parse(text, filename=where)
    except (SyntaxError, ValueError) as exc:
        raise ConvertError(f"{where}: not Python: {exc}") from None


def _fail(where: str, node: ast.AST, message: str) -> ConvertError:
    return ConvertError(f"{where}:{getattr(node, 'lineno', '?')}: {message}")


def _literal(node: ast.expr, where: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise _fail(where, node, "not a literal") from None


def _assigned(module: ast.Module, name: str, where: str) -> ast.expr:
    """The value of the module-level assignment ``name = ...`` (the last one, as running the module would)."""
    found: ast.expr | None = None
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            found = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            found = stmt.value
    if found is None:
        raise ConvertError(f"{where}: no top-level assignment to {name}")
    return found


def _model(node: ast.expr, model: str, fields: tuple[str, ...], where: str) -> dict[str, ast.expr]:
    """The keyword arguments of a ``Model(...)`` call, by field; refuses positional or unknown arguments."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == model):
        raise _fail(where, node, f"expected a {model}(...) call")
    if node.args:
        raise _fail(where, node, f"{model}(...) with positional arguments")
    out: dict[str, ast.expr] = {}
    for keyword in node.keywords:
        if keyword.arg in IGNORED_KEYWORDS:
            continue
        if keyword.arg not in fields or keyword.arg in out:
            raise _fail(where, node, f"{model}(...) with an unexpected argument {keyword.arg or '**'!r}")
        out[keyword.arg] = keyword.value
    missing = [f for f in fields if f not in out]
    if missing:
        raise _fail(where, node, f"{model}(...) without {', '.join(missing)}")
    return out


def _typed(value: Any, kind: type | tuple[type, ...], node: ast.AST, field: str, where: str) -> Any:
    if not isinstance(value, kind):
        raise _fail(where, node, f"{field} is {type(value).__name__}")
    return value


def _action(node: ast.expr, where: str) -> dict[str, Any]:
    args = _model(node, "Action", ACTION_FIELDS, where)
    name = _typed(_literal(args["name"], where), str, node, "Action.name", where)
    kwargs = _typed(_literal(args["kwargs"], where), dict, node, "Action.kwargs", where)
    if not all(isinstance(k, str) for k in kwargs):
        raise _fail(where, node, "Action.kwargs has a key that is not a string")
    return {"name": name, "kwargs": kwargs}


def _task(node: ast.expr, where: str) -> dict[str, Any]:
    args = _model(node, "Task", TASK_FIELDS, where)
    actions = args["actions"]
    if not isinstance(actions, ast.List | ast.Tuple):
        raise _fail(where, actions, "Task.actions is not a list")
    outputs = _typed(_literal(args["outputs"], where), (list, tuple), node, "Task.outputs", where)
    if not all(isinstance(o, str) for o in outputs):
        raise _fail(where, node, "Task.outputs holds something that is not a string")
    return {
        "user_id": _typed(_literal(args["user_id"], where), str, node, "Task.user_id", where),
        "actions": [_action(a, where) for a in actions.elts],
        "instruction": _typed(_literal(args["instruction"], where), str, node, "Task.instruction", where),
        "outputs": list(outputs),
    }


def convert_tasks(text: str, variable: str, where: str = "tasks.py") -> str:
    """The JSON of the task list ``variable`` in the Python source ``text`` (see the module doc)."""
    value = _assigned(_parse(text, where), variable, where)
    if not isinstance(value, ast.List | ast.Tuple):
        raise _fail(where, value, f"{variable} is not a list")
    return to_json([_task(node, where) for node in value.elts])


def _imports(module: ast.Module) -> dict[str, str]:
    """``{class name: sibling module name}`` of the ``from .module import Class`` lines."""
    out: dict[str, str] = {}
    for stmt in module.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
            for alias in stmt.names:
                out[alias.asname or alias.name] = stmt.module
    return out


def _get_info(module: ast.Module, cls: str, where: str) -> Any:
    """The literal that class ``cls``'s ``get_info`` returns."""
    for stmt in module.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == cls:
            for item in stmt.body:
                if isinstance(item, ast.FunctionDef) and item.name == "get_info":
                    body = [s for s in item.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
                        raise _fail(where, item, f"{cls}.get_info is not one return of a literal")
                    return _typed(_literal(body[0].value, where), dict, item, f"{cls}.get_info()", where)
            raise _fail(where, stmt, f"{cls} has no get_info")
    raise ConvertError(f"{where}: no class {cls}")


def convert_tools_info(sources: Mapping[str, str], init_path: str, variable: str = "ALL_TOOLS") -> str:
    """The JSON of the tool list ``variable`` in the package ``init_path`` (``.../tools/__init__.py``);
    ``sources`` maps each path (``init_path`` and its sibling modules) to its text."""
    init = _parse(sources[init_path], init_path)
    value = _assigned(init, variable, init_path)
    if not isinstance(value, ast.List | ast.Tuple):
        raise _fail(init_path, value, f"{variable} is not a list")
    imported = _imports(init)
    folder = posixpath.dirname(init_path)
    parsed: dict[str, ast.Module] = {}
    infos = []
    for node in value.elts:
        if not isinstance(node, ast.Name) or node.id not in imported:
            raise _fail(init_path, node, f"{variable} holds something that is not a class imported from the folder")
        path = posixpath.join(folder, imported[node.id] + ".py")
        if path not in sources:
            raise ConvertError(f"{init_path}: {node.id} comes from {path}, which was not given")
        if path not in parsed:
            parsed[path] = _parse(sources[path], path)
        infos.append(_get_info(parsed[path], node.id, path))
    return to_json(infos)


def tool_modules(init_text: str, init_path: str, variable: str = "ALL_TOOLS") -> list[str]:
    """The paths of the modules ``init_path``'s ``variable`` takes its classes from, in first-use order."""
    init = _parse(init_text, init_path)
    value = _assigned(init, variable, init_path)
    imported = _imports(init)
    folder = posixpath.dirname(init_path)
    names = [n.id for n in getattr(value, "elts", []) if isinstance(n, ast.Name) and n.id in imported]
    return list(dict.fromkeys(posixpath.join(folder, imported[n] + ".py") for n in names))


def convert(kind: str, sources: Mapping[str, str]) -> str:
    """Run the conversion ``kind`` of a manifest entry (``tasks:<VARIABLE>`` on its one source, ``tools_info`` on
    a tools package whose ``__init__.py`` comes first) over ``sources`` (``{upstream path: text}``, in order)."""
    paths = list(sources)
    if kind.startswith("tasks:") and len(paths) == 1:
        return convert_tasks(sources[paths[0]], kind.removeprefix("tasks:"), paths[0])
    if kind == "tools_info" and paths and paths[0].endswith("/__init__.py"):
        return convert_tools_info(sources, paths[0])
    raise ConvertError(f"unknown conversion {kind!r} of {paths}")
