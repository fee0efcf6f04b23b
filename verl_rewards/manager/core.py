"""The scoring engine shared by both manager adapters and offline scoring: one async call per sample.

For one :class:`~verl_rewards.scoring.sample.Sample` it picks the reward (:class:`~verl_rewards.manager.routing.
Router`), runs its :class:`~verl_rewards.scoring.contract.Scorer` under the run's concurrency bound (the scorer
bounds the call itself by ``timeout_s``, counted from when a thread or worker process starts it, so starting
worker processes is never charged to a call), turns failures into the fallback score with flags, adds the
contribution terms ``sum_i beta_i * R_i`` (:mod:`verl_rewards.contribution`; a run whose step dicts never arrive
is warned about once, :mod:`.step_watch`) and lays the components onto the run's fixed extra keys
(:class:`~verl_rewards.scoring.extras.ExtraKeys`). Scorers see a frozen
:class:`~verl_rewards.scoring.contract.ScoringContext`, never the engine.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import catalog
from ..coerce import read_float
from ..scoring.contract import RewardInputError, Scorer, ScoringContext
from ..scoring.decoding import DecodeBatcher
from ..scoring.executors.process import shared_runner
from ..scoring.executors.threads import thread_executor
from ..scoring.extras import ExtraKeys
from ..scoring.recorded import RECORDED_KEYS, recorded_extras
from ..scoring.result import ScoreResult, ScoreResultError
from ..scoring.sample import Sample
from .config import ManagerConfig, ManagerConfigError
from .step_watch import StepDictWatch

logger = logging.getLogger("verl_rewards")
_LOGGED_FAILURES_MAX = 5


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
        modules: Sequence[str] = (),
        text_keys: Iterable[str] = (),
        start_pool: bool = False,
    ):
        self.tokenizer = tokenizer
        self.config = config
        self.route = route
        self.failures = FailureLog()
        self.step_dicts = StepDictWatch(config.contribution.step_terms)
        self._modules = tuple(modules)
        self._runner: Any = None
        self.context = ScoringContext(
            decoder=DecodeBatcher(tokenizer),
            decode=config.decode,
            score_kwargs=dict(config.score_kwargs),
            executor=config.executor,
            timeout_s=config.timeout_s,
            process_runner=self._process_runner,
        )
        if read_float(config.fallback_reward) is None:
            raise ManagerConfigError(
                f"fallback_reward: expected a number within +-2**108 (a reward verl can sum), "
                f"got {config.fallback_reward}"
            )
        try:
            recorded = list(RECORDED_KEYS) if config.record_trajectory else []
            declared = [*config.extra_keys, *config.contribution.extra_keys, *declared_keys, *recorded]
            self.keys = ExtraKeys(declared, [*text_keys, *recorded[:1]])  # the text: "" where absent
        except ValueError as exc:
            raise ManagerConfigError(str(exc)) from None
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        thread_executor().ensure_capacity(config.max_concurrency)  # admitted calls never queue behind hung ones
        if start_pool:  # a reachable reward runs in worker processes: they start now, not during the first batch
            self._process_runner().start()

    @property
    def extra_keys(self) -> list[str]:
        """The extra keys every sample of this run reports, in a fixed order."""
        return list(self.keys.names)

    def _process_runner(self) -> Any:
        """The worker processes for ``executor=process`` (shared by every engine with the same modules)."""
        if self._runner is None:
            self._runner = shared_runner((*self._modules, catalog.MODULE), owner=self)
        return self._runner

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(id(loop))
        if sem is None:
            sem = asyncio.Semaphore(self.config.max_concurrency)
            self._semaphores[id(loop)] = sem
        return sem

    async def score(self, sample: Sample, scorer: Scorer | None = None) -> SampleScore:
        """Score one sample (with ``scorer`` when it was routed already); failures become the fallback score with
        flags unless ``on_error=raise``."""
        scorer = self.route(sample) if scorer is None else scorer
        error = timeout = 0
        # before the call: the reward gets copies of the step dicts, and its term must not depend on it anyway
        contrib = self.config.contribution.evaluate(sample.prev_step_dict, sample.cur_step_dict, sample.step)
        self.step_dicts.observe(sample.data_source, sample.step, sample.has_step_dicts)
        async with self._semaphore():
            try:
                result = await scorer.run(sample, self.context)  # bounded by timeout_s inside (see the module doc)
            except TimeoutError as exc:
                if self.config.on_error == "raise":
                    raise TimeoutError(
                        f"scoring function {scorer.name} exceeded timeout_s={self.config.timeout_s} "
                        f"for sample {sample.sample_id}"
                    ) from exc
                timeout = 1
                self.failures.report(f"timeout after {self.config.timeout_s}s in {scorer.name}", sample.sample_id, None)
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

        bonus = contrib.bonus
        total = read_float(result.score + bonus)
        if total is None:  # a huge score plus the contribution bonus: beyond the finite-number rule, flagged
            if self.config.on_error == "raise":
                raise ScoreResultError(f"total reward of sample {sample.sample_id} is beyond +-2**108")
            error = 1
            self.failures.report("total reward beyond +-2**108", sample.sample_id, None)
            result = ScoreResult(self.config.fallback_reward)
            total = read_float(result.score + bonus)
            if total is None:  # the bonus alone is out of range: the fallback without it
                bonus, total = 0.0, result.score
        extra: dict[str, Any] = {
            "base_score": result.score,
            "contrib": bonus,
            "reward_error": error,
            "reward_timeout": timeout,
            "step_dict_error": int(sample.step_dict_error),
            "step_error": int(sample.step_error),
            **contrib.extras,
        }
        if self.config.record_trajectory:
            extra.update(recorded_extras(sample))
        for key, value in result.components.items():
            if key not in extra:
                extra[key] = value
        return SampleScore(reward=float(total), extra=self.keys.row(extra, scorer.name))


class FailureLog:
    """Logs the first few scoring failures in full (sample id + traceback), then only counts them."""

    def __init__(self, limit: int = _LOGGED_FAILURES_MAX):
        self.limit = limit
        self.count = 0
        self._lock = threading.Lock()

    def report(self, what: str, sample_id: Any, exc: BaseException | None) -> None:
        with self._lock:
            self.count += 1
            n = self.count
        if n <= self.limit:
            logger.warning(
                "verl-rewards: %s for sample %s (failure %d; later ones are counted, not logged)",
                what,
                sample_id,
                n,
                exc_info=exc if exc is not None and not isinstance(exc, TimeoutError) else None,
            )
