"""tau2 tasks: typed, validated views of ``tasks.json`` and ``split_tasks.json``.

A task says how an episode starts (``initial_state``) and how it is scored (``evaluation_criteria``). Loading a
tasks file checks its ids (present, unique) and keeps each task's JSON: a :class:`TaskTable` validates a task into a
:class:`Task` on its first use and keeps it (telecom's 2,285 tasks load in a fraction of the time it takes to
validate them all; a run uses a few). Validation covers every field the package uses and reports the first problem
as a :class:`TaskValidationError` naming the task id, the field path (``evaluation_criteria.actions[2].arguments``)
and the file; ``prepare`` and ``simulate`` use every task they select before the first row is written or the first
request sent, so a broken task still fails before training or a run starts. Unknown keys (airline's
``annotations``) are ignored, as tau2's pydantic models ignore them.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..engine.trajectory import Message, parse_messages
from .errors import DataFileError, DataNotFoundError, TaskValidationError, TrajectoryError

DB = "DB"
ENV_ASSERTION = "ENV_ASSERTION"
NL_ASSERTION = "NL_ASSERTION"
ACTION = "ACTION"
COMMUNICATE = "COMMUNICATE"
REWARD_TYPES = (DB, ENV_ASSERTION, NL_ASSERTION, ACTION, COMMUNICATE)
DEFAULT_REWARD_BASIS = (DB, COMMUNICATE)
REQUESTORS = ("assistant", "user")


@dataclass(frozen=True)
class Action:
    """A gold tool call: what the agent (or user, ``requestor``) is expected to call."""

    action_id: str
    name: str
    arguments: dict[str, Any]
    requestor: str = "assistant"
    info: str | None = None
    compare_args: tuple[str, ...] | None = None


@dataclass(frozen=True)
class EnvFunctionCall:
    """A call of any toolkit method (tool or helper) on the agent (``assistant``) or ``user`` side."""

    env_type: str
    func_name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class EnvAssertion(EnvFunctionCall):
    """An env function call that must return a bool equal to ``assert_value``."""

    assert_value: bool = True
    message: str | None = None


@dataclass(frozen=True)
class InitializationData:
    """Deep-merge patches applied to the agent and user DBs before the episode (addict semantics)."""

    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


@dataclass(frozen=True)
class InitialState:
    """How an episode starts: DB patches, then helper calls, then a replayed message history."""

    initialization_data: InitializationData | None = None
    initialization_actions: tuple[EnvFunctionCall, ...] | None = None
    message_history: tuple[Message, ...] | None = None


@dataclass(frozen=True)
class EvaluationCriteria:
    """What the tau2 evaluator checks; ``reward_basis`` picks the components that enter the product."""

    actions: tuple[Action, ...] | None = None
    env_assertions: tuple[EnvAssertion, ...] | None = None
    communicate_info: tuple[str, ...] | None = None
    nl_assertions: tuple[str, ...] | None = None
    reward_basis: tuple[str, ...] = DEFAULT_REWARD_BASIS


@dataclass(frozen=True)
class Task:
    """One tau2 task. ``raw`` keeps the original JSON object for prompts and debugging."""

    id: str
    user_scenario: dict[str, Any] | None = None
    description: dict[str, Any] | None = None
    ticket: str | None = None
    initial_state: InitialState | None = None
    evaluation_criteria: EvaluationCriteria | None = None
    issues: tuple[Any, ...] | None = None
    required_documents: tuple[str, ...] | None = None
    user_tools: tuple[str, ...] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def history(self) -> tuple[Message, ...]:
        """The initial message history (empty when the task has none)."""
        if self.initial_state is None or self.initial_state.message_history is None:
            return ()
        return self.initial_state.message_history


# --------------------------------------------------------------------------------------------- validation
_D = TypeVar("_D")


def _made(cls: type[_D], **fields: Any) -> _D:
    """``cls(**fields)`` for one of the frozen dataclasses above, every field given and already checked.

    A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``; this sets them all at once
    (a telecom task, ~20 such objects, validates in ~21 instead of ~28 us warm). Validation runs on a task's first
    use only, so it is part of what a first use costs over a repeat. The same object (fields, equality, repr,
    pickling); the tests rebuild every parsed task's objects through the dataclasses' own ``__init__`` and compare."""
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    return obj


class _V:
    """Field-path aware validators for one task."""

    def __init__(self, task_id: str | None):
        self.task_id = task_id

    def fail(self, path: str, msg: str) -> TaskValidationError:
        return TaskValidationError(self.task_id, path, msg)

    def obj(self, value: Any, path: str, *, optional: bool = True) -> dict[str, Any] | None:
        if value is None:
            if optional:
                return None
            raise self.fail(path, "is required")
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {type(value).__name__}")
        return value

    def string(self, value: Any, path: str, *, optional: bool = True) -> str | None:
        if value is None:
            if optional:
                return None
            raise self.fail(path, "is required")
        if not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {type(value).__name__}")
        return value

    def boolean(self, value: Any, path: str, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(path, f"expected a boolean, got {type(value).__name__}")
        return value

    def array(self, value: Any, path: str) -> list[Any] | None:
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, got {type(value).__name__}")
        return value

    def strings(self, value: Any, path: str) -> tuple[str, ...] | None:
        items = self.array(value, path)
        if items is None:
            return None
        if all(isinstance(v, str) for v in items):  # the usual case, without building a path per item
            return tuple(items)
        return tuple(self.string(v, f"{path}[{i}]", optional=False) for i, v in enumerate(items))  # type: ignore[misc]

    def choice(self, value: Any, path: str, choices: tuple[str, ...], default: str | None = None) -> str:
        if value is None:
            if default is None:
                raise self.fail(path, f"is required (one of {list(choices)})")
            return default
        if value not in choices:
            raise self.fail(path, f"expected one of {list(choices)}, got {value!r}")
        return value


def _parse_action(v: _V, raw: Any, where: str, index: int) -> Action:
    """``raw`` (entry ``index`` of the list at ``where``) as an :class:`Action`. A well-formed entry is read directly;
    any other goes through the path-aware checks, which name the field (the paths are built only then)."""
    if isinstance(raw, dict):
        action_id, name, arguments = raw.get("action_id"), raw.get("name"), raw.get("arguments")
        requestor, info, compare = raw.get("requestor"), raw.get("info"), raw.get("compare_args")
        if (
            isinstance(action_id, str)
            and isinstance(name, str)
            and isinstance(arguments, dict)
            and (requestor is None or requestor in REQUESTORS)
            and (info is None or isinstance(info, str))
            and (compare is None or (isinstance(compare, list) and all(isinstance(c, str) for c in compare)))
        ):
            return _made(
                Action,
                action_id=action_id,
                name=name,
                arguments=arguments,
                requestor=requestor or "assistant",
                info=info,
                compare_args=None if compare is None else tuple(compare),
            )
    path = f"{where}[{index}]"
    obj = v.obj(raw, path, optional=False)
    assert obj is not None
    compare = v.strings(obj.get("compare_args"), f"{path}.compare_args")
    return Action(
        action_id=v.string(obj.get("action_id"), f"{path}.action_id", optional=False),  # type: ignore[arg-type]
        name=v.string(obj.get("name"), f"{path}.name", optional=False),  # type: ignore[arg-type]
        arguments=v.obj(obj.get("arguments"), f"{path}.arguments", optional=False),  # type: ignore[arg-type]
        requestor=v.choice(obj.get("requestor"), f"{path}.requestor", REQUESTORS, "assistant"),
        info=v.string(obj.get("info"), f"{path}.info"),
        compare_args=compare,
    )


def _parse_env_call(v: _V, raw: Any, where: str, index: int, *, assertion: bool) -> EnvFunctionCall:
    """``raw`` (entry ``index`` of the list at ``where``) as an env function call or assertion; read like
    :func:`_parse_action`."""
    if isinstance(raw, dict):
        env_type, func_name, arguments = raw.get("env_type"), raw.get("func_name"), raw.get("arguments")
        if (
            isinstance(env_type, str)
            and env_type in REQUESTORS
            and isinstance(func_name, str)
            and (arguments is None or isinstance(arguments, dict))
        ):
            if not assertion:
                return _made(EnvFunctionCall, env_type=env_type, func_name=func_name, arguments=arguments or {})
            assert_value, message = raw.get("assert_value"), raw.get("message")
            if (assert_value is None or isinstance(assert_value, bool)) and (
                message is None or isinstance(message, str)
            ):
                return _made(
                    EnvAssertion,
                    env_type=env_type,
                    func_name=func_name,
                    arguments=arguments or {},
                    assert_value=True if assert_value is None else assert_value,
                    message=message,
                )
    path = f"{where}[{index}]"
    obj = v.obj(raw, path, optional=False)
    assert obj is not None
    common = dict(
        env_type=v.choice(obj.get("env_type"), f"{path}.env_type", REQUESTORS),
        func_name=v.string(obj.get("func_name"), f"{path}.func_name", optional=False),
        arguments=v.obj(obj.get("arguments"), f"{path}.arguments", optional=True) or {},
    )
    if not assertion:
        return EnvFunctionCall(**common)  # type: ignore[arg-type]
    return EnvAssertion(
        **common,  # type: ignore[arg-type]
        assert_value=v.boolean(obj.get("assert_value"), f"{path}.assert_value", True),
        message=v.string(obj.get("message"), f"{path}.message"),
    )


def _parse_criteria(v: _V, raw: Any) -> EvaluationCriteria | None:
    obj = v.obj(raw, "evaluation_criteria")
    if obj is None:
        return None
    p = "evaluation_criteria"
    actions = v.array(obj.get("actions"), f"{p}.actions")
    asserts = v.array(obj.get("env_assertions"), f"{p}.env_assertions")
    basis_raw = obj.get("reward_basis")
    basis: tuple[str, ...]
    if basis_raw is None:
        basis = DEFAULT_REWARD_BASIS
    else:
        items = v.array(basis_raw, f"{p}.reward_basis") or []
        basis = tuple(v.choice(b, f"{p}.reward_basis[{i}]", REWARD_TYPES) for i, b in enumerate(items))
    return _made(
        EvaluationCriteria,
        actions=None
        if actions is None
        else tuple(_parse_action(v, a, f"{p}.actions", i) for i, a in enumerate(actions)),
        env_assertions=None
        if asserts is None
        else tuple(_parse_env_call(v, a, f"{p}.env_assertions", i, assertion=True) for i, a in enumerate(asserts)),
        communicate_info=v.strings(obj.get("communicate_info"), f"{p}.communicate_info"),
        nl_assertions=v.strings(obj.get("nl_assertions"), f"{p}.nl_assertions"),
        reward_basis=basis,
    )


def _parse_initial_state(v: _V, raw: Any) -> InitialState | None:
    obj = v.obj(raw, "initial_state")
    if obj is None:
        return None
    p = "initial_state"
    init_data = None
    idata = v.obj(obj.get("initialization_data"), f"{p}.initialization_data")
    if idata is not None:
        init_data = InitializationData(
            agent_data=v.obj(idata.get("agent_data"), f"{p}.initialization_data.agent_data"),
            user_data=v.obj(idata.get("user_data"), f"{p}.initialization_data.user_data"),
        )
    actions = v.array(obj.get("initialization_actions"), f"{p}.initialization_actions")
    history_raw = v.array(obj.get("message_history"), f"{p}.message_history")
    history = None
    if history_raw is not None:
        try:
            history = tuple(parse_messages(history_raw))
        except TrajectoryError as exc:
            raise v.fail(f"{p}.message_history", str(exc)) from exc
    return _made(
        InitialState,
        initialization_data=init_data,
        initialization_actions=None
        if actions is None
        else tuple(
            _parse_env_call(v, a, f"{p}.initialization_actions", i, assertion=False) for i, a in enumerate(actions)
        ),
        message_history=history,
    )


def parse_task(raw: Any, index: int | None = None) -> Task:
    """Validate one task JSON object into a :class:`Task` (raises :class:`TaskValidationError`)."""
    where = f"#{index}" if index is not None else None
    if not isinstance(raw, dict):
        raise TaskValidationError(where, None, f"expected a task object, got {type(raw).__name__}")
    tid = raw.get("id")
    if not isinstance(tid, str) or not tid:
        raise TaskValidationError(where, "id", f"expected a non-empty string, got {tid!r}")
    v = _V(tid)
    issues = v.array(raw.get("issues"), "issues")
    return _made(
        Task,
        id=tid,
        user_scenario=v.obj(raw.get("user_scenario"), "user_scenario"),
        description=v.obj(raw.get("description"), "description"),
        ticket=v.string(raw.get("ticket"), "ticket"),
        initial_state=_parse_initial_state(v, raw.get("initial_state")),
        evaluation_criteria=_parse_criteria(v, raw.get("evaluation_criteria")),
        issues=None if issues is None else tuple(issues),
        required_documents=v.strings(raw.get("required_documents"), "required_documents"),
        user_tools=v.strings(raw.get("user_tools"), "user_tools"),
        raw=raw,
    )


class TaskTable(Mapping[str, Task]):
    """A tasks file's tasks by id, in file order: each task's JSON is validated into a :class:`Task` on its first
    use and kept. Iterating,
    ``in`` and ``len`` read only the ids; ``values()`` / ``items()`` validate every task. Two threads asking for the
    same new task may both validate it (a pure function of the same JSON); one result is kept."""

    def __init__(self, raw: dict[str, tuple[int, Any]], source: Path | None = None):
        self._raw = raw  # id -> (index in the file or folder, the task's JSON)
        self._parsed: dict[str, Task] = {}
        self._source = source

    def __getitem__(self, task_id: str) -> Task:
        task = self._parsed.get(task_id)
        if task is not None:
            return task
        index, raw = self._raw[task_id]  # KeyError for an unknown id
        try:
            task = parse_task(raw, index)
        except TaskValidationError as exc:
            raise _in_file(exc, self._source) from None
        return self._parsed.setdefault(task_id, task)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def raw(self, task_id: str) -> Any:
        """The task's JSON as the file holds it (not validated)."""
        return self._raw[task_id][1]


