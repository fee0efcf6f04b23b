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

__all__ = ["BUILTIN_BENCHMARKS", "TAU2", "TAU_BENCH", "TOOLRL", "benchmark_named", "benchmarks"]

#: the built-in benchmarks, in the order their families are tried for a row's data source
BUILTIN_BENCHMARKS: tuple[Benchmark, ...] = (TOOLRL, TAU2, TAU_BENCH)

for _benchmark in BUILTIN_BENCHMARKS:
    register_benchmark(_benchmark)
