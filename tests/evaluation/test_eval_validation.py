"""pass^k and tau2 statistics in verl's validation metrics: the plugin wraps both trainers'
``_val_metrics_update``; driven here through verl's own method (and so verl's ``process_validation_metrics``)
with N = 4 trials per prompt repeated by verl's ``DataProto.repeat`` and mixed sources (tau2, ToolRL, gsm8k)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from eval_support import PROMPTS, TAU, N
from eval_support import validation_inputs as _validation_inputs
from verl_support import compose_verl_config


@pytest.fixture(scope="module")
def val_config():
    return compose_verl_config([f"actor_rollout_ref.rollout.val_kwargs.n={N}"])


def test_plugin_wraps_both_trainers_val_metrics_update():
    from verl_rewards import plugin

    plugin.install()
    import verl.trainer.ppo.ray_trainer  # noqa: F401
    import verl.trainer.ppo.v1.trainer_base  # noqa: F401

    from verl_rewards.evaluation.validation import validation_hooks_active

    assert validation_hooks_active() == {
        "verl.trainer.ppo.ray_trainer.RayPPOTrainer": True,
        "verl.trainer.ppo.v1.trainer_base.PPOTrainer": True,
    }
    assert plugin.STATUS["validation_legacy_trainer"] == "ok" and plugin.STATUS["validation_v1_trainer"] == "ok"


def test_legacy_trainer_logs_pass_k_on_task_reward_per_source(val_config):
    from verl_rewards import plugin

    plugin.install()
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer

    sources, uids, infos = _validation_inputs()
    trainer = SimpleNamespace(config=val_config)
    m = RayPPOTrainer._val_metrics_update(trainer, sources, uids, infos, [])

    assert m["val-core/gsm8k/acc/mean@4"] == pytest.approx(5 / 8)  # verl's own metrics are kept
    # t1: 3 of 4 (the contrib-only 1.0 is a failure), t2: 4 of 4, t3 (same prompt, own uid): 0 of 4
    expected = {1: (3 / 4 + 1 + 0) / 3, 2: (3 / 6 + 1 + 0) / 3, 3: (1 / 4 + 1 + 0) / 3, 4: (0 + 1 + 0) / 3}
    for k, value in expected.items():
        assert m[f"val-aux/{TAU}/pass^{k}"] == pytest.approx(value)
    assert f"val-aux/{TAU}/pass^5" not in m
    # pass@k beside it: at least one of k succeeds (t1: 1 - C(1, k) / C(4, k), t2: 1, t3: 0)
    at = {1: (3 / 4 + 1 + 0) / 3, 2: (1 + 1 + 0) / 3, 3: 2 / 3, 4: 2 / 3}
    for k, value in at.items():
        assert m[f"val-aux/{TAU}/pass@{k}"] == pytest.approx(value)
    assert f"val-aux/{TAU}/pass@5" not in m
    assert m[f"val-aux/{TAU}/num_tasks"] == 3 and m[f"val-aux/{TAU}/num_trials"] == 12
    assert m[f"val-aux/{TAU}/task_reward"] == pytest.approx(7 / 12)
    assert m[f"val-aux/{TAU}/termination/agent_stop"] == pytest.approx(9 / 12)
    assert m[f"val-aux/{TAU}/termination/user_stop"] == pytest.approx(1 / 12)
    assert m[f"val-aux/{TAU}/termination/max_steps"] == pytest.approx(2 / 12)
    assert m[f"val-aux/{TAU}/db_match_rate"] == pytest.approx(7 / 10)  # the 10 runs that stopped normally
    assert m[f"val-aux/{TAU}/action_read_accuracy"] == pytest.approx(8 / 10)
    assert m[f"val-aux/{TAU}/action_write_accuracy"] == pytest.approx(14 / 20)
    assert m[f"val-aux/{TAU}/component/communicate"] == pytest.approx(9 / 10)
    assert m[f"val-aux/{TAU}/component/db"] == pytest.approx(7 / 10)
    # ToolRL and gsm8k: mean task reward, no pass^k, no tau2 statistics
    assert m["val-aux/rlla/task_reward"] == pytest.approx(10 / 8)
    assert m["val-aux/gsm8k/task_reward"] == pytest.approx(5 / 8)
    for source in ("rlla", "gsm8k"):
        ours = {k for k in m if k.startswith(f"val-aux/{source}/") and "@" not in k}
        assert ours == {f"val-aux/{source}/{n}" for n in ("task_reward", "num_tasks", "num_trials")}


def test_v1_trainer_leaves_out_failed_sessions_and_limits_k(val_config, caplog):
    from verl_rewards import plugin

    plugin.install()
    from verl.trainer.ppo.v1.trainer_base import PPOTrainer

    sources, uids, infos = _validation_inputs(drop=("t2", 3), legacy=False)
    expected_counts = {(PROMPTS[u][0], u): N for u in PROMPTS}
    with caplog.at_level(logging.WARNING, logger="verl_rewards"):
        m = PPOTrainer._val_metrics_update(
            SimpleNamespace(config=val_config), sources, uids, infos, [], expected_acc_counts=expected_counts
        )
    assert f"val-aux/{TAU}/pass^4" not in m  # t2 has 3 trials left: k stops at 3, as tau2's get_metrics_df
    assert m[f"val-aux/{TAU}/pass^3"] == pytest.approx((1 / 4 + 1 + 0) / 3)
    assert m[f"val-aux/{TAU}/num_trials"] == 11
    assert any("fewer than the expected 4" in r.getMessage() for r in caplog.records)
    assert m["val-aux/rlla/task_reward"] == pytest.approx(10 / 8)
    assert m["val-core/gsm8k/acc/mean@4"] == pytest.approx(5 / 8)
