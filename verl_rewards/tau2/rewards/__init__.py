"""Deprecated (removed in 0.3.0): renamed :mod:`verl_rewards.tau2.evaluators` (tau2's per-component evaluators);
importing this package or one of its modules (``verl_rewards.tau2.rewards.action``, ...) gives the very modules of
:mod:`verl_rewards.tau2.evaluators`."""

from ...deprecation import renamed_module
from .. import evaluators as _new

renamed_module(__name__, _new, ("action", "common", "communicate", "db", "env_assertions", "nl_assertions"))
