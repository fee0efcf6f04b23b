"""Training metrics ``reward_extra/<key>/mean|max|min`` for every numeric reward extra, in both verl trainers.

verl 0.9.1 logs reward extras only during validation. Two hooks add them to training metrics, next to
``critic/score/*``:

* **legacy trainer** (``trainer.use_v1=False``): the extras travel in the batch (``non_tensor_batch`` +
  ``meta_info["reward_extra_keys"]``), so wrapping ``metric_utils.compute_data_metrics`` is enough.
  :func:`install_compute_data_metrics_hook` does it when ``metric_utils`` is imported.
* **V1 trainer** (default): the metrics batch is rebuilt from TransferQueue without the extras, which stay in
  each row's ``extra_fields["reward_extra_info"]``. The trainer modes ``sync_reward_extra``,
  ``colocate_async_reward_extra`` and ``separate_async_reward_extra`` (registered by
  :func:`register_v1_trainers`) read them back after verl's own metrics. Select one with
  ``trainer.v1.trainer_mode=sync_reward_extra``.

Values are aggregated over every non-padding row. ``bool`` values count as 0/1; strings, ``None`` and other
non-numbers are skipped per value, never an error; a key with no numeric value is not logged.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

logger = logging.getLogger("verl_rewards")

PREFIX = "reward_extra"
V1_MODES = ("sync", "colocate_async", "separate_async")
V1_SUFFIX = "_reward_extra"


def _numeric(value: Any) -> float | None:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        out = float(value)
        return out if math.isfinite(out) else None
    return None


def reward_extra_metrics(columns: Mapping[str, Iterable[Any]]) -> dict[str, float]:
    """``reward_extra/<key>/{mean,max,min}`` of the numeric values of each column."""
    out: dict[str, float] = {}
    for key, values in columns.items():
        arr = values.tolist() if isinstance(values, np.ndarray) else list(values)
        nums = [v for v in (_numeric(x) for x in arr) if v is not None]
        if not nums:
            continue
        out[f"{PREFIX}/{key}/mean"] = float(np.mean(nums))
        out[f"{PREFIX}/{key}/max"] = float(np.max(nums))
        out[f"{PREFIX}/{key}/min"] = float(np.min(nums))
    return out


def columns_from_rows(rows: Iterable[Mapping[str, Any] | None]) -> dict[str, list[Any]]:
    """Per-row ``reward_extra_info`` dicts to columns (a key missing in a row is simply not counted)."""
    cols: dict[str, list[Any]] = {}
    for info in rows:
        if not isinstance(info, Mapping):
            continue
        for key, value in info.items():
            cols.setdefault(str(key), []).append(value)
    return cols


def batch_reward_extra_metrics(batch: Any) -> dict[str, float]:
    """Legacy trainer: the extras named by ``meta_info["reward_extra_keys"]`` in ``non_tensor_batch``."""
    keys = (getattr(batch, "meta_info", None) or {}).get("reward_extra_keys") or []
    ntb = getattr(batch, "non_tensor_batch", None) or {}
    return reward_extra_metrics({k: ntb[k] for k in keys if k in ntb})


# ------------------------------------------------------------------------------------------- legacy hook
def install_compute_data_metrics_hook(metric_utils: Any = None) -> bool:
    """Wrap ``metric_utils.compute_data_metrics`` (idempotent) and rebind already-imported users of it."""
    import sys

    if metric_utils is None:
        from verl.trainer.ppo import metric_utils
    original = metric_utils.compute_data_metrics
    if getattr(original, "__verl_rewards_hook__", False):
        return False

    def compute_data_metrics(batch: Any, use_critic: bool = True, *args: Any, **kwargs: Any) -> dict[str, Any]:
        metrics = original(batch, use_critic, *args, **kwargs)
        try:
            metrics.update(batch_reward_extra_metrics(batch))
        except Exception:  # noqa: BLE001 - metrics must never break a training step
            logger.warning("verl-rewards: reward_extra metrics failed", exc_info=True)
        return metrics

    compute_data_metrics.__verl_rewards_hook__ = True  # type: ignore[attr-defined]
    compute_data_metrics.__wrapped__ = original  # type: ignore[attr-defined]
    compute_data_metrics.__doc__ = original.__doc__
    metric_utils.compute_data_metrics = compute_data_metrics
    for name in ("verl.trainer.ppo.ray_trainer", "verl.trainer.ppo.v1.trainer_base"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "compute_data_metrics", None) is original:
            mod.compute_data_metrics = compute_data_metrics
    return True


def compute_data_metrics_hooked() -> bool:
    """Whether the legacy-trainer hook is active in this process."""
    from verl.trainer.ppo import metric_utils

    return bool(getattr(metric_utils.compute_data_metrics, "__verl_rewards_hook__", False))


# ----------------------------------------------------------------------------------------------- V1 hook
def tq_reward_extra_metrics(batch: Any, kv_batch_get: Any) -> dict[str, float]:
    """V1 trainer: read each row's ``extra_fields["reward_extra_info"]`` from TransferQueue."""
    data = kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["extra_fields"])
    field = data["extra_fields"]
    rows = field.tolist() if hasattr(field, "tolist") else list(field)
    tags = list(getattr(batch, "tags", None) or [])
    if len(tags) == len(rows):
        rows = [r for r, tag in zip(rows, tags, strict=True) if not (tag or {}).get("is_padding", False)]
    infos = [r.get("reward_extra_info") if isinstance(r, Mapping) else None for r in rows]
    return reward_extra_metrics(columns_from_rows(infos))


class RewardExtraMetricsMixin:
    """Adds ``reward_extra/*`` to the V1 trainer's per-step metrics."""

    def _compute_metrics(self, batch: Any, metrics: dict, timing_raw: dict, global_steps: int, epoch: int) -> Any:
        out = super()._compute_metrics(batch, metrics, timing_raw, global_steps, epoch)  # type: ignore[misc]
        try:
            import transfer_queue as tq

            metrics.update(tq_reward_extra_metrics(batch, tq.kv_batch_get))
        except Exception:  # noqa: BLE001 - metrics must never break a training step
            logger.warning("verl-rewards: reward_extra metrics failed", exc_info=True)
        return out


def register_v1_trainers(v1: Any = None) -> list[str]:
    """Register ``<mode>_reward_extra`` for each built-in V1 trainer mode; returns the names registered."""
    if v1 is None:
        import verl.trainer.ppo.v1 as v1
    from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY

    names = []
    for mode in V1_MODES:
        base = TRAINER_REGISTRY.get(mode)
        name = mode + V1_SUFFIX
        if base is None:
            continue
        existing = TRAINER_REGISTRY.get(name)
        if existing is None:
            cls = type(f"{base.__name__}RewardExtra", (RewardExtraMetricsMixin, base), {"__module__": __name__})
            v1.register_trainer(name)(cls)
        names.append(name)
    return names
