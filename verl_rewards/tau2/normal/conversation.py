"""Deprecated: the conversation engine moved to :mod:`verl_rewards.engine.conversation` (its rules to
:mod:`verl_rewards.engine.rules`, the termination reasons to
:class:`verl_rewards.engine.termination.TerminationReason`); this path goes in 0.3.0."""

from __future__ import annotations

from ...deprecation import moved

_CONVERSATION = "verl_rewards.engine.conversation"
_RULES = "verl_rewards.engine.rules"
_REASON = "verl_rewards.engine.termination:TerminationReason."

__getattr__ = moved(
    __name__,
    {
        **dict.fromkeys(
            (
                "AGENT_MESSAGE_ERRORS",
                "DEFAULT_SEED",
                "MAX_CAUSE_CHARS",
                "AgentPlayer",
                "Conversation",
                "PlayerError",
                "Reply",
                "Turn",
                "UserPlayer",
                "UserRequest",
                "is_user_stop",
                "malformed_arguments",
                "trial_seeds",
            ),
            _CONVERSATION,
        ),
        **dict.fromkeys(("STOP_TOKENS", "DEFAULT_MAX_STEPS", "DEFAULT_MAX_ERRORS"), _RULES),
        "USER_STOP": _REASON + "USER_STOP",
        "MAX_STEPS": _REASON + "MAX_STEPS",
        "TOO_MANY_ERRORS": _REASON + "TOO_MANY_ERRORS",
        "AGENT_ERROR": _REASON + "AGENT_ERROR",
        "USER_ERROR": _REASON + "USER_ERROR",
        "INFRASTRUCTURE_ERROR": _REASON + "INFRASTRUCTURE_ERROR",
    },
)
