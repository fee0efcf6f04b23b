"""Running sync rewards in worker processes: for CPU-bound rewards and rewards that use signals.

:class:`ProcessRunner` keeps up to ``max_workers`` long-lived child processes (``spawn`` start method, so it is
safe in processes with threads such as Ray actors). Each child imports the reward modules once, then serves
jobs ``(request id, reward name, kwargs)`` over its own pipe, one at a time, in its main thread (so
``signal.signal`` and ``signal.alarm`` work). Every reply carries the request id it answers and the pid of the
process that sent it; a reply for another request (a reward that forked and whose copy wrote to the pipe, or any
stray writer) is never handed to a caller: the call fails with :class:`RemoteRewardError` and the worker, whose
pipe can no longer be trusted, is killed and replaced. A forked copy of a worker that returns from a reward
exits at once instead of answering or reading jobs.

Timeouts count from when a worker starts the call: starting a worker is never charged to a call (it is bounded
by ``start_timeout_s``). Calls beyond ``max_workers`` wait in a FIFO queue; by default that wait is limited by
the call's timeout too (``count_queue_wait=False`` lifts this, as the scoring engine does).

Fault isolation: a call that exceeds its timeout raises :class:`TimeoutError` at once while its worker is
killed (SIGTERM, then SIGKILL after ~1 s) in the background and a replacement starts at once; an exception in
the reward, a child that dies (segfault, ``os._exit``) or a result that cannot be pickled raise
:class:`RemoteRewardError`. Children are started by :meth:`ProcessRunner.start` (the scoring engine calls it
when it is built) or on the first :meth:`ProcessRunner.run`, stopped by :meth:`ProcessRunner.close` or at
interpreter exit, and exit by themselves when the parent goes away.

With ``normalise=True`` the worker also turns the reward's return value into a
:class:`~verl_rewards.scoring.result.ScoreResult` (:func:`~verl_rewards.scoring.result.normalise_result`), so that
this work, however slow, happens inside the call and under its timeout.

Blocking pipe waits happen in ``max_workers`` daemon threads owned by the runner, never in the event loop; a
runner can be used from several event loops (one after another or in different threads).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import inspect
import itertools
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
from dataclasses import dataclass
from typing import Any

from ..scoring.loading import load_modules
from ..scoring.result import normalise_result
from ..scoring.spec import RewardSpec, get_reward

__all__ = ["ProcessRunner", "RemoteRewardError", "encode_reply"]

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


def encode_reply(request_id: int, pid: int, ok: bool, value: Any) -> bytes:
    """A worker's reply: ``(request id, sender pid, ok, pickled value)``.

    The value is pickled on its own, so the parent always reads which request a reply answers, even when the
    value cannot be unpickled there. Raises what ``pickle.dumps`` raises for an unpicklable value.
    """
    return pickle.dumps((request_id, pid, ok, pickle.dumps(value, _PICKLE_PROTOCOL)), _PICKLE_PROTOCOL)


def _run_job(name: str, kwargs: dict[str, Any], post: tuple[str | None] | None, home_pid: int) -> tuple[bool, Any]:
    """Run the reward (and, with ``post=(number_key,)``, normalise its result); ``(True, result)`` or
    ``(False, error info)``. A forked copy of the worker that gets here exits at once."""
    try:
        spec = _resolve(name)
        if spec.is_async:
            raise TypeError(f"reward {spec.name!r} is async; the process executor runs only sync rewards")
        try:
            result = spec.invoke(**kwargs)
        finally:
            if os.getpid() != home_pid:  # the reward forked and its copy returned: it must not answer or read jobs
                os._exit(0)
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise TypeError(f"reward {spec.name!r} returned an awaitable; the process executor runs only sync rewards")
        if post is not None:
            result = normalise_result(result, number_key=post[0])
        return True, result
    except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt in a reward are its errors too
        if os.getpid() != home_pid:
            os._exit(0)
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
    home_pid = os.getpid()
    try:
        _init_child(modules)
    except BaseException as exc:  # noqa: BLE001
        conn.send_bytes(encode_reply(0, home_pid, False, _error_info(exc)))
        return
    conn.send_bytes(encode_reply(0, home_pid, True, home_pid))
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        request_id = -1
        try:
            request_id, job = pickle.loads(data)
            name, kwargs, post = pickle.loads(job)
            ok, value = _run_job(name, kwargs, post, home_pid)
        except BaseException as exc:  # noqa: BLE001 - a job that cannot be decoded is that job's error
            ok, value = False, _error_info(exc)
        try:
            payload = encode_reply(request_id, home_pid, ok, value)
        except Exception as exc:
            type_name, message, tb = _error_info(exc)
            hint = (
                f"the reward returned a value of type {type(value).__name__} that cannot be pickled back "
                f"to the parent process ({type_name}: {message}); return numbers, strings, lists or dicts"
            )
            payload = encode_reply(request_id, home_pid, False, (type_name, hint, tb))
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


@dataclass(frozen=True)
class _Job:
    """One call: its request id (echoed by the worker's reply), reward, arguments, timeout and post-processing."""

    request_id: int
    name: str
    kwargs: dict[str, Any]
    timeout_s: float | None
    post: tuple[str | None] | None  # (number_key,): normalise the result in the worker


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
        start_timeout_s: how long a worker may take to start and import the modules (never charged to a
            call's timeout); a worker that takes longer fails the call waiting for it.
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
        self._request_ids = itertools.count(1)  # 0 is the start-up message's id
        self._finalizer = weakref.finalize(self, _finalize, self._workers, self._threads)
        self._finalizer.atexit = False  # the module's atexit hook closes live runners
        _RUNNERS.add(self)

    # ------------------------------------------------------------------ public API

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the live worker processes (for monitoring and tests)."""
        with self._lock:
            return [w.pid for w in self._workers]

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
        token = await self._acquire(queue_deadline, reward_name, timeout_s)
        cf: concurrent.futures.Future = concurrent.futures.Future()
        job = _Job(next(self._request_ids), reward_name, kwargs, timeout_s, (number_key,) if normalise else None)
        try:
            self._threads.submit(self._execute, token, job, cf)
        except RuntimeError:
            self._release(token)
            raise
        return await asyncio.wrap_future(cf)

    def start(self) -> None:
        """Start a worker in every free slot now (the processes are spawned here; they import the reward
        modules in the background), so that the first calls find them started or starting."""
        while True:
            with self._lock:
                if self._closed or self._init_error is not None or self._free_slots <= 0 or self._waiters:
                    return
                self._free_slots -= 1
            try:
                worker = self._spawn()
            except BaseException:  # noqa: BLE001 - the slot comes back; a call will try again and report why
                self._release(None)
                return
            threading.Thread(target=self._warm, args=(worker,), name="verl-rewards-worker-start", daemon=True).start()

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

    def _discard(self, worker: _Worker, *, replace: bool = False) -> None:
        """Kill a worker and give its slot back as a free one; ``replace``: start a replacement in it at once."""
        self._forget(worker)
        worker.stop()
        self._release(None)
        if replace:
            self.start()

    def _warm(self, worker: _Worker) -> None:
        """Wait (in a background thread) for a worker started by :meth:`start`, then hand it out."""
        status = self._wait_ready(worker, time.monotonic() + self.start_timeout_s)
        if status == "ready":
            self._release(worker)
        else:  # a call that takes the free slot starts its own worker and reports the error (or the init error)
            self._discard(worker)

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

    def _execute(self, token: _Worker | None, job: _Job, cf: concurrent.futures.Future) -> None:
        """Run one job on the slot ``token``; settles ``cf`` and releases the slot exactly once."""
        worker = token
        name = job.name
        try:
            if not cf.set_running_or_notify_cancel():  # the caller went away before we started
                self._release(worker)
                return
            try:
                job_data = pickle.dumps((name, job.kwargs, job.post), _PICKLE_PROTOCOL)
                payload = pickle.dumps((job.request_id, job_data), _PICKLE_PROTOCOL)
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
                worker = self._start_worker(name, cf)
                if worker is None:
                    return  # _start_worker settled cf and released the slot
            self._call(worker, job, payload, cf)
        except BaseException as exc:  # noqa: BLE001 - never lose a slot or leave the caller waiting
            _settle(cf, exc=exc)
            if worker is not None:
                self._discard(worker)
            else:
                self._release(None)

    def _discard_no_release(self, worker: _Worker) -> None:
        self._forget(worker)
        worker.stop()

    def _start_worker(self, name: str, cf: concurrent.futures.Future) -> _Worker | None:
        """Start a worker and wait until it is ready (not charged to the call's timeout); ``None`` if the job
        cannot go on (cf settled)."""
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
        status = self._wait_ready(worker, time.monotonic() + self.start_timeout_s)
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

    def _call(self, worker: _Worker, job: _Job, payload: bytes, cf: concurrent.futures.Future) -> None:
        """Send one job to a ready worker and wait for its answer, the deadline or its death."""
        conn = worker.conn
        name = job.name
        try:
            conn.send_bytes(payload)
            timeout = None if job.timeout_s is None else float(job.timeout_s)  # counts from here
            if not conn.poll(timeout):
                self._forget(worker)
                _settle(
                    cf,
                    exc=TimeoutError(
                        f"reward {name!r} timed out after {job.timeout_s}s in process worker pid {worker.pid} "
                        "(worker killed)"
                    ),
                )
                self._discard(worker, replace=True)
                return
            data = conn.recv_bytes()
            request_id, sender, ok, value_data = pickle.loads(data)
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
            self._discard(worker, replace=True)
            return
        except Exception as exc:  # noqa: BLE001 - a garbled reply: nothing on this pipe can be trusted any more
            request_id, sender, ok, value_data = None, None, False, b""
            garbled: BaseException | None = exc
        else:
            garbled = None
        pid = worker.pid
        if garbled is not None or request_id != job.request_id or sender != pid:
            self._forget(worker)
            what = f"unreadable ({garbled!r})" if garbled is not None else f"for request {request_id} from pid {sender}"
            _settle(
                cf,
                exc=RemoteRewardError(
                    f"reward {name!r}: process worker pid {pid} sent a reply {what} while request {job.request_id} "
                    "was running (a reward that forks must end its child with os._exit); the reply was dropped "
                    "and the worker replaced",
                    exc_type="MismatchedReply",
                    reward_name=name,
                    pid=pid,
                ),
            )
            self._discard(worker, replace=True)
            return
        # give the worker back before the caller resumes, so that its next call finds it idle
        self._release(worker)
        try:
            value = pickle.loads(value_data)
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
