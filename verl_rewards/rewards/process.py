"""Moved to :mod:`verl_rewards.scoring.executors.process`; this name stays the same module object."""

import sys

from ..scoring.executors import process as _process

sys.modules[__name__] = _process
