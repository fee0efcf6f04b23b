"""tau2's scripted user turns (:func:`default_script`, :func:`script_for`); the user backends and their
configuration are :mod:`verl_rewards.engine.users`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...engine.conversation import Reply
from ...engine.users import FINAL_TURN, UserConfig
from ..domain import Domain
from ..tasks import Task


def default_script(domain: Domain, task: Task) -> tuple[Reply, ...]:
    """A smoke-run script from the task itself: the reason for the call (with the known info), then the task's gold
    user actions one per turn (telecom: the fixes on the phone), then a goodbye with ``###STOP###``."""
    scenario = task.user_scenario or {}
    ins = scenario.get("instructions")
    if isinstance(ins, Mapping):
        parts = [ins.get("reason_for_call"), ins.get("known_info")]
        opening = " ".join(str(p).strip() for p in parts if p)
    else:
        opening = str(ins or "Hi, I need help.")
    turns = [Reply(content=opening or "Hi, I need help.")]
    criteria = task.evaluation_criteria
    for action in (criteria.actions or ()) if criteria is not None else ():
        if action.requestor == "user":
            turns.append(Reply(tool_calls=[{"name": action.name, "arguments": dict(action.arguments)}]))
    turns.append(Reply(content=FINAL_TURN))
    return tuple(turns)


def script_for(config: UserConfig, domain: Domain, task: Task) -> Sequence[Reply]:
    """The scripted backend's turns for ``task``: its script, else :func:`default_script`."""
    return config.scripts.get(task.id) or default_script(domain, task)
