"""The one way a reward is called: :class:`RewardScorer` runs a :class:`~verl_rewards.scoring.spec.RewardSpec`.

For one sample it decodes the text the reward asks for (batched with the other samples of the event loop),
resolves the inputs by parameter name, lends a pooled environment when the reward declares one, and calls the
reward in its executor: async rewards on a thread's own event loop, sync rewards in the thread executor or, for
registered rewards with ``executor=process``, in a worker process. The engine bounds the whole call with the
run's timeout.
"""

from __future__ import annotations

from typing import Any

from .contract import Scorer, ScoringContext
from .inputs import resolve_inputs, trajectory_id
from .pools import EnvPool
from .result import ScoreResult, normalise_result
from .sample import Sample
from .spec import RewardSpec, is_registered
from .threads import thread_executor


class RewardScorer(Scorer):
    """Runs one :class:`RewardSpec` for a sample (see the module doc)."""

    def __init__(self, spec: RewardSpec, executor: str = "thread"):
        self.spec = spec
        self.name = spec.name
        self.extra_keys = tuple(spec.extra_keys)
        self.executor = spec.executor or executor
        if self.executor == "process" and spec.env_cls is not None:
            raise ValueError(f"reward {spec.name!r} uses a pooled env and cannot run with executor=process")
        if self.executor == "process" and (spec.is_async or not is_registered(spec)):
            self.executor = "thread"  # async rewards run on an event loop; a worker process finds rewards by name
        self.pool = EnvPool(spec.env_cls, spec.pool_size, spec.env_kwargs) if spec.env_cls is not None else None

    async def run(self, sample: Sample, ctx: ScoringContext) -> ScoreResult:
        spec = self.spec
        text = await ctx.decode_text(sample, spec.decode)
        kwargs = resolve_inputs(spec, sample, text, ctx)
        key: Any = kwargs.get("id") or None
        if self.pool is not None:
            key = key or trajectory_id(sample)
            kwargs["env"] = await self.pool.acquire(key)
        finished = False
        try:
            if spec.is_async:
                raw = await thread_executor().run_async(lambda: spec.invoke(**kwargs))
            elif self.executor == "process" and ctx.process_runner is not None:
                raw = await ctx.process_runner().run(spec.name, kwargs, ctx.timeout_s)
            else:
                raw = await thread_executor().run(lambda: spec.invoke(**kwargs))
            finished = True
        finally:
            if self.pool is not None:
                await self.pool.release(key, discard=not finished)
        return normalise_result(raw, number_key=spec.number_key)
