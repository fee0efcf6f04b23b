"""What every reward component returns, and the shared replay of a trajectory into a predicted environment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...engine.trajectory import Message

if TYPE_CHECKING:
    from ...engine.environment import Environment
    from ..domain import Domain
    from ..tasks import Task


@dataclass
class ComponentResult:
    """A component's reward (0.0 or 1.0), one check per criterion, and free-form details."""

    reward: float
    checks: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


def predicted_env(
    domain: Domain, task: Task, body: Sequence[Message], *, strict: bool = False, solo_mode: bool = False
) -> tuple[Environment, dict[str, Any]]:
    """The agent's end state: a fresh env with the task's initial state, then ``body``'s mutating calls replayed.

    ``body`` is the trajectory after the task's initial message history (see ``trajectory.strip_history``).
    ``solo_mode``: agent calls of user tools act on the user toolkit. Returns the environment and the replay
    report.
    """
    env = domain.make_env(task.id, solo_mode=solo_mode)
    report = env.replay(body, strict=strict)
    return env, report
