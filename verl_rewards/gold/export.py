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

from .results import ExportError, Trajectory, read_results
from .rows import TAU2, TAU_BENCH, TOOLRL, GoldError, family_of, plain
from .sft import SftInputError, conversation_key, sft_record, training_tool_schemas, write_sft_parquet

__all__ = ["ExportReport", "export_gold", "export_results"]

BENCHMARKS = (TAU2, TAU_BENCH)
#: what ``export-sft gold`` plays: the benchmarks' tasks, or the rows of a ToolRL parquet
GOLD_SOURCES = (*BENCHMARKS, TOOLRL)
HELD_OUT = {TAU2: ("test",), TAU_BENCH: ("test", "dev")}
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
@dataclass
class _Plan:
    rows: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    data_source: str
    mode: str
    split: str
    root: str
    skipped: list[tuple[str, str]]


def _tau2_plan(domain: str, split: str, mode: str | None, data_dir: str | None) -> _Plan:
    from ..tau2.data import (
        Tau2PrepareError,
        check_split_name,
        default_mode,
        solo_system_prompt,
        split_ids,
        task_row,
        tool_config_text,
    )
    from ..tau2.domain import load_domain
    from ..tau2.errors import TaskValidationError, Tau2Error

    try:
        dom = load_domain(domain, data_dir)
        mode = mode or default_mode(dom.name)
        if mode not in ("solo", "normal"):
            raise ExportError(f"tau2 --mode must be solo or normal, got {mode!r}")
        check_split_name(split)
        ids = split_ids(dom, split)
        if mode == "normal":
            from ..tau2.normal.prompts import agent_system_prompt, guidelines_path

            system = agent_system_prompt(dom)
            guidelines_path(dom)
        else:
            system = solo_system_prompt(dom)
    except (Tau2Error, Tau2PrepareError, KeyError) as exc:
        raise ExportError(str(exc).strip("'\"")) from None
    root = str(dom.data_dir.parent if (dom.data_dir.parent / dom.name).is_dir() else dom.data_dir)
    rows, skipped = [], []
    for i, task_id in enumerate(ids):
        try:
            rows.append(task_row(dom, dom.task(task_id), i, split, root, system, mode))
        except TaskValidationError as exc:  # normal mode: tasks that start from a message history
            skipped.append((task_id, str(exc)))
    tools = training_tool_schemas(tool_config_text(dom, mode=mode))
    return _Plan(rows, tools, f"tau2/{dom.name}", mode, split, root, skipped)


def _tau_bench_plan(domain: str, split: str, mode: str | None, data_dir: str | None) -> _Plan:
    from ..tau2.errors import Tau2Error
    from ..tau_bench.data import DEFAULT_MODE, MODES, task_row, tool_config_text
    from ..tau_bench.domain import load_domain

    mode = mode or DEFAULT_MODE
    if mode not in MODES:
        raise ExportError(f"tau_bench --mode must be one of {list(MODES)}, got {mode!r}")
    try:
        dom = load_domain(domain, data_dir)
    except (Tau2Error, KeyError, ValueError) as exc:
        raise ExportError(str(exc).strip("'\"")) from None
    if split not in dom.splits:
        raise ExportError(f"tau-bench domain {dom.name!r} has no split {split!r}; available: {sorted(dom.splits)}")
    root = str(dom.data_dir.parent if (dom.data_dir.parent / dom.name).is_dir() else dom.data_dir)
    rows = [task_row(dom, dom.task(t), i, root, mode) for i, t in enumerate(dom.split(split))]
    tools = training_tool_schemas(tool_config_text(dom))
    return _Plan(rows, tools, f"tau_bench/{dom.name}", mode, split, root, [])


def _toolrl_plan(rows_file: str | Path | None, split: str) -> _Plan:
    """The rows of a ``prepare toolrl`` parquet (each a prompt and its ground truth)."""
    import pandas as pd

    if not rows_file:
        raise ExportError("toolrl: --rows FILE is required (a parquet written by `verl-rewards prepare toolrl`)")
    try:
        frame = pd.read_parquet(rows_file)
    except (OSError, ValueError) as exc:
        raise ExportError(f"toolrl: cannot read --rows {rows_file}: {exc}") from None
    rows = [plain(r) for r in frame.to_dict("records")]
    try:
        sources = sorted({str(r.get("data_source") or "") for r in rows if family_of(str(r.get("data_source") or ""))})
    except GoldError as exc:
        raise ExportError(f"toolrl: {rows_file}: {exc}") from None
    if not rows or any(family_of(s) != TOOLRL for s in sources):
        raise ExportError(f"toolrl: {rows_file} holds no ToolRL rows (data sources {sources})")
    return _Plan(rows, [], sources[0], "single_turn", split, "", [])


