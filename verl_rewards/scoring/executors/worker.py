"""A reward worker process: what runs in the child, and the parent's handle on one child.

The child (:func:`_child_main`, started with the ``spawn`` method by :class:`WorkerProcess`) imports the reward
modules once, says ready, then serves jobs ``(request id, reward name, kwargs)`` over its own pipe, one at a time,
in its main thread (so ``signal.signal`` and ``signal.alarm`` work). Every reply (:func:`encode_reply`) carries the
request id it answers and the pid of the process that sent it. A forked copy of a worker that returns from a
reward exits at once instead of answering or reading jobs. SIGINT is for the parent; a worker exits by itself when
its parent goes away. With a ``post`` step the worker also turns the reward's return value into a
:class:`~verl_rewards.scoring.result.ScoreResult`, so that this work happens inside the call, under its timeout.

The pool of workers, its slots, queue and timeouts: :mod:`.process`.
"""

from __future__ import annotations

import inspect
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..loading import load_modules
from ..result import normalise_result
from ..spec import RewardSpec, get_reward
from .base import RewardCallError, error_info

__all__ = [
    "KILL_GRACE_S",
    "SPAWN_HINT",
    "Job",
    "RemoteRewardError",
    "WorkerProcess",
    "encode_reply",
    "spawn_failure",
    "stop_all",
]

KILL_GRACE_S = 1.0  # how long a terminated (SIGTERM) worker gets before SIGKILL
_PARENT_CHECK_S = 1.0  # how often a child checks that its parent is still alive
_PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL


class RemoteRewardError(RewardCallError):
    """A reward failed in a worker process: it raised, the worker died, or a value could not cross the pipe.

    ``exc_type`` is the name of the child's exception type (``"WorkerDied"`` when the process died,
    ``"MismatchedReply"`` for a reply to another request) and ``remote_traceback`` the child's formatted
    traceback text; both are also part of the message.
    """


@dataclass(frozen=True)
class Job:
    """One call: its request id (echoed by the worker's reply), reward, arguments, timeout and post-processing."""

    request_id: int
    name: str
    kwargs: dict[str, Any]
    timeout_s: float | None
    post: tuple[str | None] | None  # (number_key,): normalise the result in the worker

    def encode(self) -> bytes:
        """This job for the worker: ``(request id, pickled (reward name, kwargs, post))``; raises what
        ``pickle.dumps`` raises for arguments that cannot be sent."""
        job_data = pickle.dumps((self.name, self.kwargs, self.post), _PICKLE_PROTOCOL)
        return pickle.dumps((self.request_id, job_data), _PICKLE_PROTOCOL)

    def error(self, message: str, *, exc_type: str = "", tb: str = "", pid: int | None = None) -> RemoteRewardError:
        """A :class:`RemoteRewardError` for this job's reward."""
        return RemoteRewardError(message, exc_type=exc_type, remote_traceback=tb, reward_name=self.name, pid=pid)


# --------------------------------------------------------------------------------------------- child side


def _watch_parent(parent_pid: int) -> None:
    """Exit the child when its parent is gone (even while a reward hangs in the main thread)."""
    while True:
        time.sleep(_PARENT_CHECK_S)
        if os.getppid() != parent_pid:
            os._exit(0)


def _init_child(modules: Sequence[str]) -> None:
    """Import the configured reward modules (the engine adds ``verl_rewards.catalog``)."""
    load_modules(list(modules))


def _resolve(name: str) -> RewardSpec:
    """The registered reward ``name`` (the runner's modules, ``verl_rewards.catalog`` among them, registered it)."""
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
        return False, error_info(exc)


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
        conn.send_bytes(encode_reply(0, home_pid, False, error_info(exc)))
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
            ok, value = False, error_info(exc)
        try:
            payload = encode_reply(request_id, home_pid, ok, value)
        except Exception as exc:
            type_name, message, tb = error_info(exc)
            hint = (
                f"the reward returned a value of type {type(value).__name__} that cannot be pickled back "
                f"to the parent process ({type_name}: {message}); return numbers, strings, lists or dicts"
            )
            payload = encode_reply(request_id, home_pid, False, (type_name, hint, tb))
        try:
            conn.send_bytes(payload)
        except (EOFError, OSError):
            return


# ------------------------------------------------------------------------------------ the parent's handle
#: why a worker can die while starting, or not start at all, in a user's script
SPAWN_HINT = (
    "Workers use the 'spawn' start method, which re-imports the main script: guard its top-level code with "
    "`if __name__ == '__main__':`"
)


def spawn_failure(exc: BaseException, reward_name: str = "") -> RemoteRewardError:
    """The error of a worker process that could not be spawned (``exc``, from ``multiprocessing``), with
    :data:`SPAWN_HINT` when this process is itself a worker still importing its parent's main script."""
    type_name, message, tb = error_info(exc)
    hint = f" ({SPAWN_HINT})" if getattr(multiprocessing.current_process(), "_inheriting", False) else ""
    failure = RemoteRewardError(
        f"cannot start a reward worker process: {type_name}: {' '.join(message.split())}{hint}",
        exc_type=type_name,
        remote_traceback=tb,
        reward_name=reward_name,
    )
    failure.__cause__ = exc
    return failure


class WorkerProcess:
    """One child process and the parent's end of its pipe (what the runner holds in a slot)."""

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

    def stop(self, grace_s: float = KILL_GRACE_S) -> None:
        """Close the pipe and make sure the process is gone (SIGTERM, SIGKILL after ``grace_s``)."""
        try:
            self.conn.close()
        except OSError:
            pass
        if os.getpid() != self.owner_pid:  # a forked copy of the runner must not kill its parent's workers
            return
        if self.proc.exitcode is None:
            self.proc.terminate()
            self.proc.join(grace_s)
            if self.proc.exitcode is None:
                self.proc.kill()
                self.proc.join()


def stop_all(workers: Sequence[WorkerProcess], grace_s: float = KILL_GRACE_S) -> None:
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
    end = time.monotonic() + grace_s
    for w in mine:
        w.proc.join(max(0.0, end - time.monotonic()))
    for w in mine:
        if w.proc.exitcode is None:
            w.proc.kill()
            w.proc.join()
