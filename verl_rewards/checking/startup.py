"""What ``main_ppo`` does at start-up, checked in this process without Ray or a model (:func:`check`): verl loaded
with its plugins, the config composed and validated, the trainer of ``trainer.v1.trainer_mode`` and what the async
modes assert, the reward manager as every reward worker builds it, then the rollout side (:mod:`.rollout`), the data
(:mod:`.data`), what the first step runs (:mod:`.first_step`) and the contribution terms' reach
(:mod:`.contribution`)."""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .contribution import contribution_reach
from .data import data_files, data_lines
from .errors import CheckError, describe
from .first_step import first_step
from .rollout import agent_loops


def check(overrides: Sequence[str]) -> list[str]:
    """Every start-up stage (module doc) on ``overrides``; the summary lines, or :class:`CheckError`."""
    started = time.perf_counter()
    config = _compose(overrides)
    _driver(config)
    trainer = _task_runner(config)
    trainer_mode = _async_mode_constraints(config)
    manager = _reward_manager(config)
    loops = agent_loops(config)
    data = data_lines(config, manager, loops)
    files = [(key, path) for key in ("train_files", "val_files") for path in data_files(config.data.get(key))]
    data += first_step(config, manager, files)  # what the first step runs
    contribution = contribution_reach(config, manager, loops)
    took = time.perf_counter() - started
    return [
        f"verl-rewards check: ok ({len(overrides)} overrides, {took:.1f} s)",
        f"  trainer: {trainer}",
        *([f"  {trainer_mode}"] if trainer_mode else []),
        f"  reward manager: {_describe_manager(config, manager)}",
        *(f"  {line}" for line in loops.lines),
        *(f"  {line}" for line in data),
        *(f"  {line}" for line in contribution),
    ]


def _compose(overrides: Sequence[str]) -> Any:
    import verl  # noqa: F401 - verl loads its plugins here, as in main_ppo

    from ..verl_config import compose_config

    try:
        return compose_config(list(overrides))
    except Exception as exc:  # noqa: BLE001 - Hydra / OmegaConf errors of every kind
        raise CheckError("compose", describe(exc)) from None


def _driver(config: Any) -> None:
    """``main_ppo.main``'s checks before Ray starts."""
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config
    from verl.utils.device import auto_set_device

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # its progress lines; the summary says what matters
            auto_set_device(config)
            validate_config(
                config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
            )
    except Exception as exc:  # noqa: BLE001 - verl raises AssertionError, ValueError, ...
        raise CheckError("validate_config", describe(exc)) from None


def _task_runner(config: Any) -> str:
    """The task runner's set-up: the trainer class (V1) and the resolved config."""
    from omegaconf import OmegaConf

    mode = "legacy trainer (use_v1=False)"
    try:
        if config.trainer.use_v1:
            from verl.trainer.ppo.v1 import get_trainer_cls

            name = str(config.trainer.v1.trainer_mode)
            _known_trainer_mode(name)
            cls = get_trainer_cls(name)
            retired = getattr(cls, "retired", None)
            if retired:  # a retired mode fails when the trainer is built; check builds none
                raise ValueError(retired)
            mode = f"V1 {cls.__name__} (trainer_mode={name})"
        OmegaConf.resolve(config)
    except Exception as exc:  # noqa: BLE001
        raise CheckError("trainer", describe(exc)) from None
    return f"{mode}, adv_estimator={config.algorithm.adv_estimator}, rollout.n={config.actor_rollout_ref.rollout.n}"


