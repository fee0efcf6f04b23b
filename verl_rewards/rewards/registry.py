"""Deprecated (removed in 0.3.0): renamed :mod:`verl_rewards.rewards.decorators` (``@reward`` and ``BaseReward``).

Importing this name warns once and gives that very module.
"""

import sys
import warnings

from . import decorators as _moved

warnings.warn(
    "verl_rewards.rewards.registry is deprecated; use verl_rewards.rewards.decorators", DeprecationWarning, stacklevel=2
)
sys.modules[__name__] = _moved
