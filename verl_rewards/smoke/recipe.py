"""How a smoke run launches its recipe: the script (the benchmark's GRPO recipe, or ``recipes/warm_start`` with an SFT
stage first), the Hydra overrides that put it on the CPU backend (:func:`cpu_overrides`: after the recipe's own,
before the user's), the environment it runs in (:func:`recipe_env`) and ``OUT/command.sh``, the run written down
to be repeated (:func:`write_command`). ``verl-rewards learn`` launches its run the same way."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from ..benchmark import Benchmark
from .data import SmokeData
from .modes import mode_overrides

#: the source checkout whose recipes a smoke run runs
REPO = Path(__file__).resolve().parents[2]
WARM_START_RECIPE = "recipes/warm_start/run_warm_start.sh"


def cpu_overrides(
    *,
    model: str | None,
    out: Path,
    steps: int,
    batch: int,
    n: int,
    prompt_len: int,
    response_len: int,
    policy: str,
    loops_yaml: Path | None,
    wandb: bool,
    max_new_tokens: int = 48,
    trainer_mode: str = "sync",
) -> list[str]:
    """The Hydra overrides that put a recipe on the CPU (after the recipe's own, before the user's). ``policy``:
    ``script`` (every rollout scripted), ``mixed`` (scripted and sampled ones) or ``sample``; sampled turns are cut
    at ``max_new_tokens``. ``model`` None leaves the actor's (and a critic's) model to the recipe (``MODEL_PATH``: the
    warm-start recipe's last SFT checkpoint)."""
    rollout = "actor_rollout_ref.rollout"
    out_list = [
        *([f"actor_rollout_ref.model.path={model}"] if model is not None else []),
        "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
        "actor_rollout_ref.model.use_remove_padding=False",
        "actor_rollout_ref.model.enable_gradient_checkpointing=False",
        "actor_rollout_ref.actor.strategy=fsdp2",
        "actor_rollout_ref.ref.strategy=fsdp2",
        "actor_rollout_ref.ref.fsdp_config.param_offload=False",
        "actor_rollout_ref.actor.fsdp_config.param_offload=False",
        "actor_rollout_ref.actor.fsdp_config.optimizer_offload=False",
        "actor_rollout_ref.actor.use_dynamic_bsz=False",
        # scripted groups tie (every rollout earns the gold reward, GRPO's advantage is 0): the entropy term keeps
        # a real gradient in every update
        "actor_rollout_ref.actor.entropy_coeff=0.01",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={batch}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={batch * n}",
        f"{rollout}.log_prob_micro_batch_size_per_gpu={batch * n}",
        f"actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu={batch * n}",
        f"{rollout}.name=hf_cpu",
        f"{rollout}.tensor_model_parallel_size=1",
        f"{rollout}.n={n}",
        f"{rollout}.calculate_log_probs=True",
        f"{rollout}.agent.num_workers=1",
        *(f"{rollout}.val_kwargs.{kv}" for kv in ("n=2", "do_sample=True", "temperature=1.0")),
        f"data.train_batch_size={batch}",
        f"data.val_batch_size={batch * 4}",
        f"data.max_prompt_length={prompt_len}",
        f"data.max_response_length={response_len}",
        "data.dataloader_num_workers=0",
        "data.shuffle=False",
        *(f"trainer.{kv}" for kv in ("device=cpu", "n_gpus_per_node=1", "nnodes=1")),
        f"trainer.total_training_steps={steps}",
        "trainer.total_epochs=1000",
        f"trainer.test_freq={steps}",
        f"trainer.save_freq={steps}",
        "trainer.val_before_train=True",
        f"trainer.default_local_dir={out / 'checkpoints'}",
        "trainer.resume_mode=disable",
        "trainer.logger=[console,file,wandb]" if wandb else "trainer.logger=[console,file]",
        *mode_overrides(trainer_mode),
        "ray_kwargs.ray_init.num_cpus=32",
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=2",
        "reward.num_workers=1",
        # the critic, in runs that have one (algorithm.adv_estimator=gae): the actor's CPU settings
        "critic.strategy=fsdp2",
        *([f"critic.model.path={model}"] if model is not None else []),
        "critic.model.use_remove_padding=False",
        *("+critic.model.override_config.attn_implementation=sdpa", "critic.model.enable_gradient_checkpointing=False"),
        f"critic.ppo_micro_batch_size_per_gpu={batch * n}",
        # transformers gives the tiny model a new, random value head when the critic loads it; verl's engine seeds
        # it (critic.fsdp.seed) only in full-determinism mode: without, every run's critic and C-1 differ
        "critic.fsdp.full_determinism=True",
    ]
    if policy != "script":  # sampled turns of a random model: short (scripted turns are never cut by the cap)
        out_list.append(f"+{rollout}.engine_kwargs.hf_cpu.max_new_tokens={max_new_tokens}")
    if policy == "sample":  # no script bounds the conversation
        out_list.append(f"{rollout}.multi_turn.max_assistant_turns=4")
        out_list.append(f"{rollout}.multi_turn.max_user_turns=4")
    if loops_yaml is not None:
        out_list.append(f"{rollout}.agent.agent_loop_config_path={loops_yaml}")
    return out_list


def recipe_env(
    bench: Benchmark,
    domain: str,
    mode: str,
    data_dir: str,
    data: SmokeData,
    model: str,
    out: Path,
    user: str,
    batch: int,
) -> dict[str, str]:
    """Environment for the recipe script: its data (the benchmark's data folder under its variable), model, one
    logical GPU, the CPU platform, the logger files."""
    env = dict(os.environ)
    env.update(
        {
            "SMOKE": "0",
            "VERL_PLATFORM": "cpu",
            "VERL_FILE_LOGGER_PATH": str(out / "metrics.jsonl"),
            "WANDB_MODE": "offline",
            "WANDB_DIR": str(out),
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "PYTHONUNBUFFERED": "1",
            "MODEL_PATH": model,
            "TRAIN_FILES": str(data.train),
            "VAL_FILES": str(data.val),
            "N_GPUS": "1",
            "TRAIN_BATCH_SIZE": str(batch),
            "DOMAIN": domain,
            "MODE": mode,
            "USER_BACKEND": user,
        }
    )
    env.setdefault("EXPERIMENT_NAME", f"smoke-{bench.name}-{domain}-{mode}")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    if data.tool_config is not None:
        env["TOOL_CONFIG"] = str(data.tool_config)
    if bench.data is not None:
        env[bench.data.env_var] = data_dir
    return env


#: the variables ``OUT/command.sh`` exports (the run's own, not the caller's whole environment)
SHOWN_ENV = (
    "VERL_PLATFORM",
    "VERL_FILE_LOGGER_PATH",
    "WANDB_MODE",
    "WANDB_DIR",
    "MODEL_PATH",
    "TRAIN_FILES",
    "VAL_FILES",
    "N_GPUS",
    "TRAIN_BATCH_SIZE",
    "DOMAIN",
    "MODE",
    "USER_BACKEND",
    "TOOL_CONFIG",
    "TAU2_DATA_DIR",
    "TAU_BENCH_DATA_DIR",
    "EXPERIMENT_NAME",
    "SMOKE",
    "FAMILY",
    "STAGE",
    "SFT_FILES",
    "SFT_DIR",
    "SFT_FILE_LOGGER_PATH",
    "SFT_BATCH_SIZE",
    "SFT_EPOCHS",
    "SFT_LR",
    "SFT_MAX_LENGTH",
    "SFT_OVERRIDES",
)


def write_command(out: Path, env: Mapping[str, str], cmd: Sequence[str], shown: Collection[str] = SHOWN_ENV) -> None:
    """``OUT/command.sh``: the ``shown`` variables of ``env`` exported, then the command, to repeat the run."""
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(env.items()) if k in shown)
    (out / "command.sh").write_text(exports + shlex.join(cmd) + "\n", encoding="utf-8")
