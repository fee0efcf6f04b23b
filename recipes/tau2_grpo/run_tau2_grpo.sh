#!/usr/bin/env bash
# GRPO on a tau2 domain (airline, retail, telecom or mock) with the contribution term on, in tau2's normal mode
# (a simulated user talks to the policy: the tau2_agent loop; the default for airline, retail, telecom) or in solo
# mode (the policy works from a ticket: verl's tool_agent loop; MODE=solo, the default for mock).
#
#   export TAU2_DATA_DIR=$HOME/tau2-bench/data/tau2/domains     # folder holding airline/, retail/, telecom/ ...
#   verl-rewards prepare tau2 --data-dir "$TAU2_DATA_DIR" --domain airline --out ~/data/tau2_airline_normal
#   DOMAIN=airline USER_BASE_URL=http://user-host:8000/v1 USER_MODEL=Qwen/Qwen2.5-72B-Instruct \
#     MODEL_PATH=Qwen/Qwen2.5-7B-Instruct bash recipes/tau2_grpo/run_tau2_grpo.sh [Hydra overrides]
#
# Normal mode: USER_BACKEND=openai (default; the user model at USER_BASE_URL / USER_MODEL, key from
# USER_API_KEY_ENV, default OPENAI_API_KEY), policy (the policy plays the user too) or scripted (USER_SCRIPTS:
# a JSON/YAML of per-task user turns; without it each task's default script); MAX_STEPS (200) and MAX_ERRORS (10)
# are tau2's limits; DATA_DIR defaults to ~/data/tau2_<domain>_<mode> (prepare with --mode <mode>).
#
# telecom trains on TELECOM_SPLIT (default train: 74 tasks; small, base or full = all 2,285 tasks, which
# include the 40 test tasks) and validates on test:
#   verl-rewards prepare tau2 --data-dir "$TAU2_DATA_DIR" --domain telecom --split train,test --out ~/data/tau2_telecom
#   DOMAIN=telecom [TELECOM_SPLIT=full] bash recipes/tau2_grpo/run_tau2_grpo.sh
# (prepare the split you train on: --split full,test for TELECOM_SPLIT=full). Its prompts are long (the
# manual policy plus 44 tool schemas, about 11k tokens), so MAX_PROMPT_LENGTH defaults to 16384 there.
# mock has one split, base (10 tasks), used for training and validation: a smoke test of the wiring.
# banking_knowledge (normal mode only) has no split: prepare a seeded hold-out, train on train, validate on test:
#   verl-rewards prepare tau2 --domain banking_knowledge --retrieval bm25 --holdout 0.2 --out ~/data/tau2_banking_knowledge_normal
#   DOMAIN=banking_knowledge bash recipes/tau2_grpo/run_tau2_grpo.sh
#
# During rollout the policy calls the domain's tools (tool_config.yaml written by `prepare`) through verl's
# tool_agent loop; each trajectory keeps one environment. The contribution manager scores every finished
# trajectory with the tau2 reward (replaying the recorded messages on a fresh environment in the reward
# worker) and adds beta * C-0 / C-1 computed from the per-turn step dicts the tools record.
# A trajectory that never calls `done` (nor transfers to a human) ran out of turns or tokens: it is scored as
# tau2's max_steps termination, i.e. 0 (set TAU2_DEFAULT_TERMINATION=agent_stop to score it anyway).
# One domain per run: domains share tool names with different behaviour.
# CHECK=1: check the config (verl-rewards check: composed, validated, reward manager, agent loops, data) instead of
# training; seconds, no Ray, GPU or model.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

DOMAIN=${DOMAIN:-airline}   # airline | retail | telecom | banking_knowledge | mock
PROMPT_LENGTH=6144
case "$DOMAIN" in mock) DEFAULT_MODE=solo ;; *) DEFAULT_MODE=normal ;; esac
MODE=${MODE:-$DEFAULT_MODE}
# SMOKE=1: the same run on this machine's CPU with a tiny model, a few steps (verl-rewards smoke, the scripted user
# unless USER_BACKEND=policy; SMOKE_ARGS adds its flags); the arguments are passed to it as Hydra overrides
if [ "${SMOKE:-0}" = 1 ]; then
  case "${USER_BACKEND:-scripted}" in policy) smoke_user=policy ;; *) smoke_user=scripted ;; esac
  # shellcheck disable=SC2086
  exec python3 -m verl_rewards.cli smoke tau2 --domain "$DOMAIN" --mode "$MODE" --user "$smoke_user" \
    ${SMOKE_ARGS:-} -- "$@"
