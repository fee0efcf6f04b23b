"""Reward extras in verl's metrics, in both trainers, with verl's own trainer modes (no extra setting).

verl 0.9.1 logs reward extras only during validation. These hooks add ``reward_extra/<key>/mean|max|min`` to the
training metrics, next to ``critic/score/*``, and make validation and GDPO read extras the way the manager lays
them out (:mod:`verl_rewards.scoring.extras`: absent values skipped, undeclared components unpacked):

* **legacy trainer** (``trainer.use_v1=False``): the extras travel in the batch (``non_tensor_batch`` +
  ``meta_info["reward_extra_keys"]``), so wrapping ``metric_utils.compute_data_metrics`` is enough
  (:func:`install_compute_data_metrics_hook`).
* **V1 trainer** (default): the metrics batch is rebuilt from TransferQueue without the extras, which stay in
  each row's ``extra_fields["reward_extra_info"]``. :func:`install_v1_hooks` wraps ``PPOTrainer._compute_metrics``
  of verl's V1 base class, so every built-in mode (``sync``, ``colocate_async``, ``separate_async``) logs them
  with nothing else changed: the trainer classes, their names and every ``trainer_mode`` comparison stay verl's.
  It also hands the extras that ``algorithm.gdpo_reward_keys`` names to verl's GDPO estimator, which in 0.9.1's
  V1 trainer would otherwise see only ``uid``, and adds the contribution terms over the critic's values
  (``value_source: critic``, :mod:`verl_rewards.critic_terms`) to the token-level rewards the advantage gets.
* **validation** (both trainers): ``process_validation_metrics`` gets ``None`` for absent values (verl skips
  ``None``) and one list per undeclared component (:func:`install_validation_hook`).

Values are aggregated over every non-padding row that reported them. ``bool`` values count as 0/1; strings,
``None``, other non-numbers and numbers the finite-number rule rejects (NaN, infinities, beyond ``2**108``, a
400-digit integer) are skipped per value, never an error; a key with no numeric value is not logged, and a key
that fails is logged as a warning without costing the batch its other keys.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .coerce import read_float
from .critic_terms import apply_critic_terms, critic_terms_of
from .scoring.extras import ABSENT_KEY, UNDECLARED_KEY, present_columns, rows_to_columns
from .verl_compat import COMPUTE_ADVANTAGE, COMPUTE_METRICS, private_method, replace_private_method

logger = logging.getLogger("verl_rewards")

PREFIX = "reward_extra"
#: trainer modes of earlier releases; selecting one now fails with a message saying to use verl's own mode
RETIRED_V1_MODES = ("sync_reward_extra", "colocate_async_reward_extra", "separate_async_reward_extra")


def _numeric(value: Any) -> float | None:
    """A metric or GDPO value by the one finite-number rule (never raises)."""
    return read_float(value)


def reward_extra_metrics(columns: Mapping[str, Any]) -> dict[str, float]:
    """``reward_extra/<key>/{mean,max,min}`` of the numeric values each column's samples reported."""
    out: dict[str, float] = {}
    for key, values in present_columns(columns).items():
        try:
            nums = [v for v in (_numeric(x) for x in values) if v is not None]
            if not nums:
                continue
            stats = {"mean": float(np.mean(nums)), "max": float(np.max(nums)), "min": float(np.min(nums))}
        except Exception:  # noqa: BLE001 - one bad key never costs the batch its other metrics
            logger.warning("verl-rewards: reward_extra metric %r failed", key, exc_info=True)
            continue
        out.update({f"{PREFIX}/{key}/{name}": value for name, value in stats.items()})
    return out


def batch_reward_extra_metrics(batch: Any) -> dict[str, float]:
    """Legacy trainer: the extras named by ``meta_info["reward_extra_keys"]`` in ``non_tensor_batch``."""
    keys = (getattr(batch, "meta_info", None) or {}).get("reward_extra_keys") or []
    ntb = getattr(batch, "non_tensor_batch", None) or {}
    return reward_extra_metrics({k: ntb[k] for k in keys if k in ntb})


def _rebind(original: Any, replacement: Any, attr: str, modules: tuple[str, ...]) -> None:
    """Point already-imported modules that did ``from ... import attr`` at the replacement."""
    import sys

    for name in modules:
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, attr, None) is original:
            setattr(mod, attr, replacement)


_TRAINER_MODULES = ("verl.trainer.ppo.ray_trainer", "verl.trainer.ppo.v1.trainer_base")


