"""The conversation engine inside verl's rollout: an agent loop on verl's public ``AgentLoopBase`` whose turns the
engine plays.

:mod:`.verl_loop` does the tokenisation (verl's Continuous Token, exactly as verl's ``ToolAgentLoop``), generation,
tool-call parsing and the assistant message; where ``ToolAgentLoop`` would run the tools or end on a text reply, the
conversation engine (:mod:`verl_rewards.engine.conversation`) plays the turn instead: tool calls run on the
trajectory's environment, text goes to the simulated user, whose answer comes back as a ``user`` message. Token
masks: the agent's own tokens 1, tool results and user messages 0 (never trained). tau2's ``tau2_agent``
(:mod:`verl_rewards.tau2.normal.agent_loop`) and tau-bench's ``tau_bench_agent``
(:mod:`verl_rewards.tau_bench.agent_loop`) are this loop with their own settings, episodes and rule sets.

verl's own budgets still apply (``response_length``, ``max_assistant_turns``, ``max_user_turns``, where user turns
count both user replies and tool-result rounds); a trajectory they cut ends as ``max_steps`` (scored 0). What the
reward gets (``extra_fields``): what the conversation's
:meth:`~verl_rewards.engine.conversation.Conversation.extra_fields` holds (the step dicts of the agent's tool turns
included, when the benchmark's loop gives its progress rule), the loop's ``row_fields`` (a benchmark's flags about
its row) and ``user_seed``.

The ``policy`` user backend (:class:`PolicyUser`): the rollout server that generates the agent also plays the user,
from the user's own prompt, in separate requests whose tokens never enter the trained sequence.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopOutput
from verl.utils.rollout_trace import rollout_trace_op

from .conversation import Conversation, PlayerError, Reply, UserRequest, trial_seeds
from .termination import TerminationReason
from .users import OpenAIUser, ScriptedUser, UserConfig
from .verl_loop import TokenStream, TurnLoop

logger = logging.getLogger(__name__)

_TRIALS_KEPT = 65536


_SETTINGS_CACHE: dict[tuple[int, str], tuple[Any, Any]] = {}
_TRIALS: OrderedDict[str, int] = OrderedDict()
_LOCK = threading.Lock()


def settings_of(config: Any, name: str, parse: Callable[[Any], Any]) -> Any:
    """The settings ``actor_rollout_ref.rollout.custom.<name>`` of a trainer config, parsed by ``parse`` once per
    config object (scripts files are read once)."""
    key = (id(config), name)
    hit = _SETTINGS_CACHE.get(key)
    if hit is not None and hit[0] is config:
        return hit[1]
    custom = config.actor_rollout_ref.rollout.get("custom") or {}
    section = custom.get(name) if isinstance(custom, Mapping) else None
    if section is not None and hasattr(section, "items"):
        from omegaconf import OmegaConf

        section = OmegaConf.to_container(section, resolve=True) if not isinstance(section, dict) else section
    settings = parse(section)
    _SETTINGS_CACHE[key] = (config, settings)
    return settings


def next_trial(uid: str) -> int:
    """How many trajectories of this prompt (``uid``) this worker started before: the trial index of the user
    seed, so the n rollouts of a GRPO group get tau2's trial seeds 0..n-1."""
    with _LOCK:
        n = _TRIALS.pop(uid, 0)
        _TRIALS[uid] = n + 1
        while len(_TRIALS) > _TRIALS_KEPT:
            _TRIALS.popitem(last=False)
    return n


