"""What both executors share: their names, the error a failed call raises, and how a call's future is settled.

An executor runs one reward call and gives back its outcome: the :class:`~verl_rewards.scoring.result.ScoreResult`
(normalised inside the call), or an exception: ``TimeoutError`` past the call's limit, :class:`RewardCallError` when
the reward could not complete (it raised ``SystemExit``, its worker process died, its reply could not be read...),
or the reward's own exception.
"""

from __future__ import annotations

import concurrent.futures
import traceback
from typing import Any

#: where a reward call can run: the thread executor (``threads.py``) or the worker processes (``process.py``)
EXECUTORS = ("thread", "process")


class RewardCallError(RuntimeError):
    """A reward call that could not complete normally.

    ``exc_type`` names the cause (the reward's exception type, ``"WorkerDied"``, ``"MismatchedReply"``, ...),
    ``remote_traceback`` is the formatted traceback where the reward ran (a worker process), ``reward_name`` the
    reward and ``pid`` the worker process, when there is one.
    """

    def __init__(
        self,
        message: str,
        *,
        exc_type: str = "",
        remote_traceback: str = "",
        reward_name: str = "",
        pid: int | None = None,
    ):
        super().__init__(message)
        self.exc_type = exc_type
        self.remote_traceback = remote_traceback
        self.reward_name = reward_name
        self.pid = pid


def error_info(exc: BaseException) -> tuple[str, str, str]:
    """(type name, message, formatted traceback) of ``exc``; never raises."""
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not hide the error
        message = f"<unprintable {type(exc).__name__}>"
    try:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:
        tb = ""
    return type(exc).__name__, message, tb


def settle(fut: concurrent.futures.Future, result: Any = None, exc: BaseException | None = None) -> None:
    """Complete ``fut`` with ``result`` or ``exc`` unless it already is (a call is settled exactly once)."""
    try:
        if exc is not None:
            fut.set_exception(exc)
        else:
            fut.set_result(result)
    except concurrent.futures.InvalidStateError:
        pass