# ------------------------------------------------------------------------- legacy and validation hooks
def _hook_metric_utils(metric_utils: Any, attr: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> bool:
    """Replace ``metric_utils.<attr>`` by ``wrap(original)`` (idempotent: False when it is already ours) and rebind
    the trainers' ``from ... import`` of it."""
    if metric_utils is None:
        from verl.trainer.ppo import metric_utils
    original = getattr(metric_utils, attr)
    if getattr(original, "__verl_rewards_hook__", False):
        return False
    replacement = wrap(original)
    replacement.__verl_rewards_hook__ = True  # type: ignore[attr-defined]
    replacement.__wrapped__ = original  # type: ignore[attr-defined]
    replacement.__doc__ = original.__doc__
    setattr(metric_utils, attr, replacement)
    _rebind(original, replacement, attr, _TRAINER_MODULES)
    return True


def _metric_utils_hooked(attr: str) -> bool:
    """Whether ``metric_utils.<attr>`` is our wrapper in this process."""
    from verl.trainer.ppo import metric_utils

    return bool(getattr(getattr(metric_utils, attr), "__verl_rewards_hook__", False))


def install_compute_data_metrics_hook(metric_utils: Any = None) -> bool:
    """Wrap ``metric_utils.compute_data_metrics`` (legacy trainer): the batch's reward extras join its metrics."""

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def compute_data_metrics(batch: Any, use_critic: bool = True, *args: Any, **kwargs: Any) -> dict[str, Any]:
            metrics = original(batch, use_critic, *args, **kwargs)
            try:
                metrics.update(batch_reward_extra_metrics(batch))
            except Exception:  # noqa: BLE001 - metrics must never break a training step
                logger.warning("verl-rewards: reward_extra metrics failed", exc_info=True)
            return metrics

        return compute_data_metrics

    return _hook_metric_utils(metric_utils, "compute_data_metrics", wrap)


def compute_data_metrics_hooked() -> bool:
    """Whether the legacy-trainer hook is active in this process."""
    return _metric_utils_hooked("compute_data_metrics")


def validation_infos(infos: Mapping[str, list[Any]]) -> dict[str, list[Any]]:
    """Validation extras as verl should aggregate them: ``None`` where a sample did not report a key (verl's
    ``process_validation_metrics`` skips ``None``) and one list per undeclared component."""
    if ABSENT_KEY not in infos and UNDECLARED_KEY not in infos:
        return dict(infos)
    n = max((len(v) for v in infos.values()), default=0)
    out: dict[str, list[Any]] = {}
    absent = [str(a or "").split(",") for a in infos.get(ABSENT_KEY, [""] * n)]
    for key, values in infos.items():
        if key in (ABSENT_KEY, UNDECLARED_KEY):
            continue
        out[key] = [None if i < len(absent) and key in absent[i] else v for i, v in enumerate(values)]
    for i, packed in enumerate(infos.get(UNDECLARED_KEY, [])):
        for key, value in present_columns({UNDECLARED_KEY: [packed]}).items():
            if key not in out:
                out[key] = [None] * n
            out[key][i] = value[0]
    return out


def install_validation_hook(metric_utils: Any = None) -> bool:
    """Wrap ``metric_utils.process_validation_metrics`` (both trainers): extras read as :func:`validation_infos`."""

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def process_validation_metrics(data_sources: Any, sample_uids: Any, infos_dict: Any, *args: Any, **kwargs: Any):
            try:
                infos_dict = validation_infos(infos_dict)
            except Exception:  # noqa: BLE001 - metrics must never break validation
                logger.warning("verl-rewards: reading reward extras for validation failed", exc_info=True)
            return original(data_sources, sample_uids, infos_dict, *args, **kwargs)

        return process_validation_metrics

    return _hook_metric_utils(metric_utils, "process_validation_metrics", wrap)


def validation_hooked() -> bool:
    """Whether the validation hook is active in this process."""
    return _metric_utils_hooked("process_validation_metrics")


# ----------------------------------------------------------------------------------------------- V1 hook
def _tq_extra_rows(keys: list[str], partition_id: str, kv_batch_get: Any) -> list[Any]:
    data = kv_batch_get(keys=keys, partition_id=partition_id, select_fields=["extra_fields"])
    field = data["extra_fields"]
    rows = field.tolist() if hasattr(field, "tolist") else list(field)
    return [r.get("reward_extra_info") if isinstance(r, Mapping) else None for r in rows]


def tq_reward_extra_metrics(
    batch: Any, kv_batch_get: Any, added: Mapping[Any, Mapping[str, float]] | None = None
) -> dict[str, float]:
    """V1 trainer: read each row's ``extra_fields["reward_extra_info"]`` from TransferQueue; ``added``: extras the
    trainer added to rows (the critic terms, by TransferQueue key; their ``contrib`` adds to the manager's)."""
    infos = _tq_extra_rows(batch.keys, batch.partition_id, kv_batch_get)
    if added:
        infos = [_with_added(info, added.get(key)) for key, info in zip(batch.keys, infos, strict=True)]
    tags = list(getattr(batch, "tags", None) or [])
    if len(tags) == len(infos):
        infos = [r for r, tag in zip(infos, tags, strict=True) if not (tag or {}).get("is_padding", False)]
    return reward_extra_metrics(rows_to_columns(infos))


def _with_added(info: Any, added: Mapping[str, float] | None) -> Any:
    if not added:
        return info
    out = dict(info) if isinstance(info, Mapping) else {}
    out.update({k: v for k, v in added.items() if k != "contrib"})
    out["contrib"] = (_numeric(out.get("contrib")) or 0.0) + float(added.get("contrib", 0.0))
    return out


def gdpo_columns(infos: list[Any], gdpo_keys: list[str]) -> dict[str, np.ndarray]:
    """The float columns GDPO reads, from per-row extras; a row without a value (padding, failed rollout) gets
    0.0, which gives zero advantage within its group, as an unreported component does."""
    out: dict[str, np.ndarray] = {}
    for key in gdpo_keys:
        values = []
        for info in infos:
            value = _numeric(info.get(key)) if isinstance(info, Mapping) else None
            values.append(0.0 if value is None else value)
        out[key] = np.asarray(values, dtype=np.float32)
    return out


def _gdpo_layout(data: Any) -> None:
    """GDPO places each component on the token ``attention_mask[:, prompt_width:].sum() - 1``; the V1 trainer's
    advantage batch has neither ``prompts`` nor ``attention_mask``, so give it an empty prompt and a mask that
    covers the response up to its last trained token (multi-turn ``response_mask`` has holes)."""
    import torch

    mask = data.batch["response_mask"]
    width = mask.size(1)
    positions = torch.arange(width, device=mask.device).expand_as(mask)
    last = torch.where(mask.bool(), positions, torch.full_like(positions, -1)).max(dim=1).values
    data.batch["prompts"] = torch.zeros((mask.size(0), 0), dtype=torch.long, device=mask.device)
    data.batch["attention_mask"] = (positions <= last.unsqueeze(1)).to(mask.dtype)


_V1_BATCH = threading.local()
#: the critic terms' extras per TransferQueue key, from the advantage to the step's metrics (bounded)
CRITIC_EXTRAS: dict[Any, dict[str, float]] = {}
_CRITIC_EXTRAS_KEPT = 1 << 20


def _critic_terms(data: Any, keys: Any) -> None:
    """Inside verl's advantage: add the critic terms to ``token_level_rewards`` and keep their extras."""
    critic = getattr(_V1_BATCH, "critic", None)
    if not critic or not critic[0] or "values" not in data.batch.keys():
        return
    terms, step = critic
    rows = apply_critic_terms(data.batch, terms, step)
    _V1_BATCH.rewards = data.batch["token_level_rewards"]
    if keys is not None and len(keys) == len(rows):
        while len(CRITIC_EXTRAS) > _CRITIC_EXTRAS_KEPT:
            CRITIC_EXTRAS.pop(next(iter(CRITIC_EXTRAS)))
        CRITIC_EXTRAS.update(zip(keys, rows, strict=True))


def _write_back_rewards(trainer: Any, batch: Any) -> None:
    """verl writes ``token_level_rewards`` back only with a KL penalty in the reward; with a critic term it holds
    the bonus, so it goes back too: ``critic/rewards/*`` then logs what the advantage saw."""
    rewards = getattr(_V1_BATCH, "rewards", None)
    if rewards is None or trainer.config.algorithm.use_kl_in_reward:
        return
    import transfer_queue as tq
    from tensordict import TensorDict
    from verl.workers.utils.padding import response_to_nested

    mask = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["response_mask"])
    nested = response_to_nested(rewards, mask["response_mask"])
    tq.kv_batch_put(
        keys=batch.keys,
        partition_id=batch.partition_id,
        fields=TensorDict({"token_level_rewards": nested}, batch_size=len(batch.keys)),
    )


