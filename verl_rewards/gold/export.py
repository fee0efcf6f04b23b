"""``verl-rewards export-sft``: SFT data for a warm start before RL.

* :func:`export_gold`: one conversation per task of a split, the gold policy played in our environments (normal
  mode: against a user backend, scripted by default), re-scored with our reward; only conversations that score the
  gold reward are written, the others are counted as dropped. ToolRL has no tasks to look up: its rows (a parquet
  of ``verl-rewards prepare toolrl``) are the prompts, each answered with its ground truth.
* :func:`export_results`: rejection sampling from scored runs: tau2 ``Results`` JSON and tau-bench results lists
  (``verl-rewards simulate`` or the benchmarks' own runs), and verl validation dumps whose samples carry their
  recorded conversation (``reward.reward_kwargs.record_trajectory``, :mod:`verl_rewards.scoring.recorded`).
  Trajectories whose reward reaches ``min_reward`` are kept, at most ``per_task`` per task, identical conversations
  once; a task of a held-out split (tau2 ``test``, tau-bench ``test`` / ``dev``) is refused unless
  ``allow_split_mix``.

Both write ``<out>/<name>.parquet`` (:mod:`verl_rewards.gold.sft`) atomically, and nothing at all on bad input.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..benchmark import GOLD_CONCURRENCY, MIN_REWARD, TaskContext
from ..benchmark_list import gold_benchmarks, results_benchmarks
from ..catalog import benchmark_for, benchmark_named
from .results import ExportError, Trajectory, read_results
from .rows import GoldError
from .sft import SftInputError, conversation_key, sft_record, training_tool_schemas, write_sft_parquet

__all__ = ["ExportReport", "export_gold", "export_results"]

GOLD_TOLERANCE = 1e-6


@dataclass
class ExportReport:
    """What an export wrote and what it left out."""

    out: str = ""
    written: int = 0
    dropped: int = 0
    tasks: int = 0
    notes: list[str] = field(default_factory=list)
    dropped_tasks: list[str] = field(default_factory=list)


def output_file(out_dir: str | Path, name: str, force: bool) -> Path:
    """``<out_dir>/<name>.parquet``, refused when it exists (an earlier export) and ``force`` is off."""
    from ..files import OutputPathError, check_output_path

    path = Path(out_dir).expanduser() / f"{name}.parquet"
    try:
        check_output_path(path, "--out")
    except OutputPathError as exc:
        raise ExportError(str(exc)) from None
    if path.exists() and not force:
        raise ExportError(f"{path} exists (an earlier export); pass --force to replace it")
    return path


# ------------------------------------------------------------------------------------------------ gold
def export_gold(
    benchmark: str,
    domain: str,
    split: str,
    out_dir: str | Path,
    *,
    mode: str | None = None,
    data_dir: str | None = None,
    user_factory: Callable[[], Any] | None = None,
    concurrency: int = GOLD_CONCURRENCY,
    force: bool = False,
    progress: bool = True,
    rows_file: str | Path | None = None,
) -> ExportReport:
    """Write ``<out_dir>/<split>.parquet`` with the gold conversation of every task of ``split`` that scores the gold
    reward under our reward (see the module doc). ``user_factory``: a new user player per task, called on the
    episodes' event loop (normal mode; default the scripted user); ``concurrency``: episodes played at once;
    ``rows_file``: ToolRL's rows (``benchmark`` ``toolrl``; ``domain`` is not used)."""
    from tqdm import tqdm

    from .episodes import gold_reward, play_gold_async, reward_kwargs_for, score_episodes

    bench = benchmark_named(benchmark)
    if bench is None or bench not in gold_benchmarks():
        names = [b.name for b in gold_benchmarks()]
        raise ExportError(f"unknown benchmark {benchmark!r}; export-sft gold takes {names}")
    assert bench.export_plan is not None
    target = output_file(out_dir, split, force)
    plan = bench.export_plan(domain, split, mode, data_dir, None if rows_file is None else str(rows_file))
    tools = training_tool_schemas(plan.tool_config) if plan.tool_config is not None else []
    report = ExportReport(out=str(target), tasks=len(plan.rows) + len(plan.skipped))
    bar = tqdm(total=len(plan.rows), desc=f"gold {plan.data_source} {split}", unit="task", disable=not progress)

    async def play_all() -> list[Any]:
        gate = asyncio.Semaphore(max(1, concurrency))

        async def play(row: dict[str, Any]) -> Any:
            async with gate:  # the user is made on this loop: an endpoint client belongs to its event loop
                try:
                    return await play_gold_async(row, user_factory() if user_factory else None, data_dir=plan.root)
                except GoldError as exc:
                    return (str(row["extra_info"].get("task_id", row["extra_info"].get("index"))), str(exc))
                finally:
                    bar.update()

        return await asyncio.gather(*(play(row) for row in plan.rows))

    try:
        played = asyncio.run(play_all())
    finally:
        bar.close()
    episodes = [e for e in played if not isinstance(e, tuple)]
    plan.skipped += [e for e in played if isinstance(e, tuple)]
    scores = score_episodes(episodes, reward_kwargs_for(plan.root, bench.name)) if episodes else []
    records = []
    for episode, score in zip(episodes, scores, strict=True):
        reward = float(score["reward"])
        if not math.isfinite(reward) or abs(reward - gold_reward(episode.info)) > GOLD_TOLERANCE:
            report.dropped_tasks.append(f"{_task_id(episode)} (reward {reward:g}, {episode.termination})")
            continue
        if not any(m.get("role") == "assistant" for m in episode.messages):
            report.dropped_tasks.append(f"{episode.info.task_id} (no assistant turn: the episode ended first)")
            continue
        records.append(
            sft_record(
                episode.messages,
                tools,
                data_source=episode.info.data_source,
                task_id=_task_id(episode),
                split=split,
                mode=plan.mode,
                source="gold",
                reward=reward,
            )
        )
    report.dropped_tasks += [f"{task_id} ({why})" for task_id, why in plan.skipped]
    report.dropped = len(report.dropped_tasks)
    if not records:
        raise ExportError(
            f"no {plan.data_source} task of split {split!r} gave a conversation that scores the gold reward "
            f"({report.dropped} dropped, e.g. {report.dropped_tasks[0] if report.dropped_tasks else 'none'}); "
            "nothing written"
        )
    write_sft_parquet(records, target)
    report.written = len(records)
    return report


