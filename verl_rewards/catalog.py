"""The catalog of what this package ships: its built-in rewards, reward families and benchmarks, registered on import.

Rewards (by name): ``qa_f1``, ``qa_em``, ``length_penalty`` (:mod:`verl_rewards.rewards.text`), ``toolrl``,
``tau2``, ``tau2_tau_bench`` (tau-bench's formula on tau2 tasks) and
``tau_bench_v1`` (tau-bench on its own data). Benchmarks (:class:`~verl_rewards.benchmark.Benchmark`, each with its
family), tried in this order for a row's data source: ToolRL (``rlla``), tau2 (``tau2/<domain>``), tau-bench v1
(``tau_bench/<domain>``).

Importing this module registers them all (a reward worker process imports it by name, :data:`MODULE`);
:func:`register_builtins` says so at the call site and is safe to call again. The gold policy, ``export-sft``,
``eval`` and ``check`` ask it which benchmark a data source is (:func:`benchmark_for`, the rule the reward routes
by); what only reads a record by name (the commands' options and help) asks the lighter
:mod:`verl_rewards.benchmark_list`, which imports no reward. A new benchmark is one module with its record and one
:func:`add_benchmark` call.
"""

from __future__ import annotations

from .benchmark import Benchmark, benchmark_named, benchmarks, register_benchmark, unregister_benchmark
from .benchmark_list import BUILTIN_BENCHMARKS, TAU2, TAU_BENCH, TOOLRL
from .rewards import text  # noqa: F401 - registers qa_f1, qa_em, length_penalty
from .scoring.families import Family, families, register_family, unregister_family

__all__ = [
    "BUILTIN_BENCHMARKS",
    "BUILTIN_FAMILIES",
    "TAU2",
    "TAU_BENCH",
    "TOOLRL",
    "MODULE",
    "add_benchmark",
    "benchmark_for",
    "benchmark_named",
    "benchmarks",
    "register_builtins",
    "remove_benchmark",
]

#: the module a worker process imports to register every built-in reward
MODULE = __name__
#: the built-in families, in the same order
BUILTIN_FAMILIES: tuple[Family, ...] = tuple(b.family for b in BUILTIN_BENCHMARKS)


def add_benchmark(benchmark: Benchmark, *, replace: bool = False) -> Benchmark:
    """Register ``benchmark`` and its reward family (tried after those registered before it). The same record again
    is a no-op; another under a taken name is an error unless ``replace``."""
    register_family(benchmark.family, replace=replace)
    return register_benchmark(benchmark, replace=replace)


def remove_benchmark(name: str) -> None:
    """Remove a benchmark :func:`add_benchmark` registered, and its family (tests that register their own)."""
    found = benchmark_named(name)
    if found is not None:
        unregister_benchmark(name)
        unregister_family(found.family.name)


def benchmark_for(data_source: str) -> Benchmark | None:
    """The benchmark of a data source: the one whose family is the first registered family that matches it, the
    rule the reward routes by (so the gold policy, ``export-sft`` and the reward never disagree on a row); None when
    that family is no benchmark's, or none matches."""
    family = next((f for f in families() if f.matches(data_source)), None)
    if family is None:
        return None
    return next((b for b in benchmarks() if b.family.name == family.name), None)


def register_builtins() -> None:
    """Register the built-in benchmarks and their families (the rewards registered when their modules were imported).

    Registering the same ones again is a no-op, so this is safe to call from every entry point.
    """
    for benchmark in BUILTIN_BENCHMARKS:
        add_benchmark(benchmark)


register_builtins()
