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

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ...engine.client import Endpoint, shared_client
from ...engine.conversation import Conversation, trial_seeds
from ...engine.rules import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS
from ...engine.simulate import (
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
from ...engine.toolkit import ToolError
from ...engine.trajectory import parse_messages
from ...engine.users import OpenAIUser
from ...files import write_text_atomic
from ..domain import Domain, load_domain
from ..errors import EnvAssertionError, Tau2Error
from ..evaluator import evaluate_trajectory
from ..evaluators.nl_assertions import judge_view
from .history import history_messages
from .judge import OpenAIJudge
from .prompts import (
    agent_system_prompt,
    agent_tool_schemas,
    guidelines_path,
    user_scenario_text,
    user_tool_schemas,
)
from .prompts import user_system_prompt as build_user_prompt
from .results import failed_record, message_dumps, results_info, simulation_record, task_dump
from .reward_info import reward_info

MAX_RETRY_DELAY_S = 3600.0
#: the tasks of a run without --task-ids or --split: tau2's runner default (``tau2 run --task-split-name base``; a
#: domain without a splits file has every task in ``base``)
DEFAULT_SPLIT = "base"


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
    max_retries: int = 3  # tau2's --max-retries: more attempts of a simulation that failed
    skip_nl_assertions: bool = False  # score tasks graded on NL assertions without them (no judge; not tau2's score)
    retry_delay: float = 1.0  # tau2's --retry-delay, in seconds


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
    if config.max_retries < 0 or not 0 <= config.retry_delay <= MAX_RETRY_DELAY_S:
        raise SimulateError(f"--max-retries must be >= 0 and --retry-delay within [0, {MAX_RETRY_DELAY_S:g}] s")
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
    else:
        from ..data import split_ids

        try:
            ids = split_ids(domain, config.split or DEFAULT_SPLIT)
        except ValueError as exc:
            raise SimulateError(str(exc)) from None
    chosen = set(ids)
    return domain, [t for t in domain.tasks if t in chosen]  # in tasks.json order, as tau2's runner filters


def _info(config: SimulateConfig, domain: Domain) -> dict[str, Any]:
    return results_info(
        domain,
        config.agent,
        config.user,
        num_trials=config.num_trials,
        max_steps=config.max_steps,
        max_errors=config.max_errors,
        seed=config.seed,
    )


def run_settings(config: SimulateConfig) -> dict[str, Any]:
    """The settings that change a simulation's outcome, tau2's ``info`` does not hold and differ from how tau2 runs
    (the communication protocol enforced, another agent-message rule, load options): written as the run ``info``'s
    ``run`` only when there is one, so a run made as tau2 makes it writes tau2's ``info``; compared on resume.
    The judge's model is not among them (tau2 records none)."""
    settings: dict[str, Any] = {}
    if config.enforce_communication_protocol:
        settings["enforce_communication_protocol"] = True
    if config.agent_message_errors != str(TerminationReason.INFRASTRUCTURE_ERROR):
        settings["agent_message_errors"] = config.agent_message_errors
    options = {k: v for k, v in (config.domain_options or {}).items() if not is_where_key(k)}
    if options:
        settings["domain_options"] = options
    return settings


def _resume(config: SimulateConfig, info: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    """The simulations of an earlier run with the same settings: its ``info`` (with ``run``, :func:`run_settings`)
    equals this run's (SimulateError listing the differing settings, or when ``out`` is something else)."""
    if not out.exists():
        return []
    try:
        old = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise SimulateError(f"--out {out} exists and is not a readable JSON file ({exc}); move it away") from None
    if not isinstance(old, dict) or not {"info", "tasks", "simulations"} <= set(old):
        raise SimulateError(f"--out {out} exists and is not a tau2 Results file; move it away")
    sims = _kept_simulations(old["simulations"], out)
    check_same_settings(out, (old["info"], info), [], {})
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
    """Play and score one (task, trial), as tau2's runner does: an attempt that fails (an endpoint that does not
    answer, an agent message that cannot be played, a judge that fails) is played again, ``max_retries`` times
    ``retry_delay`` apart, then recorded as ``infrastructure_error`` (tau2's record: no messages, the error in
    ``info``). Never raises for a model's or an endpoint's failure."""
    attempts = config.max_retries + 1
    error = ("infrastructure error", "InfrastructureError")
    for attempt in range(attempts):
        if attempt:
            await asyncio.sleep(config.retry_delay)
        record, error = await _attempt(config, domain, task_id, trial, seed, judge)
        if record is not None:
            return record
    return failed_record(domain.task(task_id).id, trial, seed, *error, attempts)


async def _attempt(
    config: SimulateConfig, domain: Domain, task_id: str, trial: int, seed: int, judge: OpenAIJudge | None
) -> tuple[dict[str, Any] | None, tuple[str, str]]:
    """One attempt: ``(the simulation's record, _)``, or ``(None, (error, error type))`` when it failed."""
    task = domain.task(task_id)
    start, started = datetime.now().isoformat(), time.perf_counter()
    failure = str(TerminationReason.INFRASTRUCTURE_ERROR)
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
        user_failures=failure,  # tau2: a user model that fails fails the attempt
        history=history_messages(task),
    )
    try:
        await conv.run(OpenAIAgent(config.agent, agent_tool_schemas(domain), seed))
    except Exception as exc:  # noqa: BLE001 - one broken simulation must not stop the run
        return None, (f"{type(exc).__name__}: {exc}", type(exc).__name__)
    termination = conv.termination or failure
    if termination == failure:
        return None, (conv.cause or "infrastructure error", "InfrastructureError")
    try:
        reward = await _reward_info(domain, task_id, conv.trajectory, termination, judge)
    except Exception as exc:  # noqa: BLE001 - tau2: an evaluation that raises (a failing judge) fails the attempt
        return None, (str(exc), type(exc).__name__)
    policy = domain.policy_for(solo=False, task_id=task.id if domain.spec.task_policy else None)
    record = simulation_record(
        task.id,
        trial,
        seed,
        termination,
        start=start,
        duration=time.perf_counter() - started,
        reward_info=reward,
        messages=message_dumps(conv.trajectory, conv.message_info),
        policy=policy,
    )
    return record, ("", "")


async def _reward_info(
    domain: Domain, task_id: str, trajectory: list[dict[str, Any]], termination: str, judge: OpenAIJudge | None
) -> dict[str, Any]:
    """tau2's reward info of the trajectory; the judge's reply read as tau2 reads it (a JudgeError where tau2 raises,
    which fails the attempt)."""
    task = domain.task(task_id)
    judged: list[tuple[str, bool, str]] | None = None
    if judge is not None and _needs_judge(task) and termination in SCORED_STOPS:
        assert task.evaluation_criteria is not None
        view = judge_view(parse_messages(trajectory))
        judged = await judge.tau2_judgements(view, list(task.evaluation_criteria.nl_assertions or ()))
    grades = None if judged is None else [met for _, met, _ in judged]
    try:
        result = evaluate_trajectory(
            domain,
            task_id,
            trajectory,
            termination=termination,
            judge=(lambda _m, _a: grades) if grades is not None else None,
            nl_policy="skip",
            assertion_errors="raise",
        )
    except EnvAssertionError as exc:  # tau2: the assertion's own error escapes its evaluator and fails the attempt
        cause = exc.cause
        if isinstance(cause, ToolError):  # tau2's tool functions raise ValueError where ours raise ToolError
            cause = ValueError(str(cause))
        raise cause if isinstance(cause, Exception) else exc from None
    return reward_info(task, result, trajectory, judged=judged)


# ------------------------------------------------------------------------------------------------- the run
def _save(run: _Run, out: Path, force: bool = False) -> None:
    now = time.monotonic()
    if force or now - run.last_save >= SAVE_EVERY_S:
        run.results["simulations"].sort(key=lambda s: (s.get("trial", 0), str(s.get("task_id"))))
        write_text_atomic(out, json.dumps(run.results, ensure_ascii=False))
        run.last_save = now


SKIPPED_NL = "skipped (--skip-nl-assertions): tasks graded on NL assertions were scored without them"
"""The run ``info``'s ``nl_assertions`` when a run was told to score without a judge (tau2 always grades them)."""


def _needs_judge(task: Any) -> bool:
    criteria = task.evaluation_criteria
    return criteria is not None and bool(criteria.nl_assertions) and "NL_ASSERTION" in criteria.reward_basis


def _check_judge(config: SimulateConfig, domain: Domain, task_ids: Sequence[str]) -> None:
    """tau2 grades NL assertions with a judge (its default model); a run of such tasks without one must say so."""
    needing = [t for t in task_ids if _needs_judge(domain.task(t))]
    if needing and config.judge is None and not config.skip_nl_assertions:
        raise SimulateError(
            f"{len(needing)} task(s) ({', '.join(needing[:5])}{', ...' if len(needing) > 5 else ''}) are graded on NL "
            "assertions (reward basis NL_ASSERTION), which tau2 grades with an LLM judge: give --judge-model (and "
            "--judge-base-url, default --user-base-url), or --skip-nl-assertions to score them without (not tau2's "
            "score)"
        )


async def simulate(config: SimulateConfig) -> dict[str, Any]:
    """Run every missing (task, trial) and return the Results (also written to ``config.out``)."""
    domain, task_ids = _load(config)
    _check_judge(config, domain, task_ids)
    out = results_path(config.out)
    with only_writer(out):
        return await _simulate(config, domain, task_ids, out)


async def _simulate(config: SimulateConfig, domain: Domain, task_ids: list[str], out: Path) -> dict[str, Any]:
    """:func:`simulate` once it is the only writer of ``out``."""
    info = _info(config, domain)
    if config.skip_nl_assertions and config.judge is None:
        info["nl_assertions"] = SKIPPED_NL
    settings = run_settings(config)
    if settings:
        info["run"] = settings
    kept = _resume(config, info, out)
    await check_endpoints(config.agent, config.user, config.judge)
    seeds = trial_seeds(config.seed, config.num_trials)
    results: dict[str, Any] = {
        "timestamp": datetime.now().isoformat(),
        "info": info,
        "tasks": [task_dump(domain.task(t).raw) for t in domain.tasks if t in set(task_ids)],
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
    text = f"{len(sims)} simulations, mean reward {mean:.3f}, terminations {terms}"
    skipped = (results.get("info") or {}).get("nl_assertions")
    return f"{text}; NL assertions {skipped}" if skipped else text