def _async_mode_constraints(config: Any) -> str | None:
    """What verl's async V1 trainers assert when they start (``trainer_base.py``, ``replay_buffer.py``,
    ``trainer_separate_async.py``), checked here: the first one broken is the error (stage ``trainer mode
    <mode>``), else a summary line. ``None`` for the sync trainer and the legacy one."""
    if not config.trainer.use_v1:
        return None
    from verl.trainer.ppo.utils import need_reward_model
    from verl.trainer.ppo.v1 import PPOTrainerColocateAsync, PPOTrainerSeparateAsync, get_trainer_cls

    cls = get_trainer_cls(str(config.trainer.v1.trainer_mode))
    if issubclass(cls, PPOTrainerSeparateAsync):
        mode = "separate_async"
    elif issubclass(cls, PPOTrainerColocateAsync):
        mode = "colocate_async"
    else:
        return None
    v1, rollout = config.trainer.v1, config.actor_rollout_ref.rollout
    section = v1.get(mode) or {}
    batch, sync_step = int(config.data.train_batch_size), section.get("parameter_sync_step", 1)
    mini, sampler = int(config.actor_rollout_ref.actor.ppo_mini_batch_size), v1.sampler
    threshold, strategy = sampler.get("max_off_policy_threshold"), sampler.get("max_off_policy_strategy")
    engine = rollout.checkpoint_engine
    rules: list[tuple[bool, str]] = [
        (
            threshold is None or (isinstance(threshold, int) and not isinstance(threshold, bool) and threshold > 0),
            f"trainer.v1.sampler.max_off_policy_threshold must be an integer > 0 or null, got {threshold!r} "
            "(verl/trainer/ppo/v1/replay_buffer.py)",
        ),
        (
            strategy in ("drop", "wait"),
            f"trainer.v1.sampler.max_off_policy_strategy must be drop or wait, got {strategy!r} "
            "(verl/trainer/ppo/v1/replay_buffer.py)",
        ),
        (
            isinstance(sync_step, int) and sync_step > 0 and batch % sync_step == 0,
            f"data.train_batch_size ({batch}) must be divisible by trainer.v1.{mode}.parameter_sync_step "
            f"({sync_step}) (verl/trainer/ppo/v1/trainer_base.py, PPOTrainer.step)",
        ),
    ]
    if mode == "separate_async":
        # verl ignores the switch without hybrid replicas (actor_rollout_ref.hybrid_engine=False)
        hybrid = bool(config.actor_rollout_ref.get("hybrid_engine", True))
        switch = hybrid and bool((section.get("hybrid_rollout") or {}).get("enable_switch", False))
        rules += [
            (
                batch == sync_step * mini,
                f"data.train_batch_size ({batch}) must equal trainer.v1.separate_async.parameter_sync_step "
                f"({sync_step}) x actor_rollout_ref.actor.ppo_mini_batch_size ({mini}) "
                "(verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                int(rollout.nnodes) > 0,
                f"actor_rollout_ref.rollout.nnodes must be > 0 (the standalone rollout's nodes), got {rollout.nnodes} "
                "(verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                int(rollout.n_gpus_per_node) > 0,
                "actor_rollout_ref.rollout.n_gpus_per_node must be > 0 (the standalone rollout's devices per node), "
                f"got {rollout.n_gpus_per_node} (verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                engine.backend != "naive",
                "actor_rollout_ref.rollout.checkpoint_engine.backend must not be naive: the standalone rollout runs "
                "in other processes (nccl, nixl, ...; cpu_gloo on the CPU) "
                "(verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                not need_reward_model(config) or bool(config.reward.reward_model.enable_resource_pool),
                "reward.reward_model.enable_resource_pool must be True with a reward model: the standalone rollout "
                "never pauses to free the devices (verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                not (switch and bool((rollout.get("disaggregation") or {}).get("enabled", False))),
                "trainer.v1.separate_async.hybrid_rollout.enable_switch does not support "
                "actor_rollout_ref.rollout.disaggregation.enabled (verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
        ]
    for ok, message in rules:
        if not ok:
            raise CheckError(f"trainer mode {mode}", message)
    _checkpoint_backend(engine)
    parts = [f"parameter_sync_step {sync_step}", f"max_off_policy_threshold {threshold} ({strategy})"]
    parts.append(f"num_warmup_batches {section.get('num_warmup_batches', 1)}")
    if mode == "separate_async":
        parts.insert(1, f"standalone rollout {rollout.nnodes} x {rollout.n_gpus_per_node} devices")
        parts.insert(2, f"checkpoint engine {engine.backend}")
    return f"trainer mode: {mode} ({', '.join(parts)})"


def _checkpoint_backend(engine: Any) -> None:
    """The actor workers build ``checkpoint_engine.backend`` from verl's registry (``verl/workers/engine_workers.py``),
    after importing ``custom_backend_module``."""
    from verl.checkpoint_engine import CheckpointEngineRegistry
    from verl.utils.import_utils import import_external_libs

    try:
        import_external_libs(engine.get("custom_backend_module") or None)
        CheckpointEngineRegistry.get(str(engine.backend))
    except Exception as exc:  # noqa: BLE001 - ImportError, ValueError naming the registered backends
        raise CheckError("checkpoint engine", f"actor_rollout_ref.rollout.checkpoint_engine: {describe(exc)}") from None


def _known_trainer_mode(name: str) -> None:
    """An unknown V1 trainer mode is an error listing the modes a run can use: verl's registry less the retired
    names this package keeps in it only to explain them (:func:`verl_rewards.metrics`)."""
    from verl.trainer.ppo.v1 import trainer_base

    registry = trainer_base.TRAINER_REGISTRY
    if name not in registry:
        usable = sorted(k for k, cls in registry.items() if not getattr(cls, "retired", None))
        raise ValueError(f"trainer.v1.trainer_mode={name!r} is not a V1 trainer mode; available: {usable}")


def _tokenizer(config: Any) -> Any:
    """The tokenizer a reward worker loads, when it is a local folder (a hub name would need a download)."""
    model = config.actor_rollout_ref.model
    path = model.get("tokenizer_path") or model.get("path")
    if not path or not Path(str(path)).expanduser().is_dir():
        return None
    from verl.utils import hf_tokenizer

    try:
        return hf_tokenizer(str(Path(str(path)).expanduser()), trust_remote_code=True)
    except Exception as exc:  # noqa: BLE001
        raise CheckError("tokenizer", f"{path}: {describe(exc)}") from None


def _reward_manager(config: Any) -> Any:
    """The manager as every ``RewardLoopWorker`` builds it (verl's ``load_reward_manager``)."""
    from verl.trainer.ppo.reward import load_reward_manager

    tokenizer = _tokenizer(config)
    try:
        return load_reward_manager(config, tokenizer)
    except SystemExit as exc:  # verl's loader of reward.custom_reward_function.path runs the file's top level
        raise CheckError("reward manager", f"a module it imports called sys.exit({exc.code!r}) at import") from None
    except Exception as exc:  # noqa: BLE001 - ManagerConfigError, verl's lookup and loading errors
        raise CheckError("reward manager", describe(exc)) from None


def _describe_manager(config: Any, manager: Any) -> str:
    name = config.reward.reward_manager.name
    settings = getattr(manager, "settings", None)
    if settings is None:
        return f"{name} ({type(manager).__name__})"
    return (
        f"{name} ({type(manager).__name__}); contribution: {settings.contribution.describe()}; "
        f"timeout_s={settings.timeout_s:g}, on_error={settings.on_error}, executor={settings.executor}"
    )
