"""The process runner's slots: each of its ``max_workers`` places for a worker process is a small state machine
(:class:`SlotState`), every change checked against :data:`TRANSITIONS`.
"""

from __future__ import annotations

import enum

from .worker import WorkerProcess

__all__ = ["TRANSITIONS", "Slot", "SlotState"]


class SlotState(enum.Enum):
    """Where one of the runner's ``max_workers`` slots is in its life (the runner's only state)."""

    EMPTY = "empty"  # no process; a call or :meth:`ProcessRunner.start` may start one
    STARTING = "starting"  # :meth:`ProcessRunner.start` is spawning a process, or it imports the reward modules
    IDLE = "idle"  # a ready process waits for a job
    CLAIMED = "claimed"  # a call owns the slot: it runs its job there (starting the process first if there is none)
    STOPPING = "stopping"  # its process is being stopped (hung, crashed, failed to start, replied out of turn)


_S = SlotState
#: the transitions a slot may take; anything else is a bug in the runner
TRANSITIONS: dict[SlotState, frozenset[SlotState]] = {
    _S.EMPTY: frozenset({_S.STARTING, _S.CLAIMED}),
    _S.STARTING: frozenset({_S.IDLE, _S.CLAIMED, _S.STOPPING, _S.EMPTY}),  # EMPTY: no process could be spawned
    _S.IDLE: frozenset({_S.CLAIMED, _S.STOPPING}),
    _S.CLAIMED: frozenset({_S.IDLE, _S.CLAIMED, _S.EMPTY, _S.STOPPING}),
    _S.STOPPING: frozenset({_S.EMPTY, _S.CLAIMED}),
}


class Slot:
    """One place for a worker process; its :class:`SlotState` changes only through :meth:`move`."""

    __slots__ = ("state", "worker")

    def __init__(self) -> None:
        self.state = SlotState.EMPTY
        self.worker: WorkerProcess | None = None

    def move(self, state: SlotState) -> None:
        """Change the state (the runner's lock held); an illegal transition is a bug and raises."""
        if state not in TRANSITIONS[self.state]:
            raise AssertionError(f"process slot cannot go from {self.state.value} to {state.value}")
        self.state = state
        if state is _S.EMPTY:
            self.worker = None
