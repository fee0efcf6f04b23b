"""Moved to :mod:`verl_rewards.scoring.executors.threads`; this name stays the same module object."""

import sys

from .executors import threads as _threads

sys.modules[__name__] = _threads
