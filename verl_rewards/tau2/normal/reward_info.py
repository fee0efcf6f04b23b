"""tau2's ``RewardInfo`` of one evaluated trajectory, as ``evaluate_simulation(..., EvaluationType.ALL)`` builds it
(``src/tau2/evaluator/evaluator.py``): the checks of every component, ``[]`` / null where tau2 writes them, the
component notes in ``info``, communicate justifications in tau2's words, NL justifications from the judge. Checked
field by field against tau2's own evaluator (``tests/data/reference/tau2_trajectories.json``, ``tau2_runs.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...engine.termination import SCORED_STOPS
from ...engine.trajectory import parse_messages
from ..evaluator import EvaluationResult
from ..evaluators.env_assertions import check_env_assertions


def _action_dump(raw: dict[str, Any]) -> dict[str, Any]:
    """A gold action as tau2's ``Action.model_dump()`` writes it (defaults filled, in its field order)."""
    return {
        "action_id": raw.get("action_id"),
        "requestor": raw.get("requestor") or "assistant",
        "name": raw.get("name"),
        "arguments": raw.get("arguments") or {},
        "info": raw.get("info"),
        "compare_args": raw.get("compare_args"),
    }


def _assertion_dump(raw: dict[str, Any]) -> dict[str, Any]:
    """An env assertion as tau2's ``EnvAssertion.model_dump()`` writes it."""
    return {
        "env_type": raw.get("env_type"),
        "func_name": raw.get("func_name"),
        "arguments": raw.get("arguments") or {},
        "assert_value": raw.get("assert_value", True),
        "message": raw.get("message"),
    }


def _communicated_in(info: str, trajectory: list[dict[str, Any]]) -> str | None:
    """The first agent text that tau2's COMMUNICATE check finds ``info`` in (its text as sent), else None."""
    needle = info.lower()
    for m in parse_messages(trajectory):
        if m.role == "assistant" and m.has_text() and needle in str(m.content).lower().replace(",", ""):
            return str(m.content)
    return None