class PolicyUser:
    """The ``policy`` backend: the rollout server plays the user in requests of its own (never trained)."""

    def __init__(self, loop: ConversationAgentLoop, config: UserConfig):
        self.loop = loop
        self.config = config
        self.request_id = uuid4().hex

    async def reply(self, request: UserRequest) -> Reply:
        loop = self.loop
        messages = [dict(m, content=m.get("content") or "") for m in request.chat_messages()]
        try:
            prompt_ids = await loop.loop.run_in_executor(
                None,
                lambda: loop.tokenizer.apply_chat_template(  # type: ignore[attr-defined]
                    messages,
                    tools=request.tools,
                    add_generation_prompt=True,
                    tokenize=True,
                    **loop.apply_chat_template_kwargs,
                ),
            )
        except Exception as exc:  # noqa: BLE001 - a template that cannot render the user's view
            raise PlayerError(f"policy user: cannot render the user's prompt: {exc}") from exc
        if isinstance(prompt_ids, Mapping):
            prompt_ids = prompt_ids["input_ids"]
        prompt_ids = list(prompt_ids)
        if len(prompt_ids) > loop.prompt_length + loop.response_length:
            raise PlayerError(
                f"policy user: the user's prompt has {len(prompt_ids)} tokens, more than the rollout "
                f"allows ({loop.prompt_length} + {loop.response_length})"
            )
        sampling = dict(self.config.sampling)
        sampling["max_tokens"] = self.config.max_tokens
        if request.seed is not None:
            sampling.setdefault("seed", request.seed)
        try:
            output = await loop.server_manager.generate(
                request_id=self.request_id, prompt_ids=prompt_ids, sampling_params=sampling
            )
        except Exception as exc:  # noqa: BLE001 - the server failing a user turn ends the run as USER_ERROR
            raise PlayerError(f"policy user: generation failed: {exc}") from exc
        schemas = [t.tool_schema for t in loop.tools.values()] if request.tools else None
        content, calls = await loop.tool_parser.extract_tool_calls(output.token_ids, schemas)
        return Reply(
            content=loop.clean_text(content),
            tool_calls=[{"name": c.name, "arguments": c.arguments} for c in calls] if request.tools else [],
        )


