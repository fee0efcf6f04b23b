"""Loading a tau2 domain: data files, tasks, splits, policy, fresh environments and cached gold states.

What a domain is made of (data file names, toolkits, normalisers, hooks) is its
:class:`~verl_rewards.tau2.domain_spec.DomainSpec`, looked up by name in :mod:`verl_rewards.tau2.registry`. This
module reads the domain spec's files into a :class:`Domain` and builds
:class:`~verl_rewards.engine.environment.Environment` objects from its toolkits over copy-on-write DB states.

The data directory is the ``data_dir`` argument, else the ``TAU2_DATA_DIR`` environment variable, else the folder
``verl-rewards data get tau2`` installs (:mod:`verl_rewards.engine.data_dir`). It holds one folder per domain
(``<dir>/mock/db.json``); a directory that directly holds the domain's files is accepted too.
"""

from __future__ import annotations

import copy
import inspect
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..engine import data_dir as engine_data_dir
from ..engine.data_dir import TAU2_DATA
from ..engine.environment import Environment
from ..engine.state import BaseDB, DBState, canonical_json, clone_data
from ..engine.toolkit import ToolSpec
from .domain_spec import DomainSpec
from .errors import DataFileError, DataNotFoundError, TaskDataError, TaskValidationError
from .registry import domain_spec
from .tasks import Task, TaskTable, load_splits, load_tasks, read_json

logger = logging.getLogger(__name__)

DATA_DIR_ENV = TAU2_DATA.env_var

_cache: dict[tuple[str, str, str], Domain] = {}
#: where a task names env functions (checked against its toolkit at load)
ENV_CALL_FIELDS = (("initial_state", "initialization_actions"), ("evaluation_criteria", "env_assertions"))
_cache_lock = threading.Lock()


def deep_merge(base: Any, patch: Any) -> Any:
    """addict-style update without mutating either input: dicts merge recursively, anything else is replaced.

    Only the dicts on the patched paths are copied, so merging into a large DB is cheap.
    """
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def resolve_data_dir(name: str, data_dir: str | os.PathLike[str] | None, files: Mapping[str, str]) -> Path:
    """The folder holding ``name``'s tau2 data files (:func:`verl_rewards.engine.data_dir.resolve_data_dir` for
    tau2); ``files["db"]`` marks a domain folder."""
    return engine_data_dir.resolve_data_dir(name, data_dir, files, data=TAU2_DATA)


