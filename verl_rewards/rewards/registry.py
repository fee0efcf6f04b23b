"""Deprecated (removed in 0.3.0): renamed :mod:`verl_rewards.rewards.decorators` (``@reward`` and ``BaseReward``);
importing it gives that very module."""

from ..deprecation import renamed_module
from . import decorators as _new

renamed_module(__name__, _new)
