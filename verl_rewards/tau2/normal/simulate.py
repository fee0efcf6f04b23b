"""``verl-rewards simulate``: score a model served at an OpenAI-compatible endpoint the way tau2-bench does (normal
mode, a simulated user at another endpoint), with the environments, conversation engine and reward code used in
training, and none of tau2's dependencies.

Output: one JSON file in tau2-bench's ``Results`` layout (``src/tau2/data_model/simulation.py``): ``info`` (trials,
limits, seed, the agent's and the user's model and sampling arguments, the domain and its policy), ``tasks`` (the
tasks as in ``tasks.json``), ``simulations`` (one per task and trial: ``id``, ``task_id``, ``trial``, ``seed``,
``termination_reason``, ``messages`` with tau2's roles, requestors, tool-call arguments as objects and
``turn_idx``, ``reward_info`` with the components and checks, times), so tau2's own tools load it and
``verl-rewards eval`` reads it.

Per-trial seeds are tau2's (``random.seed(seed)``, one ``randint(0, 1_000_000)`` per trial), sent to both
endpoints. The file is rewritten atomically as simulations finish (at most every few seconds, and at the end); an
interrupted run keeps the finished simulations, and running again with the same ``--out`` and settings resumes:
only the missing (task, trial) pairs run. A failing agent endpoint ends a simulation as ``infrastructure_error``
(left out of pass^k), a failing user endpoint as ``user_error``; neither stops the run.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ...deprecation import moved
from ...engine.client import Endpoint, shared_client
from ...engine.conversation import Conversation, trial_seeds
from ...engine.rules import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS
from ...engine.simulate import (
    NOT_RECORDED,
    SAVE_EVERY_S,
    OpenAIAgent,
    RunConfig,
    SimulateError,
    check_endpoints,
    check_same_settings,
    is_where_key,
    only_writer,
    results_path,
    run_plan,
)
from ...engine.termination import SCORED_STOPS, TerminationReason
from ...engine.trajectory import parse_messages
from ...engine.users import OpenAIUser
from ...files import write_text_atomic
from ..domain import Domain, load_domain
from ..errors import Tau2Error
from ..evaluator import EvaluationResult, evaluate_trajectory
from ..evaluators.env_assertions import check_env_assertions
from ..evaluators.nl_assertions import judge_view
from .judge import OpenAIJudge
from .prompts import (
    agent_system_prompt,
    agent_tool_schemas,
    guidelines_path,
    user_scenario_text,
    user_tool_schemas,
)
from .prompts import user_system_prompt as build_user_prompt


@dataclass
class SimulateConfig(RunConfig):
    """What to simulate and where the two models are served (:class:`~verl_rewards.engine.simulate.RunConfig`),
    with tau2's limits and rules."""

    max_steps: int = DEFAULT_MAX_STEPS
    max_errors: int = DEFAULT_MAX_ERRORS
    enforce_communication_protocol: bool = False
    concurrency: int = 8
    judge: Endpoint | None = None
    progress: bool = True
    domain_options: dict[str, Any] | None = None  # load options (banking_knowledge: retrieval=...)
    agent_message_errors: str = str(TerminationReason.INFRASTRUCTURE_ERROR)


@dataclass
class _Run:
    config: SimulateConfig
    domain: Domain
    task_ids: list[str]
    seeds: list[int]
    results: dict[str, Any]
    done: set[tuple[str, int]] = field(default_factory=set)
    last_save: float = 0.0


# ------------------------------------------------------------------------------------------------ set-up
def _load(config: SimulateConfig) -> tuple[Domain, list[str]]:
    if config.num_trials < 1 or config.max_steps < 1 or config.max_errors < 1 or config.concurrency < 1:
        raise SimulateError("--num-trials, --max-steps, --max-errors and --concurrency must be at least 1")
    try:
        domain = load_domain(config.domain, config.data_dir, **dict(config.domain_options or {}))
        guidelines_path(domain)
    except (Tau2Error, ValueError) as exc:
        raise SimulateError(str(exc)) from None
    if config.task_ids:
        ids = [str(t) for t in config.task_ids]
        unknown = [t for t in ids if t not in domain.tasks]
        if unknown:
            raise SimulateError(f"unknown task id(s) {unknown[:10]} in domain {domain.name!r}")
    elif config.split:
        if config.split not in domain.splits:
            raise SimulateError(
                f"domain {domain.name!r} has no split {config.split!r}; available: {sorted(domain.splits)}"
            )
        ids = domain.split(config.split)
    else:
        ids = list(domain.tasks)
    with_history = [t for t in ids if domain.task(t).history]
    if with_history:
        raise SimulateError(
            f"task(s) {with_history[:10]} start from a message history, which normal mode does not "
            "support; leave them out with --task-ids"
        )
    return domain, list(dict.fromkeys(ids))


