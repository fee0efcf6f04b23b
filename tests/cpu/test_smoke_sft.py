"""``verl-rewards smoke tau2 --sft``: recipes/warm_start on the CPU, end to end. verl's SFT trainer
(``verl_rewards.cpu.sft``: verl's ``SFTTrainer`` with a gloo group) trains the tiny model on the gold export through
``GoldSFTDataset``, then verl's ``main_ppo`` runs GRPO from the SFT checkpoint, its validation dumped by verl
(``trainer.validation_data_dir``) with the recorded conversations, which ``export-sft results`` turns back into SFT
data. Everything is read from files verl wrote (its file logger, checkpoints, dumps).

A few minutes on 2 cores: run under the shared lock.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from verl_rewards.engine.data_dir import TAU2_DATA

from data_support import require_root
from repo_paths import REPO

pytestmark = [pytest.mark.slow, pytest.mark.smoke]

SFT_STEPS = 2
_DROPPED = ("CONTRIBUTION", "CONTRIB_TYPE", "BETA", "MODE", "DOMAIN", "EXPERIMENT_NAME", "SMOKE", "USER_BACKEND")
_DROPPED += ("STAGE", "FAMILY", "MODEL_PATH", "SFT_MODEL_PATH", "SFT_DATA", "SFT_FILES", "SFT_DIR", "SFT_OVERRIDES")


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict[str, Any]:
    data = require_root(TAU2_DATA, "mock")
    out = tmp_path_factory.mktemp("smoke") / "tau2-mock-solo-sft"
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env["VERL_REWARDS_SMOKE_QUIET"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    dumps = f"trainer.validation_data_dir={out / 'val_dumps'}"
    cmd = [sys.executable, "-m", "verl_rewards.cli", "smoke", "tau2", "--domain", "mock", "--mode", "solo", "--sft",
           "--sft-steps", str(SFT_STEPS), "--steps", "1", "--data-dir", str(data), "--out", str(out), "--",
           dumps, "+reward.reward_kwargs.record_trajectory=true"]  # fmt: skip
    proc = subprocess.run(cmd, env=env, cwd=str(REPO), capture_output=True, text=True, timeout=1500)
    log = out / "run.log"
    assert proc.returncode == 0, (
        proc.stdout[-3000:] + proc.stderr[-3000:] + (log.read_text()[-4000:] if log.exists() else "")
    )
    return {"out": out, "stdout": proc.stdout, "data": data}


def test_verls_sft_trainer_ran_its_steps_with_a_finite_loss(run):
    losses = [r["data"]["train/loss"] for r in _records(run["out"] / "sft_metrics.jsonl") if "train/loss" in r["data"]]
    assert len(losses) == SFT_STEPS and all(math.isfinite(x) and x > 0 for x in losses)
    assert "SFT train/loss by step" in run["stdout"]


def test_sft_changed_the_weights_and_grpo_started_from_them(run):
    from safetensors.torch import load_file

    out = run["out"]
    hf = out / "sft" / f"global_step_{SFT_STEPS}" / "huggingface"
    base, tuned = load_file(str(out / "model" / "model.safetensors")), load_file(str(hf / "model.safetensors"))
    assert base.keys() == tuned.keys()
    assert any(not bool((base[k].float() == tuned[k].float()).all()) for k in base)
    assert (out / "sft" / "latest_checkpointed_iteration.txt").read_text().strip() == str(SFT_STEPS)
    command = (out / "command.sh").read_text()
    assert "recipes/warm_start/run_warm_start.sh" in command and f"actor_rollout_ref.model.path={hf}" in command
    train = [r["data"] for r in _records(out / "metrics.jsonl") if "actor/grad_norm" in r["data"]]
    assert len(train) == 1 and math.isfinite(train[0]["actor/grad_norm"])
    assert (out / "checkpoints" / "global_step_1").is_dir()


def test_the_validation_dump_exports_back_to_sft_data(run, tmp_path):
    from verl_rewards.cli import main

    dumps = sorted((run["out"] / "val_dumps").glob("*.jsonl"))
    assert [d.name for d in dumps] == ["0.jsonl", "1.jsonl"]  # before training and after the last step
    lines = [json.loads(line) for line in dumps[0].read_text().splitlines()]
    assert all(isinstance(line["trajectory_json"], str) and line["trajectory_json"] for line in lines)
    assert main(["export-sft", "results", *map(str, dumps), "--data-dir", str(run["data"]), "--out",
                 str(tmp_path)]) == 0  # fmt: skip
    frame = pd.read_parquet(tmp_path / "train.parquet")
    assert len(frame) >= 1 and set(frame["mode"]) == {"solo"} and set(frame["data_source"]) == {"tau2/mock"}
    messages = json.loads(frame["messages_json"][0])
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "assistant"
    assert any(m.get("tool_calls") for m in messages)
