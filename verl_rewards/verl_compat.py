"""The one door to verl's private parts (verl 0.9.1).

Everything verl-rewards needs from verl that verl does not offer as a public API is reached through this module,
each name with the verl file it comes from, so that a verl release that moves or renames one breaks here, where
``tests/test_verl_compat.py`` names it, and nowhere else. Public registries (``PlatformRegistry``,
``RolloutReplicaRegistry``, ``register_trainer``, ``EngineRegistry``) are used directly by the callers.

Nothing here replaces a verl function on its own: the CPU backend adds entries to verl's tables and subclasses
verl's classes; the metrics hooks wrap three private trainer methods (:func:`private_method`,
:func:`replace_private_method`); the SFT target loss wraps one SFT trainer's ``train_batch``
(:func:`end_sft_when`); the normal-mode agent loops build their token stream with the agent-loop base class's
Continuous Token helpers (:func:`build_initial_tokens`, :func:`merge_assistant_tokens`,
:func:`merge_context_messages`), which verl does not document and has renamed on its main branch.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
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
        "verl.experimental.agent_loop.agent_loop",
        "AgentLoopBase.ct_build_initial_tokens",
        "verl/experimental/agent_loop/agent_loop.py",
        "the normal-mode loops tokenise the opening messages as verl's ToolAgentLoop does (Continuous Token)",
    ),
    (
        "verl.experimental.agent_loop.agent_loop",
        "AgentLoopBase.ct_merge_assistant_token",
        "verl/experimental/agent_loop/agent_loop.py",
        "the normal-mode loops append each generation to the token stream as verl's ToolAgentLoop does",
    ),
    (
        "verl.experimental.agent_loop.agent_loop",
        "AgentLoopBase.ct_merge_context_msg",
        "verl/experimental/agent_loop/agent_loop.py",
        "the normal-mode loops append tool results and user messages (mask 0) as verl's ToolAgentLoop does",
    ),
    (
        "verl.experimental.agent_loop.tool_agent_loop",
        "SPEC_DECODE_EXTRA_KEYS",
        "verl/experimental/agent_loop/tool_agent_loop.py",
        "a module constant: the speculative-decoding counters ToolAgentLoop sums over a trajectory's generations",
    ),
    (
        "verl.trainer.ppo.v1.trainer_base",
        "PPOTrainer._compute_metrics",
        "verl/trainer/ppo/v1/trainer_base.py",
        "the V1 metrics hook (metrics.py) adds reward_extra/* metrics to every training step's metrics",
    ),
    (
        "verl.trainer.ppo.v1.trainer_base",
        "PPOTrainer._compute_advantage",
        "verl/trainer/ppo/v1/trainer_base.py",
        "the V1 GDPO hook (metrics.py) hands the step's batch to compute_advantage_for_multi_trajectories",
    ),
    (
        "verl.trainer.ppo.v1.trainer_base",
        "PPOTrainer._val_metrics_update",
        "verl/trainer/ppo/v1/trainer_base.py",
        "the pass^k validation hook (evaluation/validation.py) adds val-aux/<source>/* metrics (V1 trainer)",
    ),
    (
        "verl.trainer.ppo.ray_trainer",
        "RayPPOTrainer._val_metrics_update",
        "verl/trainer/ppo/ray_trainer.py",
        "the pass^k validation hook (evaluation/validation.py) adds val-aux/<source>/* metrics (legacy trainer)",
    ),
    (
        "verl.workers.rollout.replica",
        "RolloutReplica._server_handle",
        "verl/workers/rollout/replica.py",
        "launch_servers must set it (read through the server_handle property); the hf_cpu replica does",
    ),
    (
        "verl.workers.rollout.replica",
        "RolloutReplica._server_address",
        "verl/workers/rollout/replica.py",
        "launch_servers must set it (read through the server_address property); the hf_cpu replica does",
    ),
    (
        "verl.utils.dataset.multiturn_sft_dataset",
        "MultiTurnSFTDataset._read_files_and_process",
        "verl/utils/dataset/multiturn_sft_dataset.py",
        "GoldSFTDataset (gold/sft_dataset.py) overrides it to read the exact messages_json / tools_json columns",
    ),
    (
        "verl.utils.dataset.multiturn_sft_dataset",
        "MultiTurnSFTDataset._build_messages",
        "verl/utils/dataset/multiturn_sft_dataset.py",
        "GoldSFTDataset (gold/sft_dataset.py) overrides it to read a row's messages from messages_json",
    ),
    (
        "verl.trainer.ppo.v1.trainer_separate_async",
        "PPOTrainerSeparateAsync._init_resource_pool_mgr",
        "verl/trainer/ppo/v1/trainer_separate_async.py",
        "the separate_async trainer maps its roles to DetachActorWorker there; the CPU trainer swaps that class",
    ),
    (
        "verl.trainer.ppo.v1.trainer_base",
        'trainer_mode == "sync"',
        "verl/trainer/ppo/v1/trainer_base.py",
        'the V1 trainer behaves as the sync trainer only when trainer.v1.trainer_mode is literally "sync"',
    ),
    (
        "verl.trainer.ppo.v1.trainer_base",
        "trainer_mode section",
        "verl/trainer/ppo/v1/trainer_base.py",
        "the V1 trainer reads its mode's settings (parameter_sync_step, num_warmup_batches) from the trainer.v1 "
        "section named by trainer_mode; the CPU trainers set verl's own name back",
    ),
    (
        "verl.trainer.sft_trainer",
        "SFTTrainer.fit last step",
        "verl/trainer/sft_trainer.py",
        "fit calls training_client.train_batch once per step, then ends at the step that reaches "
        "total_training_steps (read there each step): saves it and returns; the SFT target loss lowers it",
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
#: verl's V1 trainer modes: each is also the name of its settings section, ``trainer.v1.<mode>``
V1_TRAINER_MODES = (SYNC_TRAINER_MODE, "colocate_async", "separate_async")


def verl_trainer_mode(mode: str) -> str:
    """The ``trainer.v1.trainer_mode`` a trainer of verl's mode ``mode`` must leave for verl to read: the literal
    it compares with ``"sync"`` and the name of the ``trainer.v1.<mode>`` section it reads its settings from."""
    if mode not in V1_TRAINER_MODES:
        raise ValueError(f"verl/trainer/ppo/v1/: {mode!r} is not one of verl's V1 trainer modes {V1_TRAINER_MODES}")
    return mode


# ----------------------------------------------------------------------------------------- private methods (hooks)
#: the private trainer methods the metrics hooks wrap, each with its verl file
COMPUTE_METRICS = "_compute_metrics"
COMPUTE_ADVANTAGE = "_compute_advantage"
VAL_METRICS_UPDATE = "_val_metrics_update"
_PRIVATE_METHODS = {
    attr.partition(".")[2]: where for _, attr, where, _ in PRIVATES if attr.partition(".")[2].startswith("_")
}


def private_method(owner: type, name: str) -> Any:
    """``owner.<name>``, a private verl method listed in :data:`PRIVATES`; an ``AttributeError`` naming the verl
    file when this verl no longer has it."""
    where = _PRIVATE_METHODS.get(name)
    if where is None:
        raise ValueError(f"{name} is not a verl private listed in verl_rewards.verl_compat.PRIVATES")
    method = getattr(owner, name, None)
    if not callable(method):
        raise AttributeError(f"{where}: {owner.__name__}.{name} is gone; the verl-rewards hook cannot be installed")
    return method


def replace_private_method(owner: type, name: str, method: Any) -> None:
    """Install ``method`` (a wrapper of :func:`private_method`'s result) as ``owner.<name>``."""
    private_method(owner, name)
    setattr(owner, name, method)


# ------------------------------------------------------------------------------------------------ rollout replica
def set_replica_server(replica: Any, handle: Any, address: str) -> None:
    """What a ``RolloutReplica.launch_servers`` must leave behind (``verl/workers/rollout/replica.py``): the server
    actor and its address, read through the replica's ``server_handle`` / ``server_address`` properties."""
    replica._server_handle = handle
    replica._server_address = address
    if replica.server_handle is not handle or replica.server_address != address:
        raise AttributeError(
            "verl/workers/rollout/replica.py: RolloutReplica.server_handle / server_address no longer read "
            "_server_handle / _server_address"
        )


# -------------------------------------------------------------------------------- agent-loop Continuous Token
def spec_decode_extra_keys() -> tuple[str, ...]:
    """The generation ``extra_fields`` counters ``ToolAgentLoop`` sums over a trajectory's generations
    (``SPEC_DECODE_EXTRA_KEYS``, ``verl/experimental/agent_loop/tool_agent_loop.py``)."""
    from verl.experimental.agent_loop import tool_agent_loop

    return tuple(tool_agent_loop.SPEC_DECODE_EXTRA_KEYS)


async def build_initial_tokens(loop: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Any:
    """The prompt token ids of ``messages`` (text only), capped at ``rollout.prompt_length`` as verl caps them:
    ``AgentLoopBase.ct_build_initial_tokens`` (``verl/experimental/agent_loop/agent_loop.py``)."""
    return await loop.ct_build_initial_tokens(messages, tools=tools)


async def merge_assistant_tokens(
    loop: Any,
    token_ids: list[int],
    assistant_ids: list[int],
    response_mask: list[int],
    response_logprobs: list[float] | None,
    assistant_logprobs: list[float] | None,
) -> tuple[Any, list[int], list[float] | None]:
    """``(merge result, response mask, log-probs)`` after appending a generation (mask 1):
    ``AgentLoopBase.ct_merge_assistant_token`` (``verl/experimental/agent_loop/agent_loop.py``)."""
    return await loop.ct_merge_assistant_token(
        token_ids, assistant_ids, response_mask, response_logprobs, assistant_logprobs=assistant_logprobs
    )


async def merge_context_messages(
    loop: Any,
    previous: list[dict[str, Any]],
    updated: list[dict[str, Any]],
    token_ids: list[int],
    response_mask: list[int],
    response_logprobs: list[float] | None,
    tools: list[dict[str, Any]] | None,
) -> tuple[Any, list[int], list[float] | None]:
    """``(merge result, response mask, log-probs)`` after appending the messages ``updated`` holds beyond
    ``previous`` (mask 0): ``AgentLoopBase.ct_merge_context_msg`` (``verl/experimental/agent_loop/agent_loop.py``)."""
    return await loop.ct_merge_context_msg(previous, updated, token_ids, response_mask, response_logprobs, tools=tools)


def end_sft_when(trainer: Any, should_stop: Callable[[int, float], bool]) -> None:
    """Make a step of verl's ``SFTTrainer.fit`` its last when ``should_stop(step, train loss)`` returns True.

    ``fit`` (``verl/trainer/sft_trainer.py``) runs one ``training_client.train_batch`` per step and, after logging
    it, ends at the step that reaches ``total_training_steps``: it saves that step's checkpoint and returns. So the
    client's ``train_batch`` is wrapped to read the step's loss (``metrics["loss"]``, a float: the sum over
    micro-batches) and, when told to stop, lower ``total_training_steps`` to that step. The learning-rate schedule
    was built from the configured total and is unchanged."""
    from verl.utils import tensordict_utils as tu

    client = trainer.training_client
    train_batch = client.train_batch
    step = int(trainer.resume_global_step)

    def watched(*args: Any, **kwargs: Any) -> Any:
        nonlocal step
        output = train_batch(*args, **kwargs)
        step += 1
        if should_stop(step, float(tu.get(output, "metrics")["loss"])):
            trainer.total_training_steps = step
        return output

    client.train_batch = watched


def check_privates() -> list[str]:
    """The privates of :data:`PRIVATES` that this verl no longer has (empty when all are there)."""
    missing: list[str] = []
    for module_name, attr, where, _ in PRIVATES:
        if " " in attr:
            continue  # behaviours (described in words), checked by tests/test_verl_compat.py
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            missing.append(f"{where}: cannot import {module_name} ({exc})")
            continue
        head, _, tail = attr.partition(".")
        if tail in ("role_worker_mapping", "_server_handle", "_server_address"):
            continue  # instance attributes, checked by reading the source in the test
        obj = getattr(obj, head, None)
        if obj is not None and tail:
            obj = getattr(obj, tail, None)
        if obj is None:
            missing.append(f"{where}: {attr} is gone")
    return missing
