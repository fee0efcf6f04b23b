"""Deprecated (removed in 0.3.0): renamed :mod:`verl_rewards.rewards.text` (``qa_f1``, ``qa_em``, ``length_penalty``).

Importing this name warns once and gives that very module.
"""

import sys
import warnings

from . import text as _moved

warnings.warn(
    "verl_rewards.rewards.builtin is deprecated; use verl_rewards.rewards.text", DeprecationWarning, stacklevel=2
)
sys.modules[__name__] = _moved
