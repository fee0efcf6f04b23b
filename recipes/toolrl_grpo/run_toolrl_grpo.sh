#!/usr/bin/env bash
# GRPO on ToolRL data (data_source "rlla").
#
#   verl-rewards prepare toolrl --input rlla_train.jsonl --out ~/data/rlla --split train
#   verl-rewards prepare toolrl --input rlla_test.jsonl  --out ~/data/rlla --split test
#   MODEL_PATH=Qwen/Qwen2.5-3B-Instruct bash recipes/toolrl_grpo/run_toolrl_grpo.sh [extra Hydra overrides]
#
# Rows whose data_source contains "rlla" are scored by ToolRL (format + correctness + length), decoding
# prompt + response with special tokens kept. ToolRL's variant flags are passed as Hydra keys
# (reward.reward_kwargs.toolrl.*), so they reach every reward worker, also on multi-node clusters.
# CHECK=1: check the config (verl-rewards check: composed, validated, reward manager, agent loops, data) instead of
# training; seconds, no Ray, GPU or model.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

# SMOKE=1: the same run on this machine's CPU with a tiny model, a few steps (verl-rewards smoke; SMOKE_ARGS adds
# its flags, e.g. SMOKE_ARGS="--steps 3 --out /tmp/smoke"); the arguments are passed to it as Hydra overrides
if [ "${SMOKE:-0}" = 1 ]; then
  # shellcheck disable=SC2086
  exec python3 -m verl_rewards.cli smoke toolrl ${SMOKE_ARGS:-} -- "$@"
fi

DATA_DIR=${DATA_DIR:-$HOME/data/rlla}
export TRAIN_FILES=${TRAIN_FILES:-$DATA_DIR/train.parquet}
export VAL_FILES=${VAL_FILES:-$DATA_DIR/test.parquet}
# Contribution is off: ToolRL rows are single-turn (verl's single_turn_agent), which records no step dicts, so
# C0 / C1 / C2 would add 0 to every sample (verl-rewards check refuses them on these rows). A critic's C1 needs no
# step dicts: CONTRIBUTION=1 CONTRIB_TYPE=C1 with +reward.reward_kwargs.contribution.value_source=critic in a GAE run.
export CONTRIBUTION=${CONTRIBUTION:-0}
export CONTRIB_TYPE=${CONTRIB_TYPE:-C0}
export BETA=${BETA:-0.05}
case "${CONTRIBUTION,,}" in
  0 | false | no | off) export EXPERIMENT_NAME=${EXPERIMENT_NAME:-toolrl-grpo} ;;
  *) export EXPERIMENT_NAME=${EXPERIMENT_NAME:-toolrl-grpo-${CONTRIB_TYPE}-beta${BETA}} ;;
esac

flag() { [ "${1:-0}" = "1" ] && echo true || echo false; }

exec bash "$REPO/examples/grpo_trainer/run_grpo.sh" \
  +reward.reward_kwargs.toolrl.with_length="$(flag "${WITHLENGTH:-0}")" \
  +reward.reward_kwargs.toolrl.schedule_length="$(flag "${SCHEDULELENGTH:-0}")" \
  +reward.reward_kwargs.toolrl.correct_max1="$(flag "${CORRECTMAX1:-0}")" \
  +reward.reward_kwargs.toolrl.max1_step30_max3="$(flag "${MAX1STEP30MAX3:-0}")" \
  +reward.reward_kwargs.toolrl.schedule_reward="$(flag "${SCHEDULEREWARD:-0}")" \
  +reward.reward_kwargs.toolrl.refined_reward="$(flag "${REFINEDREWARD:-0}")" \
  +reward.reward_kwargs.toolrl.intermediate_reward="$(flag "${INTERMEDIATEREWARD:-0}")" \
  +reward.reward_kwargs.toolrl.coarse_reward="$(flag "${COARSEREWARD:-0}")" \
  data.max_prompt_length=2048 \
  data.max_response_length=1024 \
  actor_rollout_ref.rollout.n=4 \
  "$@"
