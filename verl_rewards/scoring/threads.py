"""Deprecated (removed in 0.3.0): moved to :mod:`verl_rewards.scoring.executors.threads`.

Importing this name warns once and gives that very module.
"""

import sys
import warnings

from .executors import threads as _moved

warnings.warn(
    "verl_rewards.scoring.threads is deprecated; use verl_rewards.scoring.executors.threads",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
