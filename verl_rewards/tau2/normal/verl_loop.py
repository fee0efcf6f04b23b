"""Deprecated: the agent loop on verl's ``AgentLoopBase`` moved to :mod:`verl_rewards.engine.verl_loop` (the engine
tau2 and tau-bench share); this path goes in 0.3.0."""

from __future__ import annotations

from ...deprecation import moved_module

__getattr__ = moved_module(__name__, "verl_rewards.engine.verl_loop", ("TokenStream", "TurnLoop"))
