"""The half-duplex conversation between an agent and a simulated user (tau2's normal mode, tau-bench's ``llm`` user):
one engine for training (the verl agent loops) and for offline scoring (``verl-rewards simulate``). It imports
nothing of verl.

Rules, as tau2-bench's orchestrator runs them (``src/tau2/orchestrator/orchestrator.py``, default settings):

* **Greeting.** The first message is the agent's fixed greeting. The user model receives it as a ``user`` message
  after its system prompt; the agent model has it as an ``assistant`` message (no tool calls) after its own.
* **Views.** The user sees its own history with roles flipped: agent text as ``user`` messages, its own messages
  as ``assistant`` messages with their tool calls, the results of its own calls as ``tool`` messages. The agent
  sees user text as ``user`` messages, its own messages and the results of its own calls. Neither side sees the
  other's tool calls or their results.
* **Tool calls** of the agent run on the agent toolkit, those of the user on the user toolkit (requestor
  ``"user"``) of the same environment; one tool message per call, in call order; the results go back to the
  caller only.
* **Steps.** Every message after the greeting is one step: a user message, an agent message, one batch of tool
  results. After each step the domain's ``sync_tools`` runs and, unless a tool call is pending, the limits are
  checked: ``max_steps`` (MAX_STEPS) then ``max_errors`` (TOO_MANY_ERRORS, tool results flagged as errors,
  every call of a batch counting). So a run can end one step past ``max_steps``, on the tool results; and, as
  in tau2, a limit reached on the step of a user stop records the limit, not the stop.
* **User stop.** A user message *without tool calls* whose text contains ``###STOP###``, ``###TRANSFER###`` or
  ``###OUT-OF-SCOPE###`` (substring) ends the run as USER_STOP; it stays in the trajectory and never reaches the
  agent. The agent cannot stop in normal mode: ``###STOP###`` in agent text is passed to the user.
* **Communication protocol** (``enforce_communication_protocol``, off by default as in tau2): off, a message with
  text *and* tool calls is routed to the environment, its calls run and its text stays in the trajectory and in
  the sender's own history but never reaches the other side; on, it ends the run at once as AGENT_ERROR
  (USER_ERROR for the user) and its calls do not run.
* **Agent message errors**: an empty agent message (no text, no tool calls) or a tool call whose arguments are
  not a JSON object (malformed JSON). tau2 raises there (message validation; ``json.loads`` of the arguments) and
  its runner records the simulation as ``infrastructure_error``, left out of its metrics. Two named rules
  (``agent_message_errors``): ``"infrastructure_error"`` (tau2's outcome; ``verl-rewards simulate``) ends the run
  as ``infrastructure_error`` and the bad message is not played or kept; ``"agent_error"`` (training's rule, the
  default: a policy must not dodge a zero by emitting bad JSON) keeps the message and ends the run as
  AGENT_ERROR, which scores 0.
* **Other benchmarks' rules** come as a named rule set (:class:`~verl_rewards.engine.rules.RuleSet`, ``rules=``):
  :data:`~verl_rewards.engine.rules.TAU2` (the default, every rule above) or
  :data:`~verl_rewards.engine.rules.TAU_BENCH` (tau-bench v1, :mod:`verl_rewards.tau_bench.normal`): only the user
  sees the greeting (the trajectory starts with the user's first message); no step or error limit, but
  ``max_agent_turns`` (after the agent's n-th message has been played, tool results or the user's answer included,
  a run that is not over ends as MAX_STEPS); only the first tool call of an agent message runs, and the message
  keeps only that call; a terminate tool of the environment (``transfer_to_human_agents``) ends the run at once as
  ``transfer``; ``###STOP###`` is the only stop token.
* **Requests** write the views as the benchmark's runner sends them (the rule set's ``wire``,
  :mod:`~verl_rewards.engine.wire`); the views themselves stay in plain chat-completions shape.
* **Our additions:** a user player that fails (endpoint down, timeout after retries, malformed or empty reply)
  ends the run as USER_ERROR with the cause recorded; an agent player that fails ends it as
  ``infrastructure_error``; callers may end a run from outside with :meth:`Conversation.end` (verl's token and
  turn budgets end it as MAX_STEPS).

The trajectory (:attr:`Conversation.trajectory`) is the reward's input: OpenAI-style messages, user tool calls in
``user`` messages, tool messages carrying ``requestor`` and ``error``. :attr:`Conversation.message_info` runs
alongside it (one dict per message: ``timestamp`` when the message was played, and for model messages the
endpoint's ``usage``, its whole answer ``raw`` and ``generation_time_seconds``; ``history`` on the messages of an
initial history), for result files that record them (tau2's ``Results``).

Given the benchmark's progress rule (``progress=``, as the verl loops give it), the conversation records the step
dicts of the agent's tool turns with the rule solo mode's tools use (:mod:`verl_rewards.engine.steps`); the user's
own calls change the state between the agent's turns and are not counted for the agent.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from .environment import Environment
from .offload import STEP_TIMEOUT_S, StepTimeout, run_step
from .rules import STOP_TOKENS, TAU2, RuleSet
from .steps import Progress, StepRecorder
from .termination import TerminationReason
from .wire import encode

AGENT_MESSAGE_ERRORS = (str(TerminationReason.AGENT_ERROR), str(TerminationReason.INFRASTRUCTURE_ERROR))
DEFAULT_SEED = 300
MAX_CAUSE_CHARS = 500
_UNSET: Any = object()


class PlayerError(Exception):
    """A player could not produce a message (endpoint down, timeout after retries, malformed reply)."""


@dataclass
class Reply:
    """One message a player produced: text and/or tool calls (``{"id"?, "name", "arguments"}``, arguments a dict
    or JSON text; OpenAI's ``{"function": {...}}`` shape is accepted too)."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    raw: dict[str, Any] | None = None  # the endpoint's whole answer (result files that keep it: tau2's raw_data)
    seconds: float | None = None  # how long the player took to produce it

    def has_text(self) -> bool:
        return isinstance(self.content, str) and self.content.strip() != ""


@dataclass
class UserRequest:
    """What a user player is asked to answer: its system prompt, its (role-flipped) view, its tools, the seed."""

    system_prompt: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    seed: int | None

    def chat_messages(self) -> list[dict[str, Any]]:
        """The full chat-completions ``messages``: system prompt, then the view."""
        return [{"role": "system", "content": self.system_prompt}, *self.messages]


class UserPlayer(Protocol):
    async def reply(self, request: UserRequest) -> Reply: ...


class AgentPlayer(Protocol):
    async def reply(self, messages: list[dict[str, Any]]) -> Reply: ...


@dataclass
class Turn:
    """What the agent must be shown next: ``messages`` (tool results of its calls, or the user's text) to append
    to its view, and whether the conversation is over (then ``messages`` is empty)."""

    messages: list[dict[str, Any]]
    done: bool


def trial_seeds(seed: int, num_trials: int) -> list[int]:
    """tau2's per-trial seeds: ``random.seed(seed)`` then one ``randint(0, 1_000_000)`` per trial."""
    rng = random.Random(seed)
    return [rng.randint(0, 1_000_000) for _ in range(num_trials)]


def is_user_stop(content: str | None, has_tool_calls: bool, stop_tokens: Sequence[str] = STOP_TOKENS) -> bool:
    """tau2's user stop rule: no tool calls, and a stop token anywhere in the text."""
    if has_tool_calls or not isinstance(content, str):
        return False
    return any(token in content for token in stop_tokens)


def malformed_arguments(raw_calls: Any) -> str | None:
    """The arguments text of the first tool call whose arguments are not a JSON object (tau2's ``json.loads`` of
    the arguments raises, or gives something that is not a dict), else None. Arguments given as a dict are fine."""
    for raw in raw_calls or ():
        fn = raw.get("function") if isinstance(raw, dict) else None
        source = fn if isinstance(fn, dict) else (raw if isinstance(raw, dict) else {})
        arguments = source.get("arguments")
        if isinstance(arguments, dict):
            continue
        if not isinstance(arguments, str):
            return repr(arguments)
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError):
            return arguments
        if not isinstance(value, dict):
            return arguments
    return None


def _short(text: Any) -> str:
    text = str(text)
    return text if len(text) <= MAX_CAUSE_CHARS else text[:MAX_CAUSE_CHARS] + "..."


class Conversation:
    """One normal-mode episode on ``env`` between an agent (driven from outside, or by :meth:`run`) and ``user``.

    Drive it with :meth:`start` (greeting and the user's first message), then :meth:`agent_turn` for each agent
    message; or :meth:`run` with an :class:`AgentPlayer`.
    """

    def __init__(
        self,
        env: Environment,
        user: UserPlayer,
        *,
        user_system_prompt: str,
        user_tools: list[dict[str, Any]] | None = None,
        agent_system_prompt: str | None = None,
        rules: RuleSet = TAU2,
        max_steps: int | None = _UNSET,
        max_errors: int | None = _UNSET,
        max_agent_turns: int | None = _UNSET,
        enforce_communication_protocol: bool = False,
        seed: int | None = None,
        agent_message_errors: str = TerminationReason.AGENT_ERROR,
        user_failures: str = TerminationReason.USER_ERROR,
        history: Sequence[dict[str, Any]] = (),
        progress: Progress | None = None,
        step_timeout_s: float | None = STEP_TIMEOUT_S,
    ):
        """``rules``: the benchmark's :class:`~verl_rewards.engine.rules.RuleSet` (tau2's by default); the limits
        default to the rule set's. ``progress``: record the step dicts of the agent's tool turns
        (:class:`~verl_rewards.engine.steps.StepRecorder`, the rule solo mode's sessions use) with the benchmark's
        progress rule; None records none. ``step_timeout_s``: the bound on one tool call
        (:mod:`~verl_rewards.engine.offload`; None: none). ``user_failures``: how a run ends when the user player
        fails or sends a message that cannot be played (``user_error``, or tau2's ``infrastructure_error``: its runner
        records a simulation whose user model raised so). ``history``: the task's initial messages (trajectory
        format, tool messages with their ``requestor``), already applied to ``env``; the conversation continues from
        them (see :meth:`start`)."""
        if agent_message_errors not in AGENT_MESSAGE_ERRORS:
            raise ValueError(
                f"agent_message_errors must be one of {AGENT_MESSAGE_ERRORS}, got {agent_message_errors!r}"
            )
        max_steps = rules.max_steps if max_steps is _UNSET else max_steps
        max_errors = rules.max_errors if max_errors is _UNSET else max_errors
        max_agent_turns = rules.max_agent_turns if max_agent_turns is _UNSET else max_agent_turns
        self.agent_message_errors = str(agent_message_errors)
        if user_failures not in (TerminationReason.USER_ERROR, TerminationReason.INFRASTRUCTURE_ERROR):
            raise ValueError(f"user_failures must be user_error or infrastructure_error, got {user_failures!r}")
        self.user_failures = str(user_failures)
        for name, limit in (("max_steps", max_steps), ("max_errors", max_errors), ("max_agent_turns", max_agent_turns)):
            if limit is not None and int(limit) <= 0:
                raise ValueError(f"{name} must be positive (or None: no limit)")
        if step_timeout_s is not None and not 0 < step_timeout_s < float("inf"):
            raise ValueError(f"step_timeout_s must be a positive number of seconds (or None), got {step_timeout_s!r}")
        self.step_timeout_s = step_timeout_s
        self.rules = rules
        self.env = env
        self.user = user
        self.user_system_prompt = user_system_prompt
        self.user_tools = user_tools or None
        self.max_steps = None if max_steps is None else int(max_steps)
        self.max_errors = None if max_errors is None else int(max_errors)
        self.max_agent_turns = None if max_agent_turns is None else int(max_agent_turns)
        self.enforce_communication_protocol = bool(enforce_communication_protocol)
        self.seed = seed
        self.trajectory: list[dict[str, Any]] = []
        self.message_info: list[dict[str, Any]] = []
        self.agent_view: list[dict[str, Any]] = []
        if agent_system_prompt is not None:
            self.agent_view.append({"role": "system", "content": agent_system_prompt})
        self.user_view: list[dict[str, Any]] = []
        self.steps = 0
        self.errors = 0
        self.agent_turns = 0
        self.termination: str | None = None
        self.cause: str | None = None
        self.user_calls = 0
        self.history = [dict(m) for m in history]
        self.recorder = StepRecorder(env, progress) if progress is not None else None
        self._next_id = 0
        self._started = False

    # ------------------------------------------------------------------ state
    @property
    def stop_tokens(self) -> tuple[str, ...]:
        return self.rules.stop_tokens

    @property
    def greeting_to_agent(self) -> bool:
        return self.rules.greeting_to_agent

    @property
    def first_call_only(self) -> bool:
        return self.rules.first_call_only

    @property
    def terminate_termination(self) -> str | None:
        return self.rules.terminate_termination

    @property
    def done(self) -> bool:
        return self.termination is not None

    def end(self, termination: str, cause: str | None = None) -> None:
        """End the run from outside (a budget, an infrastructure failure); a run already over keeps its reason."""
        if self.termination is None:
            self.termination = str(termination)
            self.cause = _short(cause) if cause else None

    def extra_fields(self) -> dict[str, Any]:
        """What the reward and the metrics read (small, picklable); the step dicts when they are recorded."""
        fields = {
            "messages": list(self.trajectory),
            "termination": self.termination,
            "tau2_steps": self.steps,
            "tau2_errors": self.errors,
            "tau2_end_cause": self.cause or "",
            "user_error": float(self.termination == TerminationReason.USER_ERROR),
        }
        if self.recorder is not None:
            fields.update(self.recorder.fields())
        return fields

    # ------------------------------------------------------------------ driving
    async def start(self) -> Turn:
        """Send the greeting and let the user answer; the returned turn holds the user's first text. With a
        ``history``, continue from it instead (:meth:`_resume`)."""
        if self._started:
            raise RuntimeError("the conversation has already started")
        self._started = True
        if self.history:
            return await self._resume()
        if self.greeting_to_agent:
            greeting = {"role": "assistant", "content": self.rules.greeting}
            self._append(dict(greeting))
            self.agent_view.append(dict(greeting))
        self.user_view.append({"role": "user", "content": self.rules.greeting})
        return await self._user_turn()

    async def agent_turn(self, reply: Reply) -> Turn:
        """Play one agent message: run its tool calls, or pass its text to the user and collect the answer."""
        if not self._started:
            raise RuntimeError("call start() first")
        if self.done:
            return Turn([], True)
        raw_calls = list(reply.tool_calls or ())[:1] if self.first_call_only else reply.tool_calls
        bad = malformed_arguments(raw_calls)
        empty = not raw_calls and not reply.has_text()
        if (bad is not None or empty) and self.agent_message_errors == TerminationReason.INFRASTRUCTURE_ERROR:
            # tau2: the agent's message cannot be built; the runner records an infrastructure error
            what = "an empty message" if empty else f"tool-call arguments that are not a JSON object: {bad}"
            self.end(TerminationReason.INFRASTRUCTURE_ERROR, f"agent: {what}")
            return Turn([], True)
        calls = self._calls(raw_calls)
        self.agent_turns += 1
        message = self._message("assistant", reply.content, calls)
        self._append(message, reply)
        self.agent_view.append(_view_message(message))
        if not calls and not reply.has_text():
            return self._end_on_step(
                TerminationReason.AGENT_ERROR, "the agent sent an empty message (no text, no tool calls)"
            )
        if bad is not None:
            return self._end_on_step(
                TerminationReason.AGENT_ERROR, f"the agent sent tool-call arguments that are not a JSON object: {bad}"
            )
        if calls and reply.has_text() and self.enforce_communication_protocol:
            return self._end_on_step(TerminationReason.AGENT_ERROR, "the agent sent text and tool calls in one message")
        if calls:
            self._after_step(pending=True)
            if self.recorder is not None:
                self.recorder.begin_turn()
            results = await self._run_calls(calls, "assistant")
            if results is None:
                return Turn([], True)
            views = [_view_message(m) for m in results]
            self.agent_view.extend(views)
            if self.terminate_termination and self.env.done:
                self.termination = self.rules.terminate_termination
            self._after_step(pending=False)
            self._after_agent_turn()
            return Turn([] if self.done else views, self.done)
        self._after_step(pending=False)
        if self.done:
            return Turn([], True)
        self.user_view.append({"role": "user", "content": reply.content})
        turn = await self._user_turn()
        self._after_agent_turn()
        return Turn([], True) if self.done else turn

    async def run(self, agent: AgentPlayer) -> None:
        """Play the whole conversation with ``agent`` (offline scoring)."""
        turn = await self.start()
        while not turn.done:
            started = time.perf_counter()
            try:
                reply = await agent.reply(encode(self.agent_view, self.rules.wire))
            except PlayerError as exc:
                self.end(TerminationReason.INFRASTRUCTURE_ERROR, f"agent: {exc}")
                return
            if isinstance(reply, Reply) and reply.seconds is None:
                reply.seconds = time.perf_counter() - started
            turn = await self.agent_turn(reply)

    async def _resume(self) -> Turn:
        """Continue from :attr:`history`, as tau2's orchestrator does: no greeting; the history opens the
        trajectory and each side's view holds what it may see of it (the agent: its own messages, the user's text,
        the results of its own calls; the user: the reverse), no step counted; then its last message goes where it
        was going. Pending tool calls run (one step); text goes to the other side; a user stop ends the run at once;
        a tool result goes back to its caller. The returned turn holds what the agent must be shown on top of its
        view of the history (tool results of its pending calls, or the user's answer)."""
        start = datetime.now() - timedelta(seconds=len(self.history))
        for i, message in enumerate(self.history):
            self.trajectory.append(message)
            self.message_info.append({"timestamp": (start + timedelta(seconds=i)).isoformat(), "history": True})
            role, has_calls = message["role"], bool(message.get("tool_calls"))
            if role == "assistant" or (role == "user" and not has_calls) or _answers(message, "assistant"):
                self.agent_view.append(_view_message(message))
            if role == "user":
                self.user_view.append(dict(_view_message(message), role="assistant"))
            elif (role == "assistant" and not has_calls) or _answers(message, "user"):
                self.user_view.append(
                    _view_message(message) if role == "tool" else {"role": "user", "content": message.get("content")}
                )
        self.env.sync()
        last = self.history[-1]
        calls = list(last.get("tool_calls") or ())
        if last["role"] == "assistant" and calls:  # the calls run as the first step (the message is history)
            results = await self._run_calls(calls, "assistant")
            if results is None:
                return Turn([], True)
            views = [_view_message(m) for m in results]
            self.agent_view.extend(views)
            self._after_step(pending=False)
            return Turn([] if self.done else views, self.done)
        if last["role"] == "user" and calls:
            results = await self._run_calls(calls, "user")
            if results is None:
                return Turn([], True)
            self.user_view.extend(_view_message(m) for m in results)
            self._after_step(pending=False)
            return Turn([], True) if self.done else await self._user_turn()
        if last["role"] == "user" and is_user_stop(last.get("content"), False, self.stop_tokens):
            self.termination = str(TerminationReason.USER_STOP)
        if last["role"] == "assistant" or _answers(last, "user"):
            return await self._user_turn()
        return Turn([], self.done)

    # ---------------------------------------------------------------- internals
    async def _user_turn(self) -> Turn:
        """The user answers until it sends text to the agent (returned) or the run ends."""
        while True:
            request = UserRequest(
                self.user_system_prompt, encode(self.user_view, self.rules.wire), self.user_tools, self.seed
            )
            self.user_calls += 1
            started = time.perf_counter()
            try:
                reply = await self.user.reply(request)
            except PlayerError as exc:
                self.end(self.user_failures, f"user: {exc}")
                return Turn([], True)
            except Exception as exc:  # noqa: BLE001 - whatever breaks in the user player is the user's failure
                self.end(self.user_failures, f"user: {type(exc).__name__}: {exc}")
                return Turn([], True)
            if not isinstance(reply, Reply):
                self.end(self.user_failures, f"user: the player returned {type(reply).__name__}, not a Reply")
                return Turn([], True)
            if reply.seconds is None:
                reply.seconds = time.perf_counter() - started
            calls = self._calls(reply.tool_calls)
            if calls and self.user_tools is None:
                self.end(self.user_failures, "user: tool calls from a user that has no tools")
                return Turn([], True)
            if not calls and not reply.has_text():
                self.end(self.user_failures, "user: the user sent an empty message")
                return Turn([], True)
            message = self._message("user", reply.content, calls)
            self._append(message, reply)
            flipped = dict(_view_message(message), role="assistant")
            self.user_view.append(flipped)
            if is_user_stop(reply.content, bool(calls), self.stop_tokens):
                self.termination = str(TerminationReason.USER_STOP)
            if calls and reply.has_text() and self.enforce_communication_protocol:
                return self._end_on_step(
                    TerminationReason.USER_ERROR, "the user sent text and tool calls in one message"
                )
            if calls:
                self._after_step(pending=True)
                results = await self._run_calls(calls, "user")
                if results is None:
                    return Turn([], True)
                self.user_view.extend(_view_message(m) for m in results)
                self._after_step(pending=False)
                if self.done:
                    return Turn([], True)
                continue
            self._after_step(pending=False)
            if self.done:
                return Turn([], True)
            text = {"role": "user", "content": reply.content}
            self.agent_view.append(text)
            return Turn([dict(text)], False)

    def _end_on_step(self, termination: str, cause: str) -> Turn:
        """The message just played counts as a step and ends the run with ``termination`` (its cause recorded)."""
        self.steps += 1
        self.end(termination, cause)
        return Turn([], True)

    def _after_step(self, *, pending: bool) -> None:
        self.steps += 1
        self.env.sync()
        if pending:
            return
        if self.max_steps is not None and self.steps >= self.max_steps:
            self.termination = str(TerminationReason.MAX_STEPS)
        if self.max_errors is not None and self.errors >= self.max_errors:
            self.termination = str(TerminationReason.TOO_MANY_ERRORS)

    def _after_agent_turn(self) -> None:
        """The agent-turn budget (``max_agent_turns``), checked once the agent's message has been played."""
        if self.max_agent_turns is not None and self.agent_turns >= self.max_agent_turns:
            self.end(TerminationReason.MAX_STEPS, f"the agent used its {self.max_agent_turns} turns")

    async def _run_calls(self, calls: list[dict[str, Any]], requestor: str) -> list[dict[str, Any]] | None:
        """Run the calls in order, each off the event loop (:func:`~verl_rewards.engine.offload.run_step`); their tool
        messages, or None when a call ran past :attr:`step_timeout_s` (the run then ends as
        ``infrastructure_error``: the environment may still be changing, so nothing else runs on it)."""
        results = []
        for call in calls:
            fn = call["function"]
            try:
                observation = await run_step(
                    self.env.step,
                    fn["name"],
                    fn["arguments"],
                    requestor,
                    timeout_s=self.step_timeout_s,
                    what=f"the tool call {str(fn['name'])[:80]!r}",
                )
            except StepTimeout as exc:
                self.end(TerminationReason.INFRASTRUCTURE_ERROR, str(exc))
                return None
            error = bool(self.env.actions[-1]["error"]) if self.env.actions else False
            if self.recorder is not None and self.env.actions:
                self.recorder.record_call(fn["name"], self.env.actions[-1], in_turn=requestor == "assistant")
            self.errors += int(error)
            message = {
                "role": "tool",
                "tool_call_id": call["id"],
                "content": observation,
                "requestor": requestor,
                "error": error,
            }
            self._append(message)
            results.append(message)
        return results

    def _append(self, message: dict[str, Any], reply: Reply | None = None) -> None:
        """Add a message to the trajectory, with its :attr:`message_info` (play time, the endpoint's usage)."""
        self.trajectory.append(message)
        info: dict[str, Any] = {"timestamp": datetime.now().isoformat()}
        if reply is not None:
            info.update(usage=reply.usage, raw=reply.raw, generation_time_seconds=reply.seconds)
        self.message_info.append(info)

    def _calls(self, raw_calls: Any) -> list[dict[str, Any]]:
        """Tool calls in OpenAI shape with ids (generated where missing) and JSON-text arguments."""
        calls = []
        for raw in raw_calls or ():
            fn = raw.get("function") if isinstance(raw, dict) else None
            source = fn if isinstance(fn, dict) else (raw if isinstance(raw, dict) else {})
            name = source.get("name")
            arguments = source.get("arguments")
            if isinstance(arguments, dict):
                arguments = json.dumps(arguments, ensure_ascii=False)
            elif arguments is None:
                arguments = "{}"
            elif not isinstance(arguments, str):
                arguments = json.dumps(arguments, default=str)
            call_id = raw.get("id") if isinstance(raw, dict) else None
            if not isinstance(call_id, str) or not call_id:
                call_id = f"call_{self._next_id}"
            self._next_id += 1
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name if isinstance(name, str) else "", "arguments": arguments},
                }
            )
        return calls

    @staticmethod
    def _message(role: str, content: str | None, calls: list[dict[str, Any]]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": role, "content": content}
        if calls:
            message["tool_calls"] = calls
        return message


def _answers(message: dict[str, Any], requestor: str) -> bool:
    """Whether ``message`` is the result of a tool call of ``requestor``."""
    return message["role"] == "tool" and message.get("requestor", "assistant") == requestor


def _view_message(message: dict[str, Any]) -> dict[str, Any]:
    """A trajectory message in plain chat-completions shape (no ``requestor`` / ``error`` annotations)."""
    if message["role"] == "tool":
        return {"role": "tool", "tool_call_id": message["tool_call_id"], "content": message["content"]}
    out = {"role": message["role"], "content": message.get("content")}
    if message.get("tool_calls"):
        out["tool_calls"] = [dict(c, function=dict(c["function"])) for c in message["tool_calls"]]
    return out
