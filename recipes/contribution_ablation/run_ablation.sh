#!/usr/bin/env bash
# Contribution ablation: the same GRPO run once per contribution variant (same data, model and seed), one
# experiment name each, run one after the other.
#
#   DOMAIN=airline MODEL_PATH=Qwen/Qwen2.5-7B-Instruct bash recipes/contribution_ablation/run_ablation.sh
#   VARIANTS="none C2" bash recipes/contribution_ablation/run_ablation.sh trainer.total_epochs=5   # a subset
#   bash recipes/contribution_ablation/run_ablation.sh --cfg job   # print every variant's composed config
#
# Variants (VARIANTS, default all five, in this order):
#   none      no contribution term (the baseline)
#   C0 C1 C2  one term with weight BETA (C2 with GAMMA)
#   combined  the terms in COMBINED_TERMS (Hydra list syntax), each reported as reward_extra/contrib_<name>
# Experiment names: $ABLATION-<variant> (ABLATION default contrib-ablation-<domain>), all in one
# trainer.project_name, so the runs line up in the logger. SEED seeds the data order, the rollout and the
# actor's data loader. BASE is the recipe each run goes through: the tau2 recipe by default, whose tools
# record the per-turn step dicts (bb_hash, value_est) the terms read; examples/grpo_trainer/run_grpo.sh works too
# (its data must carry step dicts, or every term is 0 and contrib_missing counts the reads).
# Every other variable of BASE applies (DOMAIN, MODEL_PATH, DATA_DIR, ...); arguments are Hydra overrides
# passed to every run. A failing run stops the ablation. SMOKE=1 smoke-tests every variant on the CPU (the base
# recipe's SMOKE=1: a tiny model, a few steps; verl-rewards smoke).
# CHECK=1 checks each variant's config (verl-rewards check) instead of training it.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

BASE=${BASE:-$REPO/recipes/tau2_grpo/run_tau2_grpo.sh}
VARIANTS=${VARIANTS:-none C0 C1 C2 combined}
SEED=${SEED:-42}
BETA=${BETA:-0.1}
GAMMA=${GAMMA:-1.0}
COMBINED_TERMS=${COMBINED_TERMS:-"[{type: C0, beta: 0.05}, {type: C2, beta: 0.1, gamma: 0.99}]"}
ABLATION=${ABLATION:-contrib-ablation-${DOMAIN:-airline}}
PROJECT=${PROJECT:-verl_rewards_contrib_ablation}

for variant in $VARIANTS; do
  case "$variant" in
    none | C0 | C1 | C2 | combined) ;;
    *) echo "run_ablation.sh: unknown variant '$variant' in VARIANTS (none, C0, C1, C2, combined)" >&2; exit 2 ;;
  esac
done

print_cfg=0
for arg in "$@"; do
  [ "$arg" = "--cfg" ] && print_cfg=1
done

for variant in $VARIANTS; do
  overrides=()
  case "$variant" in
    none) contribution=0; contrib_type=C0 ;;
    C0 | C1) contribution=1; contrib_type=$variant ;;
    C2) contribution=1; contrib_type=C2; overrides+=("+reward.reward_kwargs.contribution.gamma=$GAMMA") ;;
    combined)
      contribution=1; contrib_type=C0
      # terms replace the one-term keys the base script sets
      overrides+=(
        "reward.reward_kwargs.contribution.type=null"
        "reward.reward_kwargs.contribution.beta=null"
        "+reward.reward_kwargs.contribution.terms=$COMBINED_TERMS"
      ) ;;
  esac
  echo "run_ablation.sh: variant $variant -> experiment $ABLATION-$variant" >&2
  [ "$print_cfg" = 1 ] && echo "--- # variant $variant"
  CONTRIBUTION=$contribution CONTRIB_TYPE=$contrib_type BETA=$BETA EXPERIMENT_NAME="$ABLATION-$variant" \
    bash "$BASE" \
    "${overrides[@]}" \
    data.seed="$SEED" \
    actor_rollout_ref.rollout.seed="$SEED" \
    actor_rollout_ref.actor.data_loader_seed="$SEED" \
    trainer.project_name="$PROJECT" \
    "$@"
done
