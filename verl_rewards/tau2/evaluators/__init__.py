"""tau2's evaluators: one module per reward component, each a pure function of the task and the (parsed)
trajectory (the reward functions a trainer selects by name are :mod:`verl_rewards.rewards` and the families).

``db`` (DB), ``env_assertions`` (ENV_ASSERTION), ``action`` (ACTION), ``communicate`` (COMMUNICATE) and
``nl_assertions`` (NL_ASSERTION). :mod:`verl_rewards.tau2.evaluator` combines them by the task's reward basis.
"""

from .common import ComponentResult

__all__ = ["ComponentResult"]
