"""``verl-rewards prepare tau_bench``: tau-bench v1 tasks as verl parquet rows, and the domain's tool config.

One row per task of the split (``<out>/<split>.parquet``), in tau-bench's task order. Two modes:

* ``normal`` (the default: how tau-bench evaluates, and what published v1 numbers and v1 RL training use):
  tau-bench's simulated user talks to the agent (:mod:`.normal`, played by the ``tau_bench_agent`` loop with a
  user backend configured under ``actor_rollout_ref.rollout.custom.tau_bench.user``);
* ``instruction`` (cheap runs, no user model): the task instruction is the first user message and a text reply
  ends the episode (verl's ``tool_agent`` loop).

::

    data_source   "tau_bench/<domain>"       (the contribution manager routes it to the tau-bench v1 reward)
    agent_name    "tau_bench_agent" (normal) | "tool_agent" (instruction, verl's multi-turn ToolAgentLoop)
    prompt        [system: wiki.md exactly (tau-bench's tool-calling agent prompt)]
                  + instruction mode: [user: the task instruction]  (normal mode: the simulated user's first
                  message, generated at rollout time, follows the system prompt)
    ability       "tool_use"
    reward_model  {"style": "rule", "ground_truth": {"task_id": "<split>/<index>", "actions": JSON text,
                   "outputs": [str], "gt_data_hash": tau-bench's hash of the gold end state}}
    extra_info    {"index", "split", "task_id", "domain", "mode", "user_id", "instruction", "outputs",
                   "tools_kwargs": {<tool>: {"create_kwargs": {"domain", "task_id", "data_dir"}}}}

``instruction`` and ``user_id`` are what a simulated user (tau-bench's ``llm`` user, whose prompt is
:func:`~verl_rewards.tau_bench.user.user_system_prompt`) needs to play the task in a conversation. The gold actions
are JSON text because their argument dicts differ from task to task; the reward reads them from the data, not from
the row. ``gt_data_hash`` is computed here, once per task, so the reward never hashes the whole DB on its
scoring path (it reads the hash back; a row without one makes the reward compute it).

The tool config (``<out>/tool_config.yaml``) lists one :class:`~verl_rewards.tau_bench.verl_tools.TauBenchTool`
per tool, with tau-bench's own schema from ``tools_info.json`` (kept whole in ``config.openai_schema``: verl's
schema model would drop the ``items`` of array parameters); both modes use it. There is no ``done`` tool: in
instruction mode a text reply ends the episode, in normal mode the user's ``###STOP###`` does; a call of
``transfer_to_human_agents`` ends it in both. Both files are written together, atomically.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..engine.datasets import DEFAULT_SPLITS, PrepareReport, tools_kwargs
from ..engine.errors import DataFileError, DataNotFoundError, TaskValidationError, UnknownDomainError
from ..files import replace_together
from .domain import TauBenchDomain, TauBenchTask, load_domain
from .normal import AGENT_LOOP_NAME

TOOL_CLASS = "verl_rewards.tau_bench.verl_tools.TauBenchTool"
AGENT_NAME = "tool_agent"
ABILITY = "tool_use"
TOOL_CONFIG_NAME = "tool_config.yaml"
MODES = ("normal", "instruction")
DEFAULT_MODE = "normal"
NORMAL_AGENT_NAME = AGENT_LOOP_NAME


class TauBenchPrepareError(ValueError):
    """The tau-bench data cannot be converted (missing files, unknown domain, split or mode)."""


def tool_config(domain: TauBenchDomain, data_dir: str | None = None) -> dict[str, Any]:
    """verl's tool config (``actor_rollout_ref.rollout.multi_turn.tool_config_path``) for ``domain``."""
    tools = []
    for schema in domain.tools_info:
        config: dict[str, Any] = {"type": "native", "domain": domain.name, "openai_schema": schema}
        if data_dir:
            config["data_dir"] = data_dir
        tools.append({"class_name": TOOL_CLASS, "config": config})  # no `tool_schema`: verl's model is lossy
    return {"tools": tools}


def tool_config_text(domain: TauBenchDomain, data_dir: str | None = None) -> str:
    """The tool config as YAML, with a header saying where it came from."""
    import yaml

    body = yaml.safe_dump(tool_config(domain, data_dir), sort_keys=False, allow_unicode=True, width=120)
    return (
        f"# verl tool config for the tau-bench (v1) '{domain.name}' domain, "
        "written by `verl-rewards prepare tau_bench`.\n"
        "# Use: actor_rollout_ref.rollout.multi_turn.tool_config_path=<this file>\n" + body
    )


