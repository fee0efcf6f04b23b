"""tau-bench v1's reward (``Env.calculate_reward``) on a recorded trajectory: :func:`tau_bench_reward`.

Reading a trajectory (OpenAI-style messages, see :mod:`verl_rewards.engine.trajectory`) as tau-bench's actions:

* each tool call answered by a tool message was executed, in answer order; an assistant message without tool
  calls is a ``respond`` whose content is the message text (text sent along with tool calls never reaches the
  user and is not a ``respond``);
* the episode is *done* when ``transfer_to_human_agents`` was called (the trajectory ends at that call), when a
  user message contains ``###STOP###`` (normal mode), or when the trajectory ends with an assistant text reply
  (instruction mode: there is no user, so the reply ends the episode). Otherwise the agent ran out of turns and
  tau-bench computes no reward: 0.0.

Then, as tau-bench does when an episode is done:

1. ``r_actions``: the data after the trajectory's calls (replayed on a fresh episode) equals the data after the
   task's gold actions (terminate tools skipped, failing actions kept as failures); ``gt_data_hash`` is the
   latter's hash. A mismatch sets the reward to 0.
2. If the task has ``outputs``: each must appear, lower-cased, inside one ``respond`` text that is lower-cased
   with its commas removed. Any missing one sets ``r_outputs`` and the reward to 0, and tau-bench's ``info``
   becomes ``{r_outputs, outputs: {output: found}}`` instead of ``{r_actions, gt_data_hash}``.

``RewardResult.details`` keeps what tau-bench's info drops: ``r_actions`` always, the share of outputs found,
``done`` and how the episode ended, the replay report. Cost: O(the trajectory's calls) per call, with the gold
state cached per task; no copy or full hash of the DB on the scoring path. ``gt_data_hash`` (a full-DB hash, tens
of times the cost of the rest of a call) is read from the row's ground truth, where ``verl-rewards prepare
tau_bench`` writes it (the ``gold_hash`` argument); only without it is it computed, once per task and cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.termination import TerminationReason
from ..engine.trajectory import Message, pair_tool_calls, parse_messages
from .domain import TauBenchDomain, load_domain
from .environment import RESPOND_ACTION, STOP_TOKEN, TauBenchEnvironment

ENDED_BY_TRANSFER = str(TerminationReason.TRANSFER)
ENDED_BY_STOP = str(TerminationReason.USER_STOP)
ENDED_BY_REPLY = str(TerminationReason.AGENT_REPLY)


@dataclass
class RewardResult:
    """tau-bench's ``RewardResult`` (``reward``, ``info``, gold ``actions``) plus our ``details``."""

    reward: float
    info: dict[str, Any]
    actions: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Replayed:
    """A trajectory read as tau-bench actions and replayed: the end state, the responds, how it ended."""

    env: TauBenchEnvironment
    responds: list[str]
    ended_by: str | None
    report: dict[str, Any]


def outputs_found(outputs: Sequence[str], responds: Sequence[str]) -> dict[str, bool]:
    """``{output: said}`` under tau-bench's rule (case-insensitive substring of one comma-less respond)."""
    texts = [r.lower().replace(",", "") for r in responds]
    return {o: any(o.lower() in t for t in texts) for o in outputs}


def _ended_by(body: list[Message], cut: bool) -> str | None:
    if cut:
        return ENDED_BY_TRANSFER
    if any(m.role == "user" and m.content and STOP_TOKEN in m.content for m in body):
        return ENDED_BY_STOP
    if body and body[-1].role == "assistant" and not body[-1].tool_calls:
        return ENDED_BY_REPLY
    return None


def replay_trajectory(domain: TauBenchDomain, task_id: Any, messages: Sequence[Any]) -> Replayed:
    """Replay the trajectory's state-changing calls on a fresh episode (reads cannot change the data)."""
    task = domain.task(task_id)
    parsed = [m for m in parse_messages(messages) if m.role not in ("system", "developer")]
    pairs = pair_tool_calls(parsed).pairs
    cut_at: int | None = None
    for call, answer in pairs:
        if call.name in domain.terminate_tools:
            cut_at = answer.index
            break
    body = [m for m in parsed if cut_at is None or m.index <= cut_at]
    responds = [
        m.content or ""
        for m in body
        if m.role == "assistant" and not m.tool_calls and (cut_at is None or m.index < cut_at)
    ]
    env = domain.make_env(task.id)
    kinds = domain.tool_kinds()
    report: dict[str, Any] = {"executed": 0, "skipped_read_only": 0, "skipped_unknown": 0, "skipped_invalid": 0}
    for call, answer in pairs:
        if cut_at is not None and answer.index > cut_at:
            break
        if not call.valid or call.arguments is None:
            report["skipped_invalid"] += 1
        elif call.name not in kinds:
            report["skipped_unknown"] += 1
        elif kinds[call.name] != "write":
            report["skipped_read_only"] += 1
        else:
            env.step(call.name, call.arguments)
            report["executed"] += 1
            if env.crashed:
                break
    return Replayed(env=env, responds=responds, ended_by=_ended_by(body, cut_at is not None), report=report)


def tau_bench_reward(
    domain: TauBenchDomain | str,
    task_id: Any,
    messages: Sequence[Any],
    *,
    terminated: bool | None = None,
    gold_hash: str | None = None,
) -> RewardResult:
    """tau-bench's binary reward of one trajectory of a v1 task (see the module doc).

    ``terminated`` overrides whether the episode is done (None: read it from the messages). ``gold_hash``: the
    task's ``gt_data_hash`` when known (the row's ground truth); None computes it (once per task, then cached).
    """
    dom = load_domain(domain) if isinstance(domain, str) else domain
    task = dom.task(task_id)
    gold_actions = [dict(a) for a in task.actions if a["name"] != RESPOND_ACTION]
    replayed = replay_trajectory(dom, task.id, messages)
    done = replayed.ended_by is not None if terminated is None else bool(terminated)
    match = replayed.env.agent_db.same_as(dom.gold_env(task.id).agent_db)
    found = outputs_found(task.outputs, replayed.responds)
    details: dict[str, Any] = {
        "done": done,
        "ended_by": replayed.ended_by,
        "r_actions": 1.0 if match else 0.0,
        "r_outputs": 1.0 if all(found.values()) else 0.0,
        "outputs_found": (sum(found.values()) / len(found)) if found else 1.0,
        "crash": replayed.env.crashed,
        "replay": replayed.report,
    }
    if replayed.env.crashed:
        return RewardResult(reward=0.0, info={}, actions=gold_actions, details=details)
    if not done:
        return RewardResult(reward=0.0, info={}, actions=gold_actions, details=details)
    reward = 1.0 if match else 0.0
    info: dict[str, Any] = {"r_actions": 1.0 if match else 0.0, "gt_data_hash": gold_hash or dom.gold_hash(task.id)}
    if task.outputs:
        if not all(found.values()):
            reward = 0.0
        info = {"r_outputs": details["r_outputs"], "outputs": found}
    return RewardResult(reward=reward, info=info, actions=gold_actions, details=details)
