#!/usr/bin/env bash
# Packaging check: build the wheel, install it (not editable) in a fresh venv that sees the already installed
# dependencies, and check from outside the repo that verl finds the plugin, that the Hydra config group
# composes from the installed package and that the data manifest is in it.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python -m pip wheel -q --no-deps -w "$tmp/dist" .
python -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --no-deps "$tmp"/dist/*.whl
cd "$tmp"
"$tmp/venv/bin/python" - "$tmp/venv" <<'PY'
import sys
import verl_rewards
assert verl_rewards.__file__.startswith(sys.argv[1]), f"imported {verl_rewards.__file__}, not the installed wheel"
print("wheel:", verl_rewards.__file__)
PY
"$tmp/venv/bin/verl-rewards" doctor >"$tmp/doctor.txt" 2>&1 || { cat "$tmp/doctor.txt"; exit 1; }
grep -q "all good" "$tmp/doctor.txt"
"$tmp/venv/bin/python" -m verl.trainer.main_ppo --cfg job "hydra.searchpath=[pkg://verl_rewards.configs]" \
  +verl_rewards=contribution >"$tmp/job.yaml" 2>"$tmp/job.err" || { tail -20 "$tmp/job.err"; exit 1; }
grep -q "name: contribution" "$tmp/job.yaml"
# the data manifest ships in the wheel: status reads it (and finds nothing in an empty folder)
"$tmp/venv/bin/verl-rewards" data status --root "$tmp/nodata" >"$tmp/status.txt" && exit 1
grep -q "tau2       missing" "$tmp/status.txt"
echo "wheel check: doctor all good, config group composes from pkg://verl_rewards.configs, data manifest shipped"
