"""Reading scored runs for ``export-sft results``: tau2 ``Results`` JSON (a file or its folder format), tau-bench
results lists (``verl-rewards simulate --domain tau_bench/<domain>``) and verl generations dumps whose samples carry
their recorded conversation (``trajectory_json``, :mod:`verl_rewards.scoring.recorded`).

Files are read as every command reads JSON (:mod:`verl_rewards.json_files`: a dump's lines end at ``\\n`` only,
each error names the file and the line). Messages are read by the engine's rule
(:func:`~verl_rewards.engine.trajectory.parse_messages`) when the file is read, so a structurally broken message is
an error naming the file, the place and the message whichever its reward; what the model controls (a tool call's
arguments) is checked when the conversation is kept (:func:`verl_rewards.gold.sft.sft_messages`). A reward that is
present must be a finite number; an absent one (tau2's "not scored") is never kept. A dump line without a recorded
conversation is skipped and counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..coerce import read_float
from ..engine.errors import TrajectoryError
from ..engine.trajectory import Message, parse_messages
from ..json_files import json_lines, load_json
from .rows import TAU2, TAU_BENCH


class ExportError(ValueError):
    """Bad input for an export (reported as one line, exit code 2; nothing is written)."""


@dataclass
class Trajectory:
    """One scored conversation of a results file, and where it came from (for the ``source`` column and errors)."""

    source: str  # tau2/<domain> | tau_bench/<domain>
    task_id: str
    reward: float
    messages: list[Message]  # the agent's side, each with its index in the file's message list
    origin: str  # the file, or file:line of a dump
    place: str  # the record's place, for errors: "run.json: simulations[3]", "0.jsonl:7: trajectory_json"
    where: str  # the message list's place: "run.json: simulations[3].messages"
    mode: str = "normal"  # which tool schemas and system prompt the agent had (tau2: solo | normal)


@dataclass
class ReadResults:
    """The trajectories of one file and the dump lines skipped for carrying no recorded conversation."""

    trajectories: list[Trajectory] = field(default_factory=list)
    unrecorded: int = 0


def read_results(path: Path) -> ReadResults:
    """The trajectories of one results file: tau2 ``Results`` (a file or its folder), a tau-bench results list or a
    verl dump (``.jsonl``)."""
    if path.is_dir():
        if (path / "results.json").is_file():
            path = path / "results.json"
        else:
            raise ExportError(f"{path}: a folder without results.json (tau2's folder format)")
    if not path.exists():
        raise ExportError(f"{path}: no such file")
    if path.suffix == ".jsonl":
        return _read_verl_dump(path)
    doc = load_json(path, ExportError)
    if isinstance(doc, Mapping) and "simulations" in doc and "info" in doc:
        return ReadResults(_read_tau2(path, doc))
    if isinstance(doc, list) and doc and all(isinstance(e, Mapping) and "traj" in e for e in doc):
        return ReadResults(_read_tau_bench(path, doc))
    raise ExportError(f"{path}: neither tau2 Results JSON nor a tau-bench results list")


def _at(place: str, name: str) -> str:
    """``place`` (``file: a[1]`` or ``file``) extended by a field name."""
    return f"{place}.{name}" if place.endswith("]") else f"{place}: {name}"


def _shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**40:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _reward(value: Any, place: str) -> float:
    """A result's reward: absent (null) is tau2's "not scored" (-inf, never kept); present, a finite number."""
    if value is None:
        return -math.inf
    reward = read_float(value, bools=False, maximum=math.inf)
    if reward is None:
        raise ExportError(f"{place}: expected a finite number, got {_shown(value)}")
    return reward


def _task_id(value: Any, place: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value) == "":
        raise ExportError(f"{place}: expected a task id, got {_shown(value)}")
    return str(value)


def _messages(value: Any, place: str) -> tuple[list[Any], list[Message]]:
    """The raw and the parsed message list at ``place``; structural errors name the place and the message."""
    if not isinstance(value, list):
        raise ExportError(f"{place}: expected a list of messages, got {type(value).__name__}")
    try:
        return value, parse_messages(value)
    except TrajectoryError as exc:
        raise ExportError(f"{place}: {exc}") from None


def _tau2_agent_view(raw: Sequence[Any], parsed: Sequence[Message]) -> list[Message]:
    """The agent's side of a tau2 simulation: its messages, the user's text, the results of its own calls."""
    view: list[Message] = []
    for message, original in zip(parsed, raw, strict=True):
        if message.role == "assistant":
            view.append(message)
        elif message.role == "user" and not message.tool_calls and message.has_text():
            view.append(message)
        elif message.role == "tool" and original.get("requestor") != "user":
            view.append(message)
    return view


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _read_tau2(path: Path, doc: Mapping[str, Any]) -> list[Trajectory]:
    info = _mapping(doc.get("info"))
    env_info = _mapping(info.get("environment_info"))
    domain = env_info.get("domain_name")
    if not isinstance(domain, str) or not domain:
        raise ExportError(f"{path}: tau2 Results without info.environment_info.domain_name")
    sims = doc.get("simulations")
    if sims is not None and not isinstance(sims, list):
        raise ExportError(f"{path}: simulations: expected a list of simulations, got {type(sims).__name__}")
    places = [f"{path}: simulations[{i}]" for i in range(len(sims or ()))]
    if not sims and (path.parent / "simulations").is_dir():
        files = sorted((path.parent / "simulations").glob("*.json"))
        sims, places = [load_json(f, ExportError) for f in files], [str(f) for f in files]
    out = []
    for sim, place in zip(sims or (), places, strict=True):
        if not isinstance(sim, Mapping):
            raise ExportError(f"{place}: expected a simulation object, got {type(sim).__name__}")
        task = _task_id(sim.get("task_id"), _at(place, "task_id"))
        raw, parsed = _messages(sim.get("messages"), _at(place, "messages"))
        reward = _reward(_mapping(sim.get("reward_info")).get("reward"), _at(place, "reward_info.reward"))
        view = _tau2_agent_view(raw, parsed)
        out.append(Trajectory(f"tau2/{domain}", task, reward, view, str(path), place, _at(place, "messages")))
    return out


def _read_tau_bench(path: Path, doc: Sequence[Any]) -> list[Trajectory]:
    out = []
    for i, entry in enumerate(doc):
        place = f"{path}: [{i}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("traj"), list):
            raise ExportError(f"{place} is not a tau-bench result with a traj")
        info = _mapping(entry.get("info"))
        source, task = info.get("domain"), info.get("id")
        if not isinstance(source, str) or not source.startswith("tau_bench/") or not isinstance(task, str):
            raise ExportError(
                f"{place} does not say its domain and split (info.domain, info.id '<split>/<index>', written by "
                "verl-rewards simulate); tau-bench's own files do not, so their tasks' splits are unknown"
            )
        _, parsed = _messages(entry["traj"], _at(place, "traj"))
        reward = _reward(entry.get("reward"), _at(place, "reward"))
        out.append(Trajectory(source, task, reward, parsed, str(path), place, _at(place, "traj")))
    return out


def _read_verl_dump(path: Path) -> ReadResults:
    """A verl generations dump (``trainer.validation_data_dir`` / ``rollout_data_dir``: one JSON object per line,
    ``input``, ``output``, ``score``, ``step`` and every reward extra): the conversations the contribution manager
    recorded in ``trajectory_json`` (``reward.reward_kwargs.record_trajectory=true``). The reward is the sample's
    ``base_score`` (the task reward, without contribution terms), else verl's ``score``."""
    from ..scoring.recorded import TRAJECTORY_KEY, read_trajectory_text

    read = ReadResults()
    for n, entry in json_lines(path, ExportError):
        line = f"{path}:{n}"
        if "input" not in entry or "output" not in entry:
            raise ExportError(f"{line}: not a verl generations dump line (no input/output)")
        if TRAJECTORY_KEY not in entry:
            raise ExportError(
                f"{path}: a verl dump without the {TRAJECTORY_KEY} column: its decoded input/output have no roles or "
                "tool calls. Run the validation with the contribution manager and "
                f"+reward.reward_kwargs.record_trajectory=true (it records each sample's conversation as "
                f"{TRAJECTORY_KEY}), then export the new dump"
            )
        try:
            payload = read_trajectory_text(entry[TRAJECTORY_KEY])
        except ValueError as exc:
            raise ExportError(f"{line}: {TRAJECTORY_KEY}: {exc}") from None
        if payload is None:
            read.unrecorded += 1  # the sample's loop recorded no messages, or they were over the size bound
            continue
        source = payload.get("data_source")
        if not isinstance(source, str) or not source.startswith((f"{TAU2}/", f"{TAU_BENCH}/")):
            raise ExportError(
                f"{line}: {TRAJECTORY_KEY}.data_source: {_shown(source)} is not tau2/<domain> or tau_bench/<domain>"
            )
        task = _task_id(payload.get("task_id"), f"{line}: {TRAJECTORY_KEY}.task_id")
        key = "base_score" if entry.get("base_score") is not None else "score"
        reward = _reward(entry.get(key), f"{line}: {key}")
        place = f"{line}: {TRAJECTORY_KEY}.messages"
        raw, parsed = _messages(payload["messages"], place)
        mode = str(payload.get("mode") or "normal")
        read.trajectories.append(
            Trajectory(
                source,
                task,
                reward,
                _tau2_agent_view(raw, parsed),
                line,
                f"{line}: {TRAJECTORY_KEY}",
                place,
                mode if mode in ("solo", "normal", "instruction") else "normal",
            )
        )
    if not read.trajectories:
        raise ExportError(
            f"{path}: no line carries a recorded tau2 / tau-bench conversation in {TRAJECTORY_KEY} ({read.unrecorded} "
            "without one: rows whose agent loop recorded no messages, or conversations over the size bound)"
        )
    return read
