"""Reading a row of our own ``prepare`` output: which family and mode it is, its task, its domain.

Rows come as dicts (``prepare`` before writing), or from parquet through pandas / pyarrow, where lists are numpy
arrays and structs carry every other row's keys as ``None``; :func:`plain` turns either into plain Python.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..engine.data_dir import BENCHMARKS, choose_data_dir, row_data_dir
from ..engine.errors import DataNotFoundError

TOOLRL = "toolrl"
TAU2 = "tau2"
TAU_BENCH = "tau_bench"
FAMILIES = (TOOLRL, TAU2, TAU_BENCH)


class GoldError(ValueError):
    """A row the gold policy cannot play (unknown family, missing task id, unknown domain or task)."""


def plain(value: Any) -> Any:
    """``value`` with numpy arrays as lists and mappings as dicts, recursively (parquet rows → plain Python)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        return plain(value.tolist())
    return value


@dataclass(frozen=True)
class RowInfo:
    """What the gold policy reads from a row."""

    family: str
    mode: str
    data_source: str
    domain: str
    task_id: str
    prompt: list[dict[str, Any]]
    extra_info: dict[str, Any]
    ground_truth: Any
    data_dir: str | None


def family_of(data_source: str) -> str:
    """The family of a data source: ToolRL (``rlla`` in it), ``tau2/<domain>``, ``tau_bench/<domain>``."""
    if data_source.startswith("tau2/"):
        return TAU2
    if data_source.startswith("tau_bench/"):
        return TAU_BENCH
    if "rlla" in data_source:
        return TOOLRL
    raise GoldError(
        f"no gold policy for data_source {data_source!r} (ToolRL 'rlla', 'tau2/<domain>', 'tau_bench/<domain>')"
    )


def row_info(row: Mapping[str, Any], data_dir: str | None = None) -> RowInfo:
    """Read ``row`` (see the module doc). Its data folder is chosen by the one rule the tools use at training time
    (:mod:`verl_rewards.engine.data_dir`): ``data_dir``, the family's environment variable, the installed folder;
    the path ``prepare`` recorded in the row never chooses it."""
    row = plain(row)
    source = str(row.get("data_source") or "")
    family = family_of(source)
    extra = dict(row.get("extra_info") or {})
    reward_model = row.get("reward_model") or {}
    ground_truth = reward_model.get("ground_truth") if isinstance(reward_model, Mapping) else None
    prompt = [dict(m) for m in row.get("prompt") or row.get("raw_prompt") or []]  # agent-loop kwargs: raw_prompt
    if family == TOOLRL:
        if not isinstance(ground_truth, str) or not ground_truth.strip():
            raise GoldError("a ToolRL row needs reward_model.ground_truth (ToolRL's ground-truth text)")
        return RowInfo(family, "single_turn", source, "", "", prompt, extra, ground_truth, None)
    domain = source.split("/", 1)[1]
    task_id = extra.get("task_id")
    if task_id is None and isinstance(ground_truth, Mapping):
        task_id = ground_truth.get("task_id")
    if task_id is None:
        raise GoldError(f"{source} row without extra_info.task_id (verl-rewards prepare writes it)")
    tools = {"tools_kwargs": row.get("tools_kwargs") or {}}  # verl's agent-loop kwargs carry it at the top
    try:
        root = choose_data_dir(data_dir, BENCHMARKS[family], row_data_dir(extra, tools), where="--data-dir (data_dir=)")
    except DataNotFoundError as exc:
        raise GoldError(str(exc)) from None
    if family == TAU2:
        mode = str(extra.get("mode") or ("solo" if extra.get("solo_mode") else "normal"))
    else:
        mode = str(extra.get("mode") or "normal")
    return RowInfo(family, mode, source, domain, str(task_id), prompt, extra, ground_truth, root)


def dumps_args(arguments: Mapping[str, Any]) -> str:
    """Arguments as compact JSON text (for messages shown to a user)."""
    return json.dumps(dict(arguments), ensure_ascii=False, sort_keys=True)
