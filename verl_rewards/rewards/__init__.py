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


BUILTIN_MODULES = (
    "verl_rewards.rewards.builtin",
    "verl_rewards.toolrl.verl_scorer",
    "verl_rewards.tau2.verl_scorer",
    "verl_rewards.tau_bench.verl_scorer",
)


def ensure_builtins() -> None:
    """Register the built-in rewards: ``qa_f1``, ``qa_em``, ``length_penalty``, ``toolrl``, ``tau2``,
    ``tau_bench``, ``tau_bench_v1``."""
    for name in BUILTIN_MODULES:
        importlib.import_module(name)