def install_v1_hooks(trainer_base: Any = None) -> bool:
    """Patch verl's V1 ``PPOTrainer`` (idempotent): reward_extra metrics in ``_compute_metrics`` and the GDPO
    columns in ``compute_advantage_for_multi_trajectories``; retire the old ``*_reward_extra`` mode names."""
    if trainer_base is None:
        from verl.trainer.ppo.v1 import trainer_base
    trainer_cls = trainer_base.PPOTrainer
    original_metrics = private_method(trainer_cls, COMPUTE_METRICS)
    if getattr(original_metrics, "__verl_rewards_hook__", False):
        return False
    original_advantage = private_method(trainer_cls, COMPUTE_ADVANTAGE)
    original_multi = trainer_base.compute_advantage_for_multi_trajectories

    def compute_metrics(self: Any, batch: Any, metrics: dict, timing_raw: dict, global_steps: int, epoch: int):
        out = original_metrics(self, batch, metrics, timing_raw, global_steps, epoch)
        try:
            import transfer_queue as tq

            added = {k: CRITIC_EXTRAS.pop(k) for k in batch.keys if k in CRITIC_EXTRAS}
            metrics.update(tq_reward_extra_metrics(batch, tq.kv_batch_get, added))
        except Exception:  # noqa: BLE001 - metrics must never break a training step
            logger.warning("verl-rewards: reward_extra metrics failed", exc_info=True)
        return out

    def compute_advantage(self: Any, batch: Any, metrics: dict) -> Any:
        _V1_BATCH.meta = batch
        use_critic = getattr(self, "use_critic", False)  # verl sets it in __init__
        _V1_BATCH.critic = (critic_terms_of(self.config), self.global_steps) if use_critic else None
        _V1_BATCH.rewards = None
        try:
            out = original_advantage(self, batch, metrics)
            _write_back_rewards(self, batch)
            return out
        finally:
            _V1_BATCH.meta = _V1_BATCH.critic = _V1_BATCH.rewards = None

    def compute_advantage_for_multi_trajectories(data: Any, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        keys = list((config.get("gdpo_reward_keys", None) if config is not None else None) or [])
        meta = getattr(_V1_BATCH, "meta", None)
        estimator = kwargs.get("adv_estimator", args[1] if len(args) > 1 else None)
        _critic_terms(data, kwargs.get("batch_keys", args[0] if args else None))
        if keys and meta is not None and getattr(estimator, "value", estimator) == "gdpo":
            import transfer_queue as tq

            missing = [k for k in keys if k not in data.non_tensor_batch]
            if missing:
                infos = _tq_extra_rows(meta.keys, meta.partition_id, tq.kv_batch_get)
                data.non_tensor_batch.update(gdpo_columns(infos, missing))
            if "prompts" not in data.batch.keys():
                _gdpo_layout(data)
        return original_multi(data, *args, config=config, **kwargs)

    for fn in (compute_metrics, compute_advantage, compute_advantage_for_multi_trajectories):
        setattr(fn, "__verl_rewards_hook__", True)  # noqa: B010 - functions of three signatures
    compute_metrics.__wrapped__ = original_metrics  # type: ignore[attr-defined]
    compute_advantage.__wrapped__ = original_advantage  # type: ignore[attr-defined]
    compute_advantage_for_multi_trajectories.__wrapped__ = original_multi  # type: ignore[attr-defined]
    replace_private_method(trainer_cls, COMPUTE_METRICS, compute_metrics)
    replace_private_method(trainer_cls, COMPUTE_ADVANTAGE, compute_advantage)
    trainer_base.compute_advantage_for_multi_trajectories = compute_advantage_for_multi_trajectories
    _retire_old_modes(trainer_base)
    return True


def v1_hooked() -> bool:
    """Whether the V1 trainer hooks are active in this process."""
    from verl.trainer.ppo.v1 import trainer_base

    return bool(getattr(private_method(trainer_base.PPOTrainer, COMPUTE_METRICS), "__verl_rewards_hook__", False))


def _retire_old_modes(trainer_base: Any) -> None:
    """Earlier releases asked for ``trainer.v1.trainer_mode=<mode>_reward_extra``; those names silently changed
    how verl 0.9.1 trains (it compares ``trainer_mode`` with ``"sync"``), so they now fail at start-up."""
    for name in RETIRED_V1_MODES:
        if name in trainer_base.TRAINER_REGISTRY:
            continue
        mode = name.removesuffix("_reward_extra")
        message = (
            f"trainer.v1.trainer_mode={name} is retired: use trainer.v1.trainer_mode={mode}. verl-rewards now "
            "logs reward_extra/* metrics in every built-in V1 mode without a special trainer mode."
        )

        def __init__(self: Any, *args: Any, _message: str = message, **kwargs: Any) -> None:
            raise ValueError(_message)

        # ``retired``: read by ``verl-rewards check``, which does not build the trainer
        cls = type(f"Retired_{name}", (), {"__init__": __init__, "__module__": __name__, "retired": message})
        trainer_base.TRAINER_REGISTRY[name] = cls
