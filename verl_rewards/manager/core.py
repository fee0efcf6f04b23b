"""The scoring core shared by both manager adapters: one async call per sample.

For one :class:`~verl_rewards.manager.sample.Sample` it decodes the text, picks the scoring function,
calls it with the arguments it accepts under a time limit, adds the contribution terms ``sum_i beta_i * R_i``
(:mod:`verl_rewards.contribution`) and returns the total
with the run's fixed set of extra keys (:class:`~verl_rewards.extras.ExtraKeys`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..extras import ExtraKeys
from ..threads import thread_executor
from .config import DecodeConfig, ManagerConfig, ManagerConfigError
from .sample import Sample
from .scoring import (
    FLOAT32_MAX,
    NUMBER_KEY,
    TOOLRL_TUPLE_KEYS,
    FailureLog,
    ScoreFn,
    ScoreResult,
    ScoreResultError,
    normalise_result,
)

logger = logging.getLogger("verl_rewards")

#: fields every scoring function may ask for by parameter name
SCORE_FIELDS = (
    "data_source",
    "solution_str",
    "ground_truth",
    "extra_info",
    "step",
    "prev_step_dict",
    "cur_step_dict",
)


def _as_list(ids: Any) -> list[int]:
    return ids.tolist() if hasattr(ids, "tolist") else list(ids)


class RewardInputError(TypeError):
    """A scoring function requires a parameter that no field provides (a setup error, never a fallback)."""


class Scorer:
    """A scoring function as the core runs it: how to decode, which extra keys it always returns, and
    :meth:`run`, one guarded call for one sample (the core adds the time limit and the fallback)."""

    name: str = "scorer"
    decode: DecodeConfig = DecodeConfig()
    extra_keys: tuple[str, ...] = ()

    def check_inputs(self, core: ScoringCore) -> None:
        """Raise :class:`RewardInputError` when a required parameter has no source (checked once)."""

    async def run(self, sample: Sample, core: ScoringCore) -> ScoreResult:
        raise NotImplementedError


class FunctionScorer(Scorer):
    """A plain scoring function (verl or ToolRL style) called with the :data:`SCORE_FIELDS` it accepts."""

    def __init__(self, fn: ScoreFn, decode: DecodeConfig | None = None, extra_keys: tuple[str, ...] = ()):
        self.fn = fn
        self.name = fn.name
        self.decode = decode or DecodeConfig()
        # a plain function declares what it returns through an ``extra_keys`` attribute; a number is also
        # reported as ``acc`` and a ToolRL-style tuple as format/correctness/length
        declared = getattr(fn.fn, "extra_keys", ())
        declared = tuple(declared) if isinstance(declared, list | tuple) else ()
        self.extra_keys = tuple(extra_keys) if extra_keys else (NUMBER_KEY, *TOOLRL_TUPLE_KEYS, *declared)

    def check_inputs(self, core: ScoringCore) -> None:
        available = {*SCORE_FIELDS, *core.config.score_kwargs}
        missing = self.fn.missing(dict.fromkeys(available))
        if missing:
            raise RewardInputError(
                f"scoring function {self.name} requires parameter(s) {missing} that no field provides; "
                f"available fields: {sorted(available)} (add constants with reward.reward_kwargs.score_kwargs)"
            )

    def _fields(self, sample: Sample, text: str, core: ScoringCore) -> dict[str, Any]:
        return {
            "data_source": sample.data_source,
            "solution_str": text,
            "ground_truth": sample.ground_truth,
            "extra_info": sample.extra_info,
            "step": sample.step,
            "prev_step_dict": sample.prev_step_dict,
            "cur_step_dict": sample.cur_step_dict,
            **core.config.score_kwargs,
        }

    async def run(self, sample: Sample, core: ScoringCore) -> ScoreResult:
        decode = core.decode_for(self)
        fn = self.fn
        if fn.is_async:
            text = await asyncio.to_thread(core.decode, sample, decode)
            kwargs = fn.select_kwargs(self._fields(sample, text, core))
            raw = await thread_executor().run_async(lambda: fn.fn(**kwargs))
        else:

            def call_sync() -> Any:
                text = core.decode(sample, decode)
                return fn.fn(**fn.select_kwargs(self._fields(sample, text, core)))

            raw = await thread_executor().run(call_sync)
        return normalise_result(raw)


@dataclass
class SampleScore:
    """The manager's answer for one sample."""

    reward: float
    extra: dict[str, Any]