def _read_db(path: Path, normalize: Any) -> Any:
    """A database file through its domain's normaliser; :class:`DataFileError` naming the file if it is unusable."""
    if path.suffix == ".toml":
        try:
            import tomllib
        except ModuleNotFoundError:  # Python < 3.11: the same parser, packaged as tomli
            import tomli as tomllib

        if not path.is_file():
            raise DataNotFoundError(f"tau2 data file not found: {path}")
        try:
            raw = tomllib.loads(path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
            raise DataFileError(f"tau2 data file {path} is not valid UTF-8 TOML ({exc})") from None
    else:
        raw = read_json(path)
    try:
        return normalize(raw)
    except Exception as exc:  # noqa: BLE001 - any failure of the schema check is a bad file, named as such
        raise DataFileError(f"tau2 data file {path} does not match the domain's schema: {exc}") from None


def _json_type(annotation: Any) -> str | None:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    text = str(text).replace("typing.", "").split("|")[0].strip().lower()
    for prefix, kind in (
        ("str", "string"),
        ("int", "integer"),
        ("float", "number"),
        ("bool", "boolean"),
        ("list", "array"),
        ("dict", "object"),
    ):
        if text.startswith(prefix):
            return kind
    return None


def _describe_tool(spec: ToolSpec) -> dict[str, Any]:
    """A tool as plain data: name, kind, mutates_state, description, parameters schema (from its signature)."""
    props: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in list(inspect.signature(spec.func).parameters.items())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        prop: dict[str, Any] = {}
        kind = _json_type(param.annotation) if param.annotation is not inspect.Parameter.empty else None
        if kind:
            prop["type"] = kind
        props[pname] = prop
        if param.default is inspect.Parameter.empty:
            required.append(pname)
    return {
        "name": spec.name,
        "kind": spec.kind,
        "mutates_state": spec.mutates_state,
        "description": spec.description,
        "parameters": {"type": "object", "properties": props, "required": required},
    }


class Domain:
    """A loaded domain. Shared and read-only after loading: environments never mutate it.

    Attributes: ``name``, ``spec`` (its :class:`DomainSpec`), ``data_dir``, ``policy`` (text), ``tasks``
    (``{id: Task}``), ``splits`` (``{name: [ids]}``), ``terminate_tools``, ``base_db`` and ``user_base_db`` (the
    loaded DBs; None without a user toolkit).
    """

    def __init__(self, name: str, data_dir: str | os.PathLike[str] | None = None, **options: Any):
        spec = domain_spec(name)
        self.name = name
        files = spec.files
        self.data_dir = resolve_data_dir(name, data_dir, files)
        self.options: dict[str, Any] = dict(options)
        if spec.configure is not None:
            spec = spec.configure(self.data_dir, dict(options))
        elif options:
            raise ValueError(f"tau2 domain {name!r} takes no load options, got {sorted(options)}")
        self.spec: DomainSpec = spec
        self.terminate_tools: frozenset[str] = frozenset(spec.terminate_tools)

        self.base_db = BaseDB(_read_db(self.data_dir / files["db"], spec.normalize_db))
        self.user_base_db: BaseDB | None = None
        if spec.shared_user_db:
            self.user_base_db = self.base_db
        elif spec.user_toolkit is not None:
            self.user_base_db = BaseDB(_read_db(self.data_dir / files["user_db"], spec.normalize_user_db))

        if spec.policy_text is not None:
            self.policy = spec.policy_text(self.data_dir)
        else:
            policy_path = self.data_dir / files["policy"]
            try:
                self.policy = policy_path.read_text(encoding="utf-8") if policy_path.is_file() else ""
            except UnicodeDecodeError as exc:
                raise DataFileError(f"tau2 data file {policy_path} is not valid UTF-8 ({exc.reason})") from None
        self.tasks: TaskTable = load_tasks(self.data_dir / files["tasks"])
        split_name = files.get("split")
        split_path = self.data_dir / split_name if split_name else None
        if split_path is not None and split_path.is_file():
            self.splits = load_splits(split_path, self.tasks.keys())
        else:
            self.splits = {"base": list(self.tasks)}

        self._check_env_functions()

        self._lock = threading.RLock()
        self._init_bases: dict[str, tuple[BaseDB, BaseDB | None, bool]] = {}
        self._initial: dict[str, tuple[BaseDB, BaseDB | None, bool]] = {}
        self._shared: dict[tuple[str, str], tuple[BaseDB, BaseDB | None, bool]] = {}
        self._gold: dict[tuple[str, bool], tuple[Environment, list[dict[str, Any]]]] = {}
        self._gold_hashes: dict[tuple[str, bool], str] = {}

    def _check_env_functions(self) -> None:
        """Every initialisation action and env assertion names a public method of its toolkit: checked at load on
        the tasks' JSON (each task is validated on first use; an entry too malformed to read here fails then), so a
        typo in tasks.json fails here, naming the task, the field and the file, not mid-training."""
        kits = {"assistant": self.spec.agent_toolkit, "user": self.spec.user_toolkit}
        known: dict[str, frozenset[str]] = {
            side: frozenset(n for n in dir(kit) if not n.startswith("_") and callable(getattr(kit, n, None)))
            for side, kit in kits.items()
            if kit is not None
        }
        for task_id in self.tasks:
            raw = self.tasks.raw(task_id)
            for outer, inner in ENV_CALL_FIELDS:
                part = raw.get(outer)
                calls = part.get(inner) if isinstance(part, dict) else None
                if not isinstance(calls, list):
                    continue
                for i, call in enumerate(calls):  # an entry that is not an object with a string func_name: validation
                    if not isinstance(call, dict):
                        continue
                    side, name = call.get("env_type"), call.get("func_name")
                    if side in kits and isinstance(name, str) and name not in known.get(side, ()):
                        who = "agent" if side == "assistant" else side
                        raise TaskValidationError(
                            task_id,
                            f"{outer}.{inner}[{i}].func_name",
                            f"the {who} toolkit of domain {self.name!r} has no function {name!r} "
                            f"(in {self.data_dir / self.spec.files['tasks']})",
                        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle by reference: unpickling reloads (or reuses) the domain from the same data folder and options."""
        return _load_with_options, (self.name, str(self.data_dir), self.options)

    def __repr__(self) -> str:
        return f"Domain({self.name!r}, data_dir={str(self.data_dir)!r}, tasks={len(self.tasks)})"

    # ----------------------------------------------------------------- lookup
    def task(self, task_id: Any) -> Task:
        """The task of that id (ints are accepted for the numeric airline/retail ids)."""
        key = str(task_id) if isinstance(task_id, int) and not isinstance(task_id, bool) else task_id
        try:
            return self.tasks[key]
        except (KeyError, TypeError):
            raise KeyError(f"unknown task id {task_id!r} in domain {self.name!r}") from None

    def split(self, name: str) -> list[str]:
        """Task ids of a split (``train``, ``test``, ``base``; mock has only ``base``)."""
        if name not in self.splits:
            raise KeyError(f"unknown split {name!r} for domain {self.name!r}; available: {sorted(self.splits)}")
        return list(self.splits[name])

    def policy_for(self, *, solo: bool = False, policy_type: str | None = None, task_id: Any = None) -> str:
        """The agent policy; ``solo`` picks the solo-mode variant and ``policy_type`` one of the domain's
        ``spec.policy_types`` (telecom: ``manual``, the default, or ``workflow``) where the domain has them.
        Other domains have one policy text. ``task_id``: for domains whose policy depends on the task
        (``banking_knowledge`` under ``golden_retrieval``); ignored by the others."""
        if task_id is not None and self.spec.task_policy is not None:
            return self.spec.task_policy(self.data_dir, self.task(task_id))
        if self.spec.policy_text is not None:
            kwargs = {} if policy_type is None else {"policy_type": policy_type}
            return self.spec.policy_text(self.data_dir, solo=solo, **kwargs)
        if policy_type is not None:
            raise ValueError(f"domain {self.name!r} has a single policy; policy_type must be None")
        return self.policy

    def tool_specs(self) -> list[dict[str, Any]]:
        """The agent tools: name, kind (read/write/generic), mutates_state, description, parameters schema."""
        return [_describe_tool(s) for s in self.spec.agent_tool_specs().values()]

    def tool_kinds(self) -> dict[str, str]:
        """``{tool name: kind}`` for the agent and user tools (cached)."""
        kinds = self.__dict__.get("_tool_kinds")
        if kinds is None:
            kinds = {n: s.kind for n, s in self.spec.agent_tool_specs().items()}
            for n, s in self.spec.user_tool_specs().items():
                kinds.setdefault(n, s.kind)
            self._tool_kinds = kinds
        return kinds

    def gold_hash(self, task_id: Any, *, skip_terminate: bool = False) -> str:
        """tau2 hash of the gold agent DB of a task (computed once per task, then cached)."""
        env, _ = self.gold_env(task_id, skip_terminate=skip_terminate)
        key = (env.task_id or "", bool(skip_terminate))
        with self._lock:
            hit = self._gold_hashes.get(key)
        if hit is None:
            hit = env.get_data_hash()
            with self._lock:
                self._gold_hashes[key] = hit
        return hit

    def user_tool_specs(self) -> list[dict[str, Any]]:
        """The user tools (empty for domains without a user toolkit)."""
        return [_describe_tool(s) for s in self.spec.user_tool_specs().values()]

    # ------------------------------------------------------------ environments
    def _bases_for(self, task: Task | None) -> tuple[BaseDB, BaseDB | None, bool]:
        """Base DBs after the task's ``initialization_data`` (cached), and whether user aliases agent."""
        data = None if task is None or task.initial_state is None else task.initial_state.initialization_data
        if data is None or (data.agent_data is None and data.user_data is None):
            return self.base_db, self.user_base_db, False
        assert task is not None
        with self._lock:
            hit = self._init_bases.get(task.id)
            if hit is not None:
                return hit
            # Each slot is (plain data, normaliser). tau2 quirk: after patching one side, the other side's
            # toolkit is pointed at the patched DB object, so both hashes then come from the same DB.
            agent: tuple[dict[str, Any], Any] = (self.base_db.data, self.spec.normalize_db)
            user: tuple[dict[str, Any], Any] | None = None
            if self.user_base_db is not None:
                user = (self.user_base_db.data, self.spec.normalize_user_db)
            try:
                if data.agent_data is not None:
                    # deep copy (clone_data: copy.deepcopy's result on this JSON data, 4x faster: the whole banking
                    # DB took ~5 ms): a normaliser may work in place, and the shared base must stay intact
                    agent = (agent[1](clone_data(deep_merge(agent[0], data.agent_data))), agent[1])
                    if user is not None:
                        user = agent
                if data.user_data is not None:
                    if user is None:
                        raise ValueError("the domain has no user database")
                    user = (user[1](clone_data(deep_merge(user[0], data.user_data))), user[1])
                    agent = user
            except TaskDataError:
                raise
            except Exception as exc:
                where = "initial_state.initialization_data"
                raise TaskDataError(task.id, where, f"{type(exc).__name__}: {exc}") from exc
            agent_base = BaseDB(agent[0])
            aliased = user is agent
            user_base = None if user is None else (agent_base if aliased else BaseDB(user[0]))
            hit = (agent_base, user_base, aliased)
            self._init_bases[task.id] = hit
            return hit

    def make_env(self, task_id: Any = None, *, solo_mode: bool = False) -> Environment:
        """A fresh environment; with a task id, that task's initial state is applied.

        The initial state is: ``initialization_data`` deep-merged into the DBs, then ``initialization_actions``
        (any toolkit method, each followed by the domain's sync hook, which is left out after the spec's
        ``sync_neutral`` helpers, where it would change nothing), then the mutating tool calls of
        ``message_history`` replayed (strictly: a recorded output that our tools do not reproduce is a
        task-data error). It is computed on the task's first use (~0.1 ms for a telecom task), then cached and
        shared, read-only, by the task's environments, so a further environment costs O(1); loading a domain builds
        none (telecom has 2,285 tasks). Where the spec's ``shared_setup`` names the first action, the state after it
        is built once per domain and shared by the tasks starting with the same call. The action log starts empty.
        ``solo_mode``: see :mod:`verl_rewards.engine.environment`.
        """
        if solo_mode and not self.spec.solo:
            raise ValueError(f"{self.name} domain does not support solo mode")
        task = None if task_id is None else self.task(task_id)
        snapshot = self._initial_bases(task)
        if snapshot is None:  # nothing to apply beyond the initialisation data
            env = self._env_over(*self._bases_for(task), solo_mode)
            env.sync()  # tau2 syncs when it builds an environment
        else:
            env = self._env_over(*snapshot, solo_mode)
        if task is not None:
            env.task_id = task.id
        if self.spec.prepare_env is not None:
            self.spec.prepare_env(env, task)
        return env

    def _env_over(self, agent_base: BaseDB, user_base: BaseDB | None, aliased: bool, solo_mode: bool) -> Environment:
        """An environment of the domain spec's toolkits over fresh copy-on-write states of these bases."""
        spec = self.spec
        agent_db = DBState(agent_base)
        user_tools = None
        if spec.user_toolkit is not None and user_base is not None:
            shared = aliased or spec.shared_user_db
            user_tools = spec.user_toolkit(agent_db if shared else DBState(user_base))
        return Environment(
            spec.agent_toolkit(agent_db),
            user_tools,
            terminate_tools=self.terminate_tools,
            sync_tools=spec.sync_tools,
            solo_mode=solo_mode,
        )

    def _initial_bases(self, task: Task | None) -> tuple[BaseDB, BaseDB | None, bool] | None:
        """The task's initial state as base DBs (cached per task; see :meth:`make_env`), or None when the task
        has neither initialisation actions nor a message history."""
        state = None if task is None else task.initial_state
        if task is None or state is None or not (state.initialization_actions or task.history):
            return None
        with self._lock:
            hit = self._initial.get(task.id)
        if hit is not None:
            return hit
        bases = self._bases_for(task)
        actions = state.initialization_actions or ()
        shared = self._shared_start(task, bases, actions)
        env = self._construction(task, bases if shared is None else shared, sync=shared is None)
        for i in range(0 if shared is None else 1, len(actions)):
            self._initialize(env, task, i)
        if task.history:
            try:
                env.replay(task.history, strict=True)
            except Exception as exc:
                raise TaskDataError(task.id, "initial_state.message_history", str(exc)) from exc
        hit = self._snapshot(env, bases[2])
        with self._lock:
            return self._initial.setdefault(task.id, hit)

    def _construction(self, task: Task, bases: tuple[BaseDB, BaseDB | None, bool], *, sync: bool) -> Environment:
        """A private environment over ``bases`` where the task's initial state is built (synced, as tau2 syncs a new
        environment, unless ``bases`` is a state a sync ended)."""
        env = self._env_over(*bases, False)
        env.task_id = task.id
        if self.spec.prepare_env is not None:
            self.spec.prepare_env(env, task)
        if sync:
            env.sync()
        return env

    def _initialize(self, env: Environment, task: Task, i: int) -> None:
        """Run the task's initialisation action ``i`` in ``env``, then the sync unless the helper is sync-neutral (a
        sync there would change nothing: each state here is one a sync produced); errors name the task."""
        assert task.initial_state is not None and task.initial_state.initialization_actions is not None
        call = task.initial_state.initialization_actions[i]
        sync = call.env_type != "user" or call.func_name not in self.spec.sync_neutral
        try:
            env.run_env_function(call.env_type, call.func_name, call.arguments, sync=sync)
        except Exception as exc:
            raise TaskDataError(
                task.id,
                f"initial_state.initialization_actions[{i}]",
                f"{type(exc).__name__}: {exc} (in {self.data_dir / self.spec.files['tasks']})",
            ) from exc

    def _shared_start(
        self, task: Task, bases: tuple[BaseDB, BaseDB | None, bool], actions: tuple[Any, ...]
    ) -> tuple[BaseDB, BaseDB | None, bool] | None:
        """The state after the task's first initialisation action where the spec shares it (``shared_setup``: a
        helper of the user toolkit, on the domain's own DBs), built by the first task that needs it and cached per
        domain by the call; None otherwise."""
        first = actions[0] if actions else None
        if first is None or first.env_type != "user" or first.func_name not in self.spec.shared_setup:
            return None
        if bases[0] is not self.base_db or bases[1] is not self.user_base_db:
            return None
        key = (first.func_name, canonical_json(first.arguments))
        with self._lock:
            hit = self._shared.get(key)
        if hit is None:
            env = self._construction(task, bases, sync=True)
            self._initialize(env, task, 0)
            hit = self._snapshot(env, bases[2])
            with self._lock:
                hit = self._shared.setdefault(key, hit)
        return hit

    @staticmethod
    def _snapshot(env: Environment, aliased: bool) -> tuple[BaseDB, BaseDB | None, bool]:
        """The environment's DBs as new shared bases (the env must not be used afterwards)."""
        agent = env.agent_db.freeze()
        user_db = env.user_db
        user = None if user_db is None else (agent if aliased else user_db.freeze())
        return agent, user, aliased

    def gold_env(self, task_id: Any, *, skip_terminate: bool = False) -> tuple[Environment, list[dict[str, Any]]]:
        """The task's gold end state (cached per task) and the errors its replay swallowed.

        Every gold action is applied in order to a fresh env with the task's initial state; tool errors are
        recorded and ignored, and, as in tau2's evaluator, the domain's sync hook does not run between them (see
        :mod:`verl_rewards.tau2.evaluators.db`). ``skip_terminate`` leaves out terminate tools (tau-bench's
        replay). Gold actions of read-only tools are not run (:meth:`replay_gold`).
        The returned environment is shared and frozen (:meth:`Environment.freeze`): never step it.
        """
        task = self.task(task_id)
        key = (task.id, bool(skip_terminate))
        with self._lock:
            hit = self._gold.get(key)
        if hit is not None:
            return hit
        env, errors = self.replay_gold(task.id, skip_terminate=skip_terminate)
        env.freeze()
        hit = (env, errors)
        with self._lock:
            self._gold.setdefault(key, hit)
            return self._gold[key]

    def replay_gold(
        self, task_id: Any, *, skip_terminate: bool = False, run_reads: bool = False
    ) -> tuple[Environment, list[dict[str, Any]]]:
        """A fresh env with the task's gold actions replayed (not cached, not frozen) and the errors swallowed.

        The actions run as tau2's evaluator runs them (``make_tool_call``): without the domain's sync hook after
        each. Unless ``run_reads``, an action of a read-only tool is not run: it cannot change the state (the
        trajectory replay skips such calls too), and running reads was most of the cost of a task's first reward
        call. Its failure, if it would fail, is then not listed (calls of unknown tools still are). The tests check
        on every task of every domain that both ways reach the same state.
        """
        task = self.task(task_id)
        env = self.make_env(task.id)
        errors: list[dict[str, Any]] = []
        criteria = task.evaluation_criteria
        for action in (criteria.actions or ()) if criteria is not None else ():
            if skip_terminate and action.name in self.terminate_tools:
                continue
            mutating = env.has_tool(action.name) and env.is_mutating_tool(action.name)
            kit = env.tools if action.requestor == "assistant" else env.user_tools
            if not run_reads and kit is not None and kit.has_tool(action.name):
                if not kit.tool_mutates_state(action.name):
                    continue
            observation, error = env.execute(action.name, action.arguments, action.requestor, sync=False)
            if error:
                log = logger.warning if mutating else logger.debug
                log(
                    "gold replay of task %r: action %r (%s) failed: %s",
                    task.id,
                    action.action_id,
                    action.name,
                    observation,
                )
                errors.append(
                    {
                        "action_id": action.action_id,
                        "name": action.name,
                        "requestor": action.requestor,
                        "mutating": mutating,
                        "error": observation,
                    }
                )
        return env, errors


def load_domain(name: str, data_dir: str | os.PathLike[str] | None = None, **options: Any) -> Domain:
    """Load (once per ``(name, data folder, options)``, then cached) a tau2 domain. See the module doc for
    ``data_dir``. ``options`` are the domain's load options (``banking_knowledge``: ``retrieval="bm25"`` and the
    other retrieval settings); the other domains take none."""
    folder = resolve_data_dir(name, data_dir, domain_spec(name).files)
    key = (name, str(folder), repr(sorted(options.items())))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is None:
            hit = Domain(name, folder, **options)
            _cache[key] = hit
        return hit


def _load_with_options(name: str, data_dir: str, options: dict[str, Any]) -> Domain:
    return load_domain(name, data_dir, **options)


def as_domain(domain: Domain | str) -> Domain:
    """A :class:`Domain` from a domain object or a name (loaded from the default data directory)."""
    if isinstance(domain, Domain):
        return domain
    if isinstance(domain, str):
        return load_domain(domain)
    raise TypeError(f"domain must be a Domain or a domain name, got {type(domain).__name__}")
