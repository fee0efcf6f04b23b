"""The reward-function layer: ``@reward`` functions and ``BaseReward`` classes, selected by name.

See :mod:`verl_rewards.rewards.registry` (defining rewards), :mod:`.inputs` (the fields a reward can ask for),
:mod:`.pools` (pooled environments), :mod:`.process` (the process executor), :mod:`.builtin` (``qa_f1``,
``qa_em``, ``length_penalty``) and :mod:`.loading` (user modules from config).
"""

from __future__ import annotations

import importlib

from .registry import BaseReward, RewardRegistryError, RewardSpec, get_reward, registered_names, reward

__all__ = ["BaseReward", "RewardRegistryError", "RewardSpec", "ensure_builtins", "get_reward", "registered_names",
           "reward"]


def ensure_builtins() -> None:
    """Register the built-in rewards (idempotent)."""
    try:
        importlib.import_module("verl_rewards.rewards.builtin")
    except ModuleNotFoundError as exc:
        if exc.name != "verl_rewards.rewards.builtin":
            raise
