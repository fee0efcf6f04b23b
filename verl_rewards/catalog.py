"""The catalog of what this package ships: its built-in rewards and reward families, registered on import.

Rewards (by name): ``qa_f1``, ``qa_em``, ``length_penalty`` (:mod:`verl_rewards.rewards.text`), ``toolrl``,
``tau2``, ``tau2_tau_bench`` (tau-bench's formula on tau2 tasks) and
``tau_bench_v1`` (tau-bench on its own data). Families, tried in this order for a row's data source: ToolRL
(``rlla``), tau2 (``tau2/<domain>``), tau-bench v1 (``tau_bench/<domain>``).

Importing this module registers them all (a reward worker process imports it by name, :data:`MODULE`);
:func:`register_builtins` says so at the call site and is safe to call again.
"""

from __future__ import annotations

from .rewards import text  # noqa: F401 - registers qa_f1, qa_em, length_penalty
from .scoring.families import Family, register_family
from .tau2 import verl_scorer as tau2_family
from .tau_bench import verl_scorer as tau_bench_family
from .toolrl import verl_scorer as toolrl_family

__all__ = ["BUILTIN_FAMILIES", "MODULE", "register_builtins"]

#: the module a worker process imports to register every built-in reward
MODULE = __name__
#: the built-in families, in the order they are tried for a row's data source
BUILTIN_FAMILIES: tuple[Family, ...] = (toolrl_family.FAMILY, tau2_family.FAMILY, tau_bench_family.FAMILY)


def register_builtins() -> None:
    """Register the built-in families (the rewards registered when their modules were imported).

    Registering the same family again is a no-op, so this is safe to call from every entry point.
    """
    for family in BUILTIN_FAMILIES:
        register_family(family)


register_builtins()
