"""``verl-rewards simulate --domain tau_bench/retail|tau_bench/airline``: score a model served at an
OpenAI-compatible endpoint as tau-bench's ``run.py`` does (tool-calling agent, the ``llm`` user simulator at another
endpoint), with the normal-mode engine (:mod:`.normal`) and reward used in training.

Output: one JSON file in tau-bench's results layout (the list ``run.py`` writes to its ``--log-dir``): one
``EnvRunResult`` per (task, trial), ``{task_id (the index in the split), reward, info, traj, trial}``, where
``info`` holds tau-bench's ``task``, ``source``, ``user_cost`` (None: not tracked) and ``reward_info``
(``{reward, info, actions}``, None when the episode was not done), plus ours: ``id`` (``"<split>/<index>"``),
``domain`` (``tau_bench/<domain>``), ``split``, ``termination``, ``end_cause``, ``seed``, ``reward_details`` and
``run`` (the settings, for resuming). ``traj`` is the agent's messages (``wiki.md`` system prompt first, tool
messages with their ``name``). ``verl-rewards eval`` reads it (pass^k as tau-bench's README reports it).

Differences from ``run.py``: each trial's seed (tau2's derivation from ``--seed``) is sent to both endpoints
(tau-bench sends none; its ``--seed`` only shuffles tasks); requests with tools carry ``tool_choice: "auto"`` (the
API default); a failing agent endpoint ends a simulation as ``infrastructure_error`` (reward 0, left out of pass^k
by ``eval``), a failing user endpoint as ``user_error`` (reward 0); the user's temperature is the one given
(tau-bench sets none, so its provider's default applies: pass ``--user-temperature 1.0`` to match OpenAI's).
Results are saved atomically as simulations finish; running again with the same ``--out`` and settings resumes.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine import simulate as runs
from ..engine.client import shared_client
from ..engine.conversation import trial_seeds
from ..engine.errors import EngineError
from ..engine.termination import TerminationReason
from ..engine.users import OpenAIUser
from ..files import write_text_atomic
from .domain import TauBenchDomain, load_domain
from .normal import MAX_NUM_STEPS, is_done, open_conversation
from .reward import tau_bench_reward

SOURCE_PREFIX = "tau_bench/"
DEFAULT_SPLIT = "test"


@dataclass
class TauBenchSimulateConfig(runs.RunConfig):
    """What to simulate (``domain`` ``retail`` | ``airline``) and where the two models are served
    (:class:`~verl_rewards.engine.simulate.RunConfig`), with tau-bench's agent budget."""

    max_num_steps: int = MAX_NUM_STEPS
    concurrency: int = 8
    progress: bool = True


def _load(config: TauBenchSimulateConfig) -> tuple[TauBenchDomain, list[str]]:
    if config.num_trials < 1 or config.max_num_steps < 1 or config.concurrency < 1:
        raise runs.SimulateError("--num-trials, --max-num-steps and --concurrency must be at least 1")
    try:
        domain = load_domain(config.domain.removeprefix(SOURCE_PREFIX), config.data_dir)
    except (EngineError, ValueError) as exc:
        raise runs.SimulateError(str(exc)) from None
    split = config.split or DEFAULT_SPLIT
    if config.task_ids:
        ids = [str(t) if "/" in str(t) else f"{split}/{t}" for t in config.task_ids]
        unknown = [t for t in ids if t not in domain.tasks]
        if unknown:
            raise runs.SimulateError(
                f"unknown task id(s) {unknown[:10]} in tau-bench domain {domain.name!r} "
                f"(ids are '<split>/<index>' or an index of --split, default {DEFAULT_SPLIT})"
            )
    else:
        if split not in domain.splits:
            raise runs.SimulateError(
                f"tau-bench domain {domain.name!r} has no split {split!r}; available: {sorted(domain.splits)}"
            )
        ids = domain.split(split)
    return domain, list(dict.fromkeys(ids))


def run_settings(config: TauBenchSimulateConfig, domain: TauBenchDomain) -> dict[str, Any]:
    """The settings a results file is bound to (a resumed run must have the same)."""
    return {
        "domain": SOURCE_PREFIX + domain.name,
        "agent_model": config.agent.model,
        "agent_args": dict(config.agent.sampling),
        "user_model": config.user.model,
        "user_args": dict(config.user.sampling),
        "user_strategy": "llm",
        "agent_strategy": "tool-calling",
        "num_trials": config.num_trials,
        "seed": config.seed,
        "max_num_steps": config.max_num_steps,
    }


