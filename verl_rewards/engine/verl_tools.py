"""verl tools over an episode engine environment, for verl's multi-turn ``tool_agent`` loop (``ToolAgentLoop``):
what tau2's (:mod:`verl_rewards.tau2.verl_tools`) and tau-bench's (:mod:`verl_rewards.tau_bench.verl_tools`) tools
share.

verl creates, executes and releases a tool instance *per call*, so nothing of an episode may live in the tool
instance. The episode of one trajectory is an :class:`EpisodeSession` (the live environment, started from the
task's initial state, plus bookkeeping) kept in the process-local :data:`SESSIONS` store, keyed by the trajectory
(``agent_data.request_id`` and the ``agent_data`` object). A session is dropped when its ``agent_data`` is
garbage-collected (the trajectory is over) and the store is bounded: beyond ``max_sessions`` the least recently used
*finished* session goes first. Only when every session is live is a live one evicted, and then visibly: its
trajectory ends as ``infrastructure_error`` (scored 0, left out of pass^k) with ``session_evicted`` set, and its
later calls are refused, never run on a fresh environment.

Only small picklable data go into ``agent_data.extra_fields`` (:data:`EXTRA_KEYS`; verl hands that dict to the
reward manager as ``tool_extra_fields``): ``messages`` (a reference to ``agent_data.messages``, or once the episode
has ended a frozen copy of what ran), ``termination``, ``prev_step_dict`` / ``cur_step_dict`` (one
``{"turn", "bb_hash", "value_est"}`` per assistant turn that called the tools, before and after it),
``trajectory_id``, ``action_log`` and ``db_hash``. The step dicts are recorded by the engine's one rule,
:class:`~verl_rewards.engine.steps.StepRecorder`, which normal mode's conversation engine uses too.

Episode end: a message that calls the session's stop tool ends the episode, and the other calls in that message are
not run. A call that ends the episode (:meth:`EpisodeSession.ends_episode`) ends it after that call; later calls of
the same message are not run. After the end every call is refused, and ``messages`` is frozen as: the messages
before the ending assistant message, that message with only the calls that ran (given ids), and their tool answers.
The reward replays exactly what ran, whatever the model generates afterwards.

Each call runs off the event loop with a time bound (:func:`~verl_rewards.engine.offload.run_step`; the tool config's
``step_timeout_s``), the calls of one trajectory one at a time in call order. A call past its bound ends the
trajectory as ``infrastructure_error`` with ``tool_call_timeout`` set; its observation says why.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any
from uuid import uuid4

from pydantic import ConfigDict, Field, PrivateAttr, model_serializer, model_validator
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import (
    OpenAIFunctionParametersSchema,
    OpenAIFunctionPropertySchema,
    OpenAIFunctionSchema,
    OpenAIFunctionToolSchema,
    ToolResponse,
)

from .data_dir import BenchmarkData, choose_data_dir
from .environment import Environment
from .offload import STEP_TIMEOUT_S, StepTimeout, run_step
from .steps import STEP_FIELDS, Progress, StepRecorder
from .termination import TerminationReason

logger = logging.getLogger(__name__)

STOP_OBSERVATION = "Episode finished. Do not call any more tools."
ENDED_OBSERVATION = "Error: the episode has already ended; this call was not run."
DEFAULT_MAX_SESSIONS = 4096
EVICTED_TERMINATION = str(TerminationReason.INFRASTRUCTURE_ERROR)
EVICTED_FLAG = "session_evicted"
TIMEOUT_FLAG = "tool_call_timeout"
EXTRA_KEYS = (
    "messages",
    "termination",
    "prev_step_dict",
    "cur_step_dict",
    "trajectory_id",
    "action_log",
    "db_hash",
)


def not_run_with_stop(stop_tool: str) -> str:
    """The answer to a call sent in the same message as the stop tool (it is not run)."""
    return (
        f"Error: not run: this message also calls `{stop_tool}`, which ends the episode; "
        "calls sent together with it are not run."
    )


def _calls_of(message: Any) -> list[dict[str, Any]]:
    calls = message.get("tool_calls") if isinstance(message, Mapping) else None
    return [dict(c) for c in calls or () if isinstance(c, Mapping)]


def _call_name(call: Mapping[str, Any]) -> Any:
    fn = call.get("function")
    return fn.get("name") if isinstance(fn, Mapping) else call.get("name")


class EpisodeSession:
    """The episode of one trajectory: a live environment, step records and the fields the reward reads.

    A benchmark's session (tau2's, tau-bench's) says how its episode is built and ends: :attr:`stop_tool` (a tool
    whose call ends the episode as ``agent_stop``, or None), :meth:`make_env`, :meth:`progress` (the progress rule
    of ``value_est``) and :meth:`ends_episode`. ``domain`` is any loaded domain with ``task(task_id)`` and
    ``make_env``.
    """

    stop_tool: str | None = None

    def __init__(self, domain: Any, task_id: Any, extra: dict[str, Any], messages: list, trajectory_id: str):
        self.domain = domain
        self.task = domain.task(task_id)
        self.env: Environment = self.make_env()
        self.steps = StepRecorder(self.env, self.progress())
        self.ended: str | None = None
        self.extra = extra
        self._turn_key: int | None = None
        self._stop_turn = False
        self._ran: list[tuple[str, Any, str]] = []  # calls of the current turn that ran: (name, args, observation)
        self.in_order = asyncio.Lock()  # the trajectory's calls run one at a time, in call order
        extra.update(
            {
                "messages": messages,
                "termination": None,
                "prev_step_dict": self.steps.prev,
                "cur_step_dict": self.steps.cur,
                "trajectory_id": trajectory_id,
                "action_log": [],
                "db_hash": self.db_hash,
            }
        )

    @property
    def db_hash(self) -> str:
        """The agent DB hash after the last mutating call."""
        return self.steps.db_hash

    @property
    def value_est(self) -> float:
        """The share of the progress targets matched so far."""
        return self.steps.value_est

    # ------------------------------------------------------------------ hooks
    def make_env(self) -> Environment:
        """The episode's environment, started from the task's initial state."""
        return self.domain.make_env(self.task.id)

    def progress(self) -> Progress:
        """The benchmark's progress rule for ``value_est`` (none here: ``value_est`` stays 0)."""
        return Progress()

    def ends_episode(self, name: str, error: bool) -> str | None:
        """The termination a call that just ran causes, or None."""
        return None

    # ------------------------------------------------------------------ steps
    def _start_turn(self, key: int, message: Any) -> None:
        self._turn_key = key
        self._ran = []
        self._stop_turn = self.stop_tool is not None and any(
            _call_name(c) == self.stop_tool for c in _calls_of(message)
        )
        self.steps.begin_turn()

    # ------------------------------------------------------------------- call
    def call(self, name: str, arguments: Any, messages: list) -> str:
        """Run one tool call of the current assistant turn (``messages[-1]``) and return the observation."""
        if self.ended is not None:
            return ENDED_OBSERVATION
        key = len(messages)
        if key != self._turn_key:
            self._start_turn(key, messages[-1] if messages else None)
        if self.stop_tool is not None and name == self.stop_tool:
            self._ran.append((name, {}, STOP_OBSERVATION))
            self._end(TerminationReason.AGENT_STOP, messages)
            return STOP_OBSERVATION
        if self._stop_turn:
            return not_run_with_stop(str(self.stop_tool))
        observation = self.env.step(name, arguments)
        record = self.env.actions[-1]
        error = bool(record["error"])
        self.steps.record_call(name, record)
        self._ran.append((name, record["arguments"] if record["arguments"] is not None else arguments, observation))
        self.extra["action_log"].append(
            {"turn": self.steps.turn, "name": record["name"], "arguments": record["arguments"], "error": error}
        )
        self.extra["db_hash"] = self.db_hash
        termination = self.ends_episode(name, error)
        if termination is not None:
            self._end(termination, messages)
        return observation

    def fail_evicted(self) -> None:
        """The store had to drop this live session: end the trajectory visibly instead of losing its state."""
        self.fail(EVICTED_FLAG)

    def fail(self, flag: str) -> None:
        """End the trajectory as ``infrastructure_error`` with ``flag`` set (its environment is not used again)."""
        self.ended = EVICTED_TERMINATION
        self.extra["termination"] = EVICTED_TERMINATION
        self.extra[flag] = True

    def _end(self, termination: str, messages: list) -> None:
        """Mark the episode over and freeze ``messages`` at what actually ran (see the module doc)."""
        termination = str(termination)
        self.ended = termination
        self.extra["termination"] = termination
        current = messages[-1] if messages else None
        is_assistant = isinstance(current, Mapping) and current.get("role") == "assistant"
        head = list(messages[:-1] if is_assistant else messages)
        calls, answers = [], []
        for i, (name, args, observation) in enumerate(self._ran):
            cid = f"tau2_end_{self.steps.turn}_{i}"  # the prefix recorded data already carry, for every benchmark
            calls.append({"id": cid, "type": "function", "function": {"name": name, "arguments": args}})
            answers.append({"role": "tool", "tool_call_id": cid, "content": observation})
        content = current.get("content") if is_assistant and isinstance(current, Mapping) else None
        final = {"role": "assistant", "content": content if isinstance(content, str) else "", "tool_calls": calls}
        self.extra["messages"] = [*head, final, *answers]


