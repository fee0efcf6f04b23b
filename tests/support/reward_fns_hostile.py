"""Hostile rewards for the executor tests (tests/rewards/test_executor_hostile.py): they fork, forge replies,
return values whose conversion is slow, or leave blocking work on their event loop. Loaded by file path in the
test process and inside the process executor's workers."""

from __future__ import annotations

import asyncio
import gc
import os
import threading

from verl_rewards.rewards.decorators import reward

#: set by the tests when they are done, so that slow conversions and blocking callbacks in threads end
RELEASE = threading.Event()
_HOLD_S = 20.0


@reward(name="h_hang", extra_keys=("pid",))
def h_hang(final_response: str) -> dict:
    """``hang`` blocks (until the tests release it); else the response's length and the scoring process's pid."""
    if final_response == "hang":
        RELEASE.wait(_HOLD_S)
    return {"reward": float(len(final_response)), "pid": os.getpid()}


@reward(name="h_fork")
def h_fork(final_response: str) -> float:
    """``fork`` forks; the child *returns* 1000.0 instead of calling ``os._exit`` (a classic reward bug)."""
    if final_response == "fork":
        if os.fork() == 0:
            return 1000.0
        return 0.0
    return float(len(final_response))


@reward(name="h_forge")
def h_forge(final_response: str) -> float:
    """``forge`` writes a reply for another request onto its worker's pipe before returning (what a forked copy
    that reaches the pipe, or any stray writer, does)."""
    if final_response == "forge":
        import multiprocessing.connection

        from verl_rewards.scoring.executors.process import encode_reply

        for obj in gc.get_objects():
            if isinstance(obj, multiprocessing.connection.Connection) and not obj.closed:
                obj.send_bytes(encode_reply(0, os.getpid(), True, 1000.0))  # request 0 was never sent
        return 0.0
    return float(len(final_response))


class SlowText:
    """A component whose ``str`` blocks (until the tests release it)."""

    def __str__(self) -> str:
        RELEASE.wait(_HOLD_S)
        return "slow"

    __repr__ = __str__


class SlowFloat(float):
    """A float whose conversion blocks (until the tests release it)."""

    def __float__(self) -> float:
        RELEASE.wait(_HOLD_S)
        return 1.0


@reward(name="h_slow_text")
def h_slow_text(final_response: str) -> dict:
    return {"reward": float(len(final_response)), "note": SlowText() if final_response == "slow" else "ok"}


@reward(name="h_slow_float")
def h_slow_float(final_response: str) -> float:
    return SlowFloat(1.0) if final_response == "slow" else float(len(final_response))


@reward(name="h_many_keys")
def h_many_keys(final_response: str) -> dict:
    """``many`` returns a dict with two million components."""
    if final_response == "many":
        out: dict = dict.fromkeys((f"k{i}" for i in range(2_000_000)), 0.0)
        out["reward"] = 1.0
        return out
    return {"reward": float(len(final_response))}


@reward(name="h_async_leaves_blocking")
async def h_async_leaves_blocking(final_response: str) -> dict:
    """``leave`` schedules a callback that blocks its loop (until released) 50 ms later and returns at once;
    other answers take 200 ms (awaiting)."""
    loop = asyncio.get_running_loop()
    if final_response == "leave":
        loop.call_later(0.05, RELEASE.wait, _HOLD_S)
    else:
        await asyncio.sleep(0.2)
    return {"reward": float(len(final_response)), "thread": threading.get_ident()}
