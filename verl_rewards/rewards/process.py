"""Running sync rewards in worker processes: for CPU-bound rewards and rewards that use signals.

:class:`ProcessRunner` keeps up to ``max_workers`` long-lived child processes (``spawn`` start method, so it is
safe in processes with threads such as Ray actors). Each child imports the reward modules once, then serves
jobs ``(reward name, kwargs)`` over its own pipe, one at a time, in its main thread (so ``signal.signal`` and
``signal.alarm`` work). Calls beyond ``max_workers`` wait in a FIFO queue; that wait counts toward the call's
timeout.

Fault isolation: a call that exceeds its timeout raises :class:`TimeoutError` at once while its worker is
killed (SIGTERM, then SIGKILL after ~1 s) in the background and replaced on the next call; an exception in
the reward, a child that dies (segfault, ``os._exit``) or a result that cannot be pickled raise
:class:`RemoteRewardError`. Children are started on the first :meth:`ProcessRunner.run`, stopped by
:meth:`ProcessRunner.close` or at interpreter exit, and exit by themselves when the parent goes away.

Blocking pipe waits happen in ``max_workers`` daemon threads owned by the runner, never in the event loop; a
runner can be used from several event loops (one after another or in different threads).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import inspect
import multiprocessing
import multiprocessing.connection
import multiprocessing.util  # noqa: F401  (imported before our atexit hook is registered, so ours runs first)
import os
import pickle
import queue
import signal
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ..scoring.loading import load_modules
from ..scoring.spec import RewardSpec, get_reward

__all__ = ["ProcessRunner", "RemoteRewardError"]

_KILL_GRACE_S = 1.0  # how long a terminated (SIGTERM) worker gets before SIGKILL
_PARENT_CHECK_S = 1.0  # how often a child checks that its parent is still alive
_PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL


class RemoteRewardError(RuntimeError):
    """A reward failed in a worker process: it raised, the worker died, or a value could not cross the pipe.

    ``exc_type`` is the name of the child's exception type (``"WorkerDied"`` when the process died) and
    ``remote_traceback`` the child's formatted traceback text; both are also part of the message.
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


# --------------------------------------------------------------------------------------------- child side


def _error_info(exc: BaseException) -> tuple[str, str, str]:
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


def _watch_parent(parent_pid: int) -> None:
    """Exit the child when its parent is gone (even while a reward hangs in the main thread)."""
    while True:
        time.sleep(_PARENT_CHECK_S)
        if os.getppid() != parent_pid:
            os._exit(0)


def _init_child(modules: Sequence[str]) -> None:
    """Import the configured reward modules (the engine adds ``verl_rewards.builtins``)."""
    load_modules(list(modules))


def _resolve(name: str) -> RewardSpec:
    """The registered reward ``name`` (the runner's modules, ``verl_rewards.builtins`` among them, registered it)."""
    return get_reward(name)


def _run_job(data: bytes) -> tuple[bool, Any]:
    """Decode one job, run the reward, return ``(True, result)`` or ``(False, error info)``."""
    try:
        name, kwargs = pickle.loads(data)
        spec = _resolve(name)
        if spec.is_async:
            raise TypeError(f"reward {spec.name!r} is async; the process executor runs only sync rewards")
        result = spec.invoke(**kwargs)
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise TypeError(f"reward {spec.name!r} returned an awaitable; the process executor runs only sync rewards")
        return True, result
    except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt in a reward are its errors too
        return False, _error_info(exc)


def _ignore_sigint(signum: int, frame: Any) -> None:
    """SIGINT handler of a worker: Ctrl-C is for the parent, which stops its workers itself.

    A Python-level handler (unlike ``SIG_IGN``) is reset by ``exec``, so programs a reward starts still get
    the default SIGINT behaviour.
    """