def _in_file(exc: TaskValidationError, path: Path | None) -> TaskValidationError:
    """``exc`` naming the file it comes from (once)."""
    if path is None or str(path) in exc.message:
        return exc
    return TaskValidationError(exc.task_id, exc.field, f"{exc.message} (in {path})")


def _task_id(raw: Any, index: int | str) -> str:
    """The id of a task's JSON (``index``: its entry in the list, or its file), checked as :func:`parse_task` does."""
    where = f"#{index}" if isinstance(index, int) else None
    if not isinstance(raw, dict):
        raise TaskValidationError(where, None, f"expected a task object, got {type(raw).__name__}")
    tid = raw.get("id")
    if not isinstance(tid, str) or not tid:
        raise TaskValidationError(where, "id", f"expected a non-empty string, got {tid!r}")
    return tid


def index_tasks(raw: Any, source: Path | None = None) -> TaskTable:
    """A ``tasks.json`` list as a :class:`TaskTable`: ids checked (present, unique), tasks validated on first use."""
    if not isinstance(raw, list):
        raise TaskValidationError(None, None, f"tasks file must hold a JSON list, got {type(raw).__name__}")
    table: dict[str, tuple[int, Any]] = {}
    for i, item in enumerate(raw):
        tid = _task_id(item, i)
        if tid in table:
            raise TaskValidationError(tid, "id", f"duplicate task id (entry #{i})")
        table[tid] = (i, item)
    return TaskTable(table, source)


