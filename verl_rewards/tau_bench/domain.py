"""Loading a tau-bench v1 domain: its data, tasks per split, policy (wiki), tool schemas and gold states.

A domain folder holds tau-bench's files as shipped: the three data JSON files (retail ``orders``, ``products``,
``users``; airline ``flights``, ``reservations``, ``users``), ``wiki.md`` (the agent's system prompt),
``tasks_<split>.json`` (tau-bench's ``Task`` objects, ``{user_id, actions: [{name, kwargs}], instruction,
outputs}``, list index = task index) and ``tools_info.json`` (the ``tools=`` list tau-bench gives the agent); the
last two are made from tau-bench's Python files by ``verl-rewards data get tau_bench``.

The data directory is the ``data_dir`` argument, else ``TAU_BENCH_DATA_DIR``, else the installed folder
(:mod:`verl_rewards.engine.data_dir`):
a folder holding ``retail/`` and ``airline/``, or a domain folder itself. Task ids are ``"<split>/<index>"``
(``"train/0"``), the index as tau-bench numbers tasks. Splits: retail ``train`` (500), ``test`` (115), ``dev`` (20);
airline ``test`` (50).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.data_dir import TAU_BENCH_DATA, resolve_data_dir
from ..engine.errors import DataFileError, DataNotFoundError, TaskValidationError, UnknownDomainError
from ..engine.state import BaseDB, DBState
from . import airline, retail
from .domain_spec import TauBenchDomainSpec
from .environment import RESPOND_ACTION, TERMINATE_TOOLS, TauBenchEnvironment, UserReply
from .hashing import TUPLE_CODEC

DATA_DIR_ENV = TAU_BENCH_DATA.env_var
DOMAINS: dict[str, TauBenchDomainSpec] = {spec.name: spec for spec in (retail.SPEC, airline.SPEC)}
"""The v1 domains by name: each domain module's spec."""
SPLITS = ("train", "test", "dev")
POLICY_FILE = "wiki.md"
TOOLS_INFO_FILE = "tools_info.json"
GOLD_HASHES_FILE = "gold_data_hashes.json"
TASK_KEYS = ("user_id", "actions", "instruction", "outputs")

_cache: dict[tuple[str, str], TauBenchDomain] = {}
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class TauBenchTask:
    """One tau-bench task. ``actions`` are the gold actions ``{name, kwargs}``; ``outputs`` must be said."""

    id: str
    split: str
    index: int
    user_id: str
    actions: tuple[dict[str, Any], ...]
    instruction: str
    outputs: tuple[str, ...]


def _spec(name: Any) -> TauBenchDomainSpec:
    spec = DOMAINS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise UnknownDomainError(f"unknown tau-bench domain {name!r}; available: {sorted(DOMAINS)}")
    return spec


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise DataNotFoundError(f"tau-bench data file not found: {path}")
    try:
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)
    except UnicodeDecodeError:
        raise DataFileError(f"tau-bench data file {path} is not UTF-8 text") from None
    except RecursionError:
        raise DataFileError(f"tau-bench data file {path} is nested too deeply to read") from None
    except ValueError as exc:  # truncated, empty, not JSON
        raise DataFileError(f"tau-bench data file {path} is not valid JSON ({exc})") from None


def _parse_tasks(path: Path, split: str) -> list[TauBenchTask]:
    raw = _read_json(path)
    if not isinstance(raw, list):
        raise TaskValidationError(None, None, f"{path}: expected a JSON list of tasks")
    tasks = []
    for index, item in enumerate(raw):
        task_id = f"{split}/{index}"
        if not isinstance(item, dict):
            raise TaskValidationError(task_id, None, f"{path}: a task must be an object")
        missing = [k for k in TASK_KEYS if k not in item]
        if missing:
            raise TaskValidationError(task_id, missing[0], f"{path}: missing key(s) {missing}")
        actions = item["actions"]
        if not isinstance(actions, list):
            raise TaskValidationError(task_id, "actions", "must be a list")
        for i, action in enumerate(actions):
            if not (
                isinstance(action, dict)
                and isinstance(action.get("name"), str)
                and isinstance(action.get("kwargs"), dict)
            ):
                raise TaskValidationError(task_id, f"actions[{i}]", "must be {name: str, kwargs: object}")
        outputs = item["outputs"]
        if not (isinstance(outputs, list) and all(isinstance(o, str) for o in outputs)):
            raise TaskValidationError(task_id, "outputs", "must be a list of strings")
        for key in ("user_id", "instruction"):
            if not isinstance(item[key], str):
                raise TaskValidationError(task_id, key, "must be a string")
        tasks.append(
            TauBenchTask(
                id=task_id,
                split=split,
                index=index,
                user_id=item["user_id"],
                actions=tuple(actions),
                instruction=item["instruction"],
                outputs=tuple(outputs),
            )
        )
    return tasks


