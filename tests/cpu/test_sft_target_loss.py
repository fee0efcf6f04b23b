"""``+trainer.target_loss``: verl's SFT trainer on the CPU (``verl_rewards.cpu.sft``) ends at the first step whose
mean train loss over the last ``target_loss_window`` steps is at most the target, and saves that step as its last
(``verl-rewards learn --sft-target-loss``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from verl_rewards.cpu.model import build_tiny_qwen2
from verl_rewards.cpu.sft import TARGET_LOSS_WINDOW, LossTarget, loss_target
from verl_rewards.gold.export import export_gold
from verl_rewards.smoke import sft_stage
from verl_rewards.toolrl.data import SAMPLE_PATH, prepare_toolrl

from repo_paths import REPO


def test_the_target_is_the_mean_of_a_full_window():
    target = LossTarget(1.0, window=3)
    assert [target(step, loss) for step, loss in enumerate([0.5, 0.5, 2.5, 0.3, 0.1], start=1)] == [
        False,  # fewer losses than the window: never
        False,
        False,  # (0.5 + 0.5 + 2.5) / 3 > 1
        False,  # (0.5 + 2.5 + 0.3) / 3 > 1
        True,  # (2.5 + 0.3 + 0.1) / 3 <= 1
    ]
    assert target.stopped_at == 5


def test_the_keys_leave_verls_config_and_bad_values_are_named():
    config = OmegaConf.create({"trainer": {"total_training_steps": 5, "target_loss": 0.5}})
    OmegaConf.set_struct(config, True)
    target = loss_target(config)
    assert target is not None and (target.target, target.window) == (0.5, TARGET_LOSS_WINDOW)
    assert "target_loss" not in config.trainer and config.trainer.total_training_steps == 5
    assert loss_target(OmegaConf.create({"trainer": {}})) is None
    for trainer, message in (({"target_loss": 0}, "positive"), ({"target_loss": 1, "target_loss_window": 0}, "least 1"),
                             ({"target_loss": "low"}, "target_loss='low'")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            loss_target(OmegaConf.create({"trainer": trainer}))


@pytest.mark.slow
def test_verls_sft_trainer_stops_and_saves_at_the_target(tmp_path: Path):
    """The real SFT stage (the warm-start recipe with STAGE=sft, as ``learn`` runs it) on the ToolRL gold answers:
    a target every loss meets, over a window of 3 steps, ends an 8-step run at step 3 with step 3's checkpoint."""
    rows = Path(prepare_toolrl(SAMPLE_PATH, tmp_path / "rows", split="train", show_progress=False).output_path)
    sft = export_gold("toolrl", "", "train", tmp_path / "sft_data", rows_file=rows, progress=False)
    frame = pd.read_parquet(sft.out)
    model = build_tiny_qwen2(tmp_path / "model", [*frame["messages_json"], *frame["tools_json"]], seed=1)
    plan = sft_stage.SftPlan("toolrl", Path(sft.out), len(frame), 0, [], steps=8, batch=2)
    env = {**os.environ, "VERL_PLATFORM": "cpu", "DOMAIN": "rlla", "MODE": "single", "MODEL_PATH": model,
           "N_GPUS": "1", **sft_stage.sft_env(plan, tmp_path), "STAGE": "sft"}  # fmt: skip
    env["SFT_OVERRIDES"] += " +trainer.target_loss=1000 +trainer.target_loss_window=3"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    proc = subprocess.run(["bash", str(REPO / "recipes/warm_start/run_warm_start.sh")], env=env, cwd=str(REPO),
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "target loss 1000 (mean of 3 steps) at step 3" in proc.stdout
    losses = [json.loads(line)["data"].get("train/loss") for line in (tmp_path / "sft_metrics.jsonl").open()]
    assert len([x for x in losses if x is not None]) == 3
    assert sft_stage.sft_steps_run(tmp_path) == 3
    assert (sft_stage.sft_checkpoint(tmp_path, 3) / "config.json").is_file()
    assert not (tmp_path / "sft" / "global_step_8").exists()
    assert sft_stage.check_sft(tmp_path, 3) == [x for x in losses if x is not None]
