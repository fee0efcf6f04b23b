"""Exceptions of the environment engine, shared by the tau2 and tau-bench packages.

They separate the kinds of failure so a training loop can decide what to do with each: bad task data
(:class:`TaskDataError` and its subclasses, a bug to fix in the data or the domain code), missing or unreadable data
files (:class:`DataNotFoundError`, :class:`DataFileError`), and a caller passing a structurally broken trajectory
(:class:`TrajectoryError`, a bug in the rollout code). Anything the *model* controls (tool names, argument strings)
never raises: it becomes an error observation.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error raised on purpose by the engine and the benchmarks built on it (``tau2``'s
    ``Tau2Error`` is this class)."""


class UnknownDomainError(EngineError, KeyError):
    """The domain name is not registered."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class DataNotFoundError(EngineError, FileNotFoundError):
    """The data directory or one of its files is missing."""


class DataFileError(EngineError, ValueError):
    """A data file (a DB, a policy, tasks, splits) cannot be used: not UTF-8, not valid JSON/TOML (truncated,
    empty, nested too deeply), or not the shape its domain expects. The message names the file."""


class TaskDataError(EngineError, ValueError):
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
    """A tasks / split file's content does not match the task schema."""


class TrajectoryError(EngineError, ValueError):
    """The trajectory is structurally unusable (not a list of message dicts, unknown role, too long)."""


class ReplayMismatchError(EngineError, ValueError):
    """Strict replay: a re-executed mutating tool call produced a different output than the recorded one."""
