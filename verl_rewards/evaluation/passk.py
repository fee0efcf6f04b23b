"""pass^k and the success rules it counts with.

pass^k (tau-bench, arXiv 2406.12045; tau2-bench ``src/tau2/metrics/agent_metrics.py``) is the chance that *all*
``k`` trials of a task, drawn without replacement from its ``n`` recorded trials, succeed:
``C(c, k) / C(n, k)`` for ``c`` successes, averaged over tasks. pass^1 is the success rate.

pass@k (Chen et al. 2021, arXiv 2107.03374, the unbiased estimator) is the chance that *at least one* of ``k``
such trials succeeds: ``1 - C(n - c, k) / C(n, k)``, averaged over tasks. The two agree at k = 1 and part ways
after: pass^k falls with k (reliability: the agent must succeed every time), pass@k rises (capability: one
success in k tries is enough). tau2 and tau-bench report pass^k; a pass@k number is not comparable with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: tau2's tolerance around 1.0 (``is_successful``)
TOLERANCE = 1e-6


def pass_hat_k(num_trials: int, successes: int, k: int) -> float:
    """``C(successes, k) / C(num_trials, k)`` for one task.

    ``ValueError`` unless ``0 <= successes <= num_trials`` and ``1 <= k <= num_trials``.
    """
    if not 0 <= successes <= num_trials:
        raise ValueError(f"successes must be within 0..{num_trials}, got {successes}")
    if not 1 <= k <= num_trials:
        raise ValueError(f"pass^{k} needs 1 <= k <= number of trials ({num_trials})")
    return math.comb(successes, k) / math.comb(num_trials, k)


def pass_hat_ks(successes_by_task: Mapping[str, Sequence[bool]], max_k: int) -> dict[int, float]:
    """``{k: mean over tasks of pass^k}`` for ``k = 1..max_k``; every task needs at least ``max_k`` trials."""
    if not successes_by_task or max_k < 1:
        return {}
    out: dict[int, float] = {}
    for k in range(1, max_k + 1):
        values = [pass_hat_k(len(s), sum(bool(x) for x in s), k) for s in successes_by_task.values()]
        out[k] = math.fsum(values) / len(values)
    return out


def pass_at_k(num_trials: int, successes: int, k: int) -> float:
    """``1 - C(num_trials - successes, k) / C(num_trials, k)`` for one task (same argument checks as
    :func:`pass_hat_k`)."""
    if not 0 <= successes <= num_trials:
        raise ValueError(f"successes must be within 0..{num_trials}, got {successes}")
    if not 1 <= k <= num_trials:
        raise ValueError(f"pass@{k} needs 1 <= k <= number of trials ({num_trials})")
    return 1.0 - math.comb(num_trials - successes, k) / math.comb(num_trials, k)


def pass_at_ks(successes_by_task: Mapping[str, Sequence[bool]], max_k: int) -> dict[int, float]:
    """``{k: mean over tasks of pass@k}`` for ``k = 1..max_k``; every task needs at least ``max_k`` trials."""
    if not successes_by_task or max_k < 1:
        return {}
    out: dict[int, float] = {}
    for k in range(1, max_k + 1):
        values = [pass_at_k(len(s), sum(bool(x) for x in s), k) for s in successes_by_task.values()]
        out[k] = math.fsum(values) / len(values)
    return out


def is_tau_source(data_source: str) -> bool:
    """Whether ``data_source`` (``<benchmark>`` or ``<benchmark>/<domain>``) is a source of a benchmark scored with
    tau2's success rule by default (its record's ``exact_success``: tau2, tau-bench)."""
    from ..catalog import benchmarks

    head = data_source.partition("/")[0]
    return any(b.exact_success and b.name == head for b in benchmarks())


@dataclass(frozen=True)
class SuccessRule:
    """When a trial counts as a success.

    ``exact``: tau2's rule, the reward lies within :data:`TOLERANCE` of ``threshold`` (1.0). Otherwise the reward
    must reach ``threshold`` (less the same tolerance).
    """

    threshold: float = 1.0
    exact: bool = True

    def __call__(self, reward: float | None) -> bool:
        if reward is None or not math.isfinite(reward):
            return False
        if self.exact:
            return abs(reward - self.threshold) <= TOLERANCE
        return reward >= self.threshold - TOLERANCE

    def describe(self) -> str:
        return f"reward within {TOLERANCE:g} of {self.threshold:g}" if self.exact else f"reward >= {self.threshold:g}"


def success_rule(data_source: str, threshold: float | None = None) -> SuccessRule | None:
    """The rule for ``data_source``: ``reward >= threshold`` when one is given, tau2's rule for tau2 / tau-bench
    sources, else ``None`` (no pass^k: only the mean reward is reported)."""
    if threshold is not None:
        if not math.isfinite(threshold):
            raise ValueError(f"success threshold must be a finite number, got {threshold!r}")
        return SuccessRule(float(threshold), exact=False)
    if is_tau_source(data_source):
        return SuccessRule(1.0, exact=True)
    return None