def reward_info(
    task: Any,
    result: EvaluationResult,
    trajectory: list[dict[str, Any]] | None = None,
    reasons: Sequence[str] = (),
    judged: Sequence[tuple[str, bool, str]] | None = None,
) -> dict[str, Any]:
    """tau2's ``RewardInfo`` of an evaluation, as ``evaluate_simulation(..., EvaluationType.ALL)`` builds it
    (``src/tau2/evaluator/evaluator.py``): the same checks, ``[]`` / null where tau2 writes them, the component
    notes in ``info`` (``{"env", "nl", "communicate", "action"}``), communicate justifications in tau2's words,
    NL justifications from the judge's ``reasoning`` (``reasons``, in assertion order). ``judged``: the judge's
    results as tau2 reads them (``(expectedOutcome, met, reasoning)``, :func:`~.judge.tau2_judgements`), which then
    are the NL checks, as in tau2."""
    empty = {
        "db_check": None,
        "env_assertions": None,
        "action_checks": None,
        "nl_assertions": None,
        "communicate_checks": None,
    }
    criteria = task.evaluation_criteria
    if result.termination not in SCORED_STOPS:
        note = f"Simulation terminated prematurely. Termination reason: {result.termination}"
        return {"reward": 0.0, **empty, "reward_basis": None, "reward_breakdown": None, "info": {"note": note}}
    if criteria is None:
        return {
            "reward": float(result.reward),
            **empty,
            "reward_basis": None,
            "reward_breakdown": None,
            "info": {"note": "No evaluation criteria"},
        }
    raw = task.raw.get("evaluation_criteria") or {}
    basis = list(criteria.reward_basis)
    breakdown: dict[str, float] = {}
    notes: dict[str, Any] = {"env": None, "nl": None, "communicate": None, "action": None}

    # env: DB + env assertions (tau2 runs the assertions whatever the basis and reports them)
    env_assertions: list[dict[str, Any]] | None
    if criteria.actions is None and criteria.env_assertions is None:
        db_check = {"db_match": True, "db_reward": 1.0}
        env_assertions = None
        notes["env"] = {"note": "No expected actions or env assertions"}
    else:
        db_check = {"db_match": bool(result.db_match), "db_reward": float(bool(result.db_match))}
        checks = result.env_assertion_checks
        if not checks and criteria.env_assertions and result.predicted_env is not None:
            checks = check_env_assertions(task, result.predicted_env, on_error="zero").checks
        raw_asserts = raw.get("env_assertions") or []
        env_assertions = [
            {
                "env_assertion": _assertion_dump(raw_asserts[i] if i < len(raw_asserts) else c),
                "met": bool(c["met"]),
                "reward": float(bool(c["met"])),
            }
            for i, c in enumerate(checks)
        ]
        if "DB" in basis:
            breakdown["DB"] = db_check["db_reward"]
        if "ENV_ASSERTION" in basis:
            breakdown["ENV_ASSERTION"] = float(all(c["met"] for c in env_assertions))

    # action
    action_checks: list[dict[str, Any]] | None = None
    if not criteria.actions:
        notes["action"] = {"note": "No actions to evaluate"}
        action_reward = 1.0
    else:
        raw_actions = raw.get("actions") or []
        action_checks = [
            {
                "action": _action_dump(raw_actions[i] if i < len(raw_actions) else c),
                "action_match": bool(c["match"]),
                "action_reward": float(bool(c["match"])),
                "tool_type": c.get("tool_type"),
            }
            for i, c in enumerate(result.action_checks)
        ]
        action_reward = float(all(c["action_match"] for c in action_checks))
    if "ACTION" in basis:
        breakdown["ACTION"] = action_reward

    # NL assertions: graded only when in the basis (tau2's ALL evaluation)
    nl_assertions: list[dict[str, Any]] | None = None
    if "NL_ASSERTION" in basis:
        if not criteria.nl_assertions:
            nl_assertions = []
            notes["nl"] = {"note": "No nl_assertions to evaluate"}
            breakdown["NL_ASSERTION"] = 1.0
        elif judged is not None:
            nl_assertions = [{"nl_assertion": a, "met": met, "justification": why} for a, met, why in judged]
            breakdown["NL_ASSERTION"] = float(all(met for _, met, _ in judged))
        elif result.nl_checks:
            nl_assertions = [
                {
                    "nl_assertion": c["nl_assertion"],
                    "met": bool(c["met"]),
                    "justification": reasons[i] if i < len(reasons) else "",
                }
                for i, c in enumerate(result.nl_checks)
            ]
            breakdown["NL_ASSERTION"] = float(all(c["met"] for c in nl_assertions))
        else:
            notes["nl"] = {"note": "Not graded: no NL-assertion judge (simulate --skip-nl-assertions)"}

    # communicate
    communicate_checks: list[dict[str, Any]] | None = None
    if not criteria.communicate_info:
        notes["communicate"] = {"note": "No communicate_info to evaluate"}
        communicate_reward = 1.0
    else:
        communicate_checks = []
        for c in result.communicate_checks:
            found = _communicated_in(c["info"], trajectory or []) if c["met"] else None
            why = (
                f"Information '{c['info']}' communicated in the message:\n '{found}'"
                if found is not None
                else f"Information '{c['info']}' not communicated."
            )
            communicate_checks.append({"info": c["info"], "met": bool(c["met"]), "justification": why})
        communicate_reward = float(all(c["met"] for c in communicate_checks))
    if "COMMUNICATE" in basis:
        breakdown["COMMUNICATE"] = communicate_reward

    info: dict[str, Any] = dict(notes)
    if result.skipped:
        info["skipped"] = list(result.skipped)
    return {
        "reward": float(result.reward),
        "db_check": db_check,
        "env_assertions": env_assertions,
        "action_checks": action_checks,
        "nl_assertions": nl_assertions,
        "communicate_checks": communicate_checks,
        "reward_basis": basis,
        "reward_breakdown": breakdown,
        "info": info,
    }
