"""Deprecated (removed in 0.3.0): renamed :mod:`verl_rewards.tau2.evaluators` (tau2's per-component evaluators).

Importing this package or one of its modules (``verl_rewards.tau2.rewards.action``, ...) warns once and gives the
very modules of :mod:`verl_rewards.tau2.evaluators`.
"""

import importlib
import sys
import warnings

from .. import evaluators as _moved

warnings.warn(
    "verl_rewards.tau2.rewards is deprecated; use verl_rewards.tau2.evaluators", DeprecationWarning, stacklevel=2
)
for _name in ("action", "common", "communicate", "db", "env_assertions", "nl_assertions"):
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"{_moved.__name__}.{_name}")
sys.modules[__name__] = _moved