def parse_tasks(raw: Any) -> dict[str, Task]:
    """Validate a ``tasks.json`` list into an ordered ``{id: Task}``, every task now (duplicate ids are an error)."""
    return dict(index_tasks(raw).items())


def parse_splits(raw: Any, task_ids: Any) -> dict[str, list[str]]:
    """Validate a split file (``{split: [task ids]}``); every id must name a loaded task."""
    if not isinstance(raw, dict):
        raise TaskValidationError(None, "splits", f"split file must hold a JSON object, got {type(raw).__name__}")
    known = set(task_ids)
    out: dict[str, list[str]] = {}
    for name, ids in raw.items():
        if not isinstance(ids, list):
            raise TaskValidationError(None, f"splits.{name}", "expected a list of task ids")
        for i, tid in enumerate(ids):
            if not isinstance(tid, str):
                raise TaskValidationError(None, f"splits.{name}[{i}]", f"expected a task id string, got {tid!r}")
            if tid not in known:
                raise TaskValidationError(tid, f"splits.{name}[{i}]", "split names a task that is not in tasks.json")
        out[name] = list(ids)
    return out


def _without_gc(parse: Any, text: str) -> Any:
    """``parse(text)`` with the cyclic garbage collector paused: parsing allocates only new, acyclic objects, and the
    collections their number triggers cost a third of the parse of telecom's 14 MB tasks file (~35 ms)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return parse(text)
    finally:
        if paused:
            gc.enable()


def read_json(path: Path) -> Any:
    """The JSON content of a data file; :class:`DataFileError` naming the file when it is not UTF-8 JSON."""
    if not path.is_file():
        raise DataNotFoundError(f"tau2 data file not found: {path}")
    try:
        return _without_gc(json.loads, path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DataFileError(f"tau2 data file {path} is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        why = "is empty" if not exc.doc.strip() else f"is not valid JSON ({where}: {exc.msg})"
        raise DataFileError(f"tau2 data file {path} {why}") from None
    except RecursionError:
        raise DataFileError(f"tau2 data file {path} is not usable JSON (nested too deeply)") from None


def load_tasks(path: str | Path) -> TaskTable:
    """Read a ``tasks.json`` file as a :class:`TaskTable` (ids checked now, each task validated on first use;
    errors name the file).

    A folder is read as one task per ``task_*.json`` file, in file-name order (tau2's ``banking_knowledge``
    layout); duplicate ids are an error there too.
    """
    path = Path(path)
    if path.is_dir():
        table: dict[str, tuple[int, Any]] = {}
        files: dict[str, Path] = {}
        for i, file in enumerate(sorted(path.glob("task_*.json"))):
            raw = read_json(file)
            try:
                tid = _task_id(raw, i)
            except TaskValidationError as exc:
                raise _in_file(exc, file) from None
            if tid in table:
                raise TaskValidationError(tid, "id", f"duplicate task id (in {file})")
            table[tid] = (i, raw)
            files[tid] = file
        return _FolderTable(table, files)
    try:
        return index_tasks(read_json(path), path)
    except TaskValidationError as exc:
        raise _in_file(exc, path) from None


class _FolderTable(TaskTable):
    """A :class:`TaskTable` of a folder of task files: an error names the task's own file."""

    def __init__(self, raw: dict[str, tuple[int, Any]], files: dict[str, Path]):
        super().__init__(raw)
        self._files = files

    def __getitem__(self, task_id: str) -> Task:
        try:
            return super().__getitem__(task_id)
        except TaskValidationError as exc:
            raise _in_file(exc, self._files.get(task_id)) from None


def load_splits(path: str | Path, task_ids: Any) -> dict[str, list[str]]:
    """Load and validate a split file against the loaded task ids (errors name the file)."""
    raw = read_json(Path(path))
    try:
        return parse_splits(raw, task_ids)
    except TaskValidationError as exc:
        raise TaskValidationError(exc.task_id, exc.field, f"{exc.message} (in {path})") from None