def task_row(domain: TauBenchDomain, task: TauBenchTask, index: int, data_dir: str, mode: str) -> dict[str, Any]:
    """One verl row for ``task`` (see the module doc)."""
    if mode not in MODES:
        raise TauBenchPrepareError(f"unknown mode {mode!r}; available: {list(MODES)}")
    create = {"domain": domain.name, "task_id": task.id, "data_dir": data_dir}
    names = [t["function"]["name"] for t in domain.tools_info]
    prompt = [{"role": "system", "content": domain.policy}]
    if mode == "instruction":
        prompt.append({"role": "user", "content": task.instruction})
    return {
        "data_source": f"tau_bench/{domain.name}",
        "agent_name": NORMAL_AGENT_NAME if mode == "normal" else AGENT_NAME,
        "prompt": prompt,
        "ability": ABILITY,
        "reward_model": {
            "style": "rule",
            "ground_truth": {
                "task_id": task.id,
                "actions": json.dumps(list(task.actions), ensure_ascii=False),
                "outputs": list(task.outputs),
                "gt_data_hash": domain.gold_hash(task.id),
            },
        },
        "extra_info": {
            "index": index,
            "split": task.split,
            "task_id": task.id,
            "domain": domain.name,
            "mode": mode,
            "user_id": task.user_id,
            "instruction": task.instruction,
            "outputs": list(task.outputs),
            "tools_kwargs": tools_kwargs(names, create),
        },
    }


class TauBenchPrepareReport(PrepareReport):
    """What :func:`prepare_tau_bench` wrote (:class:`~verl_rewards.engine.datasets.PrepareReport`)."""


def prepare_tau_bench(
    data_dir: str | os.PathLike[str] | None,
    domain: str,
    out_dir: str | os.PathLike[str],
    splits: Sequence[str] = DEFAULT_SPLITS,
    *,
    mode: str = DEFAULT_MODE,
    progress: bool = True,
) -> TauBenchPrepareReport:
    """Write ``<out_dir>/<split>.parquet`` per split and ``<out_dir>/tool_config.yaml``, all or nothing.

    ``data_dir``: the folder holding ``retail/`` and ``airline/`` (or the domain folder); None means
    ``TAU_BENCH_DATA_DIR``. Its absolute path goes into the rows, where the tools look last (the tool config's
    ``data_dir`` key and ``TAU_BENCH_DATA_DIR`` win). Unknown splits or modes fail before anything is written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tqdm import tqdm

    try:
        dom = load_domain(domain, data_dir)
    except (DataNotFoundError, DataFileError, UnknownDomainError, TaskValidationError) as exc:
        raise TauBenchPrepareError(str(exc)) from exc
    if mode not in MODES:
        raise TauBenchPrepareError(f"unknown mode {mode!r}; available: {list(MODES)}")
    splits = list(dict.fromkeys(s.strip() for s in splits if s and s.strip()))
    if not splits:
        raise TauBenchPrepareError(f"no split given; {dom.name} has {sorted(dom.splits)}")
    unknown = [s for s in splits if s not in dom.splits]
    if unknown:
        raise TauBenchPrepareError(
            f"tau-bench domain {dom.name!r} has no split {unknown[0]!r}; available: {sorted(dom.splits)}"
        )
    root = str(dom.data_dir.parent if (dom.data_dir.parent / dom.name).is_dir() else dom.data_dir)
    out = Path(out_dir).expanduser()
    report = TauBenchPrepareReport(domain=dom.name, data_dir=root, num_tools=len(dom.tools_info))
    tables = {}
    for split in splits:
        ids = dom.split(split)
        rows = [
            task_row(dom, dom.task(tid), i, root, mode)
            for i, tid in enumerate(tqdm(ids, desc=f"tau_bench/{dom.name} {split}", unit="task", disable=not progress))
        ]
        tables[split] = pa.Table.from_pylist(rows)
        report.rows[split] = len(rows)
        report.files[split] = str(out / f"{split}.parquet")

    def parquet_writer(table: Any) -> Any:
        return lambda tmp: pq.write_table(table, tmp)

    writers: dict[Path, Any] = {out / f"{s}.parquet": parquet_writer(t) for s, t in tables.items()}
    config_text = tool_config_text(dom)  # data_dir: TAU_BENCH_DATA_DIR, else the installed folder
    writers[out / TOOL_CONFIG_NAME] = lambda tmp: tmp.write_text(config_text, encoding="utf-8")
    replace_together(writers)
    report.tool_config = str(out / TOOL_CONFIG_NAME)
    return report
