"""Deprecated (removed in 0.3.0): moved to :mod:`verl_rewards.scoring.executors.process`; importing it gives that
very module."""

from ..deprecation import renamed_module
from ..scoring.executors import process as _new

renamed_module(__name__, _new)