def export_gold(
    benchmark: str,
    domain: str,
    split: str,
    out_dir: str | Path,
    *,
    mode: str | None = None,
    data_dir: str | None = None,
    user_factory: Callable[[], Any] | None = None,
    concurrency: int = 8,
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

    if benchmark not in GOLD_SOURCES:
        raise ExportError(f"unknown benchmark {benchmark!r}; export-sft gold takes {list(GOLD_SOURCES)}")
    target = output_file(out_dir, split, force)
    if benchmark == TOOLRL:
        plan = _toolrl_plan(rows_file, split)
    else:
        plan = (_tau2_plan if benchmark == TAU2 else _tau_bench_plan)(domain, split, mode, data_dir)
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
    scores = score_episodes(episodes, reward_kwargs_for(plan.root, benchmark)) if episodes else []
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
                plan.tools,
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
def _split_of(
    source: str, task_id: str, data_dir: str | None, mode: str = "normal"
) -> tuple[str, list[dict[str, Any]], str, Any]:
    """``(held-out split or "", training tool schemas, system prompt, task)`` of a task of ``source`` played in
    ``mode`` (tau2 solo: the solo tools and prompt; the system prompt is used when the messages lack one)."""
    family, domain = source.split("/", 1)
    if family == TAU2:
        from ..tau2.data import solo_system_prompt, tool_config_text
        from ..tau2.domain import load_domain
        from ..tau2.normal.prompts import agent_system_prompt

        dom = load_domain(domain, data_dir)
        if task_id not in dom.tasks:
            raise ExportError(f"{task_id!r} is not a task of {source} (data in {dom.data_dir})")
        held = next((s for s in HELD_OUT[TAU2] if task_id in set(dom.splits.get(s, ()))), "")
        tau2_mode = "solo" if mode == "solo" else "normal"
        system = solo_system_prompt(dom) if tau2_mode == "solo" else agent_system_prompt(dom)
        return held, training_tool_schemas(tool_config_text(dom, mode=tau2_mode)), system, dom
    from ..tau_bench.data import tool_config_text as tb_tool_config_text
    from ..tau_bench.domain import load_domain as tb_load_domain

    tdom = tb_load_domain(domain, data_dir)
    tdom.task(task_id)  # a task of the domain ('<split>/<index>'), never a made-up id whose "split" is unknown
    split = task_id.split("/", 1)[0]
    held = split if split in HELD_OUT[TAU_BENCH] else ""
    return held, training_tool_schemas(tb_tool_config_text(tdom)), tdom.policy, tdom


def export_results(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    min_reward: float = 1.0,
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
    if benchmark is not None and benchmark not in BENCHMARKS and "/" not in benchmark:
        raise ExportError(f"unknown --benchmark {benchmark!r}; use tau2, tau_bench or <benchmark>/<domain>")
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
    tasks: dict[tuple[str, str], tuple[str, list[dict[str, Any]], str, Any]] = {}
    for t in kept:
        if (t.task_id, t.mode) not in tasks:
            try:
                tasks[(t.task_id, t.mode)] = _split_of(t.source, t.task_id, data_dir, t.mode)
            except (KeyError, ValueError, OSError) as exc:
                why = exc.args[0] if type(exc) is KeyError and exc.args else exc  # KeyError's str() is a repr
                raise ExportError(f"{t.place}: {why}") from None
    held = sorted({f"{tid} ({info[0]})" for (tid, _), info in tasks.items() if info[0]})
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
        held_split, tools, system, _ = tasks[(t.task_id, t.mode)]
        messages: list[Any] = list(t.messages)
        if not messages or messages[0].role != "system":
            messages = [{"role": "system", "content": system}, *messages]
        try:
            record = sft_record(
                messages,
                tools,
                data_source=t.source,
                task_id=t.task_id,
                split=held_split or "train",
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
