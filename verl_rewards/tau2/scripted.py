"""Scripted trajectories: run a list of tool calls on a live environment and record them as chat messages.

Used by the tests and the benchmark, and handy to build reference trajectories: :func:`gold_trajectory` plays a
task's gold actions (user-requested ones as user tool calls) and ends with an assistant message that states every
``communicate_info`` string, so it scores 1.0 wherever the task is satisfiable by its own gold actions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .domain import Domain, as_domain


def scripted_trajectory(
    domain: Domain | str,
    task_id: Any,
    calls: Iterable[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str]],
    *,
    final_text: str | None = "Done.",
    user_text: str = "Hi, I need help.",
    solo_mode: bool = False,
) -> list[dict[str, Any]]:
    """Messages for ``calls`` (``(name, arguments[, requestor])``) executed on ``task_id``'s initial state.

    The messages start after the task's initial history. Each call becomes one assistant (or user, for requestor
    ``"user"``) message with an OpenAI-style tool call, followed by the tool message holding the real observation.
    ``solo_mode`` runs the calls in a solo-mode environment (agent calls of user tools act on the phone).
    """
    dom = as_domain(domain)
    env = dom.make_env(task_id, solo_mode=solo_mode)
    messages: list[dict[str, Any]] = [{"role": "user", "content": user_text}]
    for i, call in enumerate(calls):
        name, arguments = call[0], call[1]
        requestor = call[2] if len(call) > 2 else "assistant"
        call_id = f"call_{i}"
        observation = env.step(name, arguments, requestor=requestor)
        messages.append(
            {
                "role": "user" if requestor == "user" else "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": observation})
    if final_text is not None:
        messages.append({"role": "assistant", "content": final_text})
    return messages


def gold_calls(domain: Domain | str, task_id: Any) -> list[tuple[str, dict[str, Any], str]]:
    """The task's gold actions as ``(name, arguments, requestor)`` calls."""
    task = as_domain(domain).task(task_id)
    criteria = task.evaluation_criteria
    actions = (criteria.actions or ()) if criteria is not None else ()
    return [(a.name, dict(a.arguments), a.requestor) for a in actions]


def gold_trajectory(domain: Domain | str, task_id: Any, *, final_text: str | None = None) -> list[dict[str, Any]]:
    """The gold actions played as a trajectory, ending with a message that states every communicate_info string."""
    dom = as_domain(domain)
    task = dom.task(task_id)
    if final_text is None:
        infos = (task.evaluation_criteria.communicate_info or ()) if task.evaluation_criteria is not None else ()
        final_text = "All done. " + " ".join(f"{s}." for s in infos)
    return scripted_trajectory(dom, task.id, gold_calls(dom, task.id), final_text=final_text)
