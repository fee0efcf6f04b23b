#!/usr/bin/env bash
# GRPO with verl's main_ppo and the verl-rewards contribution reward manager.
#
#   CONTRIBUTION=1 CONTRIB_TYPE=C0 BETA=0.05 bash examples/grpo_trainer/run_grpo.sh [extra Hydra overrides]
#
# CONTRIBUTION=1 turns the beta * R_contrib term on (CONTRIB_TYPE: C0 = blackboard changed,
# C1 = positive critic value delta, C2 = potential-based shaping of value_est; BETA its weight);
# CONTRIBUTION=0 turns it off. Every argument is passed
# to main_ppo after ours, so any Hydra override (or `--cfg job` to print the composed config) works.
# CHECK=1 runs `verl-rewards check` on the same overrides instead of training: the config composed, validated and
# our reward manager, agent loops and data routing built, in seconds, without Ray, a GPU or the model (CHECK=v: with
# the summary).
# Data: verl parquet files (see docs/getting-started.md, "Data"); model: any HF chat model path.
set -euo pipefail

export CONTRIBUTION=${CONTRIBUTION:-1}   # 0 to disable
export CONTRIB_TYPE=${CONTRIB_TYPE:-C0}  # C0 / C1 / C2
export BETA=${BETA:-0.05}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CONFIGS=${VERL_REWARDS_CONFIGS:-$REPO/configs}

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-3B-Instruct}
TRAIN_FILES=${TRAIN_FILES:-$HOME/data/rlla/train.parquet}
VAL_FILES=${VAL_FILES:-$HOME/data/rlla/test.parquet}
N_GPUS=${N_GPUS:-8}
EXPERIMENT_NAME=${EXPERIMENT_NAME:-grpo-contribution-${CONTRIB_TYPE}-beta${BETA}}

case "${CONTRIBUTION,,}" in
  1|true|yes|on) contrib_type=$CONTRIB_TYPE ;;
  0|false|no|off|"") contrib_type=none ;;
  *) echo "CONTRIBUTION=$CONTRIBUTION is not a switch: use 1/0, true/false, yes/no or on/off" >&2; exit 2 ;;
esac

case "${CHECK:-0}" in
  1) LAUNCH=(python3 -m verl_rewards.cli check --) ;;        # the verdict line
  v) LAUNCH=(python3 -m verl_rewards.cli check -v --) ;;     # and the summary (trainer, manager, loops, data)
  *) LAUNCH=(python3 -m verl.trainer.main_ppo) ;;
esac

"${LAUNCH[@]}" \
  "hydra.searchpath=[file://$CONFIGS]" \
  +verl_rewards=contribution \
  reward.reward_kwargs.contribution.type="$contrib_type" \
  reward.reward_kwargs.contribution.beta="$BETA" \
  algorithm.adv_estimator=grpo \
  data.train_files="$TRAIN_FILES" \
  data.val_files="$VAL_FILES" \
  data.train_batch_size=512 \
  data.max_prompt_length=2048 \
  data.max_response_length=1024 \
  data.filter_overlong_prompts=True \
  data.truncation=error \
  actor_rollout_ref.model.path="$MODEL_PATH" \
  actor_rollout_ref.model.use_remove_padding=True \
  actor_rollout_ref.model.enable_gradient_checkpointing=True \
  actor_rollout_ref.actor.optim.lr=1e-6 \
  actor_rollout_ref.actor.ppo_mini_batch_size=128 \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \
  actor_rollout_ref.actor.use_kl_loss=True \
  actor_rollout_ref.actor.kl_loss_coef=0.001 \
  actor_rollout_ref.actor.kl_loss_type=low_var_kl \
  actor_rollout_ref.actor.entropy_coeff=0 \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
  actor_rollout_ref.rollout.n=8 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=16 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=16 \
  actor_rollout_ref.ref.fsdp_config.param_offload=True \
  algorithm.use_kl_in_reward=False \
  trainer.critic_warmup=0 \
  trainer.logger='["console","wandb"]' \
  trainer.project_name=verl_rewards_grpo \
  trainer.experiment_name="$EXPERIMENT_NAME" \
  trainer.n_gpus_per_node="$N_GPUS" \
  trainer.nnodes=1 \
  trainer.save_freq=20 \
  trainer.test_freq=5 \
  trainer.total_epochs=15 \
  "$@"
