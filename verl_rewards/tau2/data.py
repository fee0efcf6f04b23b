"""``verl-rewards prepare tau2``: tau2 tasks as verl parquet rows, and the tool config YAML of a domain.

One row per task (``<out>/<split>.parquet``)::

    data_source   "tau2/<domain>"            (the contribution manager routes it to the tau2 reward)
    agent_name    "tool_agent"               (verl's multi-turn ToolAgentLoop)
    prompt        [system: solo-mode instructions + the domain policy,
                   user: the ticket, or the task's user scenario written as a ticket]
    ability       "tool_use"
    reward_model  {"style": "rule", "ground_truth": {"task_id": id, "evaluation_criteria": JSON text}}
    extra_info    {"index": row number in the file, "split", "task_id", "domain", "solo_mode": true,
                   "tools_kwargs": {<tool>: {"create_kwargs": {"domain", "task_id", "data_dir"}}}}

``--mode normal`` (the default for airline, retail and telecom: tau2's own evaluation setting) writes instead::

    agent_name    "tau2_agent"               (the normal-mode loop of :mod:`verl_rewards.tau2.normal.agent_loop`)
    prompt        [system: the normal-mode agent prompt (instruction + policy), assistant: the greeting]
    extra_info    {..., "mode": "normal", "solo_mode": false, "user_scenario": the rendered scenario,
                   "data_dir", "tools_kwargs"}

and a tool config with the agent's tools only (no user tools, no ``done``): the simulated user answers the agent
and acts on the phone itself. ``extra_info.mode`` is ``"solo"`` in solo rows.

The evaluation criteria are stored as JSON text: their argument dicts differ from task to task and a parquet
struct would add every other task's keys as nulls. The reward reads the criteria from the domain data, not
from the row; the copy is there for inspection.

The tool config (``<out>/tool_config.yaml``) lists one :class:`~verl_rewards.tau2.verl_tools.Tau2Tool` per
agent tool of the domain, then (for domains with a user toolkit: mock, telecom) one per user tool, plus the
``done`` tool (:class:`~verl_rewards.tau2.verl_tools.Tau2DoneTool`), each carrying its OpenAI schema whole in
``config.openai_schema``: tau2-bench's own schemas, in tau2's order (:meth:`DomainSpec.agent_tool_schemas`), and
tau2's solo-mode ``done``. There is no ``tool_schema`` key: verl would parse it with its typed schema model, which
drops ``$defs``, ``title`` and defaults, and rejects a parameter without ``type`` (mock's optional
``description``). Rows are tau2's *solo mode*: no user simulator takes part, so the agent gets the user's tools
too (their calls act on the customer's side of the same trajectory's environment, as in tau2's solo mode), the
system prompt carries the domain's solo policy where it has one (telecom), and ``extra_info.solo_mode`` tells
the reward to replay the trajectory that way.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.datasets import DEFAULT_SPLITS, PrepareReport, tools_kwargs
from ..files import OutputPathError, check_output_path, replace_together, write_text_atomic
from .domain import Domain, load_domain
from .errors import DataFileError, DataNotFoundError, TaskValidationError, UnknownDomainError
from .row_options import split_row_options
from .schemas import SCHEMA_DIR
from .tasks import Task

DONE_TOOL = "done"
"""Name of the tool that ends an episode (tau2's solo-mode stop tool)."""
DONE_SCHEMA_FILE = "solo_done.json"
"""tau2's ``done`` tool schema (``LLMSoloAgent``), in the package's ``tool_schemas/`` folder."""
TOOL_CLASS = "verl_rewards.tau2.verl_tools.Tau2Tool"
DONE_TOOL_CLASS = "verl_rewards.tau2.verl_tools.Tau2DoneTool"
AGENT_NAME = "tool_agent"
NORMAL_AGENT_NAME = "tau2_agent"
MODES = ("normal", "solo")
NORMAL_DEFAULT_DOMAINS = ("airline", "retail", "telecom", "banking_knowledge")
ABILITY = "tool_use"
TOOL_CONFIG_NAME = "tool_config.yaml"
ALL_SPLIT = "all"

SOLO_INSTRUCTIONS = """\
You are a customer service agent working through a support ticket on your own. No customer is in this
conversation: the ticket in the next message is everything the customer has told us, and nobody will answer
questions. Follow the policy below strictly.

How to work:
- Use the tools to look up what you need and to make the changes the ticket asks for, one step at a time.
- Check every change against the policy before you make it; refuse what the policy does not allow.
- If the customer asked for information, state it plainly in your messages.
- When the ticket is fully handled, or cannot be handled, call the `done` tool in a message of its own.
  The episode ends there; nothing after it counts."""

SOLO_USER_TOOLS = (
    "- These tools act on the customer's own side (their device or account); you perform them for the customer:\n"
    "  {names}."
)
"""Added to the solo instructions of a domain with user tools (mock, telecom), naming those tools."""

TICKET_HEADER = 'Support ticket (the notes below are written to the customer: "you" is the customer)'
_SCENARIO_FIELDS = (
    ("reason_for_call", "Reason for contact"),
    ("known_info", "What the customer told us"),
    ("unknown_info", "What the customer does not know"),
    ("task_instructions", "Customer's preferences and instructions"),
)
_SPLIT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class Tau2PrepareError(ValueError):
    """The tau2 data cannot be converted (missing files, unknown domain or split, invalid tasks)."""


@functools.lru_cache(maxsize=1)
def _done_schema_text() -> str:
    return (SCHEMA_DIR / DONE_SCHEMA_FILE).read_text(encoding="utf-8")


def done_schema() -> dict[str, Any]:
    """Schema of the ``done`` tool: tau2's (``LLMSoloAgent``'s stop tool, no parameters)."""
    schema: dict[str, Any] = json.loads(_done_schema_text())
    return schema


def default_mode(domain_name: str) -> str:
    """``normal`` for the domains tau2 reports in normal mode (airline, retail, telecom), else ``solo``."""
    return "normal" if domain_name in NORMAL_DEFAULT_DOMAINS else "solo"


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise Tau2PrepareError(f"mode must be one of {list(MODES)}, got {mode!r}")
    return mode


def tool_schemas(domain: Domain, mode: str = "solo") -> list[dict[str, Any]]:
    """OpenAI schemas of the tools a row offers, as tau2 sends them. Normal: the agent tools. Solo: the agent
    tools, then the user tools, then ``done`` (tau2's solo agent gets exactly this list)."""
    agent = domain.spec.agent_tool_schemas()
    if _check_mode(mode) == "normal":
        return agent
    user = domain.spec.user_tool_schemas()
    agent_names = {s["function"]["name"] for s in agent}
    user_names = {s["function"]["name"] for s in user}
    if DONE_TOOL in agent_names | user_names:
        raise Tau2PrepareError(f"domain {domain.name!r} already has a tool named {DONE_TOOL!r}")
    both = sorted(agent_names & user_names)
    if both:
        raise Tau2PrepareError(f"domain {domain.name!r}: agent and user tools share names {both} (solo mode)")
    return [*agent, *user, done_schema()]


def tool_names(domain: Domain, mode: str = "solo") -> list[str]:
    """Names of the tools a row offers, in the order of :func:`tool_schemas`."""
    return [s["function"]["name"] for s in tool_schemas(domain, mode)]


def tool_config(domain: Domain, data_dir: str | None = None, mode: str = "solo") -> dict[str, Any]:
    """verl's tool config (``actor_rollout_ref.rollout.multi_turn.tool_config_path``) for ``domain``."""
    tools = []
    for schema in tool_schemas(domain, mode):
        name = schema["function"]["name"]
        config: dict[str, Any] = {"type": "native", "domain": domain.name}
        if data_dir:
            config["data_dir"] = data_dir
        if domain.options:
            config["domain_options"] = dict(domain.options)
        config["openai_schema"] = schema  # whole: verl's typed `tool_schema` would drop $defs, title, defaults
        cls = DONE_TOOL_CLASS if name == DONE_TOOL else TOOL_CLASS
        tools.append({"class_name": cls, "config": config})
    return {"tools": tools}


def tool_config_text(domain: Domain, data_dir: str | None = None, mode: str = "solo") -> str:
    """:func:`tool_config` as the YAML text of ``tool_config.yaml`` (with a header saying how to use it)."""
    import yaml

    text = yaml.safe_dump(tool_config(domain, data_dir, mode), sort_keys=False, allow_unicode=True, width=120)
    return (
        f"# verl tool config for the tau2 '{domain.name}' domain ({mode} mode), written by "
        "`verl-rewards prepare tau2`.\n"
        "# Use: actor_rollout_ref.rollout.multi_turn.tool_config_path=<this file>\n" + text
    )


def write_tool_config(
    domain: Domain, path: str | os.PathLike[str], data_dir: str | None = None, mode: str = "solo"
) -> Path:
    """Write :func:`tool_config` as YAML (atomically); returns the path."""
    out = Path(path)
    write_text_atomic(out, tool_config_text(domain, data_dir, mode))
    return out


# -------------------------------------------------------------------------------------------------- prompts
def solo_instructions(domain: Domain) -> str:
    """The solo-mode instructions; for a domain with user tools they name the tools that act for the customer."""
    user = [s["function"]["name"] for s in domain.spec.user_tool_schemas()]
    if not user:
        return SOLO_INSTRUCTIONS
    head, tail = SOLO_INSTRUCTIONS.rsplit("\n- When the ticket", 1)
    names = SOLO_USER_TOOLS.format(names=", ".join(f"`{n}`" for n in user))
    return f"{head}\n{names}\n- When the ticket{tail}"


def solo_system_prompt(domain: Domain) -> str:
    """System message: solo-mode instructions, then the domain's (solo-mode) policy."""
    instructions = solo_instructions(domain)
    policy = domain.policy_for(solo=True).strip()
    return f"{instructions}\n\n<policy>\n{policy}\n</policy>" if policy else instructions


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def ticket_text(task: Task) -> str:
    """The user message: the task's ticket, else its user scenario written as a ticket."""
    if task.ticket and task.ticket.strip():
        return task.ticket.strip()
    scenario = task.user_scenario or {}
    instructions = scenario.get("instructions")
    parts: list[str] = []
    persona = _text(scenario.get("persona"))
    if persona:
        parts.append(f"Customer: {persona}")
    if isinstance(instructions, dict):
        for key, label in _SCENARIO_FIELDS:
            text = _text(instructions.get(key))
            if text:
                parts.append(f"{label}:\n{text}")
    else:
        text = _text(instructions)
        if text:
            parts.append(text)
    if not parts:
        raise TaskValidationError(task.id, "user_scenario", "the task has neither a ticket nor a user scenario")
    return TICKET_HEADER + "\n\n" + "\n\n".join(parts)


# ---------------------------------------------------------------------------------------------------- rows
def _criteria_json(task: Task) -> str:
    return json.dumps(task.raw.get("evaluation_criteria"), ensure_ascii=False, sort_keys=True)


def row_options(domain: Domain) -> dict[str, Any]:
    """The load options a row carries: those of ``domain`` a row may choose (the tool config carries them all;
    rows never carry an endpoint, a credential or a path, :mod:`verl_rewards.tau2.row_options`)."""
    return split_row_options(domain.name, domain.options)[0]


def task_row(
    domain: Domain,
    task: Task,
    index: int,
    split: str,
    data_dir: str | None,
    system_prompt: str | None = None,
    mode: str = "solo",
) -> dict[str, Any]:
    """One verl row for ``task`` (see the module doc): the same frame in both modes, with the mode's agent loop,
    prompt and extra fields."""
    create: dict[str, Any] = {"domain": domain.name, "task_id": task.id, "data_dir": data_dir or ""}
    options = row_options(domain)
    if options:
        create["domain_options"] = options
    names = tool_names(domain, mode)
    if _check_mode(mode) == "normal":
        agent_name = NORMAL_AGENT_NAME
        prompt, extra = _normal_prompt(domain, task, data_dir, system_prompt, options)
    else:
        agent_name = AGENT_NAME
        prompt = [
            {"role": "system", "content": system_prompt or solo_system_prompt(domain)},
            {"role": "user", "content": ticket_text(task)},
        ]
        extra = {}
    return {
        "data_source": f"tau2/{domain.name}",
        "agent_name": agent_name,
        "prompt": prompt,
        "ability": ABILITY,
        "reward_model": {
            "style": "rule",
            "ground_truth": {"task_id": task.id, "evaluation_criteria": _criteria_json(task)},
        },
        "extra_info": {
            "index": index,
            "split": split,
            "task_id": task.id,
            "domain": domain.name,
            "mode": mode,
            "solo_mode": mode == "solo",
            **extra,
            "tools_kwargs": tools_kwargs(names, create),
        },
    }


def _normal_prompt(
    domain: Domain, task: Task, data_dir: str | None, system_prompt: str | None, options: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A normal-mode row's prompt (the agent's system prompt, then tau2's greeting or the task's initial history)
    and its extra fields (the rendered user scenario, the data folder and the load options a row may carry)."""
    from ..engine.rules import GREETING
    from .normal.history import history_prompt
    from .normal.prompts import agent_system_prompt, user_scenario_text

    try:
        scenario = user_scenario_text(task)
    except ValueError as exc:
        raise TaskValidationError(task.id, "user_scenario", str(exc)) from None
    if domain.spec.task_policy is not None:
        system = agent_system_prompt(domain, task_id=task.id)
    else:
        system = system_prompt or agent_system_prompt(domain)
    # tau2: the agent's view opens with the greeting, or with what it sees of the task's initial history
    opening = history_prompt(task) if task.history else [{"role": "assistant", "content": GREETING}]
    prompt = [{"role": "system", "content": system}, *opening]
    extra = {
        "user_scenario": scenario,
        "data_dir": data_dir or "",
        **({"domain_options": options} if options else {}),
    }
    return prompt, extra


@dataclass
class Tau2PrepareReport(PrepareReport):
    """What :func:`prepare_tau2` wrote (:class:`~verl_rewards.engine.datasets.PrepareReport`) and in which mode."""

    mode: str = "solo"


def _load(domain: str, data_dir: str | os.PathLike[str] | None, options: dict[str, Any] | None = None) -> Domain:
    try:
        return load_domain(domain, data_dir, **(options or {}))
    except (DataNotFoundError, DataFileError, UnknownDomainError, TaskValidationError) as exc:
        raise Tau2PrepareError(str(exc)) from exc


def split_ids(domain: Domain, split: str, *, holdout_flag: bool = False) -> list[str]:
    """Task ids of ``split`` (``all`` = every task of tasks.json, in file order). The error for an unknown split
    names the splits file only when the domain has one, and ``--holdout`` only for a command that takes it
    (``holdout_flag``)."""
    if split == ALL_SPLIT:
        return list(domain.tasks)
    if split not in domain.splits:
        split_file = domain.data_dir / domain.spec.files.get("split", "split_tasks.json")
        source = f"splits come from {split_file}" if split_file.is_file() else f"{domain.name} has no splits file"
        hint = "; --holdout draws train/test instead" if holdout_flag else ""
        raise Tau2PrepareError(
            f"domain {domain.name!r} has no split {split!r}; available: {sorted(domain.splits)} or {ALL_SPLIT!r} "
            f"({source}{hint})"
        )
    return domain.split(split)


def prepare_tau2(
    data_dir: str | os.PathLike[str] | None,
    domain: str,
    out_dir: str | os.PathLike[str],
    splits: Sequence[str] = DEFAULT_SPLITS,
    *,
    mode: str | None = None,
    progress: bool = True,
    retrieval: str | None = None,
    holdout: float | None = None,
    seed: int = 0,
) -> Tau2PrepareReport:
    """Write ``<out_dir>/<split>.parquet`` for each split and ``<out_dir>/tool_config.yaml``.

    ``data_dir`` is the folder holding ``<domain>/tasks.json`` (tau2-bench: ``data/tau2/domains``) or the domain
    folder itself; None means ``TAU2_DATA_DIR``. Its absolute path goes into the rows (``create_kwargs``), where
    the tools look last: the tool config's ``data_dir`` key (not written here) and ``TAU2_DATA_DIR`` win, so a
    dataset built on one machine trains on another. Raises :class:`Tau2PrepareError` when the data cannot be
    read, a split is unknown, empty or not a safe file name, and then writes nothing: the parquet files and the
    tool config are written to temporary files and replace the old ones together, only after all were written.
    """
    import pyarrow as pa
    from tqdm import tqdm

    try:
        dom = _load(domain, data_dir, {"retrieval": retrieval} if retrieval is not None else None)
    except ValueError as exc:  # a bad load option (banking_knowledge's retrieval)
        raise Tau2PrepareError(str(exc)) from exc
    mode = _check_mode(mode or default_mode(dom.name))
    if mode == "solo" and not dom.spec.solo:
        raise Tau2PrepareError(f"domain {dom.name!r} runs in normal mode only (tau2 refuses solo mode for it)")
    splits = list(dict.fromkeys(s.strip() for s in splits if s and s.strip()))
    if not splits:
        raise Tau2PrepareError("no split given (use train, test, another split of split_tasks.json, or all)")
    for split in splits:
        check_split_name(split)
    plan = (
        {s: split_ids(dom, s, holdout_flag=True) for s in splits}
        if holdout is None
        else holdout_splits(dom, splits, holdout, seed)
    )
    empty = [s for s, ids in plan.items() if not ids]
    if empty:
        raise Tau2PrepareError(f"split(s) {empty} of domain {dom.name!r} have no tasks; nothing written")
    root = str(dom.data_dir.parent if (dom.data_dir.parent / dom.name).is_dir() else dom.data_dir)
    out = Path(out_dir).expanduser()
    try:
        for name in [*(f"{split}.parquet" for split in plan), TOOL_CONFIG_NAME]:
            check_output_path(out / name)
    except OutputPathError as exc:
        raise Tau2PrepareError(str(exc)) from None
    report = Tau2PrepareReport(domain=dom.name, data_dir=root, mode=mode)
    if mode == "normal":
        from .normal.prompts import agent_system_prompt, guidelines_path

        system = agent_system_prompt(dom)
        try:
            guidelines_path(dom)  # the loop needs them at rollout time: fail here, before anything is written
        except DataNotFoundError as exc:
            raise Tau2PrepareError(str(exc)) from None
    else:
        system = solo_system_prompt(dom)
    tables: dict[str, Any] = {}
    for split, ids in plan.items():
        rows = []
        for i, tid in enumerate(tqdm(ids, desc=f"tau2/{dom.name} {split}", unit="task", disable=not progress)):
            try:
                rows.append(task_row(dom, dom.task(tid), i, split, root, system, mode))
            except TaskValidationError as exc:
                raise Tau2PrepareError(str(exc)) from exc
        tables[split] = pa.Table.from_pylist(rows)
        report.rows[split] = len(rows)
        report.files[split] = str(out / f"{split}.parquet")
    config_text = tool_config_text(dom, mode=mode)  # data_dir: TAU2_DATA_DIR, else the installed folder
    writers: dict[Path, Callable[[Path], None]] = {
        out / f"{split}.parquet": functools.partial(_write_parquet, table) for split, table in tables.items()
    }
    writers[out / TOOL_CONFIG_NAME] = functools.partial(_write_text, config_text)
    replace_together(writers)  # the splits and the tool config replace the old ones as one set
    report.tool_config = str(out / TOOL_CONFIG_NAME)
    report.num_tools = len(tool_schemas(dom, mode))
    return report


def holdout_splits(domain: Domain, splits: Sequence[str], holdout: float, seed: int) -> dict[str, list[str]]:
    """``train`` / ``test`` from a seeded random ``holdout`` fraction of all tasks (for domains without a split,
    such as banking_knowledge): ``round(n * holdout)`` tasks (at least 1) go to ``test``; both keep file order."""
    import random

    if isinstance(holdout, bool) or not isinstance(holdout, int | float) or not 0 < holdout < 1:
        raise Tau2PrepareError(f"--holdout must be a fraction between 0 and 1, got {holdout!r}")
    unknown = [s for s in splits if s not in ("train", "test")]
    if unknown:
        raise Tau2PrepareError(f"with --holdout the splits are train and test, not {unknown}")
    ids = list(domain.tasks)
    shuffled = list(ids)
    random.Random(seed).shuffle(shuffled)
    test = set(shuffled[: max(1, round(len(ids) * holdout))])
    both = {"train": [t for t in ids if t not in test], "test": [t for t in ids if t in test]}
    return {s: both[s] for s in splits}


def check_split_name(split: str) -> str:
    """``split`` when it can name ``<out>/<split>.parquet`` without leaving ``<out>`` (Tau2PrepareError if not)."""
    if not _SPLIT_NAME.fullmatch(split):
        raise Tau2PrepareError(
            f"split name {split!r} cannot be used as a file name in the output folder: use letters, digits, "
            "'_', '-' and '.', not starting with '.' (split names come from --split and split_tasks.json)"
        )
    return split


def _write_parquet(table: Any, path: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, path)


def _write_text(text: str, path: Path) -> None:
    path.write_text(text, encoding="utf-8")
