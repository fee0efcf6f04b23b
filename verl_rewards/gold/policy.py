"""The gold policy: for a row of our ``prepare`` output, the assistant messages a perfect agent sends.

:func:`gold_assistant_turns` returns them in order, OpenAI style (``{"role": "assistant", "content": str,
"tool_calls": [{"type": "function", "function": {"name", "arguments": {...}}}]}``, ``tool_calls`` left out when
none), built so that the conversation they produce scores the gold reward with our own reward. Each benchmark's
record holds its own (:class:`verl_rewards.benchmark.GoldPlay`: ``toolrl/benchmark.py``, ``tau2/gold.py``,
``tau_bench/gold.py``, with the message builders they share in :mod:`verl_rewards.engine.gold`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .rows import benchmark_of_info, row_info


def gold_assistant_turns(row: Mapping[str, Any], data_dir: str | None = None) -> list[dict[str, Any]]:
    """The gold agent's assistant messages for ``row`` (see the module doc). ``data_dir``: the benchmark's data
    folder (else its environment variable, else the installed folder)."""
    info = row_info(row, data_dir)
    gold = benchmark_of_info(info).gold
    assert gold is not None  # row_info() only reads rows of benchmarks with a gold policy
    return gold.turns(info)
