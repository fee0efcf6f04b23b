"""Exceptions of the tau2 package.

They separate three kinds of failure so a training loop can decide what to do with each:
bad task data (:class:`TaskDataError` and its subclasses, a bug to fix in the data or the domain code),
a caller passing a structurally broken trajectory (:class:`TrajectoryError`, a bug in the rollout code),
and a missing configuration such as an NL judge (:class:`NLJudgeRequiredError`).
Anything the *model* controls (tool names, argument strings) never raises: it becomes an error observation.
"""

from __future__ import annotations


class Tau2Error(Exception):
    """Base class of every error raised on purpose by ``verl_rewards.tau2``."""


class UnknownDomainError(Tau2Error, KeyError):
    """The domain name has no module in ``verl_rewards.tau2.domains``."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class DataNotFoundError(Tau2Error, FileNotFoundError):
    """The tau2 data directory or one of its files is missing."""


class DataFileError(Tau2Error, ValueError):
    """A tau2 data file (a DB, a policy, tasks, splits) cannot be used: not UTF-8, not valid JSON/TOML (truncated,
    empty, nested too deeply), or not the shape its domain expects. The message names the file."""


class TaskDataError(Tau2Error, ValueError):
    """A task (or the domain data it relies on) is malformed or cannot be applied.

    ``task_id`` and ``field`` name what is wrong, e.g. ``field="evaluation_criteria.actions[0].name"``.
    """

    def __init__(self, task_id: str | None, field: str | None, message: str):
        self.task_id = task_id
        self.field = field
        self.message = message
        where = f"task {task_id!r}" if task_id is not None else "task"
        if field:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")


class TaskValidationError(TaskDataError):
    """tasks.json / split file content does not match the task schema."""


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


class TrajectoryError(Tau2Error, ValueError):
    """The trajectory is structurally unusable (not a list of message dicts, unknown role, too long)."""


class ReplayMismatchError(Tau2Error, ValueError):
    """Strict replay: a re-executed mutating tool call produced a different output than the recorded one."""


class NLJudgeRequiredError(Tau2Error, ValueError):
    """The reward basis needs NL_ASSERTION but no judge was given (pass ``judge=`` or ``nl_policy="skip"``)."""
