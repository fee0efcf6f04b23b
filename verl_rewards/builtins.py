"""The built-in rewards and reward families, registered explicitly (imported by the manager and the CLI).

Registered rewards (by name): ``qa_f1``, ``qa_em``, ``length_penalty`` (:mod:`verl_rewards.rewards.builtin`),
``toolrl``, ``tau2``, ``tau_bench``, ``tau_bench_v1``. Families, tried in this order for a row's data source:
ToolRL (``rlla``), tau2 (``tau2/<domain>``), tau-bench v1 (``tau_bench/<domain>``).
"""

from __future__ import annotations

from .rewards import builtin  # noqa: F401 - registers qa_f1, qa_em, length_penalty
from .scoring.families import register_family
from .tau2 import verl_scorer as tau2_family
from .tau_bench import verl_scorer as tau_bench_family
from .toolrl import verl_scorer as toolrl_family

for _family in (toolrl_family.FAMILY, tau2_family.FAMILY, tau_bench_family.FAMILY):
    register_family(_family)


def load() -> None:
    """Nothing to do beyond importing this module; callers say ``builtins.load()`` to make the intent plain."""
