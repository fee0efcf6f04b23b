"""Environment steps off the event loop, with a time bound.

A tool call can be slow (banking_knowledge's ``KB_search`` waits on an embeddings endpoint; ``grep`` matches a
model-written regex), and one conversation's slow call must never stall the others that share the event loop
(``simulate --concurrency``, the verl agent-loop workers). :func:`run_step` runs a step in a thread of a pool of
its own (not the loop's default executor, which verl uses for its own work) and waits at most ``timeout_s`` for
it. A step past its bound raises :class:`StepTimeout`; its thread cannot be stopped and may still change the
environment, so the caller must stop using that environment (the conversation ends as ``infrastructure_error``,
a verl tool session ends). Tools bound their own slow parts first (grep's child processes, the embeddings
request timeout), so this bound is the last resort.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

STEP_TIMEOUT_S = 120.0
"""Seconds one environment step may take (well above the tools' own bounds: a dense query's request timeout)."""
MAX_STEP_THREADS = 32

_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_pool_lock = threading.Lock()


class StepTimeout(Exception):
    """An environment step ran past its time bound (it may still be running: drop its environment)."""


def _executor() -> ThreadPoolExecutor:
    """The process's step threads (a forked child makes its own: the parent's threads are not in it)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(max_workers=MAX_STEP_THREADS, thread_name_prefix="env-step")
            _pool_pid = os.getpid()
        return _pool


async def run_step(fn: Callable[..., T], *args: Any, timeout_s: float | None = STEP_TIMEOUT_S, what: str = "") -> T:
    """``fn(*args)`` in a step thread; :class:`StepTimeout` naming ``what`` after ``timeout_s`` (None: no bound)."""
    future = asyncio.get_running_loop().run_in_executor(_executor(), functools.partial(fn, *args))
    try:
        return await asyncio.wait_for(future, timeout_s)
    except asyncio.TimeoutError:
        raise StepTimeout(f"{what or 'the environment step'} did not finish within {timeout_s:g} s") from None
