"""pass^k and tau2's per-source statistics in verl's validation metrics, in both trainers.

Both verl 0.9.1 trainers end ``_validate`` with ``self._val_metrics_update(data_sources, sample_uids,
reward_extra_infos_dict, sample_turns, ...)`` (legacy ``RayPPOTrainer`` in ``trainer/ppo/ray_trainer.py``, V1
``PPOTrainer`` in ``trainer/ppo/v1/trainer_base.py``). The plugin wraps that method when either module is
imported; the wrapper keeps verl's metrics and adds, per data source, ``val-aux/<data_source>/<name>`` for every
name of :meth:`~verl_rewards.evaluation.runs.SourceSummary.metrics` (``pass^1``..``pass^N``, ``pass@1``..``pass@N``
(the unbiased pass@k: at least one of k trials succeeds, beside tau2's pass^k: all k succeed), ``task_reward``,
``termination/<reason>``, ``db_match_rate``, ``action_read_accuracy``, ``action_write_accuracy``,
``component/<name>``, ``num_tasks``, ``num_trials``).

Trials are grouped by verl's ``uid``: both trainers give every prompt row a fresh uid before repeating it
``val_kwargs.n`` times (legacy: ``repeat(interleave=True)``; V1: one agent-loop session per trial, sessions of
one prompt share its uid), so a prompt that appears twice in the validation set counts as two tasks, as in
verl's own ``mean@N``. pass^k and pass@k are reported for tau2 / tau-bench sources (success = task reward within 1e-6 of
1.0); other sources get ``task_reward`` and the counts.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ..verl_compat import VAL_METRICS_UPDATE, private_method, replace_private_method
from .passk import success_rule
from .runs import TASK_REWARD_KEYS, Run, number, run_from_extras, summarize

logger = logging.getLogger("verl_rewards")

PREFIX = "val-aux"


def _reward_key(columns: Mapping[str, Sequence[Any]]) -> str:
    for key in TASK_REWARD_KEYS:
        if any(number(v) is not None for v in columns.get(key, ())):
            return key
    return "reward"


def validation_metrics(
    data_sources: Sequence[Any],
    sample_uids: Sequence[Any],
    columns: Mapping[str, Sequence[Any]],
    expected_trials: int | None = None,
) -> dict[str, float]:
    """``val-aux/<data_source>/<name>`` from the arguments verl passes to ``process_validation_metrics``."""
    n = len(data_sources)
    if len(sample_uids) != n:
        raise ValueError(f"{len(sample_uids)} uids for {n} samples")
    cols = {str(k): list(v) for k, v in columns.items() if len(v) == n}
    key = _reward_key(cols)
    by_source: dict[str, list[Run]] = {}
    for i in range(n):
        source = str(data_sources[i])
        row = {k: v[i] for k, v in cols.items()}
        by_source.setdefault(source, []).append(
            run_from_extras(source, str(sample_uids[i]), row, generic_components=False)
        )
    out: dict[str, float] = {}
    for source, runs in by_source.items():
        summary = summarize(source, runs, success_rule(source), expected_trials=expected_trials, reward_key=key)
        for warning in summary.warnings:
            logger.warning("verl-rewards validation (%s): %s", source, warning)
        out.update({f"{PREFIX}/{source}/{name}": float(v) for name, v in summary.metrics().items()})
    return out


def _expected_trials(trainer: Any, kwargs: Mapping[str, Any]) -> int | None:
    counts = kwargs.get("expected_acc_counts")
    if counts:
        return max(int(c) for c in counts.values())
    try:
        return int(trainer.config.actor_rollout_ref.rollout.val_kwargs.n)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def wrap_val_metrics_update(cls: Any) -> bool:
    """Wrap ``cls._val_metrics_update`` (idempotent); ``False`` when already wrapped."""
    original = private_method(cls, VAL_METRICS_UPDATE)
    if getattr(original, "__verl_rewards_hook__", False):
        return False

    @functools.wraps(original)
    def val_metrics_update(
        self: Any,
        data_sources: Any,
        sample_uids: Any,
        reward_extra_infos_dict: Any,
        sample_turns: Any,
        *args: Any,
        **kwargs: Any,
    ) -> dict[str, Any]:
        metrics = original(self, data_sources, sample_uids, reward_extra_infos_dict, sample_turns, *args, **kwargs)
        try:
            metrics.update(
                validation_metrics(
                    list(data_sources), list(sample_uids), reward_extra_infos_dict, _expected_trials(self, kwargs)
                )
            )
        except Exception:  # noqa: BLE001 - extra metrics must never break validation
            logger.warning("verl-rewards: pass^k validation metrics failed", exc_info=True)
        return metrics

    val_metrics_update.__verl_rewards_hook__ = True  # type: ignore[attr-defined]
    replace_private_method(cls, VAL_METRICS_UPDATE, val_metrics_update)
    return True


def install_legacy_trainer_hook(ray_trainer: Any) -> bool:
    """``verl.trainer.ppo.ray_trainer`` was imported: wrap ``RayPPOTrainer._val_metrics_update``."""
    return wrap_val_metrics_update(ray_trainer.RayPPOTrainer)


def install_v1_trainer_hook(trainer_base: Any) -> bool:
    """``verl.trainer.ppo.v1.trainer_base`` was imported: wrap ``PPOTrainer._val_metrics_update`` (every mode)."""
    return wrap_val_metrics_update(trainer_base.PPOTrainer)


def validation_hooks_active() -> dict[str, bool]:
    """Which trainer classes carry the hook in this process (for ``verl-rewards doctor`` and tests)."""
    import sys

    out = {}
    for module, cls in (
        ("verl.trainer.ppo.ray_trainer", "RayPPOTrainer"),
        ("verl.trainer.ppo.v1.trainer_base", "PPOTrainer"),
    ):
        mod = sys.modules.get(module)
        target = getattr(getattr(mod, cls, None), VAL_METRICS_UPDATE, None)
        out[f"{module}.{cls}"] = bool(getattr(target, "__verl_rewards_hook__", False))
    return out