def _info(config: SimulateConfig, domain: Domain) -> dict[str, Any]:
    return {
        "git_commit": "unknown",  # tau2's value when it cannot read a git commit
        "num_trials": config.num_trials,
        "max_steps": config.max_steps,
        "max_errors": config.max_errors,
        "user_info": {
            "implementation": "user_simulator",
            "llm": config.user.model,
            "llm_args": dict(config.user.sampling),
            "global_simulation_guidelines": guidelines_path(domain).read_text(encoding="utf-8"),
        },
        "agent_info": {
            "implementation": "llm_agent",
            "llm": config.agent.model,
            "llm_args": dict(config.agent.sampling),
        },
        "environment_info": {"domain_name": domain.name, "policy": domain.policy_for(solo=False), "tool_defs": None},
        "seed": config.seed,
    }


def run_settings(config: SimulateConfig) -> dict[str, Any]:
    """What changes a simulation's outcome and tau2's ``info`` does not hold: recorded in each simulation's
    ``info.run`` and compared when a run is resumed."""
    judge = config.judge
    return {
        "judge": None if judge is None else {"llm": judge.model, "llm_args": dict(judge.sampling)},
        "enforce_communication_protocol": config.enforce_communication_protocol,
        "agent_message_errors": config.agent_message_errors,
        "domain_options": {k: v for k, v in (config.domain_options or {}).items() if not is_where_key(k)},
    }


