"""A warning, once per run, when the contribution terms can only add 0: every sample of a training step, for a
data source, came without step dicts.

verl calls ``run_single`` once per sample, in several reward workers, so no call sees a whole step. The watch in
each manager counts, per data source, the samples of the step it is in and how many carried step dicts (present,
even empty: a trajectory without a tool turn still had a loop that records them, see
:attr:`~verl_rewards.scoring.sample.Sample.has_step_dicts`). When a sample of a later step arrives, the step before
is over in this worker; a data source none of whose samples carried step dicts is reported. Samples of an earlier
step (late, in asynchronous trainer modes) are not counted. The first report of a run is logged, once: in a Ray
job the workers share one claim (:func:`claim_once_per_run`), so eight reward workers still log one line.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger("verl_rewards")

CLAIMS_ACTOR = "verl_rewards_run_claims"


class _Claims:
    """A Ray actor holding the keys claimed in this job (the first caller of a key gets True)."""

    def __init__(self) -> None:
        self.keys: set[str] = set()

    def claim(self, key: str) -> bool:
        if key in self.keys:
            return False
        self.keys.add(key)
        return True


def claim_once_per_run(key: str) -> bool:
    """True for the first process of the run to claim ``key``: in a Ray job, through one named actor shared by its
    workers (created only when a claim is made); outside Ray (a test, offline scoring) the caller is the run. When
    the claim cannot be made, True: a repeated warning is better than none."""
    global _HANDLE
    try:
        import ray

        if not ray.is_initialized():
            return True
        job = ray.get_runtime_context().get_job_id()
        for attempt in range(2):
            if _HANDLE is None or _HANDLE[0] != job:
                actor: Any = ray.remote(num_cpus=0)(_Claims)
                _HANDLE = (job, actor.options(name=CLAIMS_ACTOR, get_if_exists=True).remote())
            try:
                return bool(ray.get(_HANDLE[1].claim.remote(key), timeout=60))
            except ray.exceptions.RayActorError:
                _HANDLE = None  # its owner's process ended (the actor with it): ask again, once
                if attempt:
                    raise
        return True
    except Exception:  # noqa: BLE001 - a warning must never cost the step
        logger.debug("verl-rewards: the run-wide claim of %r failed; warning from this worker", key, exc_info=True)
        return True


#: this process's (job id, handle) of the claims actor, kept: an actor that is not detached lives while its
#: creator holds a handle (a handle found by name does not count), so a handle dropped after the first claim would
#: end the actor and its claims, and the next claim would start a new, empty one
_HANDLE: tuple[str, Any] | None = None


class StepDictWatch:
    """Counts step dicts per data source and step; logs one warning per run (see the module doc).

    ``terms``: the configured terms that read step dicts (none: the watch does nothing). ``claim``: the run-wide
    claim (:func:`claim_once_per_run`).
    """

    def __init__(self, terms: tuple[Any, ...], claim: Callable[[str], bool] = claim_once_per_run):
        self.terms = terms
        self.claim = claim
        self.reported: list[str] | None = None  # the data sources of the warning, once logged
        self._step: int | None = None
        self._counts: dict[str, list[int]] = {}  # data source -> [samples, with step dicts]
        self._lock = threading.Lock()
        self._done = not terms

    def observe(self, data_source: str, step: int, has_step_dicts: bool) -> None:
        """Count one sample; judge the step before when this one belongs to a later step."""
        if self._done:
            return
        with self._lock:
            lacking: list[str] = []
            if self._step is None or step > self._step:
                lacking = [s for s, (n, with_steps) in sorted(self._counts.items()) if n and not with_steps]
                self._step, self._counts = step, {}
            if step == self._step:
                counts = self._counts.setdefault(data_source, [0, 0])
                counts[0] += 1
                counts[1] += int(has_step_dicts)
            if lacking:
                self._done = True
        if lacking:
            self._warn(lacking)

    def _warn(self, sources: list[str]) -> None:
        if not self.claim("missing_step_dicts"):
            return
        self.reported = sources
        names = ", ".join(f"{t.name} ({t.type})" for t in self.terms)
        logger.warning(
            "verl-rewards: every sample of a training step from data source(s) %s came without step dicts "
            "(prev_step_dict / cur_step_dict), so the contribution term(s) %s added 0 to them. The agent loop that "
            "plays these rows records none (or no trajectory called a tool): train them with tool_agent and the "
            "tau2 / tau-bench tools, tau2_agent or tau_bench_agent, or turn the terms off "
            "(reward.reward_kwargs.contribution.type=none); `verl-rewards check` says which loop records them. "
            "Logged once per run.",
            ", ".join(repr(s) for s in sources),
            names,
        )
