"""One record per trial (:class:`Run`) and the per-source statistics tau2 reports (:func:`summarize`).

The statistics follow tau2-bench ``src/tau2/metrics/agent_metrics.py`` (``get_metrics_df`` / ``compute_metrics``):
runs that never happened (termination ``infrastructure_error``) are left out; trials are grouped by task; k runs
up to the smallest number of trials any task has (and never past the expected number of trials); a trial is a
success by the source's :class:`~verl_rewards.evaluation.passk.SuccessRule`.

Rows scored by our tau2 reward carry the reward extras ``termination``, ``tau2_basis``, ``db_match``,
``tau2_<component>`` and the gold-action counts ``tau2_{read,write}_{actions,correct}``; :func:`run_from_extras`
turns such a row (a verl dump row or one sample of verl's validation columns) into a :class:`Run`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.termination import SCORED_STOPS, TerminationReason
from ..scoring.extras import present_columns
from .passk import SuccessRule, pass_at_ks, pass_hat_ks

INFRA_ERROR = str(TerminationReason.INFRASTRUCTURE_ERROR)
SCORED_TERMINATIONS = SCORED_STOPS
#: the extra carrying the task reward (the scoring function's score, before ``beta * contrib``)
TASK_REWARD_KEYS = ("base_score", "reward", "score")
#: extras that are bookkeeping, not components of the reward
NOT_COMPONENTS = frozenset(
    {
        "base_score",
        "contrib",
        "reward",
        "score",
        "reward_error",
        "reward_timeout",
        "step",
        "db_match",
        "tau2_read_actions",
        "tau2_read_correct",
        "tau2_write_actions",
        "tau2_write_correct",
    }
)
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_MAX_BASIS_LEN = 200


class EvalError(ValueError):
    """Input that cannot be evaluated (empty, malformed, ungroupable, too few trials for the requested k)."""


@dataclass
class Run:
    """One trial of one task."""

    source: str
    task: str
    reward: float | None
    termination: str | None = None
    #: scored components: tau2's reward breakdown (lower-case names), or other sources' numeric extras
    components: dict[str, float] = field(default_factory=dict)
    db_match: bool | None = None
    #: gold actions by tool kind: ``{"read": (correct, count), "write": (correct, count)}``
    actions: dict[str, tuple[int, int]] = field(default_factory=dict)
    reward_error: bool = False


@dataclass
class SourceSummary:
    """tau2-style statistics of one data source."""

    source: str
    reward_key: str
    num_tasks: int
    num_trials: int
    infra_errors: int
    reward_errors: int
    task_reward: float | None
    success_rule: str | None
    pass_k: dict[int, float]
    min_trials: int
    max_trials: int
    expected_trials: int
    termination: dict[str, float]
    db_match_rate: float | None
    action_accuracy: dict[str, float]
    components: dict[str, float]
    warnings: list[str] = field(default_factory=list)
    pass_at_k: dict[int, float] = field(default_factory=dict)

    def metrics(self) -> dict[str, float]:
        """Flat ``{name: value}``: ``pass^k`` (all k trials succeed), ``pass@k`` (at least one does),
        ``task_reward``, ``termination/<reason>``, ``db_match_rate``,
        ``action_<kind>_accuracy``, ``component/<name>``, ``num_tasks``, ``num_trials``."""
        out: dict[str, float] = {"num_tasks": float(self.num_tasks), "num_trials": float(self.num_trials)}
        if self.task_reward is not None:
            out["task_reward"] = self.task_reward
        out.update({f"pass^{k}": v for k, v in self.pass_k.items()})
        out.update({f"pass@{k}": v for k, v in self.pass_at_k.items()})
        if self.infra_errors:
            out["infra_errors"] = float(self.infra_errors)
        if self.reward_errors:
            out["reward_errors"] = float(self.reward_errors)
        out.update({f"termination/{r}": v for r, v in self.termination.items()})
        if self.db_match_rate is not None:
            out["db_match_rate"] = self.db_match_rate
        out.update({f"action_{kind}_accuracy": v for kind, v in self.action_accuracy.items()})
        out.update({f"component/{name}": v for name, v in self.components.items()})
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "reward_key": self.reward_key,
            "success_rule": self.success_rule,
            "num_tasks": self.num_tasks,
            "num_trials": self.num_trials,
            "infra_errors": self.infra_errors,
            "reward_errors": self.reward_errors,
            "min_trials": self.min_trials,
            "max_trials": self.max_trials,
            "expected_trials": self.expected_trials,
            "task_reward": self.task_reward,
            "pass_k": {str(k): v for k, v in self.pass_k.items()},
            "pass_at_k": {str(k): v for k, v in self.pass_at_k.items()},
            "termination": dict(self.termination),
            "db_match_rate": self.db_match_rate,
            "action_accuracy": dict(self.action_accuracy),
            "components": dict(self.components),
            "warnings": list(self.warnings),
        }


def summarize(
    source: str,
    runs: Iterable[Run],
    rule: SuccessRule | None,
    *,
    expected_trials: int | None = None,
    k: int | None = None,
    reward_key: str = "base_score",
) -> SourceSummary:
    """Statistics of one source. ``k`` asks for pass^1..k and raises :class:`EvalError` when a task has fewer
    trials; without it k runs up to ``min(expected_trials, fewest trials of any task)`` with a warning when that
    is below ``expected_trials``. ``rule=None`` reports no pass^k (mean reward only)."""
    all_runs = list(runs)
    infra = sum(1 for r in all_runs if r.termination == INFRA_ERROR)
    evaluated = [r for r in all_runs if r.termination != INFRA_ERROR]
    warnings: list[str] = []
    if infra:
        warnings.append(f"{infra} run(s) ended in {INFRA_ERROR} and are left out")
    by_task: dict[str, list[Run]] = {}
    for run in evaluated:
        by_task.setdefault(run.task, []).append(run)
    counts = [len(v) for v in by_task.values()]
    min_trials, max_trials = (min(counts), max(counts)) if counts else (0, 0)
    expected = int(expected_trials) if expected_trials else max_trials

    pass_k: dict[int, float] = {}
    pass_at: dict[int, float] = {}
    if rule is not None and by_task:
        if k is not None:
            if k < 1:
                raise EvalError(f"k must be at least 1, got {k}")
            short = [(t, len(v)) for t, v in by_task.items() if len(v) < k]
            if short:
                task, n = min(short, key=lambda item: item[1])
                raise EvalError(
                    f"{source}: pass^{k} needs at least {k} trials per task, but task {task!r} has {n} "
                    f"({len(short)} task(s) have fewer than {k}); use a smaller --k"
                )
            max_k = k
        else:
            max_k = min(expected, min_trials)
            if min_trials < expected:
                task = min(by_task, key=lambda t: len(by_task[t]))
                than = f"the expected {expected}" if expected_trials else f"another task's {max_trials}"
                warnings.append(
                    f"task {task!r} has only {min_trials} trial(s), fewer than {than}: "
                    f"pass^k is reported up to k={max_k}"
                )
        successes = {t: [rule(r.reward) for r in v] for t, v in by_task.items()}
        pass_k = pass_hat_ks(successes, max_k)
        pass_at = pass_at_ks(successes, max_k)

    rewards = [r.reward for r in evaluated if r.reward is not None and math.isfinite(r.reward)]
    terminated = [r.termination for r in evaluated if r.termination]
    termination = {t: terminated.count(t) / len(terminated) for t in sorted(set(terminated))}
    db = [r.db_match for r in evaluated if r.db_match is not None]
    action_accuracy: dict[str, float] = {}
    for kind in ("read", "write"):
        correct = sum(r.actions[kind][0] for r in evaluated if kind in r.actions)
        total = sum(r.actions[kind][1] for r in evaluated if kind in r.actions)
        if total:
            action_accuracy[kind] = correct / total
    components: dict[str, list[float]] = {}
    for run in evaluated:
        for name, value in run.components.items():
            components.setdefault(name, []).append(value)
    return SourceSummary(
        source=source,
        reward_key=reward_key,
        num_tasks=len(by_task),
        num_trials=len(evaluated),
        infra_errors=infra,
        reward_errors=sum(1 for r in evaluated if r.reward_error),
        task_reward=math.fsum(rewards) / len(rewards) if rewards else None,
        success_rule=rule.describe() if rule is not None else None,
        pass_k=pass_k,
        min_trials=min_trials,
        max_trials=max_trials,
        expected_trials=expected,
        termination=termination,
        db_match_rate=sum(db) / len(db) if db else None,
        action_accuracy=action_accuracy,
        components={n: math.fsum(v) / len(v) for n, v in sorted(components.items())},
        warnings=warnings,
        pass_at_k=pass_at,
    )


# ----------------------------------------------------------------------------------- rows -> runs
def number(value: Any) -> float | None:
    """A finite float from a number or numpy scalar (``bool`` counts as 0/1); anything else is ``None``."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        try:
            out = float(value)
        except OverflowError:  # an integer beyond any float
            return None
        return out if math.isfinite(out) else None
    return None


