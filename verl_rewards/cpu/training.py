"""The trainer side of the CPU backend: the gloo process group, the CPU trainer modes, the CPU engines.

* verl builds the process-group backend ``cpu:gloo,<device>:<backend>`` (``verl/utils/distributed.py``), which on
  the CPU platform reads ``cpu:gloo,cpu:gloo`` and torch rejects. :class:`CpuActorRolloutRefWorker` opens the plain
  ``gloo`` group as soon as the worker exists, so verl finds it initialised and keeps it; the critic's
  :class:`CpuTrainingWorker` opens it before verl's ``TrainingWorker`` would, and lets verl's value-model loader,
  which asks for flash attention, get SDPA (:func:`register_sdpa_value_model`).
* The V1 trainer fixes its worker class (``ActorRolloutRefWorker``, ``verl/trainer/ppo/v1/trainer_base.py``;
  ``DetachActorWorker`` in ``separate_async``), so each CPU trainer mode (``cpu_sync``, ``cpu_colocate_async``,
  ``cpu_separate_async``, registered with verl's ``register_trainer``) is verl's trainer of that mode with the
  worker swapped for the same class plus the gloo group (and the critic's ``TrainingWorker``, in runs with a
  critic). It sets ``trainer.v1.trainer_mode`` back to verl's name
  before verl reads it: verl behaves as the sync trainer only under the literal ``sync`` and reads each mode's
  settings from the ``trainer.v1.<mode>`` section of that name.
* ``separate_async`` also needs a checkpoint engine other than ``naive``: ``cpu_gloo`` (:mod:`.checkpoint`).
* verl registers its FSDP engines for cuda and npu only (``verl/workers/engine/fsdp/transformer_impl.py``); the
  CPU engine is verl's ``FSDPEngineWithLMHead`` registered for ``cpu``, which builds forward-only models (the
  reference policy) without the pinned-memory ``CPUOffloadPolicy`` verl forces on them: pinning needs an
  accelerator, and on the CPU there is nothing to offload to. The critic's engine is verl's
  ``FSDPEngineWithValueHead`` registered for ``cpu``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch
from verl.experimental.separation.engine_workers import DetachActorWorker
from verl.workers.engine_workers import ActorRolloutRefWorker, TrainingWorker

from .. import verl_compat
from .names import TRAINER_MODES

_ENGINE_REGISTERED = False


def init_gloo_process_group() -> None:
    """Open the default process group with ``gloo`` from the worker's env (``RANK``, ``WORLD_SIZE``, ...)."""
    import torch.distributed as dist

    if dist.is_initialized():
        return
    dist.init_process_group(
        backend="gloo",
        rank=int(os.environ.get("RANK", "0")),
        world_size=int(os.environ.get("WORLD_SIZE", "1")),
        init_method=os.environ.get("DIST_INIT_METHOD") or None,
    )


class _GlooWorker:
    """Mixed into a verl actor worker: opens the plain gloo group as soon as the worker exists."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        torch.set_num_threads(max(1, int(os.environ.get("VERL_REWARDS_TRAIN_THREADS", "1"))))
        init_gloo_process_group()


class CpuActorRolloutRefWorker(_GlooWorker, ActorRolloutRefWorker):
    """verl's hybrid actor/rollout/ref worker with a gloo process group (see the module docstring)."""


class CpuDetachActorWorker(_GlooWorker, DetachActorWorker):
    """verl's ``separate_async`` worker (the actor that can park its weights on the host) with a gloo group."""


def register_sdpa_value_model(hf_config: Any) -> type:
    """Make ``AutoModelForTokenClassification`` build this config's token-classification model (verl's value model)
    with SDPA attention when asked for ``flash_attention_2``, which verl's ``load_valuehead_model``
    (``verl/utils/model.py``) always asks for and a CPU cannot run. A subclass of transformers' own class, same name
    and weights, that names SDPA as its one compatible flash implementation, registered with transformers' public
    ``register``; idempotent. Returns the class."""
    from transformers import AutoModelForTokenClassification
    from transformers.models.auto.modeling_auto import MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING

    config_cls = type(hf_config)
    base: Any = MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING[config_cls]
    if getattr(base, "_verl_rewards_sdpa", False):
        return base
    cls = type(base.__name__, (base,), {"_compatible_flash_implementations": ["sdpa"], "_verl_rewards_sdpa": True})
    AutoModelForTokenClassification.register(config_cls, cls, exist_ok=True)
    return cls


