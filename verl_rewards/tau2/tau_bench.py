"""The tau-bench (v1) reward on tau2 tasks: :func:`tau2_tau_bench_reward` (the reward ``tau2_tau_bench``).

This is tau-bench's formula applied to tau2's tasks and data. tau-bench's own environments, data and tasks are
:mod:`verl_rewards.tau_bench`.

Order of operations (tau-bench ``calculate_reward``):

1. ``reward = 1.0``.
2. The agent's end DB (the trajectory's mutating calls replayed on a fresh env with the task's initial state)
   is compared with the gold end DB (a fresh env, every gold action replayed *except terminate tools*, errors
   swallowed). Different → ``reward = 0.0``. Only the agent DB is compared (tau-bench has no user DB).
3. The task's required outputs — for tau2 tasks its ``communicate_info`` — must each appear in one assistant
   text message, lower-cased, with commas removed from the message only. Any missing → ``reward = 0.0``.

``info`` always carries ``r_actions`` and ``gt_data_hash`` and, when there are outputs, ``r_outputs`` and
``outputs`` ({output: found}). (tau-bench itself replaces the DB info by the output info when outputs exist,
so a DB failure there shows only ``r_outputs``; the reward is the same.) The reward exists only at the end of an
episode: ``terminated=False`` (ran out of steps) gives 0.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.trajectory import parse_messages, strip_history
from .domain import Domain, as_domain
from .evaluators.common import predicted_env
from .evaluators.communicate import assistant_texts, info_met


@dataclass
class TauBenchResult:
    """``reward`` (0.0 / 1.0), ``info`` (see module doc) and the gold ``actions`` (``{name, kwargs}``)."""

    reward: float
    info: dict[str, Any]
    actions: list[dict[str, Any]] = field(default_factory=list)


def tau2_tau_bench_reward(
    domain: Domain | str,
    task_id: Any,
    messages: Sequence[Any],
    *,
    terminated: bool = True,
    strict_replay: bool = False,
) -> TauBenchResult:
    """tau-bench's binary reward for one trajectory of a tau2 task (see the module doc)."""
    dom = as_domain(domain)
    task = dom.task(task_id)
    parsed = parse_messages(messages)
    criteria = task.evaluation_criteria
    gold_actions = [
        {"name": a.name, "kwargs": a.arguments} for a in ((criteria.actions or ()) if criteria is not None else ())
    ]
    if not terminated:
        return TauBenchResult(reward=0.0, info={"note": "episode not terminated: no reward"}, actions=gold_actions)

    body = strip_history(parsed, task.history)
    env, report = predicted_env(dom, task, body, strict=strict_replay)
    gold, _ = dom.gold_env(task.id, skip_terminate=True)
    match = env.agent_db.same_as(gold.agent_db)
    reward = 1.0 if match else 0.0
    info: dict[str, Any] = {
        "r_actions": 1.0 if match else 0.0,
        "gt_data_hash": dom.gold_hash(task.id, skip_terminate=True),
        "replay": report,
    }
    outputs = list((criteria.communicate_info or ()) if criteria is not None else ())
    if outputs:
        full = [m for m in task.history if m.role not in ("system", "developer")] + body
        texts = assistant_texts(full)
        found = {o: info_met(o, texts) for o in outputs}
        info["r_outputs"] = 1.0 if all(found.values()) else 0.0
        info["outputs"] = found
        if not all(found.values()):
            reward = 0.0
    return TauBenchResult(reward=reward, info=info, actions=gold_actions)
