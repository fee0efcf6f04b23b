"""The data of ``verl-rewards check``: ``data.train_files`` / ``data.val_files`` exist and are parquet, every
``agent_name`` they hold is a registered loop, every row-level ``reward_fn`` a registered reward, and which reward
scores each ``data_source``."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from .errors import CheckError, describe
from .rollout import Loops, agent_loop


def data_files(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def data_lines(config: Any, manager: Any, loops: Loops) -> list[str]:
    """Each data file is readable; every ``agent_name`` is registered; which reward scores each data source."""
    counts: Counter[str] = Counter()
    row_rewards: set[str] = set()
    lines = []
    for key in ("train_files", "val_files"):
        files = data_files(config.data.get(key))
        for path in files:
            table = _read_columns(path, key)
            rows = table.num_rows
            columns = set(table.column_names)
            sources = table.column("data_source").to_pylist() if "data_source" in columns else ["<none>"] * rows
            counts.update(str(s) for s in sources)
            if "agent_name" in columns:
                for name in sorted({str(n) for n in table.column("agent_name").to_pylist() if n}):
                    agent_loop(config, loops, name, f"{path}: column agent_name")
            if "reward_fn" in columns:
                row_rewards.update(str(n) for n in table.column("reward_fn").to_pylist() if n)
            lines.append(f"data.{key}: {path} ({rows} rows)")
    router = getattr(manager, "router", None)
    for name in sorted(row_rewards):
        if router is not None:
            try:
                router.named(name)
            except Exception as exc:  # noqa: BLE001
                raise CheckError("routing", f"column reward_fn: {describe(exc)}") from None
    for source, n in sorted(counts.items()):
        lines.append(f"  {source} ({n} rows) -> {_route(router, source)}")
    return lines


def _read_columns(path: str, key: str) -> Any:
    import pyarrow.parquet as pq

    local = Path(os.path.expanduser(path))
    if not local.is_file():
        raise CheckError("data", f"data.{key}: {path} does not exist (prepare the data first, or fix the path)")
    try:
        schema = pq.read_schema(local)
        wanted = [c for c in ("data_source", "agent_name", "reward_fn") if c in schema.names]
        return pq.read_table(local, columns=wanted)
    except Exception as exc:  # noqa: BLE001 - not parquet, truncated
        raise CheckError("data", f"data.{key}: {path}: {describe(exc)}") from None


def _route(router: Any, source: str) -> str:
    if router is None:
        return "the manager's own rule (not the contribution manager)"
    try:
        return str(router.describe(source))
    except Exception as exc:  # noqa: BLE001
        raise CheckError("routing", f"data_source {source!r}: {describe(exc)}") from None
