"""ToolRL as a :class:`~verl_rewards.benchmark.Benchmark`: its family, gold policy (the ground truth is the answer),
``export-sft`` plan (the rows of a ``prepare toolrl`` parquet), ``prepare toolrl`` and smoke settings (registered by
:mod:`verl_rewards.catalog`). It has no domains and no data folder: a row is its own task."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..benchmark import (
    Benchmark,
    ExportError,
    ExportPlan,
    GoldPlay,
    Option,
    PrepareEntry,
    RowInfo,
    SmokeSpec,
    plain,
)
from ..scoring.families import Family


def _family() -> Family:
    """The reward family, imported on first use (reading the record imports no reward)."""
    from .verl_scorer import FAMILY

    return FAMILY


def _single_turn(extra_info: Mapping[str, Any]) -> str:
    return "single_turn"


def gold_turns(info: RowInfo) -> list[dict[str, Any]]:
    """The ground truth itself, in ToolRL's own response format (``<think>``, ``<tool_call>`` JSON lines,
    ``<response>``) as the message text; no structured ``tool_calls``."""
    return [{"role": "assistant", "content": str(info.ground_truth).strip()}]


def gold_reward(info: RowInfo) -> float:
    """The maximum of the row under ToolRL's environment options at step 0: the top of the format range, plus the
    top of the correctness range when the ground truth has a ``<tool_call>`` (ToolRL scores correctness 0
    otherwise). The length term, when on, depends on the think text and is left out."""
    from .options import ToolRLOptions
    from .ranges import correctness_range, format_range

    options = ToolRLOptions.from_config(None)
    top = format_range(options, 0)[1]
    if "<tool_call>" in str(info.ground_truth):
        top += correctness_range(options, 0)[1]
    return float(top)


def export_plan(domain: str, split: str, mode: str | None, data_dir: str | None, rows_file: str | None) -> ExportPlan:
    """The rows of a ``prepare toolrl`` parquet (each a prompt and its ground truth)."""
    import pandas as pd

    if not rows_file:
        raise ExportError("toolrl: --rows FILE is required (a parquet written by `verl-rewards prepare toolrl`)")
    try:
        frame = pd.read_parquet(rows_file)
    except (OSError, ValueError) as exc:
        raise ExportError(f"toolrl: cannot read --rows {rows_file}: {exc}") from None
    rows = [plain(r) for r in frame.to_dict("records")]
    sources = sorted({str(r.get("data_source") or "") for r in rows})
    if not rows or not all(BENCHMARK.matches(s) for s in sources):
        theirs = [s for s in sources if not BENCHMARK.matches(s)]
        raise ExportError(f"toolrl: {rows_file} holds no ToolRL rows (data sources {theirs or sources})")
    return ExportPlan(rows, None, sources[0], "single_turn", split, "", [])


def _prepare(values: Mapping[str, Any]) -> tuple[list[str], int]:
    from . import data as toolrl_data

    report = toolrl_data.prepare_toolrl(values["input"], values["out"], split=values["split"], strict=values["strict"])
    return [], report.bad


def _smoke_args(domain: str, mode: str, data_dir: str) -> list[str]:
    from .data import SAMPLE_PATH

    return ["--input", str(SAMPLE_PATH), "--split", "train"]


PREPARE = PrepareEntry(
    about="ToolRL rows (instruction/input/output) -> verl parquet",
    run=_prepare,
    errors=(OSError, ValueError),  # ToolRLDataError, NothingConvertedError (all rows bad): ValueErrors
    domains=False,
    data_dir=False,
    split_default="train",  # prepare_toolrl's
    split_why="the training file",
    options=(
        Option("--input", ".json, .jsonl or .parquet (docs: Getting started, 'Data')", required=True),
        Option("--out", "output directory (<out>/<split>.parquet)", required=True),
        Option("--strict", "stop at the first malformed row", action="store_true"),
    ),
)

BENCHMARK = Benchmark(
    name="toolrl",
    label="ToolRL",
    reward_family=_family,
    split_names="toolrl: every row; the split only names the parquet file",
    row_mode=_single_turn,
    gold=GoldPlay(turns=gold_turns, reward=gold_reward),
    export_plan=export_plan,
    prepare=PREPARE,
    smoke=SmokeSpec(
        recipe="recipes/toolrl_grpo/run_toolrl_grpo.sh",
        modes=("single",),
        domains=("rlla",),
        split_for=lambda domain: "train",
        prepare_args=_smoke_args,
        response_length=256,
    ),
)
