"""Deprecated (removed in 0.3.0): renamed :mod:`verl_rewards.rewards.text` (``qa_f1``, ``qa_em``,
``length_penalty``); importing it gives that very module."""

from ..deprecation import renamed_module
from . import text as _new

renamed_module(__name__, _new)
