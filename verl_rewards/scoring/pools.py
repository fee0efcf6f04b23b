"""Pooled environments for rewards declared with ``env_cls`` and ``pool_size``.

Each reward worker process creates at most ``pool_size`` environments, lazily. A call acquires one, keyed by
the trajectory ``id``: calls with the same id share the same environment while any of them holds it. When
the last holder releases it, the environment is reset (``reset()``, sync or async, if it has one) and goes
back to the pool. Waiting for a free environment counts toward the call's timeout.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class EnvPool:
    """``size`` environments of ``env_cls`` shared by the reward calls of one process."""

    def __init__(self, env_cls: type, size: int, env_kwargs: dict[str, Any] | None = None):
        self.env_cls = env_cls
        self.size = size
        self.env_kwargs = dict(env_kwargs or {})
        self._created = 0
        self._free: list[Any] = []
        self._held: dict[str, list[Any]] = {}  # id -> [env, holders]
        self._cond: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def acquire(self, key: str) -> Any:
        """The environment for trajectory ``key`` (waits while all ``size`` are held by other ids)."""
        cond = self._condition()
        async with cond:
            while True:
                held = self._held.get(key)
                if held is not None:
                    held[1] += 1
                    return held[0]
                if self._free:
                    env = self._free.pop()
                    break
                if self._created < self.size:
                    self._created += 1
                    try:
                        env = self.env_cls(**self.env_kwargs)
                        start = getattr(env, "start", None)
                        if callable(start):
                            await _maybe_await(start())
                    except BaseException:
                        self._created -= 1
                        raise
                    break
                await cond.wait()
            self._held[key] = [env, 1]
            return env

    async def release(self, key: str, discard: bool = False) -> None:
        """Give back one hold of ``key``'s environment; the last one resets it and frees it.

        ``discard=True`` (a call that timed out and may still be using it) drops the environment instead; a
        new one is created when needed.
        """
        cond = self._condition()
        async with cond:
            held = self._held.get(key)
            if held is None:
                return
            held[1] -= 1
            if held[1] > 0:
                return
            del self._held[key]
            env = held[0]
        returned = False
        if not discard:
            try:
                reset = getattr(env, "reset", None)
                if callable(reset):
                    await _maybe_await(reset())
                returned = True
            except Exception:  # noqa: BLE001 - a broken env is dropped and replaced later
                returned = False
        async with cond:
            if returned:
                self._free.append(env)
            else:
                self._created -= 1
            cond.notify()
