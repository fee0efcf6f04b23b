"""The one way a reward is called: :class:`RewardScorer` runs a :class:`~verl_rewards.scoring.spec.RewardSpec`.

For one sample it decodes the text the reward asks for (batched with the other samples of the event loop),
resolves the inputs by parameter name, lends a pooled environment when the reward declares one, and calls the
reward in its executor: async rewards on a thread's own event loop, sync rewards in the thread executor or, for
registered rewards with ``executor=process``, in a worker process, through the executors' one interface
(``run_reward``, :mod:`verl_rewards.scoring.executors`). While the thread executor is overloaded with hung calls
(:meth:`~verl_rewards.scoring.executors.threads.ThreadExecutor.overloaded`), sync rewards that a worker process can
run (registered, no pooled env) go to the process executor instead.

The call is bounded by the run's ``timeout_s``, counted from when a thread or worker process starts it, and
includes turning the return value into a :class:`ScoreResult` (``normalise_result``): a return value whose
conversion is slow (a ``__str__`` or ``__float__`` that blocks) costs that call its time, never the event loop's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .contract import Scorer, ScoringContext
from .executors.threads import thread_executor
from .inputs import resolve_inputs, trajectory_id
from .pools import EnvPool
from .result import ScoreResult
from .sample import Sample
from .spec import RewardSpec, is_registered


class RewardScorer(Scorer):
    """Runs one :class:`RewardSpec` for a sample (see the module doc)."""

    def __init__(self, spec: RewardSpec, executor: str = "thread"):
        self.spec = spec
        self.name = spec.name
        self.extra_keys = tuple(spec.extra_keys)
        self.text_keys = tuple(spec.text_keys)
        self.executor = spec.executor or executor
        if self.executor == "process" and spec.env_cls is not None:
            raise ValueError(f"reward {spec.name!r} uses a pooled env and cannot run with executor=process")
        if self.executor == "process" and (spec.is_async or not is_registered(spec)):
            self.executor = "thread"  # async rewards run on an event loop; a worker process finds rewards by name
        self.pool = EnvPool(spec.env_cls, spec.pool_size, spec.env_kwargs) if spec.env_cls is not None else None

    def can_run_in_process(self) -> bool:
        """Whether a worker process can run this reward (sync, registered by name, no pooled env)."""
        spec = self.spec
        return not spec.is_async and spec.env_cls is None and is_registered(spec)

    async def run(self, sample: Sample, ctx: ScoringContext) -> ScoreResult:
        spec = self.spec
        text = await ctx.decode_text(sample, spec.decode)
        kwargs = resolve_inputs(spec, sample, text, ctx)
        key: Any = kwargs.get("id") or None
        if self.pool is not None:
            key = key or trajectory_id(sample)
            kwargs["env"] = await asyncio.wait_for(self.pool.acquire(key), ctx.timeout_s)
        finished = False
        try:
            executor: Any = thread_executor()
            if not spec.is_async and ctx.process_runner is not None and self._in_process():
                executor = ctx.process_runner()
            result: ScoreResult = await executor.run_reward(spec, kwargs, ctx.timeout_s, number_key=spec.number_key)
            finished = True
        finally:
            if self.pool is not None:
                await self.pool.release(key, discard=not finished)
        return result

    def _in_process(self) -> bool:
        if self.executor == "process":
            return True
        return self.can_run_in_process() and thread_executor().overloaded()
