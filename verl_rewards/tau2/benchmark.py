"""tau2 as a :class:`~verl_rewards.benchmark.Benchmark`: its family, data folder, domains, gold policy, ``export-sft``
plan, ``prepare tau2`` and smoke settings (registered by :mod:`verl_rewards.catalog`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..benchmark import (
    TRAIN_AND_VAL,
    Benchmark,
    ExportError,
    ExportPlan,
    GoldPlay,
    Option,
    PrepareEntry,
    SimulateEntry,
    SmokeSpec,
    TaskContext,
)
from ..engine.data_dir import TAU2_DATA
from ..scoring.families import Family
from . import data as tau2_data
from . import gold
from .domain import load_domain
from .errors import Tau2Error
from .registry import available_domains
from .row_options import refused_in_row

#: the splits ``export-sft results`` never puts into a training file without ``--allow-split-mix``
HELD_OUT = ("test",)


def _family() -> Family:
    """The reward family, imported on first use (reading the record imports no reward)."""
    from .verl_scorer import FAMILY

    return FAMILY


def row_mode(extra_info: Mapping[str, Any]) -> str:
    """A tau2 row's mode: ``extra_info.mode``, else ``solo`` for rows of the older ``solo_mode`` flag, else normal."""
    return str(extra_info.get("mode") or ("solo" if extra_info.get("solo_mode") else "normal"))


def _root(dom: Any) -> str:
    """The data folder to record: the folder holding the domain's folder, or the domain's folder itself."""
    return str(dom.data_dir.parent if (dom.data_dir.parent / dom.name).is_dir() else dom.data_dir)


def export_plan(domain: str, split: str, mode: str | None, data_dir: str | None, rows_file: str | None) -> ExportPlan:
    """The rows of a tau2 split for ``export-sft gold`` (tasks that start from a message history are skipped in
    normal mode, with why)."""
    from ..engine.errors import TaskValidationError
    from .data import Tau2PrepareError, check_split_name, default_mode, solo_system_prompt, split_ids, task_row

    try:
        dom = load_domain(domain, data_dir)
        mode = mode or default_mode(dom.name)
        if mode not in tau2_data.MODES:
            raise ExportError(f"tau2 --mode must be solo or normal, got {mode!r}")
        check_split_name(split)
        ids = split_ids(dom, split)
        if mode == "normal":
            from .normal.prompts import agent_system_prompt, guidelines_path

            system = agent_system_prompt(dom)
            guidelines_path(dom)
        else:
            system = solo_system_prompt(dom)
    except (Tau2Error, Tau2PrepareError, KeyError) as exc:
        raise ExportError(str(exc).strip("'\"")) from None
    root = _root(dom)
    rows, skipped = [], []
    for i, task_id in enumerate(ids):
        try:
            rows.append(task_row(dom, dom.task(task_id), i, split, root, system, mode))
        except TaskValidationError as exc:  # normal mode: tasks that start from a message history
            skipped.append((task_id, str(exc)))
    tools = tau2_data.tool_config_text(dom, mode=mode)
    return ExportPlan(rows, tools, BENCHMARK.source(dom.name), mode, split, root, skipped)


def task_context(domain: str, task_id: str, data_dir: str | None, mode: str) -> TaskContext:
    """A tau2 task's held-out split, tools and system prompt in ``mode`` (solo: the solo tools and prompt)."""
    from .normal.prompts import agent_system_prompt

    dom = load_domain(domain, data_dir)
    if task_id not in dom.tasks:
        raise ExportError(f"{task_id!r} is not a task of {BENCHMARK.source(domain)} (data in {dom.data_dir})")
    held = next((s for s in HELD_OUT if task_id in set(dom.splits.get(s, ()))), "")
    tau2_mode = "solo" if mode == "solo" else "normal"
    system = tau2_data.solo_system_prompt(dom) if tau2_mode == "solo" else agent_system_prompt(dom)
    return TaskContext(held, tau2_data.tool_config_text(dom, mode=tau2_mode), system)


def _prepare(values: Mapping[str, Any]) -> tuple[list[str], int]:
    report = tau2_data.prepare_tau2(
        values["data_dir"],
        values["domain"],
        values["out"],
        values["split"].split(","),
        mode=values["mode"],
        retrieval=values["retrieval"],
        holdout=values["holdout"],
        seed=values["holdout_seed"],
    )
    lines = [f"{split}: {n} rows -> {report.files[split]}" for split, n in report.rows.items()]
    return [*lines, f"tool config ({report.num_tools} tools): {report.tool_config}"], 0


def _default(name: str) -> Any:
    import inspect

    return inspect.signature(tau2_data.prepare_tau2).parameters[name].default


