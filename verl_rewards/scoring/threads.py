"""The thread executor: reward calls run off verl's event loop, each bounded by its caller's timeout.

A sync reward runs in a daemon thread; an async reward runs on that thread's own event loop, so a reward that
blocks inside ``async def`` (``time.sleep``, a busy loop) stalls only its thread, never the reward worker's loop,
and its caller's ``asyncio.wait_for`` still fires on time.

Python cannot stop a thread. A call whose caller gave up (timeout) is *abandoned*: its thread no longer counts
towards the pool's capacity, so a replacement starts for the next call and hung rewards never starve healthy
ones; the abandoned thread leaves the pool when its call finally returns (an abandoned coroutine that is only
awaiting is cancelled at once). Past :data:`MAX_ABANDONED` calls still running after their timeout, no more
replacements start and an error says to switch to ``reward.reward_kwargs.executor=process``, whose workers are
killed and replaced when a call hangs.

Threads are daemons (they never block interpreter exit) and start only when no idle thread is waiting.
A reward that raises ``SystemExit`` or another ``BaseException`` is reported as an ordinary error.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

logger = logging.getLogger("verl_rewards")

#: where a reward call can run: this module's threads, or the worker processes of ``rewards/process.py``
EXECUTORS = ("thread", "process")
#: abandoned calls still running (per process) beyond which no replacement thread starts
MAX_ABANDONED = 128
_ERROR_INTERVAL_S = 60.0


class RewardExitError(RuntimeError):
    """A reward raised ``SystemExit``/``KeyboardInterrupt`` (or another ``BaseException``) in a reward thread."""


class _Worker:
    __slots__ = ("abandoned", "future", "task")

    def __init__(self) -> None:
        self.abandoned = False
        self.future: concurrent.futures.Future | None = None
        self.task: tuple[asyncio.AbstractEventLoop, asyncio.Task] | None = None


class ThreadExecutor:
    """Daemon threads fed by one queue; capacity counts only threads whose call has not been abandoned."""

    def __init__(self, max_workers: int, max_abandoned: int = MAX_ABANDONED):
        self.max_workers = max(1, int(max_workers))
        self.max_abandoned = max_abandoned
        self._queue: collections.deque[tuple[Callable[[_Worker], Any], concurrent.futures.Future]] = collections.deque()
        self._cond = threading.Condition()
        self._live = 0  # threads not abandoned
        self._idle = 0  # waiting threads not yet claimed by a submit
        self._abandoned = 0  # abandoned threads whose call still runs
        self._running: dict[int, _Worker] = {}
        self._last_error = 0.0
        self._local = threading.local()

    # ------------------------------------------------------------------------------------------ public
    def ensure_capacity(self, n: int) -> None:
        """Allow at least ``n`` live threads (a manager's ``max_concurrency``: calls then never queue)."""
        with self._cond:
            self.max_workers = max(self.max_workers, int(n))

    @property
    def abandoned(self) -> int:
        """Calls still running after their caller gave up."""
        with self._cond:
            return self._abandoned

    async def run(self, fn: Callable[[], Any]) -> Any:
        """Run a sync ``fn`` in a pool thread; cancelling the await abandons the call."""
        return await self._await(self._submit(lambda worker: fn()))

    async def run_async(self, make_coro: Callable[[], Awaitable[Any]]) -> Any:
        """Run ``make_coro()`` on a pool thread's own event loop; cancelling the await abandons (and cancels) it."""
        return await self._await(self._submit(self._in_thread_loop(make_coro)))

    # ------------------------------------------------------------------------------------------ internals
    def _in_thread_loop(self, make_coro: Callable[[], Awaitable[Any]]) -> Callable[[_Worker], Any]:
        def call(worker: _Worker) -> Any:
            loop = getattr(self._local, "loop", None)
            if loop is None or loop.is_closed():
                loop = asyncio.new_event_loop()
                self._local.loop = loop
            task = loop.create_task(_as_coroutine(make_coro()))
            with self._cond:
                worker.task = (loop, task)
            try:
                return loop.run_until_complete(task)
            finally:
                with self._cond:
                    worker.task = None

        return call

    async def _await(self, fut: concurrent.futures.Future) -> Any:
        try:
            return await asyncio.shield(asyncio.wrap_future(fut))
        except asyncio.CancelledError:
            self._abandon(fut)
            raise

    def _submit(self, fn: Callable[[_Worker], Any]) -> concurrent.futures.Future:
        fut: concurrent.futures.Future = concurrent.futures.Future()
        with self._cond:
            self._queue.append((fn, fut))
            if self._idle:  # claim one waiting thread now, so the next submit does not count it as free
                self._idle -= 1
                self._cond.notify()
            else:
                self._grow()
        return fut

    def _grow(self) -> None:
        """Start a thread if the capacity allows (called with the lock held and no idle thread)."""
        if self._live < self.max_workers and self._abandoned <= self.max_abandoned:
            self._live += 1
            threading.Thread(target=self._work, daemon=True, name="verl-rewards-score").start()
        elif self._abandoned > self.max_abandoned and time.monotonic() - self._last_error > _ERROR_INTERVAL_S:
            self._last_error = time.monotonic()
            logger.error(
                "verl-rewards: %d reward calls are still running after their timeout in the thread executor "
                "(threads cannot be stopped); no more replacement threads start, so later calls queue and may time "
                "out. Switch to reward.reward_kwargs.executor=process, which kills and replaces hung workers.",
                self._abandoned,
            )

    def _abandon(self, fut: concurrent.futures.Future) -> None:
        with self._cond:
            if fut.cancel():  # still queued: it will be skipped
                return
            worker = self._running.get(id(fut))
            if worker is None or worker.abandoned:
                return
            worker.abandoned = True
            self._live -= 1
            self._abandoned += 1
            task = worker.task
            if self._queue and not self._idle:
                self._grow()
        if task is not None:  # an awaiting coroutine stops at once; a blocking one keeps its thread
            loop, coro_task = task
            try:
                loop.call_soon_threadsafe(coro_task.cancel)
            except RuntimeError:
                pass

    def _work(self) -> None:
        worker = _Worker()
        while True:
            with self._cond:
                while not self._queue:
                    self._idle += 1  # the submit that wakes this thread takes it off the idle count
                    self._cond.wait()
                fn, fut = self._queue.popleft()
                if not fut.set_running_or_notify_cancel():
                    continue
                worker.future = fut
                self._running[id(fut)] = worker
            try:
                result = fn(worker)
            except Exception as exc:  # noqa: BLE001 - delivered to the awaiting caller
                _settle(fut, exc=exc)
            except BaseException as exc:  # noqa: BLE001 - SystemExit & co. must not kill the thread silently
                _settle(fut, exc=RewardExitError(f"the reward raised {type(exc).__name__}({exc})"))
            else:
                _settle(fut, result=result)
            with self._cond:
                self._running.pop(id(fut), None)
                worker.future = None
                if worker.abandoned:
                    self._abandoned -= 1
                    return
            del fn, fut


def _settle(fut: concurrent.futures.Future, result: Any = None, exc: BaseException | None = None) -> None:
    try:
        if exc is not None:
            fut.set_exception(exc)
        else:
            fut.set_result(result)
    except concurrent.futures.InvalidStateError:
        pass


async def _as_coroutine(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


_EXECUTOR: ThreadExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


def thread_executor() -> ThreadExecutor:
    """The process-wide thread executor (``min(32, cpus + 4)`` threads, raised by :meth:`ensure_capacity`)."""
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadExecutor(max_workers=min(32, (os.cpu_count() or 1) + 4))
        return _EXECUTOR
