"""verl-rewards: a reward layer for verl.

Importing this package is cheap and does not import verl. The verl plugin lives in
:mod:`verl_rewards.plugin`; the reward manager in :mod:`verl_rewards.manager`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .contribution import ContributionConfig, compute_contribution, contrib_binary, contrib_value_delta
    from .rewards.decorators import BaseReward, reward

__version__ = "0.1.0"

#: the public names and their modules, imported on first access (PEP 562): a command that uses none of them, such
#: as ``verl-rewards simulate``, does not import the scoring layer at start-up
_LAZY = {
    "BaseReward": ".rewards.decorators",
    "reward": ".rewards.decorators",
    "ContributionConfig": ".contribution",
    "compute_contribution": ".contribution",
    "contrib_binary": ".contribution",
    "contrib_value_delta": ".contribution",
}


def __getattr__(name: str) -> Any:
    """A public name of :data:`_LAZY`, imported on first access."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BaseReward",
    "ContributionConfig",
    "compute_contribution",
    "contrib_binary",
    "contrib_value_delta",
    "reward",
    "__version__",
]
