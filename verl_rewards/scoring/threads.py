"""Deprecated (removed in 0.3.0): moved to :mod:`verl_rewards.scoring.executors.threads`; importing it gives that
very module."""

from ..deprecation import renamed_module
from .executors import threads as _new

renamed_module(__name__, _new)
