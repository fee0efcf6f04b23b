"""verl on the CPU: a platform, a rollout backend (``hf_cpu``), a trainer per V1 mode (``cpu_sync``,
``cpu_colocate_async``, ``cpu_separate_async``), a checkpoint engine (``cpu_gloo``) and an engine, active only when
selected with ``VERL_PLATFORM=cpu`` (``verl-rewards smoke`` sets it).

Everything goes through verl's own registries; the few verl privates it needs are in
:mod:`verl_rewards.verl_compat`. The plugin (:mod:`verl_rewards.plugin`) calls the ``on_*`` functions when the
verl module each one needs is imported, in every process of a run.
"""

from __future__ import annotations

import os
from types import ModuleType

from .names import ADAPTER_TARGET, CHECKPOINT_BACKEND, PLATFORM_ENV, ROLLOUT_NAME, TRAINER_MODE, TRAINER_MODES

__all__ = [
    "ADAPTER_TARGET",
    "CHECKPOINT_BACKEND",
    "HOOKS",
    "PLATFORM_ENV",
    "ROLLOUT_NAME",
    "TRAINER_MODE",
    "TRAINER_MODES",
    "selected",
]


def selected() -> bool:
    """Whether this process runs verl on the CPU platform (``VERL_PLATFORM=cpu``)."""
    return os.environ.get(PLATFORM_ENV, "").strip().lower() == "cpu"


def on_platform(_: ModuleType) -> None:
    """Register the ``cpu`` platform (``verl.plugin.platform``)."""
    from . import platform  # noqa: F401 - registers on import


def on_replica(module: ModuleType) -> None:
    """Register ``hf_cpu`` in verl's ``RolloutReplicaRegistry`` (``verl.workers.rollout.replica``)."""

    def load() -> type:
        from .rollout import HFCpuReplica

        return HFCpuReplica

    module.RolloutReplicaRegistry.register(ROLLOUT_NAME, load)


def on_rollout_base(_: ModuleType) -> None:
    """Add the worker-side ``hf_cpu`` adapter to verl's rollout table (``verl.workers.rollout.base``)."""
    from ..verl_compat import register_rollout_adapter

    register_rollout_adapter(ROLLOUT_NAME, ADAPTER_TARGET)


def on_trainer_sync(module: ModuleType) -> None:
    """Register the ``cpu_sync`` trainer mode (``verl.trainer.ppo.v1.trainer_sync``)."""
    from .training import register_trainer

    register_trainer(module.PPOTrainerSync, "sync")


def on_trainer_colocate_async(module: ModuleType) -> None:
    """Register ``cpu_colocate_async`` (``verl.trainer.ppo.v1.trainer_colocate_async``)."""
    from .training import register_trainer

    register_trainer(module.PPOTrainerColocateAsync, "colocate_async")


def on_trainer_separate_async(module: ModuleType) -> None:
    """Register ``cpu_separate_async`` (``verl.trainer.ppo.v1.trainer_separate_async``)."""
    from .training import register_trainer

    register_trainer(module.PPOTrainerSeparateAsync, "separate_async")


def on_checkpoint_engine(module: ModuleType) -> None:
    """Register the ``cpu_gloo`` checkpoint engine (``verl.checkpoint_engine.base``)."""
    from .checkpoint import register

    register(module)


def on_fsdp_engine(module: ModuleType) -> None:
    """Register the CPU engine (``verl.workers.engine.fsdp.transformer_impl``)."""
    from .training import register_engine

    register_engine(module)


#: (verl module, hook name, callback) armed by the plugin when :func:`selected`
HOOKS = (
    ("verl.plugin.platform.platform_manager", "cpu_platform", on_platform),
    ("verl.workers.rollout.replica", "cpu_rollout_replica", on_replica),
    ("verl.workers.rollout.base", "cpu_rollout_adapter", on_rollout_base),
    ("verl.trainer.ppo.v1.trainer_sync", "cpu_trainer", on_trainer_sync),
    ("verl.trainer.ppo.v1.trainer_colocate_async", "cpu_trainer_colocate_async", on_trainer_colocate_async),
    ("verl.trainer.ppo.v1.trainer_separate_async", "cpu_trainer_separate_async", on_trainer_separate_async),
    ("verl.checkpoint_engine.base", "cpu_checkpoint_engine", on_checkpoint_engine),
    ("verl.workers.engine.fsdp.transformer_impl", "cpu_engine", on_fsdp_engine),
)
