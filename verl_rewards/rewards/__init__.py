"""The reward-function layer: ``@reward`` functions and ``BaseReward`` classes, selected by name.

See :mod:`verl_rewards.rewards.decorators` (defining rewards: ``@reward``, ``BaseReward``) and :mod:`.text`
(``qa_f1``, ``qa_em``, ``length_penalty``). How a reward is called (inputs by name, pooled environments, executors)
and the registry of named rewards are :mod:`verl_rewards.scoring`; the built-in rewards and families are
registered by :mod:`verl_rewards.catalog`.
"""

from __future__ import annotations

from .decorators import BaseReward, RewardRegistryError, RewardSpec, get_reward, registered_names, reward

__all__ = ["BaseReward", "RewardRegistryError", "RewardSpec", "get_reward", "registered_names", "reward"]
