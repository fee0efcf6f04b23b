"""The conversation engine (:mod:`verl_rewards.engine`) inside verl's rollout: the package's adapters of verl.

* :mod:`.verl_tools` — episode sessions behind verl tools (``EpisodeSession``, ``SessionStore``, ``EpisodeTool``):
  solo mode, where verl's ``ToolAgentLoop`` calls our tools;
* :mod:`.verl_loop` — ``TurnLoop``: an agent loop on verl's public ``AgentLoopBase`` with ``ToolAgentLoop``'s token
  stream (verl's Continuous Token helpers, through :mod:`verl_rewards.verl_compat`);
* :mod:`.agent_loop` — ``ConversationAgentLoop``: the engine's conversation inside that loop (normal mode).

tau2 and tau-bench subclass them (``tau2/verl_tools.py``, ``tau2/normal/agent_loop.py``, ``tau_bench/verl_tools.py``,
``tau_bench/agent_loop.py``). The engine imports none of this (it imports no verl); these modules import verl, so
this package imports none of them on import.
"""
