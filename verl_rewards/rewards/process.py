"""Deprecated (removed in 0.3.0): moved to :mod:`verl_rewards.scoring.executors.process`.

Importing this name warns once and gives that very module.
"""

import sys
import warnings

from ..scoring.executors import process as _moved

warnings.warn(
    "verl_rewards.rewards.process is deprecated; use verl_rewards.scoring.executors.process",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
