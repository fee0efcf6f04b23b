"""The shipped GRPO script's override list composes against verl 0.9.1's real config (main_ppo --cfg job)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from recipe_support import compose_script
from repo_paths import REPO


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "expected_type", "expected_beta"),
    [
        ({"CONTRIBUTION": "1", "CONTRIB_TYPE": "C1", "BETA": "0.1"}, "C1", 0.1),
        ({"CONTRIBUTION": "true", "CONTRIB_TYPE": "C2", "BETA": "0.2"}, "C2", 0.2),
        ({"CONTRIBUTION": "0"}, "none", None),
    ],
)
def test_run_grpo_composes_and_honours_contribution_env(env, expected_type, expected_beta):
    from verl_rewards.manager.config import ManagerConfig

    cfg = compose_script("examples/grpo_trainer/run_grpo.sh", env, "trainer.total_epochs=3")
    assert cfg["reward"]["reward_manager"]["name"] == "contribution"
    assert cfg["trainer"]["v1"]["trainer_mode"] == "sync"  # verl's own mode: metrics need no special mode
    assert cfg["algorithm"]["adv_estimator"] == "grpo"
    assert cfg["trainer"]["total_epochs"] == 3  # extra overrides pass through
    settings = ManagerConfig.from_reward_kwargs(cfg["reward"]["reward_kwargs"], environ={})
    assert settings.contribution.type == expected_type
    betas = [t.schedule.beta for t in settings.contribution.terms]
    assert betas == ([] if expected_beta is None else [expected_beta])


@pytest.mark.slow
def test_toolrl_recipe_composes_with_toolrl_options():
    from verl_rewards.manager.config import ManagerConfig
    from verl_rewards.toolrl import ToolRLOptions

    cfg = compose_script(
        "recipes/toolrl_grpo/run_toolrl_grpo.sh",
        {"WITHLENGTH": "1", "CORRECTMAX1": "1", "DATA_DIR": "/data/rlla"},
    )
    assert cfg["data"]["train_files"] == "/data/rlla/train.parquet"
    assert cfg["actor_rollout_ref"]["rollout"]["n"] == 4
    kwargs = cfg["reward"]["reward_kwargs"]
    settings = ManagerConfig.from_reward_kwargs(kwargs, environ={})
    assert settings.contribution.type == "none"  # single-turn rows: nothing records step dicts
    assert cfg["trainer"]["experiment_name"] == "toolrl-grpo"
    options = ToolRLOptions.from_config(kwargs["toolrl"], environ={})
    assert options.with_length and options.correct_max1 and not options.coarse_reward


@pytest.mark.slow
def test_contribution_ablation_composes_every_variant_with_one_seed_and_name_each(tmp_path):
    from verl_rewards.manager.config import ManagerConfig

    env = {
        "DOMAIN": "mock",
        "TAU2_DATA_DIR": str(tmp_path),
        "SEED": "7",
        "BETA": "0.2",
        "GAMMA": "0.95",
        "ABLATION": "abl",
    }
    full_env = {k: v for k, v in os.environ.items() if k not in ("CONTRIBUTION", "CONTRIB_TYPE", "BETA")}
    full_env.update(env, PATH=os.path.dirname(sys.executable) + os.pathsep + full_env.get("PATH", ""))
    proc = subprocess.run(
        ["bash", str(REPO / "recipes/contribution_ablation/run_ablation.sh"), "trainer.total_epochs=2", "--cfg", "job"],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(REPO),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    configs = [c for c in yaml.safe_load_all(proc.stdout) if c]
    assert len(configs) == 5
    names = [c["trainer"]["experiment_name"] for c in configs]
    assert names == ["abl-none", "abl-C0", "abl-C1", "abl-C2", "abl-combined"]
    for cfg in configs:
        assert cfg["trainer"]["project_name"] == "verl_rewards_contrib_ablation"
        assert cfg["trainer"]["total_epochs"] == 2  # extra overrides reach every run
        assert cfg["data"]["seed"] == cfg["actor_rollout_ref"]["rollout"]["seed"] == 7
        assert cfg["actor_rollout_ref"]["actor"]["data_loader_seed"] == 7
    terms = [
        ManagerConfig.from_reward_kwargs(c["reward"]["reward_kwargs"], environ={}).contribution.terms for c in configs
    ]
    assert terms[0] == ()
    assert [(t[0].type, t[0].schedule.beta) for t in terms[1:4]] == [("C0", 0.2), ("C1", 0.2), ("C2", 0.2)]
    assert terms[3][0].gamma == 0.95
    assert [(t.name, t.schedule.beta, t.gamma) for t in terms[4]] == [("c0", 0.05, 1.0), ("c2", 0.1, 0.99)]


@pytest.mark.slow
def test_contribution_ablation_rejects_an_unknown_variant_before_any_run():
    proc = subprocess.run(
        ["bash", str(REPO / "recipes/contribution_ablation/run_ablation.sh"), "--cfg", "job"],
        env={**os.environ, "VARIANTS": "C0 C3"},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
    )
    assert proc.returncode == 2
    assert "unknown variant 'C3'" in proc.stderr and proc.stdout == ""
