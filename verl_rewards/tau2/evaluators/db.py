"""DB component: does the agent's end state equal the gold end state (agent DB *and* user DB)?

The gold state replays every gold action on a fresh env with the task's initial state (errors are swallowed
and reported); it is cached per task on the :class:`Domain`. Comparison uses ``DBState.same_as`` (O(records
touched)), which is equivalent to comparing tau2's two sha256 hashes.

The gold actions run as tau2's evaluator runs them: without the domain's ``sync_tools`` hook between them
(telecom's sync mirrors the account's line status, roaming and data allowance into the phone). A live episode
syncs after every call, so on telecom a trajectory that plays the gold actions can end in another state than
tau2's gold replay (the mirrored flags and payment request lag behind in the gold one) and ``db_match`` is false,
as tau2 reports it. DB is not in any telecom task's reward basis, so the reward is the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...engine.trajectory import Message
from .common import ComponentResult, predicted_env

if TYPE_CHECKING:
    from ...engine.environment import Environment
    from ..domain import Domain
    from ..tasks import Task


def check_db(
    domain: Domain,
    task: Task,
    body: Sequence[Message],
    *,
    predicted: Environment | None = None,
    skip_terminate: bool = False,
) -> ComponentResult:
    """Reward 1.0 iff the replayed trajectory's agent and user DBs equal the gold ones.

    ``predicted`` may pass an already replayed environment for ``body`` (the evaluator shares one with the
    env-assertion component). Details: ``db_match``, ``agent_db_match``, ``user_db_match``,
    ``gold_replay_errors``.
    """
    if predicted is None:
        predicted, _ = predicted_env(domain, task, body)
    gold, gold_errors = domain.gold_env(task.id, skip_terminate=skip_terminate)
    agent_match, user_match = predicted.same_db_as(gold)
    match = agent_match and user_match
    return ComponentResult(
        reward=1.0 if match else 0.0,
        details={
            "db_match": match,
            "agent_db_match": agent_match,
            "user_db_match": user_match,
            "gold_replay_errors": gold_errors,
        },
    )