def _resume(config: SimulateConfig, info: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    """The simulations of an earlier run with the same settings: its ``info`` and every simulation's ``info.run``
    equal this run's (SimulateError listing the differing settings, or when ``out`` is something else)."""
    if not out.exists():
        return []
    try:
        old = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise SimulateError(f"--out {out} exists and is not a readable JSON file ({exc}); move it away") from None
    if not isinstance(old, dict) or not {"info", "tasks", "simulations"} <= set(old):
        raise SimulateError(f"--out {out} exists and is not a tau2 Results file; move it away")
    sims = _kept_simulations(old["simulations"], out)
    recorded = [
        (f"simulations[{i}].info.run", (s.get("info") or {}).get("run", NOT_RECORDED)) for i, s in enumerate(sims)
    ]
    check_same_settings(out, (old["info"], info), recorded, run_settings(config))
    return sims


def _kept_simulations(sims: Any, out: Path) -> list[dict[str, Any]]:
    """The earlier run's simulations, each checked for what resuming and the summary read (a malformed one is a
    SimulateError before anything runs, so the file is never half-read and rewritten)."""
    if not isinstance(sims, list):
        raise SimulateError(f"--out {out}: 'simulations' is not a list; move the file away")
    for i, sim in enumerate(sims):
        problem = _malformed(sim)
        if problem:
            raise SimulateError(f"--out {out}: simulations[{i}] {problem}; fix or move the file away")
    return list(sims)


def _malformed(sim: Any) -> str | None:
    if not isinstance(sim, dict):
        return f"is {type(sim).__name__}, not an object"
    if not isinstance(sim.get("task_id"), str | int) or isinstance(sim.get("task_id"), bool):
        return f"has task_id {str(sim.get('task_id'))[:50]!r}, not a task id"
    trial = sim.get("trial")
    if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
        return f"has trial {str(trial)[:50]!r}, not an integer >= 0"
    if not isinstance(sim.get("termination_reason"), str):
        return "has no termination_reason"
    info = sim.get("reward_info")
    if info is not None and not isinstance(info, dict):
        return "has a reward_info that is not an object"
    reward = (info or {}).get("reward", 0.0)
    if isinstance(reward, bool) or not isinstance(reward, int | float) or not -1e9 < reward < 1e9:
        return f"has reward {str(reward)[:50]!r}, not a number"
    return None


# -------------------------------------------------------------------------------------------- one simulation
async def simulate_one(
    config: SimulateConfig, domain: Domain, task_id: str, trial: int, seed: int, judge: OpenAIJudge | None
) -> dict[str, Any]:
    """Play and score one (task, trial); never raises for a model's or an endpoint's failure."""
    task = domain.task(task_id)
    start, started = datetime.now().isoformat(), time.perf_counter()
    conv = Conversation(
        domain.make_env(task.id),
        OpenAIUser(shared_client(config.user)),
        user_system_prompt=build_user_prompt(
            domain, user_scenario_text(task), user_tool_schemas(domain, task) is not None
        ),
        user_tools=user_tool_schemas(domain, task),
        agent_system_prompt=agent_system_prompt(domain, task_id=task.id if domain.spec.task_policy else None),
        max_steps=config.max_steps,
        max_errors=config.max_errors,
        enforce_communication_protocol=config.enforce_communication_protocol,
        seed=seed,
        agent_message_errors=config.agent_message_errors,
    )
    try:
        await conv.run(OpenAIAgent(config.agent, agent_tool_schemas(domain), seed))
    except Exception as exc:  # noqa: BLE001 - one broken simulation must not stop the run
        conv.end(TerminationReason.INFRASTRUCTURE_ERROR, f"{type(exc).__name__}: {exc}")
    termination = conv.termination or TerminationReason.INFRASTRUCTURE_ERROR
    info: dict[str, Any] = {"steps": conv.steps, "errors": conv.errors, "user_calls": conv.user_calls}
    info["end_cause"] = conv.cause
    info["run"] = run_settings(config)
    info["usage"] = usage_totals(conv.trajectory, conv.message_info)
    reward: dict[str, Any] | None = None
    if termination == TerminationReason.INFRASTRUCTURE_ERROR:
        # as tau2's runner records a simulation that raised: no reward_info, the error in info
        info.update(error=conv.cause or "infrastructure error", error_type="InfrastructureError")
    else:
        try:
            reward = await _reward_info(domain, task_id, conv.trajectory, termination, judge)
        except Exception as exc:  # noqa: BLE001 - recorded with the simulation, scored 0
            reward = {"reward": 0.0, "reward_basis": None, "info": {"error": f"{type(exc).__name__}: {exc}"}}
    end = datetime.now().isoformat()
    return {
        "id": str(uuid.uuid4()),
        "task_id": task.id,
        "timestamp": end,
        "start_time": start,
        "end_time": end,
        "duration": time.perf_counter() - started,
        "termination_reason": termination,
        # tau2 prices each message with litellm (0.0 when it cannot price a model, as for a self-served one); we
        # price none, so every message costs 0.0 and the sums are 0.0 (never null: tau2's metrics would be NaN)
        "agent_cost": 0.0,
        "user_cost": 0.0,
        "reward_info": reward,
        "messages": tau2_messages(conv.trajectory, conv.message_info),
        "trial": trial,
        "seed": seed,
        "mode": "half_duplex",
        "info": info,
    }


def usage_totals(trajectory: list[dict[str, Any]], message_info: list[dict[str, Any]]) -> dict[str, Any]:
    """Token totals per side over the messages whose endpoint reported ``usage``."""
    totals = {
        side: {"prompt_tokens": 0, "completion_tokens": 0, "messages_with_usage": 0} for side in ("agent", "user")
    }
    for message, meta in zip(trajectory, message_info, strict=False):
        usage = meta.get("usage")
        if not isinstance(usage, dict) or message["role"] not in ("assistant", "user"):
            continue
        side = totals["agent" if message["role"] == "assistant" else "user"]
        side["messages_with_usage"] += 1
        for key in ("prompt_tokens", "completion_tokens"):
            side[key] += int(usage.get(key) or 0)
    return totals


async def _reward_info(
    domain: Domain, task_id: str, trajectory: list[dict[str, Any]], termination: str, judge: OpenAIJudge | None
) -> dict[str, Any]:
    task = domain.task(task_id)
    judgements: list[tuple[bool, str]] | None = None
    criteria = task.evaluation_criteria
    needs_judge = (
        judge is not None
        and criteria is not None
        and criteria.nl_assertions
        and "NL_ASSERTION" in criteria.reward_basis
        and termination in SCORED_STOPS
    )
    error = None
    if needs_judge:
        assert judge is not None and criteria is not None
        view = judge_view(parse_messages(trajectory))
        try:
            judgements = await judge.judgements(view, list(criteria.nl_assertions or ()))
        except ValueError as exc:  # JudgeError: flagged, scored 0, never a silent 1.0
            error = str(exc)
    grades = None if judgements is None else [met for met, _ in judgements]
    result = evaluate_trajectory(
        domain,
        task_id,
        trajectory,
        termination=termination,
        judge=(lambda _m, _a: grades) if grades is not None else None,
        nl_policy="skip",
        assertion_errors="zero",
    )
    info = reward_info(task, result, trajectory, [why for _, why in judgements or ()])
    if error is not None:
        info["reward"] = 0.0
        info["info"]["judge_error"] = error
    return info


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
    task: Any, result: EvaluationResult, trajectory: list[dict[str, Any]] | None = None, reasons: Sequence[str] = ()
) -> dict[str, Any]:
    """tau2's ``RewardInfo`` of an evaluation, as ``evaluate_simulation(..., EvaluationType.ALL)`` builds it
    (``src/tau2/evaluator/evaluator.py``): the same checks, ``[]`` / null where tau2 writes them, the component
    notes in ``info`` (``{"env", "nl", "communicate", "action"}``), communicate justifications in tau2's words,
    NL justifications from the judge's ``reasoning`` (``reasons``, in assertion order)."""
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
            notes["nl"] = {"note": "Not graded: no NL-assertion judge (simulate --judge-model)"}

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


