"""tau2 *normal mode*: a simulated user talks to the agent, as tau2-bench reports its leaderboard.

* :mod:`.conversation` — the engine (every rule of tau2's half-duplex conversation; no verl imports);
* :mod:`.prompts` — greeting, the agent's and the user's system prompts and tool schemas;
* :mod:`.users` — user backends (``openai``, ``scripted``; ``policy`` lives in the verl loop) and their config;
* :mod:`.client` — the OpenAI-compatible async client (timeouts, retries, shared concurrency limit);
* :mod:`.agent_loop` — verl's ``tau2_agent`` loop (imports verl; registered by the plugin);
* :mod:`.simulate` — ``verl-rewards simulate``: score a served model offline, tau2's ``Results`` JSON;
* :mod:`.judge` — the ``openai`` NL-assertion judge.
"""

AGENT_LOOP_NAME = "tau2_agent"
AGENT_LOOP_TARGET = "verl_rewards.tau2.normal.agent_loop.Tau2AgentLoop"

from ...engine.conversation import Conversation, PlayerError, Reply, Turn, UserRequest, is_user_stop, trial_seeds  # noqa: E402
from ...engine.rules import GREETING, STOP_TOKENS  # noqa: E402
from .prompts import agent_system_prompt, render_user_scenario, user_system_prompt  # noqa: E402

__all__ = [
    "AGENT_LOOP_NAME",
    "AGENT_LOOP_TARGET",
    "GREETING",
    "STOP_TOKENS",
    "Conversation",
    "PlayerError",
    "Reply",
    "Turn",
    "UserRequest",
    "agent_system_prompt",
    "is_user_stop",
    "render_user_scenario",
    "trial_seeds",
    "user_system_prompt",
]
