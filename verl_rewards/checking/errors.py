"""A ``verl-rewards check`` stage that failed (:class:`CheckError`: the stage and the message, one line) and how an
exception someone else raised is described in it (:func:`describe`)."""

from __future__ import annotations


class CheckError(Exception):
    """A start-up failure, with the stage it happened in."""

    def __init__(self, stage: str, message: str):
        self.stage = stage
        super().__init__(f"{stage}: {message}")


def describe(exc: BaseException) -> str:
    """``exc`` as ``Type: message`` on one line (``Type`` alone when it says nothing)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
