"""NL_ASSERTION component: natural-language expectations judged by a pluggable judge.

The judge is any callable ``judge(messages, assertions) -> list[bool]``: ``messages`` is the full trajectory as
plain dicts (``role``, ``content`` and, for calls, ``tool_calls`` as ``{"name", "arguments"}``), ``assertions`` the
task's ``nl_assertions``. The reward is 1.0 iff every returned value is true; like tau2, an empty list from the
judge gives 1.0, and a task without nl_assertions gives 1.0 without calling the judge. A judge that returns
something other than a list of bools raises ``ValueError`` (a bug in the judge, not in the trajectory).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...engine.trajectory import Message
from .common import ComponentResult

if TYPE_CHECKING:
    from ..tasks import Task

Judge = Callable[[list[dict[str, Any]], list[str]], Sequence[bool]]


def judge_view(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The trajectory as the judge sees it (system messages dropped)."""
    out = []
    for m in messages:
        if m.role in ("system", "developer"):
            continue
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in m.tool_calls]
        out.append(item)
    return out


def check_nl_assertions(task: Task, messages: Sequence[Message], judge: Judge | None) -> ComponentResult:
    """Judge the task's nl_assertions; ``judge`` may be None only when there is nothing to judge."""
    criteria = task.evaluation_criteria
    assertions = list((criteria.nl_assertions or ()) if criteria is not None else ())
    if not assertions:
        return ComponentResult(reward=1.0)
    if judge is None:
        raise ValueError("check_nl_assertions needs a judge for a task with nl_assertions")
    results = judge(judge_view(messages), list(assertions))
    if not isinstance(results, (list, tuple)) or not all(isinstance(r, bool) for r in results):
        raise ValueError(f"NL judge must return a list of bools, got {results!r:.200}")
    checks = [{"nl_assertion": a, "met": r} for a, r in zip(assertions, results, strict=False)]
    details = {} if len(results) == len(assertions) else {"judge_result_count": len(results)}
    return ComponentResult(reward=1.0 if all(results) else 0.0, checks=checks, details=details)
