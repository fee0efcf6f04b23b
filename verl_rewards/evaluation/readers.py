"""Readers for ``verl-rewards eval``: verl's JSONL dumps and tau2-bench's ``Results`` JSON, as :class:`EvalSet`.

**verl dumps** (``trainer.validation_data_dir`` / ``trainer.rollout_data_dir``, one ``<step>.jsonl`` per step,
written by ``_dump_generations``): rows ``{"input", "output", "gts", "score", "step", ...}`` plus, in validation
dumps, every reward extra (``reward``, ``base_score``, ``contrib``, our tau2 extras...). Trials are grouped by

1. ``uid`` — V1 dumps write ``<prompt uid>_<session>_<output index>``: the prompt uid is the task, and a
   session with several outputs (multi-output agent loops) is one trial, its last output kept (as V1's own
   validation metrics do);
2. else ``task_id`` (a column or ``extra_info.task_id``);
3. else the prompt text and ground truth (``input`` + ``gts``): legacy-trainer dumps carry no uid, and the trials
   of one prompt share its text (rows repeated by ``repeat(interleave=True)``). Two validation rows with the same
   prompt and ground truth therefore count as one task with 2N trials, as tau2 groups by task id.

The task reward is ``base_score`` (the scoring function's score, before ``beta * contrib``), else ``reward``,
else ``score`` (the total; a note says so). verl's dumps carry no ``data_source``: rows are labelled by their
``data_source`` field if present, else ``--data-source``, else ``unknown``.

**tau2 Results** (``tau2 run`` output: ``{"info", "tasks", "simulations"}``, or the folder format with
``results.json`` next to ``simulations/*.json``): one run per simulation, source ``tau2/<domain>``.

**tau-bench results** (the JSON list tau-bench's ``run.py`` writes, and ``verl-rewards simulate --domain
tau_bench/<domain>``): one run per ``EnvRunResult`` ``{task_id, reward, info, trial}``; success is a reward of 1 (within
1e-6), as tau-bench's ``display_metrics`` counts it. Source: ``info.domain`` (written by ``simulate``), else
``--data-source``, else ``tau_bench``; task: ``info.id`` (``"<split>/<index>"``), else ``task_id``; components:
``r_actions`` / ``r_outputs`` of ``info.reward_info.info``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..json_files import json_lines, load_json
from .runs import EvalError, Run, name_of, number, run_from_extras, task_reward_of

_MAX_UID = 512


@dataclass
class EvalSet:
    """The runs of one input (one step of a dump folder, or one tau2 results file)."""

    label: str
    step: int | None
    runs: dict[str, list[Run]] = field(default_factory=dict)
    expected_trials: dict[str, int] = field(default_factory=dict)
    reward_keys: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    @property
    def reward_key(self) -> str:
        return ",".join(sorted(self.reward_keys)) or "-"


def read_inputs(paths: Iterable[str | Path], data_source: str | None = None) -> list[EvalSet]:
    """Every :class:`EvalSet` of ``paths`` (files or folders), in the order given and by step within a folder."""
    out: list[EvalSet] = []
    for path in paths:
        out.extend(read_path(Path(path), data_source))
    if not out:
        raise EvalError("no input given")
    return out


def read_path(path: Path, data_source: str | None = None) -> list[EvalSet]:
    if not path.exists():
        raise EvalError(f"{path}: no such file or folder")
    if path.is_dir():
        if (path / "results.json").is_file():
            return [read_tau2_results(path / "results.json")]
        dumps = sorted(path.glob("*.jsonl"), key=_step_sort_key)
        if dumps:
            return [s for f in dumps for s in read_dump(f, data_source)]
        results = sorted(path.glob("*.json"))
        if results:
            return [read_results(f, data_source) for f in results]
        raise EvalError(f"{path}: no verl dump (*.jsonl) or tau2 / tau-bench results (*.json) in this folder")
    if path.suffix == ".json":
        return [read_results(path, data_source)]
    return read_dump(path, data_source)


def read_results(path: Path, data_source: str | None = None) -> EvalSet:
    """A results file: tau-bench's list of runs, or tau2's ``Results`` object."""
    doc = load_json(path, EvalError)
    if isinstance(doc, list):
        return read_tau_bench_results(path, doc, data_source)
    return read_tau2_results(path, doc=doc)  # tau2 results name their domain


def _step_sort_key(path: Path) -> tuple[int, int | str]:
    return (0, int(path.stem)) if path.stem.isdigit() else (1, path.stem)


# ------------------------------------------------------------------------------------------ verl dumps
def group_key(row: Mapping[str, Any]) -> tuple[str, str | None, int] | None:
    """``(task, session, output index)`` of a dump row (see the module doc), or ``None`` without any key."""
    uid = row.get("uid")
    if isinstance(uid, str) and uid and len(uid) <= _MAX_UID:
        parts = uid.rsplit("_", 2)
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            return parts[0], f"{parts[0]}_{parts[1]}", int(parts[2])
        return uid, None, 0
    extra = row.get("extra_info")
    task_id = row.get("task_id")
    if task_id is None and isinstance(extra, Mapping):
        task_id = extra.get("task_id")
    if isinstance(task_id, str | int) and not isinstance(task_id, bool) and str(task_id):
        return f"task:{task_id}", None, 0
    text = row.get("input")
    if isinstance(text, str):
        gts = json.dumps(row.get("gts"), sort_keys=True, default=str)
        digest = hashlib.sha256(text.encode("utf-8", "replace") + b"\0" + gts.encode("utf-8", "replace"))
        return f"prompt:{digest.hexdigest()[:20]}", None, 0
    return None


def read_dump(path: Path, data_source: str | None = None) -> list[EvalSet]:
    """One :class:`EvalSet` per ``step`` found in a verl JSONL dump."""
    file_step = int(path.stem) if path.stem.isdigit() else None
    sets: dict[int | None, EvalSet] = {}
    sessions: dict[tuple[int | None, str], tuple[int, Run, EvalSet]] = {}
    plain: list[tuple[EvalSet, Run]] = []
    has_contrib = False
    for line_no, row in json_lines(path, EvalError):
        key = group_key(row)
        if key is None:
            raise EvalError(
                f"{path}:{line_no}: no grouping key: a row needs `uid` (V1 dumps), `task_id` / `extra_info.task_id`, "
                "or `input` (the prompt text, legacy-trainer dumps)"
            )
        task, session, index = key
        reward, reward_key = task_reward_of(row)
        if reward_key is None:
            raise EvalError(f"{path}:{line_no}: no numeric task reward: expected `base_score`, `reward` or `score`")
        step_value = number(row.get("step"))
        step = int(step_value) if step_value is not None else file_step
        source = row.get("data_source") if isinstance(row.get("data_source"), str) else (data_source or "unknown")
        eval_set = sets.get(step)
        if eval_set is None:
            label = str(path) if step is None else f"{path} (step {step})"
            eval_set = sets[step] = EvalSet(label=label, step=step)
        eval_set.reward_keys.add(reward_key)
        has_contrib = has_contrib or bool(number(row.get("contrib")))
        run = run_from_extras(str(source), task, row, generic_components=True)
        if session is None:
            plain.append((eval_set, run))
        else:
            seen = sessions.get((step, session))
            if seen is None or index > seen[0]:
                sessions[(step, session)] = (index, run, eval_set)
    if not sets:
        raise EvalError(f"{path}: empty (no JSON rows)")
    for eval_set, run in plain + [(s, r) for _, r, s in sessions.values()]:
        eval_set.runs.setdefault(run.source, []).append(run)
    for eval_set in sets.values():
        if eval_set.reward_keys & {"reward", "score"} and (has_contrib or "base_score" not in eval_set.reward_keys):
            eval_set.notes.append(
                "some rows carry no `base_score`: their task reward is the total (`reward` / `score`), which "
                "includes beta * contrib when the contribution term is on"
            )
        if all(s == "unknown" for s in eval_set.runs) and data_source is None:
            eval_set.notes.append(
                "verl dumps carry no data_source: label them with --data-source (e.g. tau2/airline) to get the "
                "tau2 success rule, or set --success-threshold"
            )
    return [sets[s] for s in sorted(sets, key=lambda s: (s is None, s or 0))]


# ------------------------------------------------------------------------------------------ tau2 results
def read_tau2_results(path: Path, data_source: str | None = None, doc: Any = None) -> EvalSet:
    """One :class:`EvalSet` from a tau2-bench ``Results`` file (monolithic or folder format)."""
    doc = load_json(path, EvalError) if doc is None else doc
    if not isinstance(doc, dict) or "tasks" not in doc or "info" not in doc:
        raise EvalError(f"{path}: not a tau2 Results file (expected the keys `info`, `tasks` and `simulations`)")
    sims = doc.get("simulations") or []
    sims_dir = path.parent / "simulations"
    if not sims and sims_dir.is_dir():
        sims = [load_json(f, EvalError) for f in sorted(sims_dir.glob("*.json"))]
    if not isinstance(sims, list) or not sims:
        raise EvalError(f"{path}: the results hold no simulations")
    info: dict[str, Any] = doc["info"] if isinstance(doc.get("info"), dict) else {}
    env_info: dict[str, Any] = info["environment_info"] if isinstance(info.get("environment_info"), dict) else {}
    domain = env_info.get("domain_name")
    source = data_source or (f"tau2/{domain}" if isinstance(domain, str) and domain else "tau2")
    eval_set = EvalSet(label=str(path), step=None, reward_keys={"reward_info.reward"})
    trials = number(info.get("num_trials"))
    if trials is not None and trials >= 1:
        eval_set.expected_trials[source] = int(trials)
    runs = eval_set.runs.setdefault(source, [])
    for i, sim in enumerate(sims):
        if not isinstance(sim, dict):
            raise EvalError(f"{path}: simulations[{i}] is not an object")
        task_id = sim.get("task_id")
        if not isinstance(task_id, str | int) or isinstance(task_id, bool) or str(task_id) == "":
            raise EvalError(f"{path}: simulations[{i}] has no task_id (the grouping key)")
        reward_info = sim.get("reward_info")
        raw = reward_info.get("reward") if isinstance(reward_info, dict) else None
        if raw is not None and number(raw) is None:  # absent is tau2's "not scored"; present must be a number
            raise EvalError(
                f"{path}: simulations[{i}] (task {task_id}) has reward {str(raw)[:40]!r}, not a finite number"
            )
        runs.append(run_from_simulation(source, str(task_id), sim))
    return eval_set


def run_from_simulation(source: str, task: str, sim: Mapping[str, Any]) -> Run:
    """A :class:`Run` from one tau2 ``SimulationRun`` (as ``compute_metrics`` reads it)."""
    info: dict[str, Any] = sim["reward_info"] if isinstance(sim.get("reward_info"), dict) else {}
    termination = name_of(sim.get("termination_reason"))
    run = Run(source=source, task=task, reward=number(info.get("reward")), termination=termination)
    db_check = info.get("db_check")
    if isinstance(db_check, dict) and "db_match" in db_check:
        run.db_match = bool(db_check["db_match"])
    for check in info.get("action_checks") or []:
        if isinstance(check, dict) and check.get("tool_type") in ("read", "write"):
            correct, count = run.actions.get(check["tool_type"], (0, 0))
            run.actions[check["tool_type"]] = (correct + bool(check.get("action_match")), count + 1)
    breakdown = info.get("reward_breakdown")
    if isinstance(breakdown, dict):
        for name, value in breakdown.items():
            comp, num = name_of(name), number(value)
            if comp is not None and num is not None:
                run.components[comp] = num
    return run


# ------------------------------------------------------------------------------------------ tau-bench results
def read_tau_bench_results(path: Path, doc: list[Any], data_source: str | None = None) -> EvalSet:
    """One :class:`EvalSet` from a tau-bench results list (see the module doc)."""
    if not doc:
        raise EvalError(f"{path}: the results list is empty")
    eval_set = EvalSet(label=str(path), step=None, reward_keys={"reward"})
    trials: dict[str, int] = {}
    for i, entry in enumerate(doc):
        if not isinstance(entry, dict):
            raise EvalError(f"{path}: [{i}] is not an object (expected tau-bench's {{task_id, reward, info, trial}})")
        info: dict[str, Any] = entry["info"] if isinstance(entry.get("info"), dict) else {}
        domain = info.get("domain")
        source = domain if isinstance(domain, str) and domain.startswith("tau_bench/") else (data_source or "tau_bench")
        task = info.get("id") if isinstance(info.get("id"), str) and info.get("id") else entry.get("task_id")
        if not isinstance(task, str | int) or isinstance(task, bool) or str(task) == "":
            raise EvalError(f"{path}: [{i}] has no task_id (the grouping key)")
        reward = number(entry.get("reward"))
        if reward is None:
            raise EvalError(f"{path}: [{i}] (task {task}) has no numeric reward")
        run = Run(source=source, task=str(task), reward=reward, termination=name_of(info.get("termination")))
        reward_info: dict[str, Any] = info["reward_info"] if isinstance(info.get("reward_info"), dict) else {}
        parts: dict[str, Any] = reward_info["info"] if isinstance(reward_info.get("info"), dict) else {}
        for name in ("r_actions", "r_outputs"):
            value = number(parts.get(name))
            if value is not None:
                run.components[name] = value
        eval_set.runs.setdefault(source, []).append(run)
        settings: dict[str, Any] = info["run"] if isinstance(info.get("run"), dict) else {}
        expected = number(settings.get("num_trials"))
        trial = number(entry.get("trial"))
        if expected is not None and expected >= 1:
            trials[source] = max(trials.get(source, 0), int(expected))
        elif trial is not None:
            trials[source] = max(trials.get(source, 0), int(trial) + 1)
    eval_set.expected_trials.update(trials)
    return eval_set
