"""A smoke (or ``learn``) run that failed: the stage it failed in and why, reported by the command in one line."""

from __future__ import annotations

#: the stages a smoke run can fail in, in the order they run
STAGES = ("set-up", "sft", "rollout", "reward", "update", "validation", "checkpoint", "resume")


class SmokeError(Exception):
    """A smoke run failed in ``stage``."""

    def __init__(self, stage: str, message: str):
        super().__init__(message)
        self.stage = stage
