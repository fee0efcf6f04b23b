#!/usr/bin/env bash
# From a base model: SFT on exported trajectories with verl's SFT trainer, then GRPO from the SFT checkpoint.
#
#   export TAU2_DATA_DIR=$HOME/tau2-bench/data/tau2/domains
#   verl-rewards export-sft gold tau2 --domain airline --split train --out ~/data/sft_tau2_airline_normal
#   verl-rewards prepare tau2 --domain airline --out ~/data/tau2_airline_normal          # the RL data
#   FAMILY=tau2 DOMAIN=airline MODEL_PATH=Qwen/Qwen2.5-7B-Instruct N_GPUS=8 \
#     USER_BASE_URL=http://user-host:8000/v1 USER_MODEL=Qwen/Qwen2.5-72B-Instruct \
#     bash recipes/warm_start/run_warm_start.sh [Hydra overrides of the selected stage]
#
# STAGE: sft (verl's SFT trainer only), rl (GRPO from the SFT checkpoint only) or both (default: sft, then rl;
# the command-line overrides go to the RL stage, SFT_OVERRIDES="k=v k=v" to the SFT stage). `--cfg job` prints the
# composed config of the stage(s) instead of training.
#
# SFT stage (verl.trainer.sft_trainer, torchrun on N_GPUS; with VERL_PLATFORM=cpu, verl_rewards.cpu.sft: the same
# trainer in one CPU process, as `verl-rewards smoke tau2 --sft` runs it; SFT_FILE_LOGGER_PATH: its own metrics
# JSONL): SFT_FILES (default $SFT_DATA/train.parquet, SFT_DATA
# defaulting to ~/data/sft_<FAMILY>_<DOMAIN>_<MODE>; any parquet of `verl-rewards export-sft`), SFT_VAL_FILES
# (none), MODEL_PATH (the base model), SFT_DIR (checkpoints, default ~/ckpt/sft_<FAMILY>_<DOMAIN>_<MODE>),
# SFT_EPOCHS (3), SFT_LR (1e-5), SFT_BATCH_SIZE (32), SFT_MAX_LENGTH (16384: a telecom conversation with its 13-44
# tool schemas runs to 12-20k tokens; longer ones fail loudly, truncation=error). The data is read by
# verl_rewards.gold.sft_dataset.GoldSFTDataset (verl's MultiTurnSFTDataset reading the exact JSON copies of the
# messages and tool schemas: parquet pads a list of objects with every other object's keys as nulls). The
# checkpoint keeps a Hugging Face copy (checkpoint.save_contents includes hf_model) for the RL stage.
#
# RL stage: recipes/tau2_grpo/run_tau2_grpo.sh (FAMILY=tau2), recipes/tau_bench_grpo/run_tau_bench_grpo.sh
# (FAMILY=tau_bench) or recipes/toolrl_grpo/run_toolrl_grpo.sh (FAMILY=toolrl: SFT data from `verl-rewards export-sft
# gold toolrl --rows <prepare toolrl parquet>`, as `verl-rewards learn` runs it) with MODEL_PATH = SFT_MODEL_PATH,
# default the latest checkpoint of SFT_DIR (<SFT_DIR>/global_step_<latest_checkpointed_iteration.txt>/huggingface).
# Every variable of that recipe applies (DOMAIN, MODE, DATA_DIR, USER_BACKEND, CONTRIB_TYPE, ...).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

FAMILY=${FAMILY:-tau2}   # tau2 | tau_bench | toolrl
case "$FAMILY" in
  toolrl) DOMAIN=${DOMAIN:-rlla}; RL_SCRIPT=$REPO/recipes/toolrl_grpo/run_toolrl_grpo.sh; DEFAULT_MODE=single ;;
  tau2) DOMAIN=${DOMAIN:-airline}; RL_SCRIPT=$REPO/recipes/tau2_grpo/run_tau2_grpo.sh
        case "$DOMAIN" in mock) DEFAULT_MODE=solo ;; *) DEFAULT_MODE=normal ;; esac ;;
  tau_bench) DOMAIN=${DOMAIN:-retail}; RL_SCRIPT=$REPO/recipes/tau_bench_grpo/run_tau_bench_grpo.sh
             DEFAULT_MODE=normal ;;
  *) echo "run_warm_start.sh: FAMILY must be tau2, tau_bench or toolrl, got '$FAMILY'" >&2; exit 2 ;;
