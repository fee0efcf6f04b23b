"""A registered reward as a scorer of the ``contribution`` manager: inputs by name, executor, env pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..manager.config import DecodeConfig
from ..manager.core import Scorer, ScoringCore
from ..manager.sample import Sample
from ..manager.scoring import ScoreResult, normalise_result
from ..threads import thread_executor
from .inputs import build_inputs, trajectory_id
from .pools import EnvPool
from .registry import RewardSpec

RESPONSE_DECODE = DecodeConfig(include_prompt=False, skip_special_tokens=True)


class LayerScorer(Scorer):
    """Runs one :class:`~verl_rewards.rewards.registry.RewardSpec` for a sample."""

    def __init__(self, spec: RewardSpec, executor: str = "thread", runner: Callable[[], Any] | None = None):
        self.spec = spec
        self.name = spec.name
        self.decode = RESPONSE_DECODE
        self.extra_keys = tuple(spec.extra_keys)
        self.executor = spec.executor or executor
        if self.executor == "process" and spec.env_cls is not None:
            raise ValueError(f"reward {spec.name!r} uses a pooled env and cannot run with executor=process")
        if self.executor == "process" and spec.is_async:
            self.executor = "thread"  # async rewards run on the event loop
        self.runner = runner  # returns the process runner (created on first use)
        self.pool = EnvPool(spec.env_cls, spec.pool_size, spec.env_kwargs) if spec.env_cls is not None else None

    def check_inputs(self, core: ScoringCore) -> None:
        """Inputs come from the task row, known only per sample: :func:`build_inputs` raises on the first one."""

    async def run(self, sample: Sample, core: ScoringCore) -> ScoreResult:
        text = await core.decode_async(sample, core.decode_for(self))

        def decode_prompt() -> str:
            if sample.prompt_text is not None:
                return sample.prompt_text
            return core.tokenizer.decode(
                sample.prompt_ids.tolist() if hasattr(sample.prompt_ids, "tolist") else list(sample.prompt_ids),
                skip_special_tokens=True,
            )

        spec = self.spec
        kwargs = build_inputs(
            spec.params, spec.required, sample, text, decode_prompt, spec.name, core.config.score_kwargs
        )
        key = kwargs.get("id") or None
        if self.pool is not None:
            key = key or trajectory_id(sample)
            kwargs["env"] = await self.pool.acquire(key)
        finished = False
        try:
            if spec.is_async:
                raw = await thread_executor().run_async(lambda: spec.invoke(**kwargs))
            elif self.executor == "process":
                raw = await self.runner().run(spec.name, kwargs, core.config.timeout_s)
            else:
                raw = await thread_executor().run(lambda: spec.invoke(**kwargs))
            finished = True
        finally:
            if self.pool is not None:
                await self.pool.release(key, discard=not finished)
        return normalise_result(raw, number_key=None)

