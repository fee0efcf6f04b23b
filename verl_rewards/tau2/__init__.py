"""tau2-bench environments and rewards for RL on tool-using agents.

Public API:

* :func:`load_domain` ``(name, data_dir=None)`` → :class:`Domain` (cached per name and data folder). Data come from
  ``data_dir`` or the ``TAU2_DATA_DIR`` environment variable (a folder holding ``<domain>/db.json`` ...).
* ``domain.make_env(task_id=None, solo_mode=False)`` → a fresh :class:`Environment` with the task's initial
  state; ``env.step(tool_name, arguments, requestor="assistant")`` → observation string (``requestor="user"``
  for user tools; in solo mode the agent calls them directly); ``env.get_data_hash()``,
  ``env.get_user_data_hash()``; ``env.actions`` is the action log.
* ``domain.tasks`` ({id: Task}), ``domain.split(name)``, ``domain.policy``, ``domain.policy_for(solo=...,
  policy_type=...)``, ``domain.tool_specs()``, ``domain.user_tool_specs()``.
* Domains: ``mock``, ``airline``, ``retail``, ``telecom`` (:mod:`verl_rewards.tau2.domains`), each described by a
  :class:`DomainSpec` in the registry: :func:`available_domains`, :func:`domain_spec` ``(name)``,
  :func:`register` ``(spec)`` for another domain.
* :func:`evaluate_trajectory` — tau2's evaluator (DB, ENV_ASSERTION, ACTION, COMMUNICATE, NL_ASSERTION).
* :func:`tau2_tau_bench_reward` — tau-bench's DB-hash + required-outputs reward on tau2 tasks (tau-bench's own
  data and reward: :mod:`verl_rewards.tau_bench`).

The trajectory format is described in :mod:`verl_rewards.engine.trajectory`. Training with verl's tool agent
loop: :mod:`.data` (``verl-rewards prepare tau2``: parquet + tool config), :mod:`.verl_tools` (verl ``BaseTool``
adapters; imports verl, so it is not imported here) and :mod:`.verl_scorer` (the rewards of the manager).
"""

from ..engine.environment import Environment
from .domain import Domain, load_domain
from .domain_spec import DomainSpec
from .evaluator import EvaluationResult, evaluate_trajectory
from .registry import available_domains, domain_spec, register
from .tau_bench import TauBenchResult, tau2_tau_bench_reward

__all__ = [
    "Domain",
    "DomainSpec",
    "Environment",
    "EvaluationResult",
    "TauBenchResult",
    "available_domains",
    "domain_spec",
    "evaluate_trajectory",
    "load_domain",
    "register",
    "tau2_tau_bench_reward",
]