def _child_main(conn: multiprocessing.connection.Connection, modules: Sequence[str], parent_pid: int) -> None:
    """Entry point of a worker process: initialise, say ready, then serve jobs until the pipe closes."""
    signal.signal(signal.SIGINT, _ignore_sigint)
    try:  # let rewards start their own processes (daemonic processes may not have children)
        multiprocessing.current_process().daemon = False
    except Exception:
        pass
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="parent-watch", daemon=True).start()
    try:
        _init_child(modules)
    except BaseException as exc:  # noqa: BLE001
        conn.send_bytes(pickle.dumps((False, _error_info(exc)), _PICKLE_PROTOCOL))
        return
    conn.send_bytes(pickle.dumps((True, os.getpid()), _PICKLE_PROTOCOL))
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        outcome = _run_job(data)
        try:
            payload = pickle.dumps(outcome, _PICKLE_PROTOCOL)
        except Exception as exc:
            type_name, message, tb = _error_info(exc)
            hint = (
                f"the reward returned a value of type {type(outcome[1]).__name__} that cannot be pickled back "
                f"to the parent process ({type_name}: {message}); return numbers, strings, lists or dicts"
            )
            payload = pickle.dumps((False, (type_name, hint, tb)), _PICKLE_PROTOCOL)
        try:
            conn.send_bytes(payload)
        except (EOFError, OSError):
            return


# -------------------------------------------------------------------------------------------- parent side


class _Worker:
    """One child process and the parent's end of its pipe."""

    def __init__(self, ctx: Any, modules: Sequence[str]):
        parent_conn, child_conn = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(
            target=_child_main,
            args=(child_conn, tuple(modules), os.getpid()),
            name="verl-rewards-process-worker",
            daemon=True,  # multiprocessing's own exit hook terminates it if everything else fails
        )
        try:
            self.proc.start()
        except BaseException:
            parent_conn.close()
            raise
        finally:
            child_conn.close()
        self.conn = parent_conn
        self.pid: int = self.proc.pid or 0  # set once started
        self.owner_pid = os.getpid()
        self.ready = False

    def alive(self) -> bool:
        return self.proc.exitcode is None and self.proc.is_alive()

    def exitcode(self, wait_s: float = 0.5) -> int | None:
        """The exit code of a child that is dying or dead (waits up to ``wait_s``)."""
        self.proc.join(wait_s)
        return self.proc.exitcode

    def stop(self) -> None:
        """Close the pipe and make sure the process is gone (SIGTERM, SIGKILL after a grace period)."""
        try:
            self.conn.close()
        except OSError:
            pass
        if os.getpid() != self.owner_pid:  # a forked copy of the runner must not kill its parent's workers
            return
        if self.proc.exitcode is None:
            self.proc.terminate()
            self.proc.join(_KILL_GRACE_S)
            if self.proc.exitcode is None:
                self.proc.kill()
                self.proc.join()


def _stop_all(workers: Sequence[_Worker]) -> None:
    """Stop many workers with one shared grace period."""
    mine = [w for w in workers if w.owner_pid == os.getpid()]
    for w in mine:
        try:
            w.conn.close()
        except OSError:
            pass
        if w.proc.exitcode is None:
            try:
                w.proc.terminate()
            except OSError:
                pass
    end = time.monotonic() + _KILL_GRACE_S
    for w in mine:
        w.proc.join(max(0.0, end - time.monotonic()))
    for w in mine:
        if w.proc.exitcode is None:
            w.proc.kill()
            w.proc.join()