class TauBenchDomain:
    """A loaded v1 domain, shared and read-only: environments never change it.

    Attributes: ``name``, ``spec`` (its :class:`TauBenchDomainSpec`), ``data_dir``, ``policy`` (wiki.md),
    ``tools_info`` (the agent's tool schemas), ``tasks`` (``{id: TauBenchTask}``), ``splits`` (``{split: [ids]}``),
    ``terminate_tools``, ``base_db``.
    """

    def __init__(self, name: str, data_dir: str | os.PathLike[str] | None = None):
        spec = _spec(name)
        self.name = name
        self.spec = spec
        self.data_dir = resolve_data_dir(name, data_dir, {"db": spec.db_file}, data=TAU_BENCH_DATA)
        data = {part: _read_json(self.data_dir / f"{part}.json") for part in spec.data_files}
        for part, value in data.items():
            if not isinstance(value, dict):
                raise DataFileError(
                    f"tau-bench data file {self.data_dir / f'{part}.json'} must hold a JSON object, "
                    f"not {type(value).__name__}"
                )
        self.base_db = BaseDB(data, TUPLE_CODEC)
        self.policy = (self.data_dir / POLICY_FILE).read_text(encoding="utf-8")
        self.tools_info: list[dict[str, Any]] = _read_json(self.data_dir / TOOLS_INFO_FILE)
        self.terminate_tools: frozenset[str] = frozenset(TERMINATE_TOOLS)
        self.tasks: dict[str, TauBenchTask] = {}
        self.splits: dict[str, list[str]] = {}
        for split in SPLITS:
            path = self.data_dir / f"tasks_{split}.json"
            if path.is_file():
                parsed = _parse_tasks(path, split)
                self.tasks.update((t.id, t) for t in parsed)
                self.splits[split] = [t.id for t in parsed]
        if not self.splits:
            raise DataNotFoundError(f"no tasks_<split>.json in {self.data_dir} (splits: {', '.join(SPLITS)})")
        self._check_tools()
        self._lock = threading.RLock()
        self._gold: dict[str, TauBenchEnvironment] = {}
        self._gold_hashes: dict[str, str] = {}

    def _check_tools(self) -> None:
        ours = set(self.spec.agent_tool_specs())
        theirs = [t.get("function", {}).get("name") for t in self.tools_info if isinstance(t, dict)]
        if set(theirs) != ours:
            raise TaskValidationError(
                None, TOOLS_INFO_FILE, f"tools {sorted(map(str, theirs))} do not match ours {sorted(ours)}"
            )

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        """Pickle by reference: unpickling reloads (or reuses) the domain from the same data folder."""
        return load_domain, (self.name, str(self.data_dir))

    def __repr__(self) -> str:
        return f"TauBenchDomain({self.name!r}, data_dir={str(self.data_dir)!r}, tasks={len(self.tasks)})"

    # -------------------------------------------------------------------------------------------- lookup
    def task(self, task_id: Any) -> TauBenchTask:
        """The task ``"<split>/<index>"``."""
        hit = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if hit is None:
            raise KeyError(
                f"unknown task id {task_id!r} in tau-bench domain {self.name!r}: use '<split>/<index>' with split in "
                f"{sorted(self.splits)}"
            )
        return hit

    def split(self, name: str) -> list[str]:
        """Task ids of a split, in tau-bench's order."""
        if name not in self.splits:
            available = sorted(self.splits)
            raise KeyError(f"unknown split {name!r} for tau-bench domain {self.name!r}; available: {available}")
        return list(self.splits[name])

    def tool_kinds(self) -> dict[str, str]:
        """``{tool name: read | write | generic}``."""
        return {n: s.kind for n, s in self.spec.agent_tool_specs().items()}

    # -------------------------------------------------------------------------------------- environments
    def make_env(self, task_id: Any = None, user: UserReply | None = None) -> TauBenchEnvironment:
        """A fresh episode on the shipped data (every v1 task starts from it); ``user`` answers ``respond``."""
        env = TauBenchEnvironment(self.spec.agent_toolkit(DBState(self.base_db)), user)
        if task_id is not None:
            env.task_id = self.task(task_id).id
        return env

    def gold_env(self, task_id: Any) -> TauBenchEnvironment:
        """The state after the task's gold actions, terminate tools skipped, errors kept (cached and frozen).

        Only the gold actions of write tools run: the others cannot change the data (the trajectory replay skips
        them too), and running them was most of the cost of a task's first reward call."""
        task = self.task(task_id)
        with self._lock:
            hit = self._gold.get(task.id)
        if hit is not None:
            return hit
        env = self.make_env(task.id)
        kinds = self.tool_kinds()
        for action in task.actions:
            name = action["name"]
            if name not in self.terminate_tools and name != RESPOND_ACTION and kinds.get(name, "write") == "write":
                env.step(name, action["kwargs"])
        env.freeze()
        with self._lock:
            return self._gold.setdefault(task.id, env)

    def gold_hash(self, task_id: Any) -> str:
        """tau-bench's ``gt_data_hash`` of a task (computed once, then cached)."""
        env = self.gold_env(task_id)
        with self._lock:
            hit = self._gold_hashes.get(env.task_id or "")
        if hit is None:
            hit = env.get_data_hash()
            with self._lock:
                self._gold_hashes[env.task_id or ""] = hit
        return hit


def load_domain(name: str, data_dir: str | os.PathLike[str] | None = None) -> TauBenchDomain:
    """Load (once per name and data folder, then cached) the tau-bench v1 domain ``retail`` or ``airline``."""
    folder = resolve_data_dir(name, data_dir, {"db": _spec(name).db_file}, data=TAU_BENCH_DATA)
    key = (name, str(folder))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is None:
            hit = TauBenchDomain(name, folder)
            _cache[key] = hit
        return hit
