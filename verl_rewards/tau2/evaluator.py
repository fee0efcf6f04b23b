"""tau2's evaluator (``evaluate_simulation`` with evaluation type ALL), for RL: :func:`evaluate_trajectory`.

Order of operations:

1. **Termination gate.** Only ``"agent_stop"`` and ``"user_stop"`` are scored; any other reason (``max_steps``,
   ``too_many_errors``, ``timeout``, ``agent_error`` ...) gives reward 0.0 with ``reward_basis=None``.
2. A task without ``evaluation_criteria`` gives 1.0.
3. Components (each in :mod:`verl_rewards.tau2.evaluators`):

   * ENV: when the task has neither ``actions`` nor ``env_assertions`` it passes (``db_match=True``). Otherwise the
     trajectory's mutating calls are replayed on a fresh env with the task's initial state and compared with the
     cached gold state (agent and user DB) → DB; the env assertions run on the replayed env → ENV_ASSERTION
     (only when ENV_ASSERTION is in the basis; see ``assertion_errors``).
   * ACTION and COMMUNICATE are always computed (cheap) and reported; they count only when in the basis.
   * NL_ASSERTION runs only when in the basis, through ``judge``. Without a judge and with assertions to judge,
     :class:`NLJudgeRequiredError` is raised unless ``nl_policy="skip"``: then NL_ASSERTION is left out of the
     product and of ``breakdown`` and listed in ``skipped``.

4. ``reward`` = product of the basis components; ``breakdown`` maps each basis component to its 0/1 value.

``reward_basis`` (a list of component names) overrides the task's basis. ``messages`` may or may not start with
the task's initial ``message_history``: the evaluator recognises the prefix, replays the history once, and scores
ACTION / COMMUNICATE / NL on the full trajectory (history included), as tau2 does.
Trajectory format: :mod:`verl_rewards.engine.trajectory`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.environment import Environment
from ..engine.termination import SCORED_STOPS, TAU2_REASONS, TerminationReason
from ..engine.trajectory import parse_messages, strip_history
from .domain import Domain, as_domain
from .errors import NLJudgeRequiredError
from .evaluators.action import check_actions
from .evaluators.common import ComponentResult, predicted_env
from .evaluators.communicate import check_communicate
from .evaluators.db import check_db
from .evaluators.env_assertions import check_env_assertions
from .evaluators.nl_assertions import Judge, check_nl_assertions
from .tasks import ACTION, COMMUNICATE, DB, ENV_ASSERTION, NL_ASSERTION, REWARD_TYPES

SCORED_TERMINATIONS = SCORED_STOPS
#: every termination reason tau2 records (``TerminationReason`` in tau2-bench ``src/tau2/data_model/simulation.py``)
TERMINATION_REASONS = TAU2_REASONS
NL_POLICIES = ("require", "skip")


@dataclass
class EvaluationResult:
    """The outcome of :func:`evaluate_trajectory`.

    ``reward`` and ``breakdown`` ({component: 0.0/1.0}, basis components only) are what training uses;
    ``db_match`` is None when the env was not evaluated. The ``*_checks`` lists, ``replay`` and
    ``gold_replay_errors`` explain the verdict. ``predicted_env`` / ``gold_env`` are kept for inspection
    (``hashes()`` computes the full tau2 hashes on demand).
    """

    task_id: str
    reward: float
    breakdown: dict[str, float]
    db_match: bool | None
    reward_basis: tuple[str, ...] | None
    termination: str
    skipped: tuple[str, ...] = ()
    note: str | None = None
    agent_db_match: bool | None = None
    user_db_match: bool | None = None
    env_assertion_checks: list[dict[str, Any]] = field(default_factory=list)
    action_checks: list[dict[str, Any]] = field(default_factory=list)
    communicate_checks: list[dict[str, Any]] = field(default_factory=list)
    nl_checks: list[dict[str, Any]] = field(default_factory=list)
    replay: dict[str, Any] | None = None
    gold_replay_errors: list[dict[str, Any]] = field(default_factory=list)
    predicted_env: Environment | None = field(default=None, repr=False, compare=False)
    gold_env: Environment | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["predicted_env"] = state["gold_env"] = None  # environments stay local (they view the whole DB)
        return state

    def hashes(self) -> dict[str, str | None]:
        """Full tau2 hashes of the predicted and gold agent/user DBs (O(DB size); for debugging)."""
        out: dict[str, str | None] = {}
        for side, env in (("predicted", self.predicted_env), ("gold", self.gold_env)):
            out[f"{side}_db_hash"] = None if env is None else env.get_data_hash()
            out[f"{side}_user_db_hash"] = None if env is None else env.get_user_data_hash()
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (without the environments)."""
        return {
            "task_id": self.task_id,
            "reward": self.reward,
            "breakdown": dict(self.breakdown),
            "db_match": self.db_match,
            "agent_db_match": self.agent_db_match,
            "user_db_match": self.user_db_match,
            "reward_basis": None if self.reward_basis is None else list(self.reward_basis),
            "termination": self.termination,
            "skipped": list(self.skipped),
            "note": self.note,
            "env_assertion_checks": self.env_assertion_checks,
            "action_checks": self.action_checks,
            "communicate_checks": self.communicate_checks,
            "nl_checks": self.nl_checks,
            "replay": self.replay,
            "gold_replay_errors": self.gold_replay_errors,
        }