class _DaemonThreads:
    """A minimal pool of daemon threads, started on first use (a hung wait must never block interpreter exit)."""

    def __init__(self, n: int, name: str):
        self._n = n
        self._name = name
        self._jobs: queue.SimpleQueue[tuple[Callable[..., None], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._started = False
        self._closed = False
        self._lock = threading.Lock()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, args = job
            fn(*args)

    def submit(self, fn: Callable[..., None], *args: Any) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("ProcessRunner is closed")
            if not self._started:
                for i in range(self._n):
                    threading.Thread(target=self._loop, name=f"{self._name}-{i}", daemon=True).start()
                self._started = True
            self._jobs.put((fn, args))

    def shutdown(self) -> None:
        with self._lock:
            if self._started and not self._closed:
                for _ in range(self._n):
                    self._jobs.put(None)
            self._closed = True


def _finalize(workers: list[_Worker], threads: _DaemonThreads) -> None:
    """Clean-up of a runner garbage-collected without ``close()``."""
    _stop_all(list(workers))
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


def _settle(cf: concurrent.futures.Future, result: Any = None, exc: BaseException | None = None) -> None:
    """Complete ``cf`` unless it already is."""
    try:
        if exc is not None:
            cf.set_exception(exc)
        else:
            cf.set_result(result)
    except concurrent.futures.InvalidStateError:
        pass


class ProcessRunner:
    """Runs registered sync rewards in up to ``max_workers`` reusable worker processes, with timeouts.

    Args:
        max_workers: maximum number of worker processes alive at once.
        modules: reward modules (dotted names or ``.py`` paths) each worker imports at start, after
            ``verl_rewards.rewards`` itself.
        start_timeout_s: how long a worker may take to start and import the modules; a call whose own
            timeout expires first raises ``TimeoutError`` while the worker keeps starting for the next call.
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
        self._idle: list[_Worker] = []  # started, ready, not running a job
        self._free_slots = self.max_workers  # slots with no process: a new one is started on demand
        self._waiters: collections.deque[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = collections.deque()
        self._workers: list[_Worker] = []  # every live worker, shared with the finalizer
        self._threads = _DaemonThreads(self.max_workers, "verl-rewards-process-runner")
        self._init_error: tuple[str, str, str] | None = None
        self._closed = False
        self._finalizer = weakref.finalize(self, _finalize, self._workers, self._threads)
        self._finalizer.atexit = False  # the module's atexit hook closes live runners
        _RUNNERS.add(self)

    # ------------------------------------------------------------------ public API

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the live worker processes (for monitoring and tests)."""
        with self._lock:
            return [w.pid for w in self._workers]

    async def run(self, reward_name: str, kwargs: dict[str, Any], timeout_s: float | None) -> Any:
        """Run the sync reward ``reward_name`` with ``kwargs`` in a worker process and return its result.

        ``timeout_s`` (``None``: no limit) covers the wait for a free worker and the reward itself. Raises
        ``TimeoutError`` (the worker is then replaced), :class:`RemoteRewardError` for failures in the child,
        and ``RuntimeError`` once the runner is closed. Cancelling the caller does not stop a running reward:
        its worker is released when the reward finishes or times out.
        """
        if timeout_s is not None and not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0 or None, got {timeout_s!r}")
        self._raise_if_unusable(reward_name)
        deadline = None if timeout_s is None else time.monotonic() + float(timeout_s)
        token = await self._acquire(deadline, reward_name, timeout_s)
        cf: concurrent.futures.Future = concurrent.futures.Future()
        try:
            self._threads.submit(self._execute, token, reward_name, kwargs, deadline, timeout_s, cf)
        except RuntimeError:
            self._release(token)
            raise
        return await asyncio.wrap_future(cf)

    def close(self) -> None:
        """Stop every worker process and fail queued calls; further calls raise ``RuntimeError``."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            waiters = list(self._waiters)
            self._waiters.clear()
            workers = list(self._workers)
            self._workers.clear()
            self._idle.clear()
        for loop, fut in waiters:
            try:
                loop.call_soon_threadsafe(_fail_waiter, fut, RuntimeError("ProcessRunner was closed"))
            except RuntimeError:  # that event loop is closed
                pass
        _stop_all(workers)
        self._threads.shutdown()
        self._finalizer.detach()

    def __enter__(self) -> ProcessRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ slots

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

    async def _acquire(self, deadline: float | None, reward_name: str, timeout_s: float | None) -> _Worker | None:
        """A slot for one job: an idle worker, or ``None`` meaning "start a new worker"."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._closed:
                raise RuntimeError("ProcessRunner is closed")
            if not self._waiters:
                if self._idle:
                    return self._idle.pop()
                if self._free_slots > 0:
                    self._free_slots -= 1
                    return None
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
            return await fut
        except BaseException:
            self._abandon(entry)
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _expire(self, entry: tuple[asyncio.AbstractEventLoop, asyncio.Future], message: str) -> None:
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

    def _abandon(self, entry: tuple[asyncio.AbstractEventLoop, asyncio.Future]) -> None:
        """Leave the queue (timeout or cancellation); give back a slot that was handed over meanwhile."""
        with self._lock:
            try:
                self._waiters.remove(entry)
            except ValueError:
                pass
        fut = entry[1]
        if fut.done():
            if not fut.cancelled() and fut.exception() is None:
                self._release(fut.result())
        else:
            fut.cancel()  # a hand-over still in flight sees this and releases the slot again

    def _deliver(self, fut: asyncio.Future, token: _Worker | None) -> None:
        """Hand a slot to a queued caller (runs in the caller's event loop)."""
        if fut.done():
            self._release(token)
        else:
            fut.set_result(token)

    def _release(self, token: _Worker | None) -> None:
        """Give a slot back: to the first queued caller, else to the idle list or the free count."""
        stop: _Worker | None = None
        with self._lock:
            if token is not None and (self._closed or not token.alive()):
                stop, token = token, None
                if stop in self._workers:
                    self._workers.remove(stop)
            if self._closed:
                pass
            else:
                delivered = False
                while self._waiters and not delivered:
                    loop, fut = self._waiters.popleft()
                    try:
                        loop.call_soon_threadsafe(self._deliver, fut, token)
                        delivered = True
                    except RuntimeError:  # that caller's event loop is closed
                        continue
                if not delivered:
                    if token is None:
                        self._free_slots += 1
                    else:
                        self._idle.append(token)
        if stop is not None:
            stop.stop()

    def _forget(self, worker: _Worker) -> None:
        """Drop a worker from the live list (before reporting its failure, so ``worker_pids`` is current)."""
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)

    def _discard(self, worker: _Worker) -> None:
        """Kill a worker and give its slot back as a free one."""
        self._forget(worker)
        worker.stop()
        self._release(None)

    # ------------------------------------------------------------------ job execution (pool threads)

    def _spawn(self) -> _Worker:
        with self._spawn_lock:
            worker = _Worker(self._ctx, self.modules)
        with self._lock:
            self._workers.append(worker)
            closed = self._closed
        if closed:
            self._discard(worker)
            raise RuntimeError("ProcessRunner is closed")
        return worker

    def _wait_ready(self, worker: _Worker, deadline: float) -> str:
        """Wait for the child's start message: ``"ready"``, ``"timeout"``, ``"failed"`` or ``"died"``."""
        try:
            if not worker.conn.poll(max(0.0, deadline - time.monotonic())):
                return "timeout"
            ok, value = pickle.loads(worker.conn.recv_bytes())
        except (EOFError, OSError):
            return "died"
        if ok:
            worker.ready = True
            return "ready"
        with self._lock:
            if self._init_error is None:
                self._init_error = value
        return "failed"

    def _execute(
        self,
        token: _Worker | None,
        name: str,
        kwargs: dict[str, Any],
        deadline: float | None,
        timeout_s: float | None,
        cf: concurrent.futures.Future,
    ) -> None:
        """Run one job on the slot ``token``; settles ``cf`` and releases the slot exactly once."""
        worker = token
        try:
            if not cf.set_running_or_notify_cancel():  # the caller went away before we started
                self._release(worker)
                return
            try:
                payload = pickle.dumps((name, kwargs), _PICKLE_PROTOCOL)
            except Exception as exc:
                self._release(worker)
                type_name, message, tb = _error_info(exc)
                _settle(
                    cf,
                    exc=RemoteRewardError(
                        f"cannot send the arguments of reward {name!r} to a worker process ({type_name}: {message})",
                        exc_type=type_name,
                        remote_traceback=tb,
                        reward_name=name,
                    ),
                )
                return
            if worker is not None and not worker.alive():
                self._discard_no_release(worker)
                worker = None
            if worker is None:
                worker = self._start_worker(name, deadline, timeout_s, cf)
                if worker is None:
                    return  # _start_worker settled cf and released the slot
            self._call(worker, name, payload, deadline, timeout_s, cf)
        except BaseException as exc:  # noqa: BLE001 - never lose a slot or leave the caller waiting
            _settle(cf, exc=exc)
            if worker is not None:
                self._discard(worker)
            else:
                self._release(None)

    def _discard_no_release(self, worker: _Worker) -> None:
        self._forget(worker)
        worker.stop()

    def _start_worker(
        self, name: str, deadline: float | None, timeout_s: float | None, cf: concurrent.futures.Future
    ) -> _Worker | None:
        """Start a worker and wait until it is ready; ``None`` if the job cannot go on (cf settled)."""
        if self._init_error is not None:  # a previous worker could not import the modules: do not retry
            _settle(cf, exc=self._init_failure(self._init_error, name))
            self._release(None)
            return None
        try:
            worker = self._spawn()
        except BaseException as start_exc:  # noqa: BLE001
            failure = start_exc if isinstance(start_exc, RuntimeError) else RuntimeError(f"cannot start: {start_exc}")
            _settle(cf, exc=failure)
            self._release(None)
            return None
        start_deadline = time.monotonic() + self.start_timeout_s
        status = self._wait_ready(worker, start_deadline if deadline is None else min(deadline, start_deadline))
        if status == "timeout" and deadline is not None and deadline < start_deadline:
            # the caller's time is up; let the worker finish starting for the next caller
            _settle(
                cf,
                exc=TimeoutError(f"reward {name!r} timed out after {timeout_s}s while its process worker was starting"),
            )
            status = self._wait_ready(worker, start_deadline)
            if status == "ready":
                self._release(worker)
            else:
                self._discard(worker)
            return None
        if status == "ready":
            return worker
        if status == "failed" and self._init_error is not None:
            exc: BaseException = self._init_failure(self._init_error, name)
        elif status == "timeout":
            exc = RemoteRewardError(
                f"reward worker did not start within {self.start_timeout_s}s",
                exc_type="StartTimeout",
                reward_name=name,
                pid=worker.pid,
            )
        else:
            exc = RemoteRewardError(
                f"reward worker pid {worker.pid} died while starting (exit code {worker.exitcode()}); see its "
                "stderr. Workers use the 'spawn' start method, which re-imports the main script: guard its "
                "top-level code with `if __name__ == '__main__':`",
                exc_type="WorkerDied",
                reward_name=name,
                pid=worker.pid,
            )
        self._forget(worker)
        _settle(cf, exc=exc)
        self._discard(worker)
        return None

    def _call(
        self,
        worker: _Worker,
        name: str,
        payload: bytes,
        deadline: float | None,
        timeout_s: float | None,
        cf: concurrent.futures.Future,
    ) -> None:
        """Send one job to a ready worker and wait for its answer, the deadline or its death."""
        conn = worker.conn
        try:
            conn.send_bytes(payload)
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not conn.poll(timeout):
                self._forget(worker)
                _settle(
                    cf,
                    exc=TimeoutError(
                        f"reward {name!r} timed out after {timeout_s}s in process worker pid {worker.pid} "
                        "(worker killed)"
                    ),
                )
                self._discard(worker)
                return
            data = conn.recv_bytes()
        except (EOFError, OSError):
            self._forget(worker)
            if self._closed:
                _settle(cf, exc=RuntimeError(f"ProcessRunner was closed while reward {name!r} was running"))
            else:
                code = worker.exitcode()
                _settle(
                    cf,
                    exc=RemoteRewardError(
                        f"reward {name!r}: process worker pid {worker.pid} died (exit code {code}) while running it",
                        exc_type="WorkerDied",
                        reward_name=name,
                        pid=worker.pid,
                    ),
                )
            self._discard(worker)
            return
        # give the worker back before the caller resumes, so that its next call finds it idle
        self._release(worker)
        pid = worker.pid
        try:
            ok, value = pickle.loads(data)
        except BaseException as exc:  # noqa: BLE001
            type_name, message, tb = _error_info(exc)
            _settle(
                cf,
                exc=RemoteRewardError(
                    f"reward {name!r}: cannot unpickle its result in the parent process ({type_name}: {message})",
                    exc_type=type_name,
                    remote_traceback=tb,
                    reward_name=name,
                    pid=pid,
                ),
            )
            return
        if ok:
            _settle(cf, value)
            return
        type_name, message, tb = value
        _settle(
            cf,
            exc=RemoteRewardError(
                f"reward {name!r} raised {type_name}: {message}\n--- traceback in process worker pid {pid} ---\n{tb}",
                exc_type=type_name,
                remote_traceback=tb,
                reward_name=name,
                pid=pid,
            ),
        )


def _fail_waiter(fut: asyncio.Future, exc: BaseException) -> None:
    if not fut.done():
        fut.set_exception(exc)
