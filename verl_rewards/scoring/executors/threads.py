"""The thread executor: reward calls run off verl's event loop, each bounded by its caller's timeout.

A sync reward runs in a daemon thread; an async reward runs on that thread's own event loop, so a reward that
blocks inside ``async def`` (``time.sleep``, a busy loop) stalls only its thread, never the reward worker's loop.
A call's ``timeout_s`` counts from when a thread starts it (waiting for a free thread is limited by it too).

Python cannot stop a thread. A call whose caller gave up (timeout) is *abandoned*: its thread no longer counts
towards the pool's capacity, so a replacement starts for the next call and hung rewards never starve healthy
ones; the abandoned thread leaves the pool when its call finally returns (an abandoned coroutine that is only
awaiting is cancelled at once, and its outcome is retrieved so asyncio logs nothing). Two limits:

* from :data:`MAX_ABANDONED` calls still running after their timeout, :meth:`ThreadExecutor.overloaded` is true:
  the scorer then sends sync rewards that a worker process can run to the process executor (whose workers are
  killed and replaced when a call hangs) and an error is logged;
* past ``max_abandoned`` (:data:`MAX_ABANDONED_THREADS`) no more replacement threads start: calls that still need a
  thread queue and may time out.

Work an async reward leaves on its thread's loop (callbacks, timers, tasks it started) that is due within
:data:`DRAIN_HORIZON_S` runs right after its call, while that thread is out of the pool's capacity like an
abandoned one, so it is never charged to the next call (work scheduled further ahead, such as a connection
pool's keep-alive timer, runs during later calls on that thread).

Threads are daemons (they never block interpreter exit) and start only when no idle thread is waiting. A reward
that raises ``SystemExit`` or another ``BaseException`` is reported as an ordinary error; a forked copy of the
process that returns from a reward (sync, or async through its thread's loop) into a pool thread exits at once,
before taking any lock (a lock another thread held at the fork is held for good in the copy).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .base import RewardCallError, settle

if TYPE_CHECKING:
    from ..result import ScoreResult

logger = logging.getLogger("verl_rewards")

__all__ = [
    "MAX_ABANDONED",
    "MAX_ABANDONED_THREADS",
    "RewardExitError",
    "ThreadExecutor",
    "thread_executor",
]
#: abandoned calls still running (per process) from which sync rewards move to the process executor when they can
MAX_ABANDONED = 128
#: abandoned calls still running (per process) beyond which no replacement thread starts
MAX_ABANDONED_THREADS = 1024
_ERROR_INTERVAL_S = 60.0
#: a reward's left-over work due within this many seconds runs after its call, outside the capacity
DRAIN_HORIZON_S = 1.0
_DRAIN_LIMIT_S = 10.0  # a thread runs left-over work (that does not block) at most this long, then rejoins


class RewardExitError(RewardCallError):
    """A reward raised ``SystemExit``/``KeyboardInterrupt`` (or another ``BaseException``) in a reward thread."""


class _Worker:
    __slots__ = ("abandoned", "future", "task")

    def __init__(self) -> None:
        self.abandoned = False
        self.future: concurrent.futures.Future | None = None
        self.task: tuple[asyncio.AbstractEventLoop, asyncio.Task] | None = None


_Job = tuple[Callable[[_Worker], Any], concurrent.futures.Future, Callable[[], None]]


class ThreadExecutor:
    """Daemon threads fed by one queue; capacity counts only threads whose call has not been abandoned."""

    def __init__(
        self,
        max_workers: int,
        max_abandoned: int = MAX_ABANDONED_THREADS,
        overload_at: int = MAX_ABANDONED,
        name: str = "verl-rewards-score",
    ):
        self.max_workers = max(1, int(max_workers))
        self.name = name
        self._closed = False
        self.max_abandoned = max_abandoned
        self.overload_at = overload_at
        self._queue: collections.deque[_Job] = collections.deque()
        self._cond = threading.Condition(threading.Lock())  # never re-entered: a plain lock is cheaper
        self._live = 0  # threads not abandoned
        self._idle = 0  # waiting threads not yet claimed by a submit
        self._abandoned = 0  # abandoned threads whose call still runs (or that run work a call left behind)
        self._running: dict[int, _Worker] = {}
        self._last_error = 0.0
        self._last_overload = 0.0
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

    def overloaded(self) -> bool:
        """Whether :data:`MAX_ABANDONED` (``overload_at``) or more calls still run after their timeout; the first
        time in a minute this is true, an error says so."""
        with self._cond:
            n = self._abandoned
            if n < self.overload_at:
                return False
            log = time.monotonic() - self._last_overload > _ERROR_INTERVAL_S
            if log:
                self._last_overload = time.monotonic()
        if log:
            logger.error(
                "verl-rewards: %d reward calls are still running after their timeout in the thread executor (threads "
                "cannot be stopped); until fewer than %d are left, sync rewards that can run in a worker process go "
                "to the process executor. Set reward.reward_kwargs.executor=process, which kills and replaces hung "
                "workers, to run them there from the start.",
                n,
                self.overload_at,
            )
        return True

    async def run_reward(
        self, spec: Any, kwargs: dict[str, Any], timeout_s: float | None, *, number_key: str | None = None
    ) -> ScoreResult:
        """The executor interface: call ``spec`` (a :class:`~verl_rewards.scoring.spec.RewardSpec`) with ``kwargs``
        and normalise its result, all inside the call and bounded by ``timeout_s`` (async rewards on the thread's
        own loop)."""
        from ..result import normalise_result

        if spec.is_async:

            async def call() -> ScoreResult:
                return normalise_result(await spec.invoke(**kwargs), number_key=number_key)

            return await self.run_async(call, timeout_s)
        return await self.run(lambda: normalise_result(spec.invoke(**kwargs), number_key=number_key), timeout_s)

    def submit(self, fn: Callable[[], Any]) -> concurrent.futures.Future:
        """Run ``fn`` in a pool thread without an event loop (for callers that wait on the future themselves)."""
        return self._submit(lambda worker: fn(), _nothing)

    def shutdown(self) -> None:
        """Let idle threads exit once the queue is empty; :meth:`submit` then raises ``RuntimeError``."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    async def run(self, fn: Callable[[], Any], timeout_s: float | None = None) -> Any:
        """Run a sync ``fn`` in a pool thread, at most ``timeout_s`` from when the thread starts it (``TimeoutError``
        after that); cancelling the await, or the timeout, abandons the call."""
        return await self._await(lambda worker: fn(), timeout_s)

    async def run_async(self, make_coro: Callable[[], Awaitable[Any]], timeout_s: float | None = None) -> Any:
        """Run ``make_coro()`` on a pool thread's own event loop, like :meth:`run`; abandoning it also cancels it."""
        return await self._await(self._in_thread_loop(make_coro), timeout_s)

    # ------------------------------------------------------------------------------------------ internals
    def _in_thread_loop(self, make_coro: Callable[[], Awaitable[Any]]) -> Callable[[_Worker], Any]:
        def call(worker: _Worker) -> Any:
            home_pid = os.getpid()
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
                _exit_if_forked(home_pid)  # before any lock: one another thread held at the fork stays held
                with self._cond:
                    worker.task = None

        return call

    async def _await(self, fn: Callable[[_Worker], Any], timeout_s: float | None) -> Any:
        """Await ``fn`` in a pool thread, bounded by ``timeout_s`` from when the thread starts it.

        The thread notes its start time in a plain cell (no wake-up of the loop): the loop waits ``timeout_s`` on
        the call alone, and only when that wait ends without a result does it read the cell and wait out the rest
        (or give up on a call that never found a thread). A call that finishes in time costs one timed wait and
        the completion's wake-up, as ``run_in_executor`` costs."""
        started: list[float] = []  # set once by the pool thread when it starts fn
        fut = self._submit(fn, lambda: started.append(time.monotonic()))
        wrapped = asyncio.wrap_future(fut)
        try:
            if timeout_s is None:
                return await asyncio.shield(wrapped)
            wait_s = float(timeout_s)
            while True:
                done, _ = await asyncio.wait((wrapped,), timeout=wait_s)
                if done:
                    return wrapped.result()
                if not started:
                    raise TimeoutError(f"reward call waited {timeout_s}s for a free thread")
                wait_s = started[0] + float(timeout_s) - time.monotonic()
                if wait_s <= 0:
                    if wrapped.done():  # finished as the timer fired
                        return wrapped.result()
                    raise TimeoutError(f"reward call timed out after {timeout_s}s")
        except BaseException:
            if not wrapped.done():
                self._abandon(fut)
            wrapped.add_done_callback(_retrieve)  # an abandoned call's outcome is nobody's: never "not retrieved"
            raise

    def _submit(self, fn: Callable[[_Worker], Any], on_start: Callable[[], None]) -> concurrent.futures.Future:
        fut: concurrent.futures.Future = concurrent.futures.Future()
        with self._cond:
            if self._closed:
                raise RuntimeError(f"{self.name} is closed")
            self._queue.append((fn, fut, on_start))
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
            threading.Thread(target=self._work, daemon=True, name=self.name).start()
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
            self._detach(worker)
            task = worker.task
        if task is not None:  # an awaiting coroutine stops at once; a blocking one keeps its thread
            loop, coro_task = task
            try:
                loop.call_soon_threadsafe(coro_task.cancel)
            except RuntimeError:
                pass

    def _detach(self, worker: _Worker) -> None:
        """Take a busy thread out of the capacity (lock held); a replacement starts if calls are waiting."""
        worker.abandoned = True
        self._live -= 1
        self._abandoned += 1
        if self._queue and not self._idle:
            self._grow()

    def _work(self) -> None:
        worker = _Worker()
        home_pid = os.getpid()  # of this thread's process (an executor inherited through a fork starts new threads)
        while True:
            with self._cond:
                while not self._queue:
                    if self._closed:
                        self._live -= 1
                        return
                    self._idle += 1  # the submit that wakes this thread takes it off the idle count
                    self._cond.wait()
                    if self._closed and not self._queue:
                        self._idle -= 1
                fn, fut, on_start = self._queue.popleft()
                if not fut.set_running_or_notify_cancel():
                    continue
                worker.future = fut
                self._running[id(fut)] = worker
            on_start()
            try:
                result = fn(worker)
            except Exception as exc:  # noqa: BLE001 - delivered to the awaiting caller
                outcome: tuple[Any, BaseException | None] = (None, exc)
            except BaseException as exc:  # noqa: BLE001 - SystemExit & co. must not kill the thread silently
                outcome = (None, RewardExitError(f"the reward raised {type(exc).__name__}({exc})"))
            else:
                outcome = (result, None)
            _exit_if_forked(home_pid)  # a reward forked and its copy returned here: it must not go on
            settle(fut, *outcome)
            del fn, fut, on_start, outcome
            with self._cond:
                self._running.pop(id(worker.future), None)
                worker.future = None
                if not worker.abandoned and _has_leftover(getattr(self._local, "loop", None)):
                    self._detach(worker)  # the work a reward left behind is nobody's call: out of the capacity
            if worker.abandoned:
                self._drain_loop()
                with self._cond:
                    self._abandoned -= 1
                    if self._live >= self.max_workers:
                        return
                    self._live += 1  # back in the capacity
                    worker.abandoned = False

    def _drain_loop(self) -> None:
        """Run the work a reward left on this thread's loop that is due within :data:`DRAIN_HORIZON_S`."""
        loop = getattr(self._local, "loop", None)
        end = time.monotonic() + _DRAIN_LIMIT_S
        while loop is not None and _has_leftover(loop) and time.monotonic() < end:
            try:
                loop.run_until_complete(asyncio.sleep(min(_next_due(loop), 0.05)))
            except BaseException:  # noqa: BLE001 - a left-over callback's error belongs to no call
                pass


