"""Exceptions of the tau2 package: the engine's (:mod:`verl_rewards.engine.errors`) and tau2's own.

They separate three kinds of failure so a training loop can decide what to do with each:
bad task data (:class:`TaskDataError` and its subclasses, a bug to fix in the data or the domain code),
a caller passing a structurally broken trajectory (:class:`TrajectoryError`, a bug in the rollout code),
and a missing configuration such as an NL judge (:class:`NLJudgeRequiredError`).
Anything the *model* controls (tool names, argument strings) never raises: it becomes an error observation.
"""

from __future__ import annotations

from ..engine.errors import (
    DataFileError,
    DataNotFoundError,
    EngineError,
    ReplayMismatchError,
    TaskDataError,
    TaskValidationError,
    TrajectoryError,
    UnknownDomainError,
)

Tau2Error = EngineError
"""Base class of every error raised on purpose by ``verl_rewards.tau2`` (the engine's :class:`EngineError`)."""


class EnvAssertionError(TaskDataError):
    """An env assertion could not be evaluated: its function raised or did not return a bool.

    tau2 lets such exceptions escape from the evaluator. We surface them as this error, carrying the task id,
    the assertion's function name and the original exception (``cause``), so a caller can catch it and decide
    (``evaluate_trajectory(..., assertion_errors="zero")`` scores it as an unmet assertion instead).
    """

    def __init__(self, task_id: str | None, field: str | None, func_name: str, cause: BaseException | str):
        self.func_name = func_name
        self.cause = cause
        detail = f"{type(cause).__name__}: {cause}" if isinstance(cause, BaseException) else str(cause)
        super().__init__(task_id, field, f"env assertion {func_name!r} failed to evaluate ({detail})")


class NLJudgeRequiredError(Tau2Error, ValueError):
    """The reward basis needs NL_ASSERTION but no judge was given (pass ``judge=`` or ``nl_policy="skip"``)."""


__all__ = [
    "DataFileError",
    "DataNotFoundError",
    "EnvAssertionError",
    "NLJudgeRequiredError",
    "ReplayMismatchError",
    "TaskDataError",
    "TaskValidationError",
    "Tau2Error",
    "TrajectoryError",
    "UnknownDomainError",
]