esac
export DOMAIN
export MODE=${MODE:-$DEFAULT_MODE}
STAGE=${STAGE:-both}
case "$STAGE" in sft | rl | both) ;; *) echo "run_warm_start.sh: STAGE must be sft, rl or both, got '$STAGE'" >&2; exit 2 ;; esac

PRINT_ONLY=0
for arg in "$@"; do [[ "$arg" == "--cfg" ]] && PRINT_ONLY=1; done

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
N_GPUS=${N_GPUS:-8}
SFT_DATA=${SFT_DATA:-$HOME/data/sft_${FAMILY}_${DOMAIN}_$MODE}
SFT_FILES=${SFT_FILES:-$SFT_DATA/train.parquet}
SFT_DIR=${SFT_DIR:-$HOME/ckpt/sft_${FAMILY}_${DOMAIN}_$MODE}

run_sft() {
  local val=()
  if [[ -n "${SFT_VAL_FILES:-}" ]]; then val=(data.val_files="$SFT_VAL_FILES"); fi
  local launch=(torchrun --standalone --nnodes=1 --nproc_per_node="$N_GPUS" -m verl.trainer.sft_trainer)
  if [[ "$PRINT_ONLY" == 1 ]]; then launch=(python3 -m verl.trainer.sft_trainer); fi
  # VERL_PLATFORM=cpu (verl-rewards smoke --sft): verl's SFT trainer in one CPU process with a gloo group
  if [[ "${VERL_PLATFORM:-}" == cpu ]]; then launch=(python3 -m verl_rewards.cpu.sft); fi
  # SFT_FILE_LOGGER_PATH: the SFT stage's own file-logger JSONL (trainer.logger with file), apart from the RL stage's
  if [[ -n "${SFT_FILE_LOGGER_PATH:-}" ]]; then launch=(env VERL_FILE_LOGGER_PATH="$SFT_FILE_LOGGER_PATH" "${launch[@]}"); fi
  # shellcheck disable=SC2086 # SFT_OVERRIDES is a space-separated list of Hydra overrides
  "${launch[@]}" \
    data.train_files="$SFT_FILES" \
    "${val[@]}" \
    data.messages_key=messages \
    data.tools_key=tools \
    data.custom_cls.path=pkg://verl_rewards.gold.sft_dataset \
    data.custom_cls.name=GoldSFTDataset \
    data.max_length="${SFT_MAX_LENGTH:-16384}" \
    data.truncation=error \
    data.train_batch_size="${SFT_BATCH_SIZE:-32}" \
    data.micro_batch_size_per_gpu=1 \
    model.path="$MODEL_PATH" \
    optim.lr="${SFT_LR:-1e-5}" \
    checkpoint.save_contents="[model,optimizer,extra,hf_model]" \
    trainer.default_local_dir="$SFT_DIR" \
    trainer.project_name=verl_rewards_warm_start \
    trainer.experiment_name="sft-${FAMILY}-${DOMAIN}-${MODE}" \
    trainer.total_epochs="${SFT_EPOCHS:-3}" \
    trainer.logger="[console]" \
    trainer.n_gpus_per_node="$N_GPUS" \
    ${SFT_OVERRIDES:-} \
    "$@"
}

sft_checkpoint() {
  if [[ -n "${SFT_MODEL_PATH:-}" ]]; then echo "$SFT_MODEL_PATH"; return; fi
  local tracker=$SFT_DIR/latest_checkpointed_iteration.txt
  if [[ ! -f "$tracker" ]]; then
    echo "run_warm_start.sh: no SFT checkpoint in $SFT_DIR ($tracker missing): run STAGE=sft first or set SFT_MODEL_PATH" >&2
    exit 2
  fi
  echo "$SFT_DIR/global_step_$(tr -d '[:space:]' < "$tracker")/huggingface"
}

run_rl() {
  MODEL_PATH=$(sft_checkpoint)
  export MODEL_PATH
  export EXPERIMENT_NAME=${EXPERIMENT_NAME:-warm-start-${FAMILY}-${DOMAIN}-${MODE}-grpo}
  bash "$RL_SCRIPT" "$@"
}

case "$STAGE" in
  sft) run_sft "$@" ;;
  rl) run_rl "$@" ;;
  both)
    if [[ "$PRINT_ONLY" == 1 ]]; then
      run_sft --cfg job
      echo "---"
      SFT_MODEL_PATH=${SFT_MODEL_PATH:-$SFT_DIR/global_step_LATEST/huggingface} run_rl "$@"
    else
      run_sft
      run_rl "$@"
    fi ;;
esac
