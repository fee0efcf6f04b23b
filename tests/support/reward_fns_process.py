"""Rewards for tests/test_reward_process.py, loaded by file path inside ProcessRunner's worker processes."""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time

from verl_rewards.rewards.decorators import reward


@reward(name="proc_test_cpu")
def proc_test_cpu(n: int = 1000, busy_s: float = 0.0) -> dict:
    """Sum of squares below ``n``, after spinning the CPU for ``busy_s`` seconds; reports pid and timing."""
    start = time.time()
    while time.time() - start < busy_s:
        sum(i * i for i in range(1000))
    return {"reward": float(sum(i * i for i in range(n))), "pid": os.getpid(), "start": start, "end": time.time()}


_CALLS = itertools.count(1)


@reward(name="proc_test_echo")
def proc_test_echo(final_response: str = "", sleep_s: float = 0.0) -> dict:
    """Echo the input (after an optional sleep) with the worker's pid and the call's number in that worker."""
    seq = next(_CALLS)
    if sleep_s:
        time.sleep(sleep_s)
    return {"reward": float(len(final_response)), "pid": os.getpid(), "seq": seq}


@reward(name="proc_test_meet")
def proc_test_meet(folder: str, n: int = 2, wait_s: float = 60.0) -> dict:
    """Check in under ``folder`` and wait until ``n`` calls have checked in (or ``wait_s`` passed): ``reward`` is
    how many calls were running at once with this one, which is ``n`` only if ``n`` workers served them together."""
    with open(os.path.join(folder, f"{os.getpid()}-{time.monotonic_ns()}"), "w"):
        pass
    end = time.monotonic() + wait_s
    while len(os.listdir(folder)) < n and time.monotonic() < end:
        time.sleep(0.01)
    return {"reward": float(len(os.listdir(folder))), "pid": os.getpid()}


@reward(name="proc_test_trivial")
def proc_test_trivial(final_response: str) -> float:
    return 1.0


class ScoringError(ValueError):
    pass


def _inner_check(value: int) -> None:
    raise ScoringError(f"bad value {value}")


@reward(name="proc_test_raises")
def proc_test_raises(value: int = 7) -> float:
    _inner_check(value)
    return 0.0


@reward(name="proc_test_hang")
def proc_test_hang(pid_file: str, ignore_sigterm: bool = False) -> float:
    """Write the pid, then hang (optionally deaf to SIGTERM, so only SIGKILL ends it)."""
    if ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(pid_file, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(60)
    return 0.0


class _Alarm(Exception):
    pass


def _on_alarm(signum: int, frame: object) -> None:
    raise _Alarm()


@reward(name="proc_test_signal")
def proc_test_signal(seconds: float = 0.05) -> dict:
    """A reward guarding its own work with SIGALRM: only possible in a main thread."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            time.sleep(30)
            fired = 0.0
        except _Alarm:
            fired = 1.0
        signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return {"reward": fired, "main_thread": float(threading.current_thread() is threading.main_thread())}


@reward(name="proc_test_exit")
def proc_test_exit(code: int = 3) -> float:
    os._exit(code)


@reward(name="proc_test_unpicklable")
def proc_test_unpicklable() -> object:
    return threading.Lock()


@reward(name="proc_test_async")
async def proc_test_async(final_response: str = "") -> float:
    return 1.0


@reward(name="proc_test_crash")
def proc_test_crash(final_response: str) -> float:
    """The response's length, unless the response names a way to die: ``segfault``, ``exit3``, ``exit0``,
    ``sigkill`` (the worker process ends in the middle of the call)."""
    if final_response == "segfault":
        import ctypes

        ctypes.string_at(0)  # reads address 0: SIGSEGV
    elif final_response == "exit3":
        os._exit(3)
    elif final_response == "exit0":
        os._exit(0)
    elif final_response == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    return float(len(final_response))
