"""verl-rewards: a reward layer for verl.

Importing this package is cheap and does not import verl. The verl plugin lives in
:mod:`verl_rewards.plugin`; the reward manager in :mod:`verl_rewards.manager`.
"""

from .contribution import ContributionConfig, compute_contribution, contrib_binary, contrib_value_delta
from .rewards.decorators import BaseReward, reward

__version__ = "0.1.0"

__all__ = [
    "BaseReward",
    "ContributionConfig",
    "compute_contribution",
    "contrib_binary",
    "contrib_value_delta",
    "reward",
    "__version__",
]
