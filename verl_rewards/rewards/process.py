"""Running sync rewards in worker processes, on ``pebble.ProcessPool`` (evaluation prototype).

Workers (``spawn``) import the reward modules once in the pool initializer; a call is ``(reward name, kwargs,
deadline)``. The timeout covers the queue wait and the run: ``asyncio.wait_for`` around the pebble future,
whose cancellation makes pebble stop the worker running it. A queued call whose deadline passed is skipped by
the worker that picks it up.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib
import inspect
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pebble

from .loading import load_modules
from .registry import RewardRegistryError, RewardSpec, get_reward

__all__ = ["ProcessRunner", "RemoteRewardError"]

_PARENT_CHECK_S = 1.0


class RemoteRewardError(RuntimeError):
    """A reward failed in a worker process: it raised, the worker died, or a value could not cross the pipe."""

    def __init__(self, message: str, *, exc_type: str = "", remote_traceback: str = "", reward_name: str = "",
                 pid: int | None = None):
        super().__init__(message)
        self.exc_type = exc_type
        self.remote_traceback = remote_traceback
        self.reward_name = reward_name
        self.pid = pid


def _error_info(exc: BaseException) -> tuple[str, str, str]:
    try:
        message = str(exc)
    except Exception:
        message = f"<unprintable {type(exc).__name__}>"
    try:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:
        tb = ""
    return type(exc).__name__, message, tb


# --------------------------------------------------------------------------------------------- child side

_init_error: tuple[str, str, str] | None = None
_builtins_loaded = False


def _ignore_sigint(signum: int, frame: Any) -> None:
    """Ctrl-C is for the parent (a Python handler, unlike pebble's SIG_IGN, is reset by exec)."""


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(_PARENT_CHECK_S)
        if os.getppid() != parent_pid:
            os._exit(0)


def _init_child(modules: Sequence[str], parent_pid: int) -> None:
    """Pool initializer: never raises (pebble would only log the error and break the pool); keeps it instead."""
    global _init_error
    signal.signal(signal.SIGINT, _ignore_sigint)
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    try:
        importlib.import_module("verl_rewards.rewards")
        load_modules(list(modules))
    except BaseException as exc:  # noqa: BLE001
        _init_error = _error_info(exc)


def _resolve(name: str) -> RewardSpec:
    global _builtins_loaded
    try:
        return get_reward(name)
    except RewardRegistryError:
        if _builtins_loaded:
            raise
        _builtins_loaded = True
        ensure = getattr(sys.modules.get("verl_rewards.rewards"), "ensure_builtins", None)
        if ensure is None:
            raise
        ensure()
        return get_reward(name)


def _child_call(name: str, kwargs: dict[str, Any], deadline: float | None) -> tuple[str, Any, int]:
    """One call in a worker: ``(status, value, pid)``, status ``ok``, ``error``, ``init`` or ``expired``."""
    pid = os.getpid()
    if _init_error is not None:
        return "init", _init_error, pid
    if deadline is not None and time.time() > deadline:
        return "expired", None, pid
    try:
        spec = _resolve(name)
        if spec.is_async:
            raise TypeError(f"reward {spec.name!r} is async; the process executor runs only sync rewards")
        result = spec.invoke(**kwargs)
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise TypeError(f"reward {spec.name!r} returned an awaitable; the process executor runs only sync rewards")
    except BaseException as exc:  # noqa: BLE001
        return "error", _error_info(exc), pid
    try:
        pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        type_name, message, tb = _error_info(exc)
        hint = (f"the reward returned a value of type {type(result).__name__} that cannot be pickled back to the "
                f"parent process ({type_name}: {message}); return numbers, strings, lists or dicts")
        return "error", (type_name, hint, tb), pid
    return "ok", result, pid


# -------------------------------------------------------------------------------------------- parent side

_RUNNERS: weakref.WeakSet[ProcessRunner] = weakref.WeakSet()


@atexit.register
def _close_all_runners() -> None:
    for runner in list(_RUNNERS):
        try:
            runner.close()
        except Exception:
            pass


_SHARED: dict[tuple[str, ...], tuple[ProcessRunner, int]] = {}
_SHARED_LOCK = threading.Lock()


def shared_runner(modules: Sequence[str], owner: object) -> ProcessRunner:
    """The process-wide runner for ``modules``, held for ``owner`` (closed when the last owner is collected)."""
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


def _stop_pool(pool: pebble.ProcessPool) -> None:
    pool.stop()
    pool.join()


class ProcessRunner:
    """Runs registered sync rewards in ``max_workers`` pebble worker processes, with timeouts."""

    def __init__(self, max_workers: int, modules: Sequence[str] = (), *, start_timeout_s: float = 300.0):
        if int(max_workers) < 1:
            raise ValueError(f"ProcessRunner needs max_workers >= 1, got {max_workers!r}")
        if isinstance(modules, str):
            modules = [modules]
        self.max_workers = int(max_workers)
        self.modules: tuple[str, ...] = tuple(str(m) for m in modules)
        self.start_timeout_s = float(start_timeout_s)
        self._lock = threading.Lock()
        self._pool: pebble.ProcessPool | None = None
        self._inflight: set[Any] = set()
        self._init_error: tuple[str, str, str] | None = None
        self._closed = False
        _RUNNERS.add(self)

    def _get_pool(self) -> pebble.ProcessPool:
        """The running pool; a new one when there is none or pebble marked it broken."""
        with self._lock:
            if self._closed:
                raise RuntimeError("ProcessRunner is closed")
            pool = self._pool
            if pool is None or not pool.active:
                if pool is not None:
                    threading.Thread(target=_stop_pool, args=(pool,), daemon=True).start()
                pool = pebble.ProcessPool(
                    max_workers=self.max_workers,
                    initializer=_init_child,
                    initargs=(self.modules, os.getpid()),
                    context=multiprocessing.get_context("spawn"),
                )
                self._pool = pool
            return pool

    def _schedule(self, name: str, kwargs: dict[str, Any], deadline: float | None) -> Any:
        pool = self._get_pool()
        try:
            return pool.schedule(_child_call, args=(name, kwargs, deadline))
        except RuntimeError:
            if self._closed:
                raise
            return self._get_pool().schedule(_child_call, args=(name, kwargs, deadline))

    async def run(self, reward_name: str, kwargs: dict[str, Any], timeout_s: float | None) -> Any:
        """Run the sync reward ``reward_name`` with ``kwargs`` in a worker process and return its result."""
        if timeout_s is not None and not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0 or None, got {timeout_s!r}")
        if self._closed:
            raise RuntimeError("ProcessRunner is closed")
        if self._init_error is not None:
            raise self._init_failure(reward_name)
        try:
            pickle.dumps((reward_name, kwargs), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            type_name, message, tb = _error_info(exc)
            raise RemoteRewardError(
                f"cannot send the arguments of reward {reward_name!r} to a worker process ({type_name}: {message})",
                exc_type=type_name, remote_traceback=tb, reward_name=reward_name) from None
        deadline = None if timeout_s is None else time.time() + float(timeout_s)
        # the first call starts the processes in the event loop (pebble's schedule() spawns them: ~7 ms each)
        pf = self._schedule(reward_name, kwargs, deadline)
        self._inflight.add(pf)
        pf.add_done_callback(self._inflight.discard)
        try:
            status, value, pid = await asyncio.wait_for(asyncio.wrap_future(pf), timeout_s)
        except TimeoutError:
            where = "in process worker (worker killed)" if pf.running() else "waiting for a free process worker"
            raise TimeoutError(f"reward {reward_name!r} timed out after {timeout_s}s {where}") from None
        except pebble.ProcessExpired as exc:
            raise RemoteRewardError(
                f"reward {reward_name!r}: process worker pid {exc.pid} died (exit code {exc.exitcode}) while running it",
                exc_type="WorkerDied", reward_name=reward_name, pid=exc.pid) from None
        except BrokenProcessPool as exc:
            raise RemoteRewardError(f"reward {reward_name!r}: the process pool broke ({exc})", exc_type="WorkerDied",
                                    reward_name=reward_name) from None
        if status == "ok":
            return value
        if status == "expired":
            raise TimeoutError(f"reward {reward_name!r} timed out after {timeout_s}s waiting for a free process worker")
        if status == "init":
            with self._lock:
                first = self._init_error is None
                self._init_error = value
            if first:
                self._stop()
            raise self._init_failure(reward_name)
        type_name, message, tb = value
        raise RemoteRewardError(
            f"reward {reward_name!r} raised {type_name}: {message}\n--- traceback in process worker pid {pid} ---\n{tb}",
            exc_type=type_name, remote_traceback=tb, reward_name=reward_name, pid=pid)

    def _init_failure(self, reward_name: str) -> RemoteRewardError:
        type_name, message, tb = self._init_error  # type: ignore[misc]
        return RemoteRewardError(
            f"reward worker failed to start (importing reward modules {list(self.modules)}): {type_name}: {message}"
            f"\n--- traceback in the reward worker ---\n{tb}",
            exc_type=type_name, remote_traceback=tb, reward_name=reward_name)

    def _stop(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            inflight = list(self._inflight)
        for pf in inflight:
            try:
                pf.set_exception(RuntimeError("ProcessRunner was closed while the reward was running"))
            except Exception:
                pass
        if pool is not None:
            _stop_pool(pool)

    def close(self) -> None:
        """Stop every worker process and fail running calls; further calls raise ``RuntimeError``."""
        if self._closed:
            return
        self._closed = True
        self._stop()

    def __enter__(self) -> ProcessRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