class CpuTrainingWorker(TrainingWorker):
    """verl's training worker (the critic) with a gloo process group and a value model verl can load on the CPU
    (see the module docstring)."""

    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        torch.set_num_threads(max(1, int(os.environ.get("VERL_REWARDS_TRAIN_THREADS", "1"))))
        init_gloo_process_group()
        if getattr(config, "model_type", None) == "value_model":
            register_sdpa_value_model(config.model_config.hf_config)
        super().__init__(config, *args, **kwargs)


@dataclass(frozen=True)
class CpuTrainer:
    """One CPU trainer mode: the verl trainer it extends, the mode verl must read, the worker swapped in."""

    name: str
    verl_mode: str
    worker: type
    cpu_worker: type


def _trainers() -> dict[str, CpuTrainer]:
    return {
        "sync": CpuTrainer(TRAINER_MODES["sync"], "sync", ActorRolloutRefWorker, CpuActorRolloutRefWorker),
        "colocate_async": CpuTrainer(
            TRAINER_MODES["colocate_async"], "colocate_async", ActorRolloutRefWorker, CpuActorRolloutRefWorker
        ),
        "separate_async": CpuTrainer(
            TRAINER_MODES["separate_async"], "separate_async", DetachActorWorker, CpuDetachActorWorker
        ),
    }


def register_trainer(base: type, verl_mode: str) -> type:
    """Register the CPU trainer of ``verl_mode`` (``cpu_sync``, ``cpu_colocate_async``, ``cpu_separate_async``) in
    verl's V1 trainer registry: a subclass of verl's trainer ``base`` that reads verl's own mode name and swaps
    its worker class. Called once the verl module holding ``base`` is imported; returns the registered class."""
    from omegaconf import open_dict
    from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY
    from verl.trainer.ppo.v1.trainer_base import register_trainer as verl_register

    spec = _trainers()[verl_mode]
    if spec.name in TRAINER_REGISTRY:
        return TRAINER_REGISTRY[spec.name]

    class CpuTrainerMode(base):
        """verl's trainer of this mode whose actor workers use a gloo process group."""

        cpu_mode = spec

        def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
            with open_dict(config):
                config.trainer.v1.trainer_mode = verl_compat.verl_trainer_mode(verl_mode)
            super().__init__(config, *args, **kwargs)

        def _init_resource_pool_mgr(self) -> Any:  # verl_compat.PRIVATES: where the worker class is fixed
            out = super()._init_resource_pool_mgr()
            if not verl_compat.replace_worker_class(self, spec.worker, spec.cpu_worker):
                raise RuntimeError(
                    f"{spec.name}: the V1 trainer no longer maps a role to {spec.worker.__name__} "
                    "(verl/trainer/ppo/v1/); the CPU worker cannot be installed"
                )
            if self.use_critic and not verl_compat.replace_worker_class(self, TrainingWorker, CpuTrainingWorker):
                raise RuntimeError(
                    f"{spec.name}: the V1 trainer no longer maps the critic to TrainingWorker "
                    "(verl/trainer/ppo/v1/trainer_base.py); the CPU critic cannot be installed"
                )
            return out

    CpuTrainerMode.__name__ = CpuTrainerMode.__qualname__ = f"Cpu{base.__name__}"
    verl_register(spec.name)(CpuTrainerMode)
    return CpuTrainerMode


def register_engine(transformer_impl: ModuleType) -> None:
    """Register the CPU engine for ``language_model`` / ``fsdp``, ``fsdp2`` on device ``cpu``."""
    from verl.workers.engine.base import EngineRegistry

    base = verl_compat.fsdp_lm_engine_class()
    global _ENGINE_REGISTERED
    if _ENGINE_REGISTERED:
        return
    _ENGINE_REGISTERED = True

    class CpuFSDPEngineWithLMHead(base):  # type: ignore[misc, valid-type]
        """verl's FSDP engine; forward-only models are built without the pinned CPU offload policy."""

        def _build_fsdp_module(self, module: Any) -> Any:
            cfg = self.engine_config
            if getattr(cfg, "offload_policy", False):
                raise ValueError(
                    "the CPU backend cannot use fsdp_config.offload_policy=True: verl's CPUOffloadPolicy pins memory, "
                    "which needs an accelerator (verl/workers/engine/fsdp/transformer_impl.py)"
                )
            forward_only = cfg.forward_only
            cfg.forward_only = False
            try:
                return super()._build_fsdp_module(module)
            finally:
                cfg.forward_only = forward_only

    EngineRegistry.register(model_type="language_model", backend=["fsdp", "fsdp2"], device="cpu")(
        CpuFSDPEngineWithLMHead
    )
    EngineRegistry.register(model_type="value_model", backend=["fsdp", "fsdp2"], device="cpu")(
        transformer_impl.FSDPEngineWithValueHead
    )
