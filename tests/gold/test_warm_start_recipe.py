"""``recipes/warm_start/run_warm_start.sh --cfg job`` composes verl's SFT trainer config (our export, our dataset
class) and the GRPO recipe's config from the SFT checkpoint, as a user would run them."""

from __future__ import annotations

import pytest
import yaml

from recipe_support import run_script

SCRIPT = "recipes/warm_start/run_warm_start.sh"


def _configs(env: dict[str, str], *extra: str) -> list[dict]:
    proc = run_script(SCRIPT, env, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [c for c in yaml.safe_load_all(proc.stdout) if c]


@pytest.mark.slow
def test_sft_stage_composes_with_our_export_and_dataset_class(tmp_path):
    (sft,) = _configs(
        {
            "STAGE": "sft",
            "FAMILY": "tau2",
            "DOMAIN": "retail",
            "MODE": "solo",
            "SFT_DATA": str(tmp_path / "sft"),
            "MODEL_PATH": "/models/base",
            "SFT_DIR": str(tmp_path / "ckpt"),
            "N_GPUS": "1",
        },  # fmt: skip
        "trainer.total_epochs=1",
    )
    data = sft["data"]
    assert data["train_files"] == str(tmp_path / "sft" / "train.parquet")
    assert (data["messages_key"], data["tools_key"]) == ("messages", "tools")
    assert data["custom_cls"] == {"path": "pkg://verl_rewards.gold.sft_dataset", "name": "GoldSFTDataset"}
    assert sft["model"]["path"] == "/models/base"
    assert "hf_model" in sft["checkpoint"]["save_contents"]
    assert sft["trainer"]["default_local_dir"] == str(tmp_path / "ckpt")
    assert sft["trainer"]["total_epochs"] == 1  # the caller's overrides go last


@pytest.mark.slow
def test_rl_stage_starts_from_the_latest_sft_checkpoint(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "latest_checkpointed_iteration.txt").write_text("12\n")
    env = {"STAGE": "rl", "FAMILY": "tau2", "DOMAIN": "airline", "MODE": "normal", "USER_BACKEND": "scripted",
           "SFT_DIR": str(ckpt), "DATA_DIR": str(tmp_path / "rl"), "TAU2_DATA_DIR": str(tmp_path)}  # fmt: skip
    (rl,) = _configs(env)
    assert rl["actor_rollout_ref"]["model"]["path"] == str(ckpt / "global_step_12" / "huggingface")
    assert rl["actor_rollout_ref"]["rollout"]["agent"]["default_agent_loop"] == "tau2_agent"
    assert rl["reward"]["reward_manager"]["name"] == "contribution"
    assert rl["data"]["train_files"] == str(tmp_path / "rl" / "train.parquet")


@pytest.mark.slow
def test_both_stages_compose_and_a_missing_checkpoint_is_a_clear_error(tmp_path):
    env = {"FAMILY": "tau_bench", "DOMAIN": "retail", "MODE": "instruction", "SFT_DIR": str(tmp_path / "none"),
           "TAU_BENCH_DATA_DIR": str(tmp_path)}  # fmt: skip
    sft, rl = _configs(env)
    assert sft["data"]["train_files"].endswith("sft_tau_bench_retail_instruction/train.parquet")
    assert rl["actor_rollout_ref"]["model"]["path"] == str(tmp_path / "none" / "global_step_LATEST" / "huggingface")
    proc = run_script(SCRIPT, {**env, "STAGE": "rl"})
    assert proc.returncode == 2
    assert "no SFT checkpoint in" in proc.stderr and "STAGE=sft" in proc.stderr
