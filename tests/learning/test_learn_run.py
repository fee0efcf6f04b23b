"""``verl-rewards learn`` end to end with a smaller budget than the documented run (4 GRPO steps of 8 rollouts per
prompt instead of 12 of 16, 4 evaluation samples per row instead of 24, validation only before and after GRPO):
verl's SFT trainer, then GRPO through ``main_ppo`` on sampled rollouts scored by our manager, must raise the
validation reward of the SFT model. Minutes on 2 cores: run it under the shared lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import REPO

pytestmark = [pytest.mark.slow, pytest.mark.smoke]

#: the CI budget: the documented run's settings with fewer GRPO steps, smaller groups and fewer evaluation samples
BUDGET = ("--seed", "1", "--steps", "4", "--test-freq", "4", "--n", "8", "--trials", "4", "--val-trials", "4")


def test_grpo_raises_the_validation_reward_of_the_sft_model(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("EXPERIMENT_NAME", "CONTRIBUTION")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    out = tmp_path / "learn"
    cmd = [sys.executable, "-m", "verl_rewards.cli", "learn", *BUDGET, "--out", str(out)]
    proc = subprocess.run(cmd, env=env, cwd=str(REPO), capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads((out / "learn.json").read_text())
    before, sft, grpo = (result["evaluations"][k] for k in ("before_sft", "after_sft", "after_grpo"))
    assert sft["reward"] > before["reward"]  # SFT on the gold answers helped, short of perfect
    assert sft["pass^1"] < 1.0
    assert result["gain"] == pytest.approx(grpo["reward"] - sft["reward"]) and result["gain"] > 0
    assert grpo["pass^1"] >= sft["pass^1"]
    # verl's own validation of the run (at the last step only: the after-SFT evaluation replaces the one before
    # training) agrees with ours, which ran in worker processes beside and after the stages
    assert set(result["verl_validation"]) == {"4"}
    assert result["verl_validation"]["4"] == pytest.approx(grpo["reward"], abs=1e-6)
    # each stage's log apart: SFT's steps in sft.log, none in run.log (main_ppo's)
    sft_log, run_log = ((out / name).read_text() for name in ("sft.log", "run.log"))
    assert sft_log.count("train/loss") == result["sft_steps"] and "train/loss" not in run_log
    assert (out / "learn.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # SFT ended at the first step whose last 10 losses average at most the target loss, short of --sft-steps
    losses = [r["data"]["train/loss"] for r in map(json.loads, (out / "sft_metrics.jsonl").open())
              if "train/loss" in r["data"]]  # fmt: skip
    target, steps = result["plan"]["sft_target_loss"], result["sft_steps"]
    assert len(losses) == steps < result["plan"]["sft_steps"] and sum(losses[-10:]) / 10 <= target
    assert all(sum(losses[k - 10 : k]) / 10 > target for k in range(10, steps))
    # what benchmarks/learn_margin.py needs to draw the run's evaluations again: its models, rows and sampling
    assert result["sampling"]["seed"] == 1 and result["sampling"]["trials"] == 4
    assert all(Path(result["files"][k]).is_dir() for k in ("after_sft", "after_grpo"))