def tau2_messages(
    trajectory: list[dict[str, Any]], message_info: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Our trajectory as tau2 messages: tool calls flat with object arguments and a requestor, tool messages with
    ``id`` / ``requestor`` / ``error``, ``turn_idx`` in order, each message's ``timestamp`` (when it was played),
    and on agent and user messages tau2's ``cost`` (0.0: not priced) and ``usage`` (the endpoint's token counts,
    null when it reported none)."""
    out = []
    for i, m in enumerate(trajectory):
        meta = message_info[i] if i < len(message_info) else {}
        base = {"role": m["role"], "content": m.get("content"), "turn_idx": i, "timestamp": meta.get("timestamp")}
        if m["role"] == "tool":
            base.update(
                id=m.get("tool_call_id") or "", requestor=m.get("requestor", "assistant"), error=bool(m.get("error"))
            )
        else:
            calls = [
                {
                    "id": c["id"],
                    "name": c["function"]["name"],
                    "arguments": _arguments(c["function"]["arguments"]),
                    "requestor": m["role"],
                }
                for c in m.get("tool_calls") or ()
            ]
            base["tool_calls"] = calls or None
            base["cost"] = 0.0
            base["usage"] = meta.get("usage")
        out.append(base)
    return out


def _arguments(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text) if isinstance(text, str) and text.strip() else {}
    except (ValueError, RecursionError):
        return {"_unparsed_arguments": str(text)[:2000]}
    return value if isinstance(value, dict) else {"_unparsed_arguments": str(text)[:2000]}


# ------------------------------------------------------------------------------------------------- the run
def _save(run: _Run, out: Path, force: bool = False) -> None:
    now = time.monotonic()
    if force or now - run.last_save >= SAVE_EVERY_S:
        run.results["simulations"].sort(key=lambda s: (s.get("trial", 0), str(s.get("task_id"))))
        write_text_atomic(out, json.dumps(run.results, ensure_ascii=False))
        run.last_save = now


async def simulate(config: SimulateConfig) -> dict[str, Any]:
    """Run every missing (task, trial) and return the Results (also written to ``config.out``)."""
    domain, task_ids = _load(config)
    out = results_path(config.out)
    with only_writer(out):
        return await _simulate(config, domain, task_ids, out)


async def _simulate(config: SimulateConfig, domain: Domain, task_ids: list[str], out: Path) -> dict[str, Any]:
    """:func:`simulate` once it is the only writer of ``out``."""
    info = _info(config, domain)
    kept = _resume(config, info, out)
    await check_endpoints(config.agent, config.user, config.judge)
    seeds = trial_seeds(config.seed, config.num_trials)
    results: dict[str, Any] = {
        "timestamp": datetime.now().isoformat(),
        "info": info,
        "tasks": [domain.task(t).raw for t in task_ids],
        "simulations": kept,
        "simulation_index": None,  # tau2 fills it only in its folder format; its single-file JSON has null
    }
    done = {(str(s.get("task_id")), int(s.get("trial") or 0)) for s in kept}
    run = _Run(config, domain, task_ids, seeds, results, done)
    plan = [(t, k) for k in range(config.num_trials) for t in task_ids if (t, k) not in run.done]
    judge = OpenAIJudge(config.judge) if config.judge is not None else None

    async def play(task_id: str, trial: int) -> dict[str, Any]:
        return await simulate_one(config, domain, task_id, trial, seeds[trial], judge)

    def finished(sim: dict[str, Any], force: bool) -> None:
        if sim:
            results["simulations"].append(sim)
            run.done.add((str(sim["task_id"]), sim["trial"]))
        _save(run, out, force=force)

    await run_plan(
        plan,
        play,
        finished,
        concurrency=config.concurrency,
        done=len(run.done),
        progress=config.progress,
        desc=f"tau2/{domain.name}",
    )
    return results


def summary(results: dict[str, Any]) -> str:
    """A short text summary: simulations, mean reward, terminations."""
    sims = results.get("simulations") or []
    rewards = [s["reward_info"]["reward"] for s in sims if s.get("reward_info")]
    terms: dict[str, int] = {}
    for s in sims:
        terms[s["termination_reason"]] = terms.get(s["termination_reason"], 0) + 1
    mean = sum(rewards) / len(rewards) if rewards else float("nan")
    return f"{len(sims)} simulations, mean reward {mean:.3f}, terminations {terms}"


__getattr__ = moved(
    __name__, dict.fromkeys(("PROBE_TEXT", "REACHABLE_TIMEOUT_S", "all_failed"), "verl_rewards.engine.simulate")
)
