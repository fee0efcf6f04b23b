"""Running sync rewards in worker processes: for CPU-bound rewards and rewards that use signals.

:class:`ProcessRunner` keeps up to ``max_workers`` long-lived child processes (``spawn`` start method, so it is
safe in processes with threads such as Ray actors). What runs in a child, and the wire format, is
:mod:`.worker`: jobs one at a time in the child's main thread (so ``signal.signal`` and ``signal.alarm`` work),
every reply carrying the request id it answers and its sender's pid. A reply for another request (a reward that
forked and whose copy wrote to the pipe, or any stray writer) is never handed to a caller: the call fails with
:class:`RemoteRewardError` and the worker, whose pipe can no longer be trusted, is killed and replaced.

Timeouts count from when a worker starts the call: starting a worker is never charged to a call (it is bounded
by ``start_timeout_s``). Calls beyond ``max_workers`` wait in a FIFO queue; by default that wait is limited by
the call's timeout too (``count_queue_wait=False`` lifts this, as the scoring engine does).

Fault isolation: a call that exceeds its timeout raises :class:`TimeoutError` at once while its worker is
killed (SIGTERM, then SIGKILL after ~1 s) in the background and a replacement starts at once; an exception in
the reward, a child that dies (segfault, ``os._exit``) or a result that cannot be pickled raise
:class:`RemoteRewardError`. Children are started by :meth:`ProcessRunner.start` (the scoring engine calls it
when it is built) or on the first :meth:`ProcessRunner.run`, stopped by :meth:`ProcessRunner.close` or at
interpreter exit, and exit by themselves when the parent goes away. A child that dies while starting, or one
that cannot be spawned at all, is a :class:`RemoteRewardError` with its cause (for the call that needed it, or
from :meth:`ProcessRunner.start`), and its slot is free again.

With ``normalise=True`` the worker also turns the reward's return value into a
:class:`~verl_rewards.scoring.result.ScoreResult` (:func:`~verl_rewards.scoring.result.normalise_result`), so that
this work, however slow, happens inside the call and under its timeout.

Each of the ``max_workers`` slots is a small state machine (:mod:`.slots`, :class:`SlotState`: ``EMPTY``,
``STARTING``, ``IDLE``, ``CLAIMED``, ``STOPPING``); every change is checked against the allowed transitions.
Blocking pipe waits happen on a private :class:`~verl_rewards.scoring.executors.threads.ThreadExecutor` of
``max_workers`` threads, never in the event loop; a runner can be used from several event loops (one after
another or in different threads).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import itertools
import multiprocessing
import multiprocessing.util  # noqa: F401  (imported before our atexit hook is registered, so ours runs first)
import os
import pickle
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

from ..result import ScoreResult
from ..spec import RewardSpec
from .base import error_info, settle
from .slots import Slot, SlotState
from .threads import ThreadExecutor
from .worker import (
    KILL_GRACE_S,
    SPAWN_HINT,
    Job,
    RemoteRewardError,
    WorkerProcess,
    encode_reply,
    spawn_failure,
    stop_all,
)

__all__ = ["ProcessRunner", "RemoteRewardError", "SlotState", "encode_reply"]

_KILL_GRACE_S = KILL_GRACE_S  # how long a terminated (SIGTERM) worker gets before SIGKILL (read at each stop)


# --------------------------------------------------------------------------------------------- child side


def _finalize(slots: list[Slot], threads: ThreadExecutor) -> None:
    """Clean-up of a runner garbage-collected without ``close()``."""
    stop_all([slot.worker for slot in slots if slot.worker is not None], _KILL_GRACE_S)
    threads.shutdown()


_RUNNERS: weakref.WeakSet[ProcessRunner] = weakref.WeakSet()


def _close_all_runners() -> None:
    for runner in list(_RUNNERS):
        try:
            runner.close()
        except Exception:
            pass


atexit.register(_close_all_runners)


_SHARED: dict[tuple[str, ...], tuple[ProcessRunner, int]] = {}
_SHARED_LOCK = threading.Lock()


def shared_runner(modules: Sequence[str], owner: object) -> ProcessRunner:
    """The process-wide runner for ``modules`` (one per distinct module list), held for ``owner``.

    A scoring core that is built again (a new manager in the same worker) reuses the running workers instead of
    starting a second pool; the runner is closed when the last owner is garbage-collected.
    """
    key = tuple(str(m) for m in modules)
    with _SHARED_LOCK:
        runner, owners = _SHARED.get(key, (None, 0))
        if runner is None or runner._closed:
            runner, owners = ProcessRunner(max_workers=max(1, os.cpu_count() or 1), modules=key), 0
        _SHARED[key] = (runner, owners + 1)
    weakref.finalize(owner, _release_shared, key, runner)
    return runner


def _release_shared(key: tuple[str, ...], runner: ProcessRunner) -> None:
    with _SHARED_LOCK:
        current, owners = _SHARED.get(key, (None, 0))
        if current is not runner:
            return
        if owners > 1:
            _SHARED[key] = (runner, owners - 1)
            return
        del _SHARED[key]
    runner.close()


_Waiter = tuple[asyncio.AbstractEventLoop, asyncio.Future]


class ProcessRunner:
    """Runs registered sync rewards in up to ``max_workers`` reusable worker processes, with timeouts.

    Args:
        max_workers: maximum number of worker processes alive at once.
        modules: reward modules (dotted names or ``.py`` paths) each worker imports at start, after
            ``verl_rewards.rewards`` itself.
        start_timeout_s: how long a worker may take to start and import the modules (never charged to a
            call's timeout); a worker that takes longer fails the call waiting for it.

    Each of the ``max_workers`` slots is a small state machine (:class:`SlotState`): every change goes through
    ``_move`` and is checked against the allowed transitions. A slot that becomes free (``IDLE`` or ``EMPTY``) goes
    to the first queued call, if any.
    """

    def __init__(self, max_workers: int, modules: Sequence[str] = (), *, start_timeout_s: float = 300.0):
        if int(max_workers) < 1:
            raise ValueError(f"ProcessRunner needs max_workers >= 1, got {max_workers!r}")
        if isinstance(modules, str):
            modules = [modules]
        self.max_workers = int(max_workers)
        self.modules: tuple[str, ...] = tuple(str(m) for m in modules)
        self.start_timeout_s = float(start_timeout_s)
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()
        self._spawn_lock = threading.Lock()
        self._slots = [Slot() for _ in range(self.max_workers)]
        self._waiters: collections.deque[_Waiter] = collections.deque()
        # the threads that wait on the workers' pipes (a job never outlives its timeout plus a kill)
        self._threads = ThreadExecutor(self.max_workers, name="verl-rewards-process-runner")
        self._init_error: tuple[str, str, str] | None = None
        self._closed = False
        self._request_ids = itertools.count(1)  # 0 is the start-up message's id
        self._finalizer = weakref.finalize(self, _finalize, self._slots, self._threads)
        self._finalizer.atexit = False  # the module's atexit hook closes live runners
        _RUNNERS.add(self)

    # ------------------------------------------------------------------ public API

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the live worker processes (for monitoring and tests)."""
        with self._lock:
            return [s.worker.pid for s in self._slots if s.worker is not None and s.state is not SlotState.STOPPING]

    def slot_states(self) -> list[SlotState]:
        """The state of every slot (for monitoring and tests)."""
        with self._lock:
            return [s.state for s in self._slots]

    async def run_reward(
        self, spec: RewardSpec, kwargs: dict[str, Any], timeout_s: float | None, *, number_key: str | None = None
    ) -> ScoreResult:
        """The executor interface: run the registered ``spec`` in a worker, normalised there, bounded by
        ``timeout_s`` from when the worker starts it (the wait for a free worker is not counted)."""
        result: ScoreResult = await self.run(
            spec.name, kwargs, timeout_s, count_queue_wait=False, normalise=True, number_key=number_key
        )
        return result

    async def run(
        self,
        reward_name: str,
        kwargs: dict[str, Any],
        timeout_s: float | None,
        *,
        count_queue_wait: bool = True,
        normalise: bool = False,
        number_key: str | None = None,
    ) -> Any:
        """Run the sync reward ``reward_name`` with ``kwargs`` in a worker process and return its result.

        ``timeout_s`` (``None``: no limit) counts from when a worker starts the call; waiting for a worker to
        start is never charged. ``count_queue_wait``: the wait for a free worker (behind busy ones) is limited
        by ``timeout_s`` as well. ``normalise``: the worker returns ``normalise_result(result, number_key)``, a
        :class:`~verl_rewards.scoring.result.ScoreResult`, computed inside the call. Raises ``TimeoutError`` (the
        worker is then replaced), :class:`RemoteRewardError` for failures in the child (its exception, its death,
        a reply for another request), and ``RuntimeError`` once the runner is closed. Cancelling the caller does
        not stop a running reward: its worker is released when the reward finishes or times out.
        """
        if timeout_s is not None and not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0 or None, got {timeout_s!r}")
        self._raise_if_unusable(reward_name)
        queue_deadline = None if timeout_s is None or not count_queue_wait else time.monotonic() + float(timeout_s)
        slot = await self._acquire(queue_deadline, reward_name, timeout_s)
        job = Job(next(self._request_ids), reward_name, kwargs, timeout_s, (number_key,) if normalise else None)
        cf: concurrent.futures.Future = concurrent.futures.Future()
        try:
            self._threads.submit(lambda: self._execute(slot, job, cf))
        except RuntimeError:
            self._give_back(slot)
            raise RuntimeError("ProcessRunner is closed") from None
        return await asyncio.wrap_future(cf)

    def start(self) -> None:
        """Start a worker in every free slot now (the processes are spawned here; they import the reward
        modules in the background), so that the first calls find them started or starting.

        Raises :class:`RemoteRewardError` with the cause when a worker process cannot be spawned at all (every
        slot stays free): e.g. in a process that is itself a worker re-importing a main script without an
        ``if __name__ == '__main__':`` guard, where ``multiprocessing`` refuses to start processes."""
        failure = self._start_free_slots()
        if failure is not None:
            raise failure

    def _start_free_slots(self) -> RemoteRewardError | None:
        """:meth:`start`'s work; the error instead of raising it (a replacement started from a runner thread
        leaves the report to the next call, which tries again)."""
        while True:
            with self._lock:
                if self._closed or self._init_error is not None or self._waiters:
                    return None
                slot = next((s for s in self._slots if s.state is SlotState.EMPTY), None)
                if slot is None:
                    return None
                self._move(slot, SlotState.STARTING)
            try:
                worker = self._spawn(slot)
            except BaseException as exc:  # noqa: BLE001 - the slot comes back free; the caller reports why
                self._give_back(slot)
                return None if self._closed else spawn_failure(exc)
            threading.Thread(
                target=self._warm, args=(slot, worker), name="verl-rewards-worker-start", daemon=True
            ).start()

    def close(self) -> None:
        """Stop every worker process and fail queued calls; further calls raise ``RuntimeError``."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            waiters = list(self._waiters)
            self._waiters.clear()
            workers = [s.worker for s in self._slots if s.worker is not None]
        for loop, fut in waiters:
            try:
                loop.call_soon_threadsafe(_fail_waiter, fut, RuntimeError("ProcessRunner was closed"))
            except RuntimeError:  # that event loop is closed
                pass
        stop_all(workers, _KILL_GRACE_S)
        self._threads.shutdown()
        self._finalizer.detach()

    def __enter__(self) -> ProcessRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the slot state machine

    def _move(self, slot: Slot, state: SlotState) -> None:
        """Change ``slot``'s state (lock held; :meth:`Slot.move` checks the transition)."""
        slot.move(state)

    def _hand_out(self, slot: Slot) -> bool:
        """Give a slot that just became free to the first queued call (lock held); ``False`` if none waits."""
        while self._waiters:
            loop, fut = self._waiters.popleft()
            try:
                loop.call_soon_threadsafe(self._deliver, fut, slot)
            except RuntimeError:  # that caller's event loop is closed
                continue
            self._move(slot, SlotState.CLAIMED)
            return True
        return False

    def _give_back(self, slot: Slot) -> None:
        """A claimed (or starting) slot is free again: to the next queued call, else ``IDLE`` with a live ready
        worker or ``EMPTY`` (a dead worker is stopped first)."""
        worker = slot.worker
        if worker is not None and (self._closed or not worker.ready or not worker.alive()):
            self._stop(slot)
            return
        with self._lock:
            if self._closed or self._hand_out(slot):
                return
            self._move(slot, SlotState.IDLE if worker is not None else SlotState.EMPTY)

    def _stop(
        self,
        slot: Slot,
        *,
        replace: bool = False,
        fail: tuple[concurrent.futures.Future, BaseException] | None = None,
    ) -> None:
        """Stop the slot's worker (``STOPPING``), then free the slot. ``fail``: settle that call with that error
        as soon as the worker is out of :attr:`worker_pids`, before the (maybe slow) stop; ``replace``: start a
        new worker at once."""
        with self._lock:
            self._move(slot, SlotState.STOPPING)
            worker = slot.worker
        if fail is not None:
            settle(fail[0], exc=fail[1])
        if worker is not None:
            worker.stop(_KILL_GRACE_S)
        with self._lock:
            slot.worker = None
            if not self._closed and self._hand_out(slot):
                return
            self._move(slot, SlotState.EMPTY)
        if replace:
            self._start_free_slots()

    def _deliver(self, fut: asyncio.Future, slot: Slot) -> None:
        """Hand a slot to a queued caller (runs in the caller's event loop)."""
        if fut.done():
            self._give_back(slot)
        else:
            fut.set_result(slot)

    def _raise_if_unusable(self, reward_name: str) -> None:
        if self._closed:
            raise RuntimeError("ProcessRunner is closed")
        if self._init_error is not None:
            raise self._init_failure(self._init_error, reward_name)

    def _init_failure(self, info: tuple[str, str, str], reward_name: str) -> RemoteRewardError:
        type_name, message, tb = info
        return RemoteRewardError(
            f"reward worker failed to start (importing reward modules {list(self.modules)}): {type_name}: {message}"
            f"\n--- traceback in the reward worker ---\n{tb}",
            exc_type=type_name,
            remote_traceback=tb,
            reward_name=reward_name,
        )

    async def _acquire(self, deadline: float | None, reward_name: str, timeout_s: float | None) -> Slot:
        """A claimed slot for one job: with an idle worker, or empty (the job starts its worker)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._closed:
                raise RuntimeError("ProcessRunner is closed")
            if not self._waiters:
                slot = next((s for s in self._slots if s.state is SlotState.IDLE), None) or next(
                    (s for s in self._slots if s.state is SlotState.EMPTY), None
                )
                if slot is not None:
                    self._move(slot, SlotState.CLAIMED)
                    return slot
            fut: asyncio.Future = loop.create_future()
            entry = (loop, fut)
            self._waiters.append(entry)
        timer = None
        if deadline is not None:
            message = (
                f"reward {reward_name!r} timed out after {timeout_s}s waiting for a free process worker "
                f"(all {self.max_workers} busy)"
            )
            timer = loop.call_later(max(0.0, deadline - time.monotonic()), self._expire, entry, message)
        try:
            slot = await fut
            return slot
        except BaseException:
            self._abandon(entry)
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _expire(self, entry: _Waiter, message: str) -> None:
        """A queued call's deadline passed (runs in its event loop): leave the queue with ``TimeoutError``."""
        fut = entry[1]
        if fut.done():
            return
        with self._lock:
            try:
                self._waiters.remove(entry)
            except ValueError:
                pass
        fut.set_exception(TimeoutError(message))

    def _abandon(self, entry: _Waiter) -> None:
        """Leave the queue (timeout or cancellation); give back a slot that was handed over meanwhile."""
        with self._lock:
            try:
                self._waiters.remove(entry)
            except ValueError:
                pass
        fut = entry[1]
        if fut.done():
            if not fut.cancelled() and fut.exception() is None:
                self._give_back(fut.result())
        else:
            fut.cancel()  # a hand-over still in flight sees this and gives the slot back

    # ------------------------------------------------------------------ job execution (runner threads)

    def _spawn(self, slot: Slot) -> WorkerProcess:
        with self._spawn_lock:
            worker = WorkerProcess(self._ctx, self.modules)
        with self._lock:
            slot.worker = worker
            closed = self._closed
        if closed:
            worker.stop(_KILL_GRACE_S)
            raise RuntimeError("ProcessRunner is closed")
        return worker

    def _warm(self, slot: Slot, worker: WorkerProcess) -> None:
        """Wait (in a background thread) for a worker started by :meth:`start`, then hand it out."""
        if self._wait_ready(worker, time.monotonic() + self.start_timeout_s) == "ready":
            self._give_back(slot)
        else:  # a call that takes the free slot starts its own worker and reports the error (or the init error)
            self._stop(slot)

    def _wait_ready(self, worker: WorkerProcess, deadline: float) -> str:
        """Wait for the child's start message: ``"ready"``, ``"timeout"``, ``"failed"`` or ``"died"``."""
        try:
            if not worker.conn.poll(max(0.0, deadline - time.monotonic())):
                return "timeout"
            _, _, ok, data = pickle.loads(worker.conn.recv_bytes())
            value = pickle.loads(data)
        except (EOFError, OSError):
            return "died"
        except Exception:  # a garbled start message: treat the worker as dead
            return "died"
        if ok:
            worker.ready = True
            return "ready"
        with self._lock:
            if self._init_error is None:
                self._init_error = value
        return "failed"

    def _execute(self, slot: Slot, job: Job, cf: concurrent.futures.Future) -> None:
        """Run one job on the claimed ``slot``; settles ``cf`` and frees the slot exactly once."""
        try:
            if not cf.set_running_or_notify_cancel():  # the caller went away before we started
                self._give_back(slot)
                return
            try:
                payload = job.encode()
            except Exception as exc:
                self._give_back(slot)
                type_name, message, tb = error_info(exc)
                settle(
                    cf,
                    exc=job.error(
                        f"cannot send the arguments of reward {job.name!r} to a worker process ({type_name}: "
                        f"{message})",
                        exc_type=type_name,
                        tb=tb,
                    ),
                )
                return
            worker = slot.worker
            if worker is None or not worker.alive():
                worker = self._start_worker(slot, job, cf)
                if worker is None:
                    return  # _start_worker settled cf and freed the slot
            self._call(slot, worker, job, payload, cf)
        except BaseException as exc:  # noqa: BLE001 - never lose a slot or leave the caller waiting
            settle(cf, exc=exc)
            if slot.state is SlotState.CLAIMED:
                self._stop(slot)

    def _start_worker(self, slot: Slot, job: Job, cf: concurrent.futures.Future) -> WorkerProcess | None:
        """Start a worker in the claimed slot and wait until it is ready (not charged to the call's timeout);
        ``None`` if the job cannot go on (cf settled, slot freed)."""
        if slot.worker is not None:  # a dead idle worker (killed from outside): stop it, keep the claim
            slot.worker.stop(_KILL_GRACE_S)
            slot.worker = None
        if self._init_error is not None:  # a previous worker could not import the modules: do not retry
            settle(cf, exc=self._init_failure(self._init_error, job.name))
            self._give_back(slot)
            return None
        try:
            worker = self._spawn(slot)
        except BaseException as start_exc:  # noqa: BLE001
            failure = RuntimeError("ProcessRunner is closed") if self._closed else spawn_failure(start_exc, job.name)
            self._give_back(slot)  # before the caller resumes, so that it finds the slot free
            settle(cf, exc=failure)
            return None
        status = self._wait_ready(worker, time.monotonic() + self.start_timeout_s)
        if status == "ready":
            return worker
        if status == "failed" and self._init_error is not None:
            exc: BaseException = self._init_failure(self._init_error, job.name)
        elif status == "timeout":
            exc = job.error(
                f"reward worker did not start within {self.start_timeout_s}s", exc_type="StartTimeout", pid=worker.pid
            )
        else:
            exc = job.error(
                f"reward worker pid {worker.pid} died while starting (exit code {worker.exitcode()}); see its "
                f"stderr. {SPAWN_HINT}",
                exc_type="WorkerDied",
                pid=worker.pid,
            )
        self._stop(slot, fail=(cf, exc))
        return None

    def _call(self, slot: Slot, worker: WorkerProcess, job: Job, payload: bytes, cf: concurrent.futures.Future) -> None:
        """Send one job to a ready worker and wait for its answer, the deadline or its death."""
        conn = worker.conn
        name = job.name
        try:
            conn.send_bytes(payload)
            timeout = None if job.timeout_s is None else float(job.timeout_s)  # counts from here
            if not conn.poll(timeout):
                exc: BaseException = TimeoutError(
                    f"reward {name!r} timed out after {job.timeout_s}s in process worker pid {worker.pid} "
                    "(worker killed)"
                )
                self._stop(slot, replace=True, fail=(cf, exc))
                return
            request_id, sender, ok, value_data = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            if self._closed:
                exc = RuntimeError(f"ProcessRunner was closed while reward {name!r} was running")
            else:
                exc = job.error(
                    f"reward {name!r}: process worker pid {worker.pid} died (exit code {worker.exitcode()}) while "
                    "running it",
                    exc_type="WorkerDied",
                    pid=worker.pid,
                )
            self._stop(slot, replace=True, fail=(cf, exc))
            return
        except Exception as garbled:  # noqa: BLE001 - nothing on this pipe can be trusted any more
            request_id, sender, ok, value_data = f"unreadable ({garbled!r})", None, False, b""
        pid = worker.pid
        if request_id != job.request_id or sender != pid:
            exc = job.error(
                f"reward {name!r}: process worker pid {pid} sent a reply for request {request_id} from pid {sender} "
                f"while request {job.request_id} was running (a reward that forks must end its child with "
                "os._exit); the reply was dropped and the worker replaced",
                exc_type="MismatchedReply",
                pid=pid,
            )
            self._stop(slot, replace=True, fail=(cf, exc))
            return
        self._give_back(slot)  # before the caller resumes, so that its next call finds the worker idle
        try:
            value = pickle.loads(value_data)
        except BaseException as exc:  # noqa: BLE001
            type_name, message, tb = error_info(exc)
            settle(
                cf,
                exc=job.error(
                    f"reward {name!r}: cannot unpickle its result in the parent process ({type_name}: {message})",
                    exc_type=type_name,
                    tb=tb,
                    pid=pid,
                ),
            )
            return
        if ok:
            settle(cf, value)
            return
        type_name, message, tb = value
        settle(
            cf,
            exc=job.error(
                f"reward {name!r} raised {type_name}: {message}\n--- traceback in process worker pid {pid} ---\n{tb}",
                exc_type=type_name,
                tb=tb,
                pid=pid,
            ),
        )


def _fail_waiter(fut: asyncio.Future, exc: BaseException) -> None:
    if not fut.done():
        fut.set_exception(exc)
