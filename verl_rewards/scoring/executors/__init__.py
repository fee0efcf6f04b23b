"""The executors: where a reward call runs, bounded by its timeout (``docs/process_pool.md`` for the process pool).

Both implement one interface, ``await executor.run_reward(spec, kwargs, timeout_s) -> ScoreResult`` (see
:mod:`.base` for the outcomes):

* :class:`~.threads.ThreadExecutor` (``thread``): daemon threads; async rewards on a thread's own event loop;
  abandoned (timed-out) calls free their capacity;
* :class:`~.process.ProcessRunner` (``process``): worker processes, killed and replaced when a call hangs or
  crashes; its pipe waits run on a private :class:`~.threads.ThreadExecutor`. The pool, its queue and timeouts are
  :mod:`.process`; its slots' state machine :mod:`.slots`; what runs in a worker process and the wire format
  :mod:`.worker`.
"""

from __future__ import annotations

from typing import Any

from .base import EXECUTORS, RewardCallError, error_info, settle
from .threads import MAX_ABANDONED, MAX_ABANDONED_THREADS, RewardExitError, ThreadExecutor, thread_executor

__all__ = [
    "EXECUTORS",
    "MAX_ABANDONED",
    "MAX_ABANDONED_THREADS",
    "ProcessRunner",
    "RemoteRewardError",
    "RewardCallError",
    "RewardExitError",
    "ThreadExecutor",
    "error_info",
    "settle",
    "shared_runner",
    "thread_executor",
]


def __getattr__(name: str) -> Any:
    """The process executor's names, imported on first use (it needs the reward registry, which needs ``base``)."""
    if name in ("ProcessRunner", "RemoteRewardError", "shared_runner"):
        from . import process

        return getattr(process, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
