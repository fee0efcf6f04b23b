"""Rewards for tests/test_reward_process.py, loaded by file path inside ProcessRunner's worker processes."""

from __future__ import annotations

import os
import signal
import threading
import time

from verl_rewards.rewards.registry import reward


@reward(name="proc_test_cpu")
def proc_test_cpu(n: int = 1000, busy_s: float = 0.0) -> dict:
    """Sum of squares below ``n``, after spinning the CPU for ``busy_s`` seconds; reports pid and timing."""
    start = time.time()
    while time.time() - start < busy_s:
        sum(i * i for i in range(1000))
    return {"reward": float(sum(i * i for i in range(n))), "pid": os.getpid(), "start": start, "end": time.time()}


@reward(name="proc_test_echo")
def proc_test_echo(final_response: str = "", sleep_s: float = 0.0) -> dict:
    """Echo the input (after an optional sleep) with the worker's pid."""
    start = time.time()
    if sleep_s:
        time.sleep(sleep_s)
    return {"reward": float(len(final_response)), "pid": os.getpid(), "start": start, "end": time.time()}


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
