#!/usr/bin/env bash
# GRPO on tau-bench (v1) retail or airline, on tau-bench's own data. MODE=normal (default): tau-bench's simulated
# user talks to the policy (the tau_bench_agent loop; ###STOP### or transfer_to_human_agents ends the episode);
# MODE=instruction: no user model, the task instruction is the first user message and a text reply ends the episode
# (verl's tool_agent loop).
#
#   export TAU_BENCH_DATA_DIR=/path/to/tau_bench          # folder holding retail/ and airline/ (tau-bench's files)
#   verl-rewards prepare tau_bench --domain retail --split train,test --out ~/data/tau_bench_retail_normal
#   DOMAIN=retail USER_BASE_URL=http://user-host:8000/v1 USER_MODEL=Qwen/Qwen2.5-72B-Instruct \
#     MODEL_PATH=Qwen/Qwen2.5-7B-Instruct bash recipes/tau_bench_grpo/run_tau_bench_grpo.sh [Hydra overrides]
#
# Normal mode: USER_BACKEND=openai (default; USER_BASE_URL / USER_MODEL, key from USER_API_KEY_ENV, default
# OPENAI_API_KEY), policy or scripted (USER_SCRIPTS), as in recipes/tau2_grpo. DATA_DIR defaults to
# ~/data/tau_bench_<domain>_<mode> (prepare with --mode <mode>).
#
# The contribution manager scores each trajectory with tau-bench's reward (data hash after the agent's calls vs after
# the gold actions, plus required outputs) and adds beta * C-0 / C-1 from the tools' step dicts. A trajectory that
# runs out of turns without a reply or a transfer scores 0, as in tau-bench. max_parallel_calls=1 executes only the
# first tool call of a message, as tau-bench's tool-calling agent does. Airline has only a test split (50 tasks):
# train on it only to reproduce published setups.
# CHECK=1: check the config (verl-rewards check: composed, validated, reward manager, agent loops, data) instead of
# training; seconds, no Ray, GPU or model.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

DOMAIN=${DOMAIN:-retail}   # retail | airline
case "$DOMAIN" in
  retail | airline) ;;
  *) echo "run_tau_bench_grpo.sh: DOMAIN must be retail or airline, got '$DOMAIN'" >&2; exit 2 ;;
esac
export TAU_BENCH_DATA_DIR=${TAU_BENCH_DATA_DIR:-$HOME/tau_bench_data}
MODE=${MODE:-normal}
# SMOKE=1: the same run on this machine's CPU with a tiny model, a few steps (verl-rewards smoke, the scripted user
# unless USER_BACKEND=policy; SMOKE_ARGS adds its flags); the arguments are passed to it as Hydra overrides
if [ "${SMOKE:-0}" = 1 ]; then
  case "${USER_BACKEND:-scripted}" in policy) smoke_user=policy ;; *) smoke_user=scripted ;; esac
  # shellcheck disable=SC2086
  exec python3 -m verl_rewards.cli smoke tau_bench --domain "$DOMAIN" --mode "$MODE" --user "$smoke_user" \
    ${SMOKE_ARGS:-} -- "$@"
fi
DATA_DIR=${DATA_DIR:-$HOME/data/tau_bench_${DOMAIN}_$MODE}
MAX_TURNS=${MAX_TURNS:-30}   # tau-bench's max_num_steps
MODE_ARGS=()
case "$MODE" in
  instruction) MODE_ARGS+=(actor_rollout_ref.rollout.agent.default_agent_loop=tool_agent) ;;
  normal)
    USER_BACKEND=${USER_BACKEND:-openai}
    TB=+actor_rollout_ref.rollout.custom.tau_bench
    MODE_ARGS+=(actor_rollout_ref.rollout.agent.default_agent_loop=tau_bench_agent
                "$TB.user.backend=$USER_BACKEND" "$TB.max_num_steps=$MAX_TURNS" "$TB.data_dir='$TAU_BENCH_DATA_DIR'")
    case "$USER_BACKEND" in
      openai)
        if [[ -z "${USER_BASE_URL:-}" || -z "${USER_MODEL:-}" ]]; then
          echo "run_tau_bench_grpo.sh: USER_BACKEND=openai needs USER_BASE_URL (e.g. http://host:8000/v1) and USER_MODEL" >&2
          exit 2
        fi
        MODE_ARGS+=("$TB.user.base_url='$USER_BASE_URL'" "$TB.user.model='$USER_MODEL'"
                    "$TB.user.api_key_env=${USER_API_KEY_ENV:-OPENAI_API_KEY}"
                    "$TB.user.max_concurrency=${USER_CONCURRENCY:-32}") ;;
      policy) ;;
      scripted) if [[ -n "${USER_SCRIPTS:-}" ]]; then MODE_ARGS+=("$TB.user.scripts='$USER_SCRIPTS'"); fi ;;
      *) echo "run_tau_bench_grpo.sh: USER_BACKEND must be openai, policy or scripted, got '$USER_BACKEND'" >&2; exit 2 ;;
    esac ;;
  *) echo "run_tau_bench_grpo.sh: MODE must be normal or instruction, got '$MODE'" >&2; exit 2 ;;
esac
if [ "$DOMAIN" = retail ]; then DEFAULT_TRAIN=train; else DEFAULT_TRAIN=test; fi
export TRAIN_FILES=${TRAIN_FILES:-$DATA_DIR/${TRAIN_SPLIT:-$DEFAULT_TRAIN}.parquet}
export VAL_FILES=${VAL_FILES:-$DATA_DIR/test.parquet}
TOOL_CONFIG=${TOOL_CONFIG:-$DATA_DIR/tool_config.yaml}
export MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
export CONTRIBUTION=${CONTRIBUTION:-1}
export CONTRIB_TYPE=${CONTRIB_TYPE:-C1}
export BETA=${BETA:-0.1}
export EXPERIMENT_NAME=${EXPERIMENT_NAME:-tau-bench-${DOMAIN}-${MODE}-grpo-${CONTRIB_TYPE}-beta${BETA}}
TRAIN_BATCH_SIZE=${TRAIN_BATCH_SIZE:-16}

exec bash "$REPO/examples/grpo_trainer/run_grpo.sh" \
  +reward.reward_kwargs.tau_bench.data_dir="$TAU_BENCH_DATA_DIR" \
  data.train_batch_size="$TRAIN_BATCH_SIZE" \
  data.max_prompt_length=4096 \
  data.max_response_length=8192 \
  data.filter_overlong_prompts=True \
  data.return_raw_chat=True \
  actor_rollout_ref.rollout.n=8 \
  actor_rollout_ref.actor.ppo_mini_batch_size="$TRAIN_BATCH_SIZE" \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1 \
  "${MODE_ARGS[@]}" \
  actor_rollout_ref.rollout.multi_turn.enable=True \
  actor_rollout_ref.rollout.multi_turn.tool_config_path="$TOOL_CONFIG" \
  actor_rollout_ref.rollout.multi_turn.format=hermes \
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns="$MAX_TURNS" \
  actor_rollout_ref.rollout.multi_turn.max_user_turns="$MAX_TURNS" \
  actor_rollout_ref.rollout.multi_turn.max_parallel_calls=1 \
  actor_rollout_ref.rollout.multi_turn.max_tool_response_length=4096 \
  actor_rollout_ref.rollout.multi_turn.tool_response_truncate_side=right \
  trainer.project_name=verl_rewards_tau_bench \
  trainer.test_freq=10 \
  trainer.total_epochs="${EPOCHS:-5}" \
  "$@"
