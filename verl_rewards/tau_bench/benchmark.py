"""tau-bench v1 as a :class:`~verl_rewards.benchmark.Benchmark`: its family, data folder, domains, gold policy,
``export-sft`` plan, ``prepare tau_bench`` and smoke settings (registered by :mod:`verl_rewards.catalog`)."""

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
from ..engine.data_dir import TAU_BENCH_DATA
from ..engine.errors import EngineError
from ..scoring.families import Family
from . import data as tb_data
from . import gold
from .domain import DOMAINS, load_domain

#: the splits ``export-sft results`` never puts into a training file without ``--allow-split-mix``
HELD_OUT = ("test", "dev")


def _family() -> Family:
    """The reward family, imported on first use (reading the record imports no reward)."""
    from .verl_scorer import FAMILY

    return FAMILY


def domains() -> list[str]:
    """tau-bench's domains, sorted."""
    return sorted(DOMAINS)


def export_plan(domain: str, split: str, mode: str | None, data_dir: str | None, rows_file: str | None) -> ExportPlan:
    """The rows of a tau-bench split for ``export-sft gold``."""
    mode = mode or tb_data.DEFAULT_MODE
    if mode not in tb_data.MODES:
        raise ExportError(f"tau_bench --mode must be one of {list(tb_data.MODES)}, got {mode!r}")
    try:
        dom = load_domain(domain, data_dir)
    except (EngineError, KeyError, ValueError) as exc:
        raise ExportError(str(exc).strip("'\"")) from None
    if split not in dom.splits:
        raise ExportError(f"tau-bench domain {dom.name!r} has no split {split!r}; available: {sorted(dom.splits)}")
    root = str(dom.data_dir.parent if (dom.data_dir.parent / dom.name).is_dir() else dom.data_dir)
    rows = [tb_data.task_row(dom, dom.task(t), i, root, mode) for i, t in enumerate(dom.split(split))]
    return ExportPlan(rows, tb_data.tool_config_text(dom), BENCHMARK.source(dom.name), mode, split, root, [])


def task_context(domain: str, task_id: str, data_dir: str | None, mode: str) -> TaskContext:
    """A tau-bench task's held-out split (its id is ``<split>/<index>``), tools and system prompt (the wiki)."""
    dom = load_domain(domain, data_dir)
    dom.task(task_id)  # a task of the domain ('<split>/<index>'), never a made-up id whose "split" is unknown
    split = task_id.split("/", 1)[0]
    return TaskContext(split if split in HELD_OUT else "", tb_data.tool_config_text(dom), dom.policy)


def _prepare(values: Mapping[str, Any]) -> tuple[list[str], int]:
    report = tb_data.prepare_tau_bench(
        values["data_dir"], values["domain"], values["out"], values["split"].split(","), mode=values["mode"]
    )
    lines = [f"{split}: {n} rows -> {report.files[split]}" for split, n in report.rows.items()]
    return [*lines, f"tool config ({report.num_tools} tools): {report.tool_config}"], 0


PREPARE = PrepareEntry(
    about="tau-bench (v1) tasks -> verl parquet + tool config",
    run=_prepare,
    errors=(tb_data.TauBenchPrepareError, OSError),
    domain_choices=True,
    split_default=",".join(tb_data.DEFAULT_SPLITS),
    split_why=TRAIN_AND_VAL,
    split_several=True,
    options=(
        Option(
            "--mode",
            "normal: tau-bench's simulated user talks to the agent (tau_bench_agent loop, a user model needed); "
            "instruction: the task instruction is the first user message and a text reply ends (tool_agent loop, "
            "no user model)",
            default=tb_data.DEFAULT_MODE,
            choices=tb_data.MODES,
        ),
        Option("--out", "output directory (<out>/<split>.parquet, tool_config.yaml)", required=True),
    ),
)


def _simulate(options: Mapping[str, Any], domain: str, settings: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """tau-bench's run (:mod:`verl_rewards.tau_bench.simulate`): its results list."""
    import asyncio

    from .simulate import SOURCE_PREFIX, TauBenchSimulateConfig, simulate_tau_bench, summary

    limit = {"max_num_steps": options["max_num_steps"]} if options["max_num_steps"] is not None else {}
    config = TauBenchSimulateConfig(domain=SOURCE_PREFIX + domain, **settings, **limit)
    results = asyncio.run(simulate_tau_bench(config))
    infos = [s.get("info") or {} for s in results]
    return summary(results), [(i.get("termination"), i.get("end_cause")) for i in infos]


SIMULATE = SimulateEntry(
    own_options=("--max-num-steps",), limits="tau-bench's only limit is --max-num-steps", run=_simulate
)


def _smoke_split(domain: str) -> str:
    return "test" if domain == "airline" else "train"  # tau-bench's airline has only a test split


def _smoke_args(domain: str, mode: str, data_dir: str) -> list[str]:
    return ["--data-dir", data_dir, "--domain", domain, "--split", _smoke_split(domain), "--mode", mode]


BENCHMARK = Benchmark(
    name="tau_bench",
    label="tau-bench",
    reward_family=_family,
    data=TAU_BENCH_DATA,
    data_help="tau_bench: the folder holding retail/ and airline/",
    split_names="tau_bench: train, test or dev (airline: test)",
    modes=tb_data.MODES,
    mode_help="tau_bench: normal (tau-bench's simulated user) or instruction (the task instruction is the first user "
    "message)",
    domains=domains,
    load_domain=load_domain,
    gold=GoldPlay(turns=gold.gold_turns, play=gold.play),
    export_plan=export_plan,
    task_context=task_context,
    prepare=PREPARE,
    simulate=SIMULATE,
    exact_success=True,
    smoke=SmokeSpec(
        recipe="recipes/tau_bench_grpo/run_tau_bench_grpo.sh",
        modes=("normal", "instruction"),
        domains=("retail", "airline"),
        split_for=_smoke_split,
        prepare_args=_smoke_args,
        sft=True,
    ),
)
