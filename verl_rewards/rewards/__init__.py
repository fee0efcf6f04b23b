"""The reward-function layer: ``@reward`` functions and ``BaseReward`` classes, selected by name.

See :mod:`verl_rewards.rewards.registry` (defining rewards), :mod:`.builtin` (``qa_f1``, ``qa_em``,
``length_penalty``) and :mod:`.process` (the process executor). How a reward is called (inputs by name, pooled
environments, executors) is :mod:`verl_rewards.scoring`; the built-in rewards and families are registered by
:mod:`verl_rewards.builtins`.
"""

from __future__ import annotations

from .registry import BaseReward, RewardRegistryError, RewardSpec, get_reward, registered_names, reward

__all__ = ["BaseReward", "RewardRegistryError", "RewardSpec", "get_reward", "registered_names", "reward"]