def name_of(value: Any) -> str | None:
    """A termination reason / component name (letters, digits, ``_``); fill values such as ``0.0`` are ``None``."""
    value = getattr(value, "value", value)
    if isinstance(value, str) and _NAME.fullmatch(value.strip()):
        return value.strip().lower()
    return None


def task_reward_of(extras: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """The task reward of a row and the key it came from (the first numeric of :data:`TASK_REWARD_KEYS`)."""
    for key in TASK_REWARD_KEYS:
        value = number(extras.get(key))
        if value is not None:
            return value, key
    return None, None


def reported_extras(extras: Mapping[str, Any]) -> dict[str, Any]:
    """A row's extras without the placeholders of keys it did not report, undeclared components unpacked
    (the layout of :mod:`verl_rewards.scoring.extras`)."""
    columns = present_columns({k: [v] for k, v in extras.items()})
    return {k: v[0] for k, v in columns.items() if v}


def run_from_extras(source: str, task: str, extras: Mapping[str, Any], *, generic_components: bool) -> Run:
    """A :class:`Run` from one row's reward extras (see the module doc).

    tau2 rows (a valid ``termination``) give termination, DB match, action counts and the components named in
    ``tau2_basis``; with ``generic_components`` other rows report their numeric extras as components.
    """
    extras = reported_extras(extras)
    reward, _ = task_reward_of(extras)
    error = any((number(extras.get(k)) or 0.0) >= 0.5 for k in ("reward_error", "reward_timeout"))
    run = Run(source=source, task=task, reward=reward, reward_error=error)
    termination = name_of(extras.get("termination"))
    basis = extras.get("tau2_basis")
    if termination is not None:
        run.termination = termination
        db = number(extras.get("db_match"))  # tau2 checks the DB only after an agent or user stop
        run.db_match = None if db is None or termination not in SCORED_TERMINATIONS else db >= 0.5
        for kind in ("read", "write"):
            count = number(extras.get(f"tau2_{kind}_actions"))
            correct = number(extras.get(f"tau2_{kind}_correct"))
            if count is not None and correct is not None and count > 0:
                run.actions[kind] = (int(correct), int(count))
    if isinstance(basis, str) and len(basis) <= _MAX_BASIS_LEN and termination is not None:
        for comp in filter(None, (name_of(c) for c in basis.split(","))):
            value = number(extras.get(f"tau2_{comp}"))
            if value is not None:
                run.components[comp] = value
    elif generic_components:
        for key, value in extras.items():
            num = number(value)
            if num is not None and key not in NOT_COMPONENTS and not str(key).startswith("tau2_"):
                run.components[str(key)] = num
    return run
