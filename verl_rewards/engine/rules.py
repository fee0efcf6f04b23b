"""A benchmark's conversation rules as one named preset (:class:`RuleSet`), passed to the conversation engine.

The engine (:class:`~verl_rewards.engine.conversation.Conversation`) plays tau2's half-duplex rules by default
(:data:`TAU2`); tau-bench v1's simulated-user episodes differ in a few places (:data:`TAU_BENCH`). The run's
settings (the step and error limits a user configures, the seed, the communication protocol) stay arguments of
the conversation; a rule set gives the defaults of the limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from .termination import TerminationReason

GREETING = "Hi! How can I help you today?"
"""The agent's fixed first message (tau2's orchestrator and tau-bench's user simulator use the same text)."""
STOP_TOKEN = "###STOP###"
STOP_TOKENS = (STOP_TOKEN, "###TRANSFER###", "###OUT-OF-SCOPE###")
"""tau2's user stop tokens (``src/tau2/user/base.py``); tau-bench v1 knows only the first."""
DEFAULT_MAX_STEPS = 200
DEFAULT_MAX_ERRORS = 10
DEFAULT_MAX_AGENT_TURNS = 30
"""tau-bench's ``max_num_steps`` (``run.py``): the agent's messages in one episode."""


@dataclass(frozen=True)
class RuleSet:
    """How one benchmark plays a conversation.

    ``stop_tokens``: a user message without tool calls that contains one ends the run (``user_stop``).
    ``greeting``: the agent's fixed first message; ``greeting_to_agent``: whether the agent's view and the
    trajectory start with it (tau2) or only the user sees it (tau-bench). ``first_call_only``: only the first tool
    call of an agent message runs and the message keeps only that call (tau-bench's agent). ``terminate_termination``:
    the reason a terminate tool of the environment ends the run with, at once (tau-bench: ``transfer``); None lets
    terminate tools run without ending the conversation (tau2 normal mode). ``max_steps`` / ``max_errors`` /
    ``max_agent_turns``: the default limits (None: no such limit). ``wire``: how the players' requests write the
    messages (:mod:`~verl_rewards.engine.wire`: ``"tau2"``, as tau2's runner and litellm send them, or ``"plain"``).
    """

    name: str
    stop_tokens: tuple[str, ...] = STOP_TOKENS
    greeting: str = GREETING
    greeting_to_agent: bool = True
    first_call_only: bool = False
    terminate_termination: str | None = None
    max_steps: int | None = DEFAULT_MAX_STEPS
    max_errors: int | None = DEFAULT_MAX_ERRORS
    max_agent_turns: int | None = None
    wire: str = "tau2"

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop_tokens", tuple(self.stop_tokens))
        if self.terminate_termination is not None:
            object.__setattr__(self, "terminate_termination", str(self.terminate_termination))
        for name in ("max_steps", "max_errors", "max_agent_turns"):
            limit = getattr(self, name)
            if limit is not None and int(limit) <= 0:
                raise ValueError(f"{name} must be positive (or None: no limit)")


TAU2 = RuleSet(name="tau2")
"""tau2-bench's orchestrator with its default settings (``src/tau2/orchestrator/orchestrator.py``)."""
TAU_BENCH = RuleSet(
    name="tau_bench",
    stop_tokens=(STOP_TOKEN,),
    greeting_to_agent=False,
    first_call_only=True,
    terminate_termination=TerminationReason.TRANSFER,
    max_steps=None,
    max_errors=None,
    max_agent_turns=DEFAULT_MAX_AGENT_TURNS,
    wire="plain",
)
"""tau-bench v1 (``tau_bench/envs/base.py``, ``envs/user.py``, ``agents/tool_calling_agent.py``)."""
