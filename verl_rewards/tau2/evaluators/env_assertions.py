"""ENV_ASSERTION component: the task's assertion functions, run on the agent's (predicted) end state.

Each assertion calls a toolkit helper (``assert_task_status`` ...) that must return a bool; it is met when the
bool equals ``assert_value``. The reward is 1.0 iff all are met (1.0 when there are none).

tau2 lets a raising assertion (or one returning a non-bool) escape from the evaluator. Here such a failure raises
:class:`EnvAssertionError` naming the task and the function (``on_error="raise"``, the default), or with
``on_error="zero"`` counts as an unmet assertion and is recorded in the check's ``error``. Note that an
assertion can raise because of the agent (tau2 E20: ``assert_task_status(task_2)`` when task_2 was never
created), so RL callers that must not crash may prefer ``"zero"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import EnvAssertionError
from .common import ComponentResult

if TYPE_CHECKING:
    from ...engine.environment import Environment
    from ..tasks import Task

ON_ERROR = ("raise", "zero")


def check_env_assertions(task: Task, predicted: Environment, *, on_error: str = "raise") -> ComponentResult:
    """Run the task's env assertions on ``predicted``; see the module doc for errors."""
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
    criteria = task.evaluation_criteria
    assertions = (criteria.env_assertions or ()) if criteria is not None else ()
    checks = []
    reward = 1.0
    for i, assertion in enumerate(assertions):
        field = f"evaluation_criteria.env_assertions[{i}]"
        error = None
        try:
            result = predicted.run_env_function(assertion.env_type, assertion.func_name, assertion.arguments)
            if not isinstance(result, bool):
                wrong = ValueError(f"Function {assertion.func_name} returned {type(result)} instead of bool")  # tau2's
                raise EnvAssertionError(task.id, field, assertion.func_name, wrong)
            met = result == assertion.assert_value
        except EnvAssertionError as exc:
            if on_error == "raise":
                raise
            met, error = False, str(exc)
        except Exception as exc:
            if on_error == "raise":
                raise EnvAssertionError(task.id, field, assertion.func_name, exc) from exc
            met, error = False, f"{type(exc).__name__}: {exc}"
        check = {
            "func_name": assertion.func_name,
            "env_type": assertion.env_type,
            "arguments": assertion.arguments,
            "assert_value": assertion.assert_value,
            "met": met,
        }
        if error is not None:
            check["error"] = error
        checks.append(check)
        if not met:
            reward = 0.0
    return ComponentResult(reward=reward, checks=checks)