def normalize_termination(termination: Any) -> str:
    """Lower-case name of a termination reason (accepts strings and enums such as tau2's)."""
    value = getattr(termination, "value", termination)
    if not isinstance(value, str) or not value:
        raise ValueError(f"termination must be a non-empty string such as 'agent_stop', got {termination!r}")
    return value.strip().lower()


def normalize_basis(basis: Sequence[str]) -> tuple[str, ...]:
    """Validate a reward basis override (names from ``REWARD_TYPES``, case-insensitive, duplicates dropped)."""
    if isinstance(basis, str):
        basis = [basis]
    out: list[str] = []
    for item in basis:
        name = str(getattr(item, "value", item)).strip().upper()
        if name not in REWARD_TYPES:
            raise ValueError(f"unknown reward type {item!r}; expected some of {list(REWARD_TYPES)}")
        if name not in out:
            out.append(name)
    return tuple(out)


def evaluate_trajectory(
    domain: Domain | str,
    task_id: Any,
    messages: Sequence[Any],
    termination: Any = TerminationReason.AGENT_STOP,
    reward_basis: Sequence[str] | None = None,
    *,
    judge: Judge | None = None,
    nl_policy: str = "require",
    assertion_errors: str = "raise",
    strict_replay: bool = False,
    solo_mode: bool = False,
) -> EvaluationResult:
    """Score one trajectory of ``task_id`` the way tau2's evaluator does (see the module doc).

    ``assertion_errors``: ``"raise"`` (default) raises :class:`EnvAssertionError` when an env assertion cannot
    be evaluated; ``"zero"`` scores it as unmet. ``strict_replay=True`` raises :class:`ReplayMismatchError` when
    a replayed mutating call does not reproduce its recorded tool message (tau2's ``strict``); by default the
    mismatch is only reported in ``replay["mismatches"]``. ``solo_mode=True`` replays the trajectory as tau2's
    solo mode does: agent calls of user tools act on the user toolkit, user tool calls are refused.
    """
    if nl_policy not in NL_POLICIES:
        raise ValueError(f"nl_policy must be one of {NL_POLICIES}, got {nl_policy!r}")
    dom = as_domain(domain)
    task = dom.task(task_id)
    parsed = parse_messages(messages)
    term = normalize_termination(termination)
    criteria = task.evaluation_criteria
    basis = normalize_basis(reward_basis) if reward_basis is not None else None

    if term not in SCORED_TERMINATIONS:
        return EvaluationResult(
            task_id=task.id,
            reward=0.0,
            breakdown={},
            db_match=None,
            reward_basis=None,
            termination=term,
            note=f"Simulation terminated prematurely. Termination reason: {term}",
        )
    if criteria is None:
        return EvaluationResult(
            task_id=task.id,
            reward=1.0,
            breakdown={},
            db_match=None,
            reward_basis=None,
            termination=term,
            note="No evaluation criteria",
        )
    if basis is None:
        basis = criteria.reward_basis

    nl_needed = NL_ASSERTION in basis and bool(criteria.nl_assertions)
    skipped: tuple[str, ...] = ()
    if nl_needed and judge is None:
        if nl_policy == "skip":
            skipped = (NL_ASSERTION,)
        else:
            raise NLJudgeRequiredError(
                f"task {task.id!r}: reward basis {list(basis)} includes NL_ASSERTION but no judge was given; "
                "pass judge=callable(messages, assertions) -> list[bool], or nl_policy='skip' to leave NL out"
            )

    body = strip_history(parsed, task.history)
    full = [m for m in task.history if m.role not in ("system", "developer")] + body

    result = EvaluationResult(
        task_id=task.id, reward=1.0, breakdown={}, db_match=None, reward_basis=basis, termination=term, skipped=skipped
    )

    # ENV: DB + ENV_ASSERTION
    if criteria.actions is None and criteria.env_assertions is None:
        db_reward, ea_reward = 1.0, 1.0
        result.db_match = result.agent_db_match = result.user_db_match = True
        result.note = "No expected actions or env assertions"
    else:
        env, report = predicted_env(dom, task, body, strict=strict_replay, solo_mode=solo_mode)
        result.predicted_env, result.replay = env, report
        db = check_db(dom, task, body, predicted=env)
        db_reward = db.reward
        result.db_match = db.details["db_match"]
        result.agent_db_match = db.details["agent_db_match"]
        result.user_db_match = db.details["user_db_match"]
        result.gold_replay_errors = db.details["gold_replay_errors"]
        result.gold_env = dom.gold_env(task.id)[0]
        ea_reward = 1.0
        if ENV_ASSERTION in basis:
            ea = check_env_assertions(task, env, on_error=assertion_errors)
            ea_reward, result.env_assertion_checks = ea.reward, ea.checks

    action = check_actions(task, full, dom.tool_kinds())
    communicate = check_communicate(task, full)
    result.action_checks, result.communicate_checks = action.checks, communicate.checks
    nl = ComponentResult(reward=1.0)
    if NL_ASSERTION in basis and not skipped:
        nl = check_nl_assertions(task, full, judge)
        result.nl_checks = nl.checks

    values = {DB: db_reward, ENV_ASSERTION: ea_reward, ACTION: action.reward, COMMUNICATE: communicate.reward}
    values[NL_ASSERTION] = nl.reward
    reward = 1.0
    for name in basis:
        if name in skipped:
            continue
        result.breakdown[name] = values[name]
        reward *= values[name]
    result.reward = reward
    return result
