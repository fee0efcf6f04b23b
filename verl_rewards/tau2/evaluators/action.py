"""ACTION component: was every gold action called (by the agent or the user) with matching arguments?

Semantics are tau2's ``compare_with_tool_call``, quirks included:

* a gold action matches if *any* predicted call matches; order is ignored, a call is not consumed (one call
  can satisfy several identical gold actions) and the requestor is ignored;
* the compared keys are ``compare_args`` when given, else **the predicted call's own keys**: an extra
  predicted argument fails, a subset of the gold arguments that agrees passes, empty arguments pass;
* ``compare_args=[]`` matches on the name alone; values compare with Python ``==`` (``2 == 2.0``,
  ``"2" != 2``, list order and case matter).

Predicted calls are the tool calls of every assistant and user message, the task's initial history included.
A call whose arguments could not be parsed (``ToolCall.valid`` false) never matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...engine.trajectory import Message, ToolCall, tool_calls_of
from .common import ComponentResult

if TYPE_CHECKING:
    from ..tasks import Action, Task


def compare_action(gold: Action, call: ToolCall) -> bool:
    """tau2's ``Action.compare_with_tool_call`` for one predicted call."""
    if call.arguments is None or gold.name != call.name:
        return False
    keys: Any = call.arguments.keys() if gold.compare_args is None else gold.compare_args
    if len(keys) == 0:
        return True
    predicted = {k: v for k, v in call.arguments.items() if k in keys}
    expected = {k: v for k, v in gold.arguments.items() if k in keys}
    try:
        return bool(predicted == expected)
    except Exception:  # noqa: BLE001 - exotic values that refuse comparison simply do not match
        return False


def check_actions(task: Task, messages: Sequence[Message], tool_kinds: dict[str, str] | None = None) -> ComponentResult:
    """Reward 1.0 iff every gold action is matched (1.0 without gold actions). One check per gold action."""
    criteria = task.evaluation_criteria
    gold_actions = (criteria.actions or ()) if criteria is not None else ()
    if not gold_actions:
        return ComponentResult(reward=1.0)
    calls = tool_calls_of(messages)
    checks = []
    for action in gold_actions:
        matched = any(compare_action(action, c) for c in calls)
        checks.append(
            {
                "action_id": action.action_id,
                "name": action.name,
                "match": matched,
                "tool_type": (tool_kinds or {}).get(action.name),
            }
        )
    reward = 1.0 if all(c["match"] for c in checks) else 0.0
    return ComponentResult(reward=reward, checks=checks)