def _has_leftover(loop: asyncio.AbstractEventLoop | None) -> bool:
    """Whether ``loop`` has callbacks or task steps ready, or timers due within :data:`DRAIN_HORIZON_S`
    (CPython's event loops keep them in ``_ready`` and ``_scheduled``)."""
    if loop is None or loop.is_closed():
        return False
    return bool(getattr(loop, "_ready", None)) or _next_due(loop) <= DRAIN_HORIZON_S


def _next_due(loop: asyncio.AbstractEventLoop) -> float:
    """Seconds until the next live timer of ``loop`` fires (``inf`` without one)."""
    scheduled = getattr(loop, "_scheduled", None) or ()
    whens = [h.when() for h in scheduled if not h.cancelled()]
    return max(0.0, min(whens) - loop.time()) if whens else math.inf


def _exit_if_forked(home_pid: int) -> None:
    """End a forked copy of the process that a reward's call returned into (``os.fork`` in a reward, sync or
    async). It exits at once, before taking any lock: the other threads do not exist in the copy, so a lock one of
    them held at the fork stays held there for good and the copy would hang as an orphan."""
    if os.getpid() != home_pid:
        os._exit(0)


def _retrieve(fut: asyncio.Future) -> None:
    if not fut.cancelled():
        fut.exception()


def _nothing() -> None:
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