def _resume(settings: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    if not out.exists():
        return []
    try:
        old = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise runs.SimulateError(f"--out {out} exists and is not a readable JSON file ({exc}); move it away") from None
    if not isinstance(old, list) or not all(isinstance(s, dict) and isinstance(s.get("info"), dict) for s in old):
        raise runs.SimulateError(f"--out {out} exists and is not a tau-bench results list; move it away")
    for i, sim in enumerate(old):
        problem = _malformed(sim)
        if problem:  # refused before anything runs: a bad entry would break the sort, the summary or the resume
            raise runs.SimulateError(f"--out {out}: entry [{i}] {problem}; fix or move the file away")
    recorded = [(f"[{i}].info.run", s["info"].get("run", runs.NOT_RECORDED)) for i, s in enumerate(old)]
    runs.check_same_settings(out, None, recorded, settings)
    return old


def _malformed(sim: dict[str, Any]) -> str | None:
    for key in ("trial", "task_id"):
        value = sim.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"has {key} {str(value)[:50]!r}, not an integer >= 0"
    reward = sim.get("reward")
    if isinstance(reward, bool) or not isinstance(reward, int | float) or not -1e9 < reward < 1e9:
        return f"has reward {str(reward)[:50]!r}, not a number"
    if not isinstance(sim["info"].get("termination"), str):
        return "has no info.termination"
    return None


def agent_traj(domain: TauBenchDomain, trajectory: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The agent's messages as tau-bench's tool-calling agent keeps them: system prompt, then the conversation;
    tool messages carry the tool's ``name``."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = [{"role": "system", "content": domain.policy}]
    for m in trajectory:
        message = {"role": m["role"], "content": m.get("content")}
        if m.get("tool_calls"):
            message["tool_calls"] = m["tool_calls"]
            names.update((c["id"], c["function"]["name"]) for c in m["tool_calls"])
        if m["role"] == "tool":
            message.update(tool_call_id=m.get("tool_call_id"), name=names.get(m.get("tool_call_id") or "", ""))
        out.append(message)
    return out


async def simulate_one(
    config: TauBenchSimulateConfig,
    domain: TauBenchDomain,
    settings: dict[str, Any],
    task_id: str,
    trial: int,
    seed: int,
) -> dict[str, Any]:
    """Play and score one (task, trial); never raises for a model's or an endpoint's failure."""
    task = domain.task(task_id)
    conv = open_conversation(
        domain,
        task.id,
        OpenAIUser(shared_client(config.user)),
        seed=seed,
        max_num_steps=config.max_num_steps,
        agent_system_prompt=True,
    )
    try:
        await conv.run(runs.OpenAIAgent(config.agent, domain.tools_info, seed))
    except Exception as exc:  # noqa: BLE001 - one broken simulation must not stop the run
        conv.end(TerminationReason.INFRASTRUCTURE_ERROR, f"{type(exc).__name__}: {exc}")
    termination = str(conv.termination or TerminationReason.INFRASTRUCTURE_ERROR)
    done = is_done(termination)
    reward_info: dict[str, Any] | None = None
    details: dict[str, Any] = {}
    try:
        result = tau_bench_reward(domain, task.id, conv.trajectory, terminated=done)
        details = result.details
        if done:
            reward_info = {"reward": result.reward, "info": result.info, "actions": result.actions}
        reward = float(result.reward)
    except Exception as exc:  # noqa: BLE001 - recorded with the simulation, scored 0
        reward, details = 0.0, {"error": f"{type(exc).__name__}: {exc}"}
    last_call: dict[str, Any] = next((m for m in reversed(conv.trajectory) if m["role"] == "assistant"), {})
    source = "user" if not last_call.get("tool_calls") else last_call["tool_calls"][0]["function"]["name"]
    return {
        "task_id": task.index,
        "reward": reward,
        "info": {
            "task": {
                "user_id": task.user_id,
                "actions": list(task.actions),
                "instruction": task.instruction,
                "outputs": list(task.outputs),
            },
            "source": source,
            "user_cost": None,
            "reward_info": reward_info,
            "id": task.id,
            "domain": SOURCE_PREFIX + domain.name,
            "split": task.split,
            "termination": str(termination),
            "end_cause": conv.cause,
            "seed": seed,
            "agent_turns": conv.agent_turns,
            "reward_details": details,
            "run": settings,
        },
        "traj": agent_traj(domain, conv.trajectory),
        "trial": trial,
    }


async def simulate_tau_bench(config: TauBenchSimulateConfig) -> list[dict[str, Any]]:
    """Run every missing (task, trial); return the results list (also written to ``config.out``)."""
    domain, task_ids = _load(config)
    out = runs.results_path(config.out)
    with runs.only_writer(out):
        return await _simulate(config, domain, task_ids, out)


async def _simulate(
    config: TauBenchSimulateConfig, domain: TauBenchDomain, task_ids: list[str], out: Path
) -> list[dict[str, Any]]:
    """:func:`simulate_tau_bench` once it is the only writer of ``out``."""
    settings = run_settings(config, domain)
    results = _resume(settings, out)
    await runs.check_endpoints(config.agent, config.user)
    seeds = trial_seeds(config.seed, config.num_trials)
    done = {(s["info"].get("id"), s.get("trial")) for s in results}
    plan = [(t, k) for k in range(config.num_trials) for t in task_ids if (t, k) not in done]
    last_save = [0.0]

    async def play(task_id: str, trial: int) -> dict[str, Any]:
        return await simulate_one(config, domain, settings, task_id, trial, seeds[trial])

    def finished(sim: dict[str, Any], force: bool) -> None:
        if sim:
            results.append(sim)
        now = time.monotonic()
        if force or now - last_save[0] >= runs.SAVE_EVERY_S:
            results.sort(key=lambda s: (s.get("trial", 0), str(s["info"].get("split")), s.get("task_id", 0)))
            write_text_atomic(out, json.dumps(results, ensure_ascii=False))
            last_save[0] = now

    await runs.run_plan(
        plan,
        play,
        finished,
        concurrency=config.concurrency,
        done=len(done),
        progress=config.progress,
        desc=SOURCE_PREFIX + domain.name,
    )
    return results


def summary(results: list[dict[str, Any]]) -> str:
    """A short text summary: simulations, mean reward, terminations."""
    rewards = [float(s.get("reward") or 0.0) for s in results]
    terms: dict[str, int] = {}
    for s in results:
        reason = str((s.get("info") or {}).get("termination"))
        terms[reason] = terms.get(reason, 0) + 1
    mean = sum(rewards) / len(rewards) if rewards else float("nan")
    return f"{len(results)} simulations, mean reward {mean:.3f}, terminations {terms}"
