"""The reward manager registered in verl as ``contribution``.

Only :mod:`.reward_manager` imports verl; it is loaded lazily here so that the config, scoring core and routing
can be used (e.g. by offline scoring or reward worker processes) without paying for the verl import.
"""

from typing import Any

from .config import ManagerConfig, ManagerConfigError
from .core import RewardInputError

__all__ = [
    "ContributionRewardManager",
    "ManagerConfig",
    "ManagerConfigError",
    "RewardInputError",
    "place_on_last_token",
]


def __getattr__(name: str) -> Any:
    if name in ("ContributionRewardManager", "place_on_last_token"):
        from . import reward_manager

        return getattr(reward_manager, name)
    raise AttributeError(name)
