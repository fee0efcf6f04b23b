"""Why an episode ended: one enum for every termination reason the engine, tau2 and tau-bench produce or compare.

The values are the strings written to trajectories, result files and metrics (``extra_fields["termination"]``,
tau2's ``termination_reason``), so a member compares equal to, and serialises as, its string. tau2-bench keeps the
same list (``TerminationReason`` in ``src/tau2/data_model/simulation.py``); tau-bench v1 adds ``transfer`` and our
``crash`` and ``agent_reply``. Code that stores a reason stores ``str(reason)`` (the plain value).
"""

from __future__ import annotations

from enum import Enum


class TerminationReason(str, Enum):
    """How an episode ended (see the module doc). ``str(reason)`` and ``f"{reason}"`` give the plain value."""

    AGENT_STOP = "agent_stop"
    """tau2: the agent called its stop tool (``done`` in solo mode)."""
    USER_STOP = "user_stop"
    """The user sent a stop token (normal mode), or a terminate tool ran (tau2 solo mode)."""
    MAX_STEPS = "max_steps"
    """A step, turn or token budget ran out."""
    TOO_MANY_ERRORS = "too_many_errors"
    """tau2: too many tool calls failed."""
    AGENT_ERROR = "agent_error"
    """The agent sent an unusable message (empty; tool-call arguments that are not a JSON object; text and tool
    calls together under the communication protocol)."""
    USER_ERROR = "user_error"
    """The user backend failed (endpoint down, malformed or empty reply)."""
    INFRASTRUCTURE_ERROR = "infrastructure_error"
    """The run could not be played (agent endpoint down, a session evicted, tau2's runner refusing a message);
    scored 0 and left out of pass^k."""
    TRANSFER = "transfer"
    """tau-bench: ``transfer_to_human_agents`` ended the episode."""
    CRASH = "crash"
    """tau-bench: a tool made tau-bench's step raise (the run scores 0)."""
    AGENT_REPLY = "agent_reply"
    """tau-bench instruction mode: the agent answered in text, which ends verl's tool loop."""

    def __str__(self) -> str:
        return str(self.value)


TAU2_REASONS: tuple[str, ...] = tuple(
    str(r)
    for r in (
        TerminationReason.AGENT_STOP,
        TerminationReason.USER_STOP,
        TerminationReason.MAX_STEPS,
        TerminationReason.TOO_MANY_ERRORS,
        TerminationReason.AGENT_ERROR,
        TerminationReason.USER_ERROR,
        TerminationReason.INFRASTRUCTURE_ERROR,
    )
)
"""Every reason tau2-bench records, in its order (the scored stops first)."""
SCORED_STOPS: tuple[str, ...] = TAU2_REASONS[:2]
"""The reasons tau2 scores (``agent_stop``, ``user_stop``); any other ends the episode with reward 0."""
