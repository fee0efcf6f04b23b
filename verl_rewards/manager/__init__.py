"""The reward manager registered in verl as ``contribution`` (imports verl)."""

from .config import ManagerConfig, ManagerConfigError
from .core import RewardInputError
from .reward_manager import ContributionRewardManager, place_on_last_token

__all__ = [
    "ContributionRewardManager",
    "ManagerConfig",
    "ManagerConfigError",
    "RewardInputError",
    "place_on_last_token",
]
