"""The built-in benchmarks' records, registered on import: ToolRL, tau2, tau-bench v1, in the order their reward
families are tried for a row's data source.

Light on purpose: a record imports its reward family only when asked for it (:attr:`Benchmark.family`), so what only
reads records (every command's options and help, ``prepare``, ``simulate``) imports no reward and no scoring code.
:mod:`verl_rewards.catalog` registers the records' families and the built-in rewards, and decides which benchmark a
data source belongs to (``benchmark_for``).
"""

from __future__ import annotations

from .benchmark import Benchmark, benchmark_named, benchmarks, register_benchmark
from .tau2.benchmark import BENCHMARK as TAU2
from .tau_bench.benchmark import BENCHMARK as TAU_BENCH
from .toolrl.benchmark import BENCHMARK as TOOLRL

__all__ = [
    "BUILTIN_BENCHMARKS",
    "TAU2",
    "TAU_BENCH",
    "TOOLRL",
    "benchmark_named",
    "benchmarks",
    "gold_benchmarks",
    "results_benchmarks",
]

#: the built-in benchmarks, in the order their families are tried for a row's data source
BUILTIN_BENCHMARKS: tuple[Benchmark, ...] = (TOOLRL, TAU2, TAU_BENCH)

for _benchmark in BUILTIN_BENCHMARKS:
    register_benchmark(_benchmark)


def gold_benchmarks() -> list[Benchmark]:
    """What ``export-sft gold`` plays: the benchmarks with a gold policy and an export plan."""
    return [b for b in benchmarks() if b.gold is not None and b.export_plan is not None]


def results_benchmarks() -> list[Benchmark]:
    """What ``export-sft results`` reads: the benchmarks whose tasks have a context (tools, prompt, split)."""
    return [b for b in benchmarks() if b.task_context is not None]