PREPARE = PrepareEntry(
    about="tau2 tasks -> verl parquet + tool config for the tool agent loop",
    run=_prepare,
    errors=(Tau2Error, OSError, ValueError),  # Tau2PrepareError is a ValueError
    split_default=",".join(_default("splits")),
    split_why=TRAIN_AND_VAL,
    split_several=True,
    options=(
        Option("--out", "output directory (<out>/<split>.parquet, <out>/tool_config.yaml)", required=True),
        Option(
            "--mode",
            "normal: a simulated user talks to the agent (tau2_agent loop; default for "
            f"{', '.join(tau2_data.NORMAL_DEFAULT_DOMAINS)}); solo: the agent works from a ticket "
            "(tool_agent; default for the others)",
            choices=tau2_data.MODES,
        ),
        Option(
            "--retrieval",
            "banking_knowledge: the retrieval configuration (bm25, the default; bm25_grep, grep_only, full_kb, "
            "golden_retrieval, no_knowledge)",
        ),
        Option(
            "--holdout",
            "write train/test from a seeded random fraction of all tasks held out as test (for domains "
            "without a split, such as banking_knowledge)",
            type=float,
        ),
        Option("--holdout-seed", "seed of --holdout's draw", default=_default("seed"), type=int),
    ),
)


def _simulate(options: Mapping[str, Any], domain: str, settings: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """tau2's normal-mode run (:mod:`verl_rewards.tau2.normal.simulate`): tau2-bench's Results JSON."""
    import asyncio

    from .normal.simulate import SimulateConfig, simulate, summary

    limits = {k: options[k] for k in ("max_steps", "max_errors", "max_retries", "retry_delay")}
    config = SimulateConfig(
        domain=domain,
        **settings,
        enforce_communication_protocol=options["enforce_communication_protocol"],
        judge=options["judge"],
        agent_message_errors=options["agent_message_errors"],
        skip_nl_assertions=options["skip_nl_assertions"],
        domain_options={"retrieval": options["retrieval"]} if options["retrieval"] else None,
        **{k: v for k, v in limits.items() if v is not None},  # else the simulator's own defaults
    )
    results = asyncio.run(simulate(config))
    sims = results.get("simulations") or []
    outcomes = [
        (s.get("termination_reason"), (s.get("info") or {}).get("end_cause") or (s.get("info") or {}).get("error"))
        for s in sims
    ]
    return summary(results), outcomes


def _check_simulate(options: Mapping[str, Any]) -> None:
    if options["task_ids"] and options["split"]:
        raise ValueError("give --task-ids or --split, not both")


SIMULATE = SimulateEntry(
    own_options=(
        "--max-steps",
        "--max-errors",
        "--enforce-communication-protocol",
        "--judge-model",
        "--judge-base-url",
        "--skip-nl-assertions",
        "--retrieval",
        "--max-retries",
        "--retry-delay",
    ),
    limits="tau2's limits are --max-steps and --max-errors",
    run=_simulate,
    check=_check_simulate,
)


def _smoke_args(domain: str, mode: str, data_dir: str) -> list[str]:
    split = _smoke_split(domain)
    return ["--data-dir", data_dir, "--domain", domain, "--split", split, "--mode", mode]


def _smoke_split(domain: str) -> str:
    # mock has one split (base); banking_knowledge none (all: its tasks in id order)
    return {"mock": "base", "banking_knowledge": tau2_data.ALL_SPLIT}.get(domain, "train")


BENCHMARK = Benchmark(
    name="tau2",
    label="tau2",
    reward_family=_family,
    data=TAU2_DATA,
    data_help="tau2: the domains folder (tau2-bench's data/tau2/domains)",
    split_names="tau2: a key of the domain's split_tasks.json (train, test, base; mock and banking_knowledge have "
    "only base) or 'all'",
    modes=tau2_data.MODES,
    mode_help="tau2: normal (a simulated user talks to the agent) or solo (the agent works from a ticket)",
    domains=available_domains,
    load_domain=load_domain,
    row_mode=row_mode,
    gold=GoldPlay(turns=gold.gold_turns, play=gold.play),
    export_plan=export_plan,
    task_context=task_context,
    prepare=PREPARE,
    simulate=SIMULATE,
    check_row=refused_in_row,
    exact_success=True,
    smoke=SmokeSpec(
        recipe="recipes/tau2_grpo/run_tau2_grpo.sh",
        modes=("normal", "solo"),
        domains=("airline", "retail", "telecom", "mock", "banking_knowledge"),
        split_for=_smoke_split,
        prepare_args=_smoke_args,
        sft=True,
    ),
)