class SessionStore:
    """Process-local sessions keyed by trajectory; dropped with their ``agent_data``, bounded by LRU eviction."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS):
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[tuple[str, int], EpisodeSession] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(agent_data: Any) -> tuple[str, int]:
        # the object id separates trajectories that share a request id (verl's full_determinism ids)
        return str(getattr(agent_data, "request_id", "")), id(agent_data)

    def get(self, agent_data: Any) -> EpisodeSession | None:
        """The session of this trajectory, if one is open."""
        with self._lock:
            return self._sessions.get(self.key(agent_data))

    def open(self, agent_data: Any, factory: Callable[[], EpisodeSession]) -> EpisodeSession:
        """The session of this trajectory, created with ``factory`` on its first tool call."""
        if (getattr(agent_data, "extra_fields", None) or {}).get(EVICTED_FLAG):
            raise RuntimeError(
                "this trajectory's session was evicted (more live trajectories than max_sessions in this "
                "worker); the episode ended as infrastructure_error"
            )
        key = self.key(agent_data)
        with self._lock:
            hit = self._sessions.get(key)
            if hit is not None:
                self._sessions.move_to_end(key)
                return hit
        session = factory()
        with self._lock:
            hit = self._sessions.setdefault(key, session)
            evicted = self._evict_over_limit()
        for old_key, old in evicted:
            old.fail_evicted()
            logger.error(
                "verl tools: %d live trajectories exceed max_sessions=%d in this worker; the session of %s was "
                "evicted and its trajectory ends as %s. Raise max_sessions (tool config) or lower the rollout "
                "concurrency per worker.",
                len(self._sessions),
                self.max_sessions,
                old_key[0],
                EVICTED_TERMINATION,
            )
        if hit is session:
            try:
                weakref.finalize(agent_data, self.discard, key)
            except TypeError:  # not weak-referenceable: LRU eviction bounds the store
                pass
        return hit

    def _evict_over_limit(self) -> list[tuple[tuple[str, int], EpisodeSession]]:
        """Drop sessions beyond ``max_sessions``: finished ones first (oldest first), then the oldest live ones,
        which are returned so the caller can end them visibly. Called with the lock held."""
        live_evicted = []
        while len(self._sessions) > self.max_sessions:
            finished = next((k for k, v in self._sessions.items() if v.ended is not None), None)
            if finished is not None:
                del self._sessions[finished]
            else:
                live_evicted.append(self._sessions.popitem(last=False))
        return live_evicted

    def discard(self, key: tuple[str, int]) -> None:
        with self._lock:
            self._sessions.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)


SESSIONS = SessionStore()


class _Property(OpenAIFunctionPropertySchema):
    model_config = ConfigDict(extra="allow")
    type: str | list[str] | None = None  # type: ignore[assignment]  # a property may have only anyOf / $ref


class _Parameters(OpenAIFunctionParametersSchema):
    """Readable like verl's model (``.properties``, ``.required``: some tool parsers read them) and dumped as the
    plain JSON schema it was built from, key order and all."""

    model_config = ConfigDict(extra="allow")
    type: str = "object"
    properties: dict[str, _Property] = Field(default_factory=dict)  # type: ignore[assignment]
    _plain: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_plain(cls, value: Any, handler: Any) -> Any:
        model = handler(value)
        if isinstance(value, Mapping):
            model._plain = copy.deepcopy(dict(value))
        return model

    @model_serializer
    def _dump(self) -> dict[str, Any]:
        return copy.deepcopy(self._plain)


class _Function(OpenAIFunctionSchema):
    parameters: _Parameters = Field(default_factory=lambda: _Parameters.model_validate({"type": "object"}))


class ToolSchema(OpenAIFunctionToolSchema):
    """verl's tool schema whose ``parameters`` dump exactly as given.

    verl's ``ToolAgentLoop`` shows the model ``tool_schema.model_dump(exclude_unset=True, exclude_none=True)``;
    with verl's own model that drops every field it does not declare (``$defs``, ``title``, ``items``,
    ``"default": null``, ``anyOf``) and reorders the rest. With this one the dump is the original schema, byte for
    byte once JSON-encoded (:meth:`from_openai`). Changes made to the parsed fields after validation are not
    reflected in the dump.
    """

    function: _Function

    @classmethod
    def from_openai(cls, schema: Mapping[str, Any]) -> ToolSchema:
        """The tool schema of an OpenAI ``{"type": "function", "function": {...}}`` dict."""
        return cls.model_validate(copy.deepcopy(dict(schema)))


class EpisodeTool(BaseTool):
    """One tool of a benchmark domain (``config``: ``domain``, ``openai_schema``, optional ``data_dir``,
    ``max_sessions``, the live trajectories one worker keeps, default 4096, and ``step_timeout_s``, the bound on one
    call, default :data:`~verl_rewards.engine.offload.STEP_TIMEOUT_S`; the name is the schema's).

    The schema the model is shown is ``config.openai_schema`` (what ``prepare`` writes), kept whole
    (:class:`ToolSchema`); without it, the benchmark's default (:meth:`_default_schema`).

    Per-row ``create_kwargs`` (``tools_kwargs.<tool>.create_kwargs`` of the dataset) give ``task_id`` and
    ``domain``. The data folder is the tool config's ``data_dir``, else the benchmark's environment variable
    (:attr:`benchmark_data`), else the installed folder; a row's ``data_dir`` never chooses it
    (:mod:`verl_rewards.engine.data_dir`). A benchmark's tool sets :attr:`label` and :attr:`benchmark_data` and
    opens its sessions (:meth:`open_session`).
    """

    label = "episode"
    """The benchmark's name in messages (``"tau2"``, ``"tau-bench"``)."""
    step_dict_fields = STEP_FIELDS
    """The step-dict fields this tool's episodes record (read by ``verl-rewards check``)."""
    benchmark_data: BenchmarkData
    """The benchmark's data (its environment variable and installed folder)."""

    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema | None = None):
        self.config = dict(config or {})
        full = self.config.get("openai_schema")
        if isinstance(full, Mapping):
            tool_schema = ToolSchema.from_openai(full)
        elif tool_schema is None:
            tool_schema = self._default_schema()
        super().__init__(self.config, tool_schema)
        self._check_name()
        if self.config.get("max_sessions") is not None:  # live trajectories per worker (tool config)
            SESSIONS.max_sessions = max(SESSIONS.max_sessions, int(self.config["max_sessions"]))
        self._instances: dict[str, dict[str, Any]] = {}
        timeout = self.config.get("step_timeout_s", STEP_TIMEOUT_S)
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < float("inf")
        ):
            raise ValueError(f"{self.label} tool config: step_timeout_s must be a positive number, got {timeout!r}")
        self.step_timeout_s = None if timeout is None else float(timeout)

    # ------------------------------------------------------------------ hooks
    def _default_schema(self) -> OpenAIFunctionToolSchema:
        """The schema when the config has none and verl gave none."""
        raise ValueError(f"a {self.label} tool needs its schema: config.openai_schema (prepare writes it)")

    def _check_name(self) -> None:
        """Refuse a tool the configured domain does not have (ValueError)."""

    def open_session(self, create: Mapping[str, Any], agent_data: Any) -> EpisodeSession:
        """The episode of a trajectory's first call, from its ``create_kwargs``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ verl's tool interface
    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        """Remember this call's ``create_kwargs``; the episode itself lives in :data:`SESSIONS`."""
        instance_id = instance_id or uuid4().hex
        self._instances[instance_id] = dict(kwargs.get("create_kwargs") or {})
        return instance_id, ToolResponse()

    def _create_kwargs(self, instance_id: str, agent_data: Any) -> dict[str, Any]:
        found = self._instances.get(instance_id) or {}
        if found.get("task_id") is not None:
            return found
        for entry in (getattr(agent_data, "tools_kwargs", None) or {}).values():  # any tool's kwargs will do
            create = entry.get("create_kwargs") if isinstance(entry, Mapping) else None
            if isinstance(create, Mapping) and create.get("task_id") is not None:
                return dict(create)
        return found

    def _data_dir(self, create: Mapping[str, Any]) -> str | None:
        where = "the tool config's data_dir"
        return choose_data_dir(self.config.get("data_dir"), self.benchmark_data, create.get("data_dir"), where=where)

    def _session(self, instance_id: str, agent_data: Any) -> EpisodeSession:
        return SESSIONS.open(
            agent_data, lambda: self.open_session(self._create_kwargs(instance_id, agent_data), agent_data)
        )

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[ToolResponse, float, dict]:
        """Run the call on the trajectory's environment; the observation is the benchmark's tool output."""
        agent_data = kwargs.get("agent_data")
        if agent_data is None or not hasattr(agent_data, "extra_fields"):
            return ToolResponse(text=f"Error: {self.label} tools must be called by verl's tool agent loop"), 0.0, {}
        try:
            session = self._session(instance_id, agent_data)
        except Exception as exc:  # noqa: BLE001 - verl would swallow it; log loudly, answer with the reason
            logger.error("%s tools: cannot start the episode: %s", self.label, exc)
            return ToolResponse(text=f"Error: cannot start the {self.label} episode: {exc}"), 0.0, {}
        async with session.in_order:
            try:
                text = await run_step(
                    session.call,
                    self.name,
                    parameters,
                    agent_data.messages,
                    timeout_s=self.step_timeout_s,
                    what=f"the {self.label} tool call {self.name!r}",
                )
            except StepTimeout as exc:
                logger.error("%s tools: %s; the trajectory ends as infrastructure_error", self.label, exc)
                session.fail(TIMEOUT_FLAG)
                text = f"Error: {exc}"
        return ToolResponse(text=text), 0.0, {}

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._instances.pop(instance_id, None)