def _task_id(episode: Any) -> str:
    """An episode's task: tau2 / tau-bench's task id, a ToolRL row's ``extra_info.index``."""
    return episode.info.task_id or str((episode.row.get("extra_info") or {}).get("index", ""))


# ------------------------------------------------------------------------------------------------ results
def _context(source: str, task_id: str, data_dir: str | None, mode: str) -> tuple[TaskContext, list[dict[str, Any]]]:
    """The context of a task of ``source`` played in ``mode`` (its benchmark's), and its training tool schemas."""
    bench = benchmark_for(source)
    if bench is None or bench.task_context is None:
        raise ExportError(f"{source!r} is no data source of {', '.join(b.name for b in results_benchmarks())}")
    context = bench.task_context(source.split("/", 1)[1], task_id, data_dir, mode)
    tools = training_tool_schemas(context.tool_config) if context.tool_config is not None else []
    return context, tools


def export_results(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    min_reward: float = MIN_REWARD,
    per_task: int | None = None,
    allow_split_mix: bool = False,
    benchmark: str | None = None,
    data_dir: str | None = None,
    name: str = "train",
    force: bool = False,
    progress: bool = True,
) -> ExportReport:
    """Write ``<out_dir>/<name>.parquet`` from scored runs (see the module doc)."""
    from tqdm import tqdm

    if not math.isfinite(min_reward):
        raise ExportError(f"--min-reward must be a finite number, got {min_reward}")
    if per_task is not None and per_task < 1:
        raise ExportError(f"--per-task must be at least 1, got {per_task}")
    if benchmark is not None and benchmark_named(benchmark) not in results_benchmarks() and "/" not in benchmark:
        names = ", ".join(b.name for b in results_benchmarks())
        raise ExportError(f"unknown --benchmark {benchmark!r}; use {names} or <benchmark>/<domain>")
    if not paths:
        raise ExportError("no results file given")
    target = output_file(out_dir, name, force)
    trajectories: list[Trajectory] = []
    unrecorded = 0
    source: str | None = None
    for raw in paths:
        path = Path(raw).expanduser()
        read = read_results(path)
        found = read.trajectories
        unrecorded += read.unrecorded
        for t in found:
            wanted = benchmark or source
            if wanted is not None and t.source != wanted and t.source.split("/")[0] != wanted:
                raise ExportError(
                    f"{path}: holds {t.source} results, but this export is {wanted} (one benchmark and domain per "
                    "export; check the files or --benchmark)"
                )
            source = source or t.source
        trajectories.extend(found)
    assert source is not None or not trajectories
    kept = [t for t in trajectories if t.reward >= min_reward - GOLD_TOLERANCE]
    report = ExportReport(out=str(target), tasks=len({t.task_id for t in trajectories}))
    if not kept:
        raise ExportError(
            f"no trajectory reached --min-reward {min_reward:g} ({len(trajectories)} read from {len(paths)} file(s)); "
            "nothing written"
        )
    tasks: dict[tuple[str, str], tuple[TaskContext, list[dict[str, Any]]]] = {}
    for t in kept:
        if (t.task_id, t.mode) not in tasks:
            try:
                tasks[(t.task_id, t.mode)] = _context(t.source, t.task_id, data_dir, t.mode)
            except (KeyError, ValueError, OSError) as exc:
                why = exc.args[0] if type(exc) is KeyError and exc.args else exc  # KeyError's str() is a repr
                raise ExportError(f"{t.place}: {why}") from None
    held = sorted({f"{tid} ({c.held_out})" for (tid, _), (c, _) in tasks.items() if c.held_out})
    if held and not allow_split_mix:
        raise ExportError(
            f"{len(held)} task(s) of a held-out split would go into a training file: {', '.join(held[:5])}"
            f"{' ...' if len(held) > 5 else ''}; pass --allow-split-mix to export them anyway"
        )
    seen: set[str] = set()
    per: dict[str, int] = {}
    duplicates = over = empty = 0
    records = []
    for t in tqdm(kept, desc=f"results {source}", unit="traj", disable=not progress):
        context, tools = tasks[(t.task_id, t.mode)]
        messages: list[Any] = list(t.messages)
        if not messages or messages[0].role != "system":
            messages = [{"role": "system", "content": context.system}, *messages]
        try:
            record = sft_record(
                messages,
                tools,
                data_source=t.source,
                task_id=t.task_id,
                split=context.held_out or "train",
                mode=t.mode,
                source=t.origin,
                reward=t.reward,
            )
        except SftInputError as exc:  # what the model sent (a tool call's arguments) in a kept conversation
            raise ExportError(f"{t.where}: {exc}") from None
        if not record["messages"]:
            empty += 1
            continue
        key = conversation_key(record)
        if key in seen:
            duplicates += 1
            continue
        if per_task is not None and per.get(t.task_id, 0) >= per_task:
            over += 1
            continue
        seen.add(key)
        per[t.task_id] = per.get(t.task_id, 0) + 1
        records.append(record)
    report.dropped = len(trajectories) - len(records) + unrecorded
    if not records:
        raise ExportError("every selected trajectory was a duplicate or had no assistant turn; nothing written")
    report.notes.append(
        (f"{unrecorded} dump line(s) without a recorded conversation, " if unrecorded else "")
        + f"{len(trajectories) - len(kept)} below --min-reward {min_reward:g}, {duplicates} duplicate "
        f"conversation(s), {over} over --per-task, {empty} without an assistant turn"
    )
    write_sft_parquet(records, target)
    report.written = len(records)
    return report