class ScoringCore:
    """Scores samples: routing, decoding, the guarded call, contribution, stable extra keys."""

    def __init__(
        self,
        tokenizer: Any,
        config: ManagerConfig,
        route: Callable[[Sample], Scorer],
        declared_keys: Iterable[str] = (),
    ):
        self.tokenizer = tokenizer
        self.config = config
        self.route = route
        self.failures = FailureLog()
        try:
            self.keys = ExtraKeys([*config.extra_keys, *config.contribution.extra_keys, *declared_keys])
        except ValueError as exc:
            raise ManagerConfigError(str(exc)) from None
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self._checked: set[int] = set()
        thread_executor().ensure_capacity(config.max_concurrency)  # admitted calls never queue behind hung ones

    @property
    def extra_keys(self) -> list[str]:
        """The extra keys every sample of this run reports, in a fixed order."""
        return list(self.keys.names)

    # ------------------------------------------------------------------ decoding
    def decode(self, sample: Sample, decode: DecodeConfig) -> str:
        include_prompt = bool(decode.include_prompt)
        if sample.response_text is not None:
            return (sample.prompt_text or "") + sample.response_text if include_prompt else sample.response_text
        skip = True if decode.skip_special_tokens is None else decode.skip_special_tokens
        ids = _as_list(sample.response_ids)
        if include_prompt:
            ids = _as_list(sample.prompt_ids) + ids
        return self.tokenizer.decode(ids, skip_special_tokens=skip)

    def decode_for(self, scorer: Scorer) -> DecodeConfig:
        cfg = self.config.decode
        return DecodeConfig(
            include_prompt=cfg.include_prompt if cfg.include_prompt is not None else scorer.decode.include_prompt,
            skip_special_tokens=cfg.skip_special_tokens
            if cfg.skip_special_tokens is not None
            else scorer.decode.skip_special_tokens,
        )

    # ------------------------------------------------------------------- scoring
    def _check_inputs(self, scorer: Scorer) -> None:
        if id(scorer) not in self._checked:
            scorer.check_inputs(self)
            self._checked.add(id(scorer))

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(id(loop))
        if sem is None:
            sem = asyncio.Semaphore(self.config.max_concurrency)
            self._semaphores[id(loop)] = sem
        return sem

    async def score(self, sample: Sample) -> SampleScore:
        """Score one sample; failures become the fallback score with flags unless ``on_error=raise``."""
        scorer = self.route(sample)
        self._check_inputs(scorer)
        error = timeout = 0
        async with self._semaphore():
            try:
                result = await asyncio.wait_for(scorer.run(sample, self), timeout=self.config.timeout_s)
            except (asyncio.TimeoutError, TimeoutError) as exc:
                if self.config.on_error == "raise":
                    raise TimeoutError(
                        f"scoring function {scorer.name} exceeded timeout_s={self.config.timeout_s} "
                        f"for sample {sample.sample_id}"
                    ) from exc
                timeout = 1
                self.failures.report(f"timeout after {self.config.timeout_s}s in {scorer.name}", sample.sample_id,
                                     None)
                result = ScoreResult(self.config.fallback_reward)
            except RewardInputError:
                raise
            except Exception as exc:  # noqa: BLE001 - a bad sample must not crash the step
                if self.config.on_error == "raise":
                    raise
                error = 1
                what = "invalid score" if isinstance(exc, ScoreResultError) else f"{type(exc).__name__}"
                self.failures.report(f"{what} in {scorer.name}", sample.sample_id, exc)
                result = ScoreResult(self.config.fallback_reward)

        contrib = self.config.contribution.evaluate(sample.prev_step_dict, sample.cur_step_dict, sample.step)
        total = result.score + contrib.bonus
        if not abs(total) <= FLOAT32_MAX:  # a huge score plus the contribution bonus: not storable, flagged
            if self.config.on_error == "raise":
                raise ScoreResultError(f"total reward {total:g} of sample {sample.sample_id} does not fit float32")
            error = 1
            self.failures.report("total reward beyond float32", sample.sample_id, None)
            result = ScoreResult(self.config.fallback_reward)
            total = result.score
        extra = {
            "base_score": result.score,
            "contrib": contrib.bonus,
            "reward_error": error,
            "reward_timeout": timeout,
            "step_dict_error": int(sample.step_dict_error),
            **contrib.extras,
        }
        for key, value in result.components.items():
            if key not in extra:
                extra[key] = value
        return SampleScore(reward=float(total), extra=self.keys.row(extra, scorer.name))
