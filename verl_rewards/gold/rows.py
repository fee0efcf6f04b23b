"""Reading a row of our own ``prepare`` output: which benchmark and mode it is, its task, its domain.

The benchmark is the catalog's (:func:`verl_rewards.catalog.benchmark_for`: the rule the reward routes by), and the
row is read by the benchmark's record (:meth:`verl_rewards.benchmark.Benchmark.row_info`). Rows come as dicts
(``prepare`` before writing), or from parquet through pandas / pyarrow, where lists are numpy arrays and structs
carry every other row's keys as ``None``; :func:`~verl_rewards.benchmark.plain` turns either into plain Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..benchmark import Benchmark, GoldError, RowInfo, plain
from ..catalog import benchmark_for, benchmark_named, benchmarks

__all__ = ["GoldError", "RowInfo", "benchmark_of", "plain", "row_info"]


def benchmark_of(data_source: str) -> Benchmark:
    """The benchmark of a data source whose rows have a gold policy (GoldError naming those that do otherwise)."""
    found = benchmark_for(data_source)
    if found is None or found.gold is None:
        known = ", ".join(f"{b.label} ({b.family.name})" for b in benchmarks() if b.gold is not None)
        raise GoldError(f"no gold policy for data_source {data_source!r} (the benchmarks that have one: {known})")
    return found


def row_info(row: Mapping[str, Any], data_dir: str | None = None) -> RowInfo:
    """Read ``row`` (see the module doc) with its benchmark's record."""
    row = plain(row)
    return benchmark_of(str(row.get("data_source") or "")).row_info(row, data_dir)


def benchmark_of_info(info: RowInfo) -> Benchmark:
    """The benchmark a read row belongs to."""
    found = benchmark_named(info.family)
    if found is None:  # pragma: no cover - row_info() read it with a registered record
        raise GoldError(f"no benchmark {info.family!r} registered")
    return found