class ConversationAgentLoop(TurnLoop):
    """verl's agent loop whose tool and text turns the conversation engine plays (tokens as verl's
    ``ToolAgentLoop`` builds them, :mod:`.verl_loop`; see the module doc).

    A benchmark's loop (``tau2_agent``, ``tau_bench_agent``) names itself (:attr:`agent_name`), reads its settings
    (:meth:`load_settings`) and opens the row's conversation (:meth:`_open`).
    """

    agent_name = "conversation_agent"
    step_dict_fields: tuple[str, ...] = ()
    """The step-dict fields this loop records (a benchmark's loop that gives its progress rule: ``STEP_FIELDS``;
    read by ``verl-rewards check``)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.settings = self.load_settings(self.config)
        self.conversation: Conversation | None = None
        self._row: dict[str, Any] = {}
        self._user_seed: int | None = None
        #: what this trajectory's loop adds to the reward's extra fields about its row (a benchmark's flags)
        self.row_fields: dict[str, Any] = {}
        specials = getattr(self.tokenizer, "all_special_tokens", None) or []
        self._special_tokens = sorted((t for t in specials if t), key=len, reverse=True)

    def clean_text(self, text: str | None) -> str:
        """Message text without the tokenizer's special tokens (the parser's content keeps e.g. ``<|im_end|>``)."""
        text = text or ""
        for token in self._special_tokens:
            if token in text:
                text = text.replace(token, "")
        return text.strip()

    # ------------------------------------------------------------------ set-up
    @staticmethod
    def load_settings(config: Any) -> Any:
        """This loop's validated settings section (``custom.<benchmark>``, :func:`settings_of`)."""
        raise NotImplementedError

    def _open(self) -> Conversation:
        """The conversation of the row in ``self._row`` (its environment, user player and rule set)."""
        raise NotImplementedError

    def trial_seed(self, config: UserConfig, task_id: str) -> int:
        """The user seed of this trajectory: tau2's seed of its trial within the prompt's group."""
        trial = next_trial(str(self._row.get("uid") or task_id))
        return trial_seeds(config.seed, trial + 1)[trial]

    def user_player(self, config: UserConfig, script: Callable[[], Sequence[Reply]]) -> Any:
        """The configured user backend (``script`` gives the scripted backend's turns)."""
        if config.backend == "scripted":
            return ScriptedUser(script())
        if config.backend == "openai":
            from .client import shared_client

            assert config.endpoint is not None
            return OpenAIUser(shared_client(config.endpoint))
        return PolicyUser(self, config)

    # ------------------------------------------------------------------ the loop
    @rollout_trace_op
    async def run(self, sampling_params: dict[str, Any], priority: int = 0, **kwargs: Any) -> AgentLoopOutput:
        """Open the conversation, then alternate: the agent generates (mask 1), the conversation engine plays its
        message and its tool results or the user's reply are appended (mask 0), until the engine or a verl budget
        ends the run."""
        self._row = kwargs
        stream = self.new_stream(list(kwargs["raw_prompt"]), kwargs, priority)
        conv = await self._start(stream)
        await self.start_tokens(stream)
        # when the run already ended, the agent still generates once so the sample has a response (it scores 0:
        # the termination is not a stop)
        while True:
            message = await self.generate(stream, sampling_params)
            if conv.done:
                break
            if message is None:
                cause = "verl budget: response_length / max_assistant_turns / max_user_turns reached"
                conv.end(TerminationReason.MAX_STEPS, cause)
                break
            if not await self._play(stream, conv, message):
                break
        output = self.output(stream)
        conv.end(TerminationReason.MAX_STEPS, "verl budget: the rollout ended before the conversation did")
        output.extra_fields.update(conv.extra_fields())
        output.extra_fields.update(self.row_fields)
        output.extra_fields["user_seed"] = self._user_seed
        return output

    async def _start(self, stream: TokenStream) -> Conversation:
        """Open the conversation (greeting, the user's first message) before the prompt tokens are built."""
        try:
            self.conversation = self._open()
        except Exception as exc:  # noqa: BLE001 - a row the loop cannot play: visible, never a crash of the step
            logger.error("%s: cannot start the conversation: %s", self.agent_name, exc)
            self.conversation = _FailedConversation(f"cannot start the conversation: {exc}")
            return self.conversation
        turn = await self._guard(self.conversation.start())
        if turn is not None:
            stream.messages.extend(turn.messages)
        return self.conversation

    async def _play(self, stream: TokenStream, conv: Conversation, message: dict[str, Any]) -> bool:
        """Play the agent's message in the conversation; append the tool results or the user's reply (mask 0).
        ``False`` when the run ends."""
        calls = [
            {"id": c.get("id"), "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
            for c in message.get("tool_calls") or ()
        ]
        turn = await self._guard(
            conv.agent_turn(Reply(content=self.clean_text(message.get("content")), tool_calls=calls))
        )
        self._set_call_ids(message, conv)
        if turn is None or turn.done:
            return False
        if not await self.append_messages(stream, turn.messages):
            conv.end(TerminationReason.MAX_STEPS, "verl budget: response_length reached")
            return False
        return True

    # ---------------------------------------------------------------- helpers
    async def _guard(self, coro: Any) -> Any:
        """Await an engine step; an unexpected failure ends the run as infrastructure_error (logged), never the
        rollout step."""
        try:
            return await coro
        except Exception as exc:  # noqa: BLE001
            logger.error("%s: the conversation failed: %s", self.agent_name, exc, exc_info=True)
            assert self.conversation is not None
            self.conversation.end(TerminationReason.INFRASTRUCTURE_ERROR, f"{type(exc).__name__}: {exc}")
            return None

    @staticmethod
    def _set_call_ids(message: dict[str, Any], conv: Conversation) -> None:
        """Give the agent's tool calls the ids the engine used (its tool messages answer those ids)."""
        if not message.get("tool_calls"):
            return
        played = next((m for m in reversed(conv.trajectory) if m["role"] == "assistant"), None)
        ids = [c["id"] for c in (played or {}).get("tool_calls") or ()]
        for call, cid in zip(message["tool_calls"], ids, strict=False):
            call["id"] = cid


class _FailedConversation(Conversation):
    """Stands in for a conversation that could not start: over from the beginning, as infrastructure_error."""

    def __init__(self, cause: str):  # noqa: D107 - no environment, no players
        self.trajectory, self.agent_view, self.user_view = [], [], []
        self.steps = self.errors = self.user_calls = 0
        self.recorder = None
        self.termination, self.cause = str(TerminationReason.INFRASTRUCTURE_ERROR), cause[:500]