fi
case "$DOMAIN" in
  airline | retail) TRAIN_SPLIT=train; VAL_SPLIT=test ;;
  telecom)
    TRAIN_SPLIT=${TELECOM_SPLIT:-train}; VAL_SPLIT=test; PROMPT_LENGTH=16384
    case "$TRAIN_SPLIT" in
      small | train | test | base | full) ;;
      *) echo "run_tau2_grpo.sh: TELECOM_SPLIT must be small, train, test, base or full, got '$TRAIN_SPLIT'" >&2
         exit 2 ;;
    esac ;;
  mock) TRAIN_SPLIT=base; VAL_SPLIT=base ;;
  banking_knowledge) TRAIN_SPLIT=train; VAL_SPLIT=test; PROMPT_LENGTH=8192
    if [[ "${MODE:-normal}" != normal ]]; then
      echo "run_tau2_grpo.sh: banking_knowledge runs in normal mode only" >&2; exit 2
    fi ;;
  *) echo "run_tau2_grpo.sh: DOMAIN must be airline, retail, telecom, banking_knowledge or mock, got '$DOMAIN'" >&2
     exit 2 ;;
esac
MAX_PROMPT_LENGTH=${MAX_PROMPT_LENGTH:-$PROMPT_LENGTH}
export TAU2_DATA_DIR=${TAU2_DATA_DIR:-$HOME/tau2-bench/data/tau2/domains}
DATA_DIR=${DATA_DIR:-$HOME/data/tau2_${DOMAIN}_$MODE}
MODE_ARGS=()
case "$MODE" in
  solo) MODE_ARGS+=(actor_rollout_ref.rollout.agent.default_agent_loop=tool_agent) ;;
  normal)
    USER_BACKEND=${USER_BACKEND:-openai}
    T2=+actor_rollout_ref.rollout.custom.tau2
    MODE_ARGS+=(actor_rollout_ref.rollout.agent.default_agent_loop=tau2_agent
                "$T2.user.backend=$USER_BACKEND" "$T2.max_steps=${MAX_STEPS:-200}" "$T2.max_errors=${MAX_ERRORS:-10}"
                "$T2.data_dir='$TAU2_DATA_DIR'")
    case "$USER_BACKEND" in
      openai)
        if [[ -z "${USER_BASE_URL:-}" || -z "${USER_MODEL:-}" ]]; then
          echo "run_tau2_grpo.sh: USER_BACKEND=openai needs USER_BASE_URL (e.g. http://host:8000/v1) and USER_MODEL" >&2
          exit 2
        fi
        MODE_ARGS+=("$T2.user.base_url='$USER_BASE_URL'" "$T2.user.model='$USER_MODEL'"
                    "$T2.user.api_key_env=${USER_API_KEY_ENV:-OPENAI_API_KEY}"
                    "$T2.user.max_concurrency=${USER_CONCURRENCY:-32}") ;;
      policy) ;;
      scripted) if [[ -n "${USER_SCRIPTS:-}" ]]; then MODE_ARGS+=("$T2.user.scripts='$USER_SCRIPTS'"); fi ;;
      *) echo "run_tau2_grpo.sh: USER_BACKEND must be openai, policy or scripted, got '$USER_BACKEND'" >&2; exit 2 ;;
    esac ;;
  *) echo "run_tau2_grpo.sh: MODE must be normal or solo, got '$MODE'" >&2; exit 2 ;;
esac
export TRAIN_FILES=${TRAIN_FILES:-$DATA_DIR/$TRAIN_SPLIT.parquet}
export VAL_FILES=${VAL_FILES:-$DATA_DIR/$VAL_SPLIT.parquet}
TOOL_CONFIG=${TOOL_CONFIG:-$DATA_DIR/tool_config.yaml}
export MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
export CONTRIBUTION=${CONTRIBUTION:-1}
export CONTRIB_TYPE=${CONTRIB_TYPE:-C1}
export BETA=${BETA:-0.1}
export EXPERIMENT_NAME=${EXPERIMENT_NAME:-tau2-${DOMAIN}-${MODE}-grpo-${CONTRIB_TYPE}-beta${BETA}}
TAU2_DEFAULT_TERMINATION=${TAU2_DEFAULT_TERMINATION:-max_steps}
MAX_TURNS=${MAX_TURNS:-30}
# small batches: airline has 30 training tasks, retail and telecom 74, mock 10; verl drops the last incomplete batch
TRAIN_BATCH_SIZE=${TRAIN_BATCH_SIZE:-8}

exec bash "$REPO/examples/grpo_trainer/run_grpo.sh" \
  +reward.reward_kwargs.tau2.data_dir="$TAU2_DATA_DIR" \
  +reward.reward_kwargs.tau2.default_termination="$TAU2_DEFAULT_TERMINATION" \
  +reward.reward_kwargs.tau2.nl_policy=skip \
  data.train_batch_size="$TRAIN_BATCH_SIZE" \
  data.max_prompt_length="$MAX_PROMPT_LENGTH" \
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
  trainer.project_name=verl_rewards_tau2 \
  trainer.test_freq=10 \
  trainer.total_epochs="${EPOCHS:-20}" \
  "$@"
