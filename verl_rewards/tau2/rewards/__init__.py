"""tau2 reward components, one module each, each a pure function of the task and the (parsed) trajectory.

``db`` (DB), ``env_assertions`` (ENV_ASSERTION), ``action`` (ACTION), ``communicate`` (COMMUNICATE) and
``nl_assertions`` (NL_ASSERTION). :mod:`verl_rewards.tau2.evaluator` combines them by the task's reward basis.
"""

from .common import ComponentResult

__all__ = ["ComponentResult"]
