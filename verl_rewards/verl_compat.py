"""The one door to verl's private parts (verl 0.9.1).

Everything verl-rewards needs from verl that verl does not offer as a public API is reached through this module,
each name with the verl file it comes from, so that a verl release that moves or renames one breaks here, where
``tests/test_verl_compat.py`` names it, and nowhere else. Public registries (``PlatformRegistry``,
``RolloutReplicaRegistry``, ``register_trainer``, ``EngineRegistry``) are used directly by the callers.

Nothing here replaces a verl function: the CPU backend adds entries to verl's tables and subclasses verl's classes.
"""

from __future__ import annotations

import importlib
from typing import Any

#: (module, attribute, verl file, why we need it) of every verl private verl-rewards touches
PRIVATES: tuple[tuple[str, str, str, str], ...] = (
    (
        "verl.workers.rollout.base",
        "_ROLLOUT_REGISTRY",
        "verl/workers/rollout/base.py",
        "the worker-side rollout adapter table: (name, mode) -> class path; no public register function",
    ),
    (
        "verl.experimental.agent_loop.agent_loop",
        "_agent_loop_registry",
        "verl/experimental/agent_loop/agent_loop.py",
        "agent-loop name -> Hydra config; the plugin adds its loops, the smoke policy wrapper instantiates one",
    ),
    (
        "verl.workers.engine.fsdp.transformer_impl",
        "FSDPEngine._build_fsdp_module",
        "verl/workers/engine/fsdp/transformer_impl.py",
        "the CPU engine builds the forward-only (reference) model without the pinned-memory CPUOffloadPolicy",
    ),
    (
        "verl.trainer.ppo.v1.trainer_base",
        "PPOTrainer._init_resource_pool_mgr",
        "verl/trainer/ppo/v1/trainer_base.py",
        "the V1 trainer maps roles to worker classes there; the CPU trainer extends it to swap the worker class",
    ),
    (
        "verl.trainer.ppo.v1.trainer_base",
        "PPOTrainer.role_worker_mapping",
        "verl/trainer/ppo/v1/trainer_base.py",
        "the V1 trainer fixes its worker class (ActorRolloutRefWorker) in __init__; the CPU trainer swaps it",
    ),
    (
        "verl.trainer.ppo.v1.trainer_base",
        'trainer_mode == "sync"',
        "verl/trainer/ppo/v1/trainer_base.py",
        'the V1 trainer behaves as the sync trainer only when trainer.v1.trainer_mode is literally "sync"',
    ),
)

#: where each private lives (a verl file), for error messages
ROLLOUT_REGISTRY_FILE = "verl/workers/rollout/base.py"


def rollout_adapter_table() -> dict[tuple[str, str], str]:
    """verl's ``_ROLLOUT_REGISTRY`` (``verl/workers/rollout/base.py``): ``(rollout name, mode) -> "module.Class"``,
    read by ``get_rollout_class`` in the actor/rollout worker."""
    from verl.workers.rollout import base

    table = base._ROLLOUT_REGISTRY
    if not isinstance(table, dict):
        raise TypeError(f"{ROLLOUT_REGISTRY_FILE}: _ROLLOUT_REGISTRY is no longer a dict")
    return table


def register_rollout_adapter(name: str, target: str, mode: str = "async") -> None:
    """Add ``(name, mode) -> target`` to verl's worker-side rollout adapter table (idempotent)."""
    rollout_adapter_table().setdefault((name, mode), target)


def agent_loop_registry(module: Any = None) -> dict[str, Any]:
    """verl's ``_agent_loop_registry`` (``verl/experimental/agent_loop/agent_loop.py``): agent-loop name -> the
    Hydra config ``AgentLoopWorker`` instantiates (``{"_target_": ..., **kwargs}``). ``module``: that module, when
    the caller already holds it (an import hook)."""
    if module is None:
        from verl.experimental.agent_loop import agent_loop as module
    table = module._agent_loop_registry
    if not isinstance(table, dict):
        raise TypeError("verl/experimental/agent_loop/agent_loop.py: _agent_loop_registry is no longer a dict")
    return table


def fsdp_lm_engine_class() -> type:
    """``FSDPEngineWithLMHead`` (``verl/workers/engine/fsdp/transformer_impl.py``), whose private
    ``_build_fsdp_module(module)`` the CPU engine overrides; checked to exist."""
    from verl.workers.engine.fsdp import transformer_impl

    cls = transformer_impl.FSDPEngineWithLMHead
    if not callable(getattr(cls, "_build_fsdp_module", None)):
        raise AttributeError(
            "verl/workers/engine/fsdp/transformer_impl.py: FSDPEngine._build_fsdp_module is gone; "
            "the CPU engine cannot build the reference model"
        )
    return cls


def replace_worker_class(trainer: Any, old: type, new: type) -> int:
    """Swap ``old`` for ``new`` (both plain classes) in a V1 trainer's ``role_worker_mapping``
    (``verl/trainer/ppo/v1/trainer_base.py``, filled by ``PPOTrainer._init_resource_pool_mgr``); returns how many
    roles changed."""
    import ray

    mapping = getattr(trainer, "role_worker_mapping", None)
    if not isinstance(mapping, dict):
        raise AttributeError("verl/trainer/ppo/v1/trainer_base.py: PPOTrainer.role_worker_mapping is gone")
    changed = 0
    for role, remote_cls in list(mapping.items()):
        wrapped = getattr(remote_cls, "__ray_actor_class__", None)
        if wrapped is old:
            mapping[role] = ray.remote(new)
            changed += 1
    return changed


#: the ``trainer.v1.trainer_mode`` value verl's V1 trainer compares with (``verl/trainer/ppo/v1/trainer_base.py``)
SYNC_TRAINER_MODE = "sync"


def check_privates() -> list[str]:
    """The privates of :data:`PRIVATES` that this verl no longer has (empty when all are there)."""
    missing: list[str] = []
    for module_name, attr, where, _ in PRIVATES:
        if attr.startswith("trainer_mode"):
            continue  # a behaviour, checked by tests/test_verl_compat.py
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            missing.append(f"{where}: cannot import {module_name} ({exc})")
            continue
        head, _, tail = attr.partition(".")
        if tail == "role_worker_mapping":
            continue  # an instance attribute, checked by reading the source in the test
        obj = getattr(obj, head, None)
        if obj is not None and tail:
            obj = getattr(obj, tail, None)
        if obj is None:
            missing.append(f"{where}: {attr} is gone")
    return missing
