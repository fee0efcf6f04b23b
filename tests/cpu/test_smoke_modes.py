"""``smoke --trainer-mode`` and ``--resume`` without a run: each mode's overrides as verl composes them, and what a
resumed run must leave behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from verl_rewards.smoke.errors import SmokeError
from verl_rewards.smoke.modes import check_resume, mode_overrides, resume_overrides

from recipe_support import smoke_config


def test_each_mode_selects_its_cpu_trainer_and_devices():
    assert mode_overrides("sync") == ["trainer.v1.trainer_mode=cpu_sync", "+ray_kwargs.ray_init.num_gpus=1"]
    assert mode_overrides("colocate_async")[:2] == [
        "trainer.v1.trainer_mode=cpu_colocate_async",
        "+ray_kwargs.ray_init.num_gpus=1",
    ]
    separate = mode_overrides("separate_async")
    assert separate[:2] == ["trainer.v1.trainer_mode=cpu_separate_async", "+ray_kwargs.ray_init.num_gpus=2"]
    assert "actor_rollout_ref.rollout.checkpoint_engine.backend=cpu_gloo" in separate
    with pytest.raises(SmokeError) as exc:
        mode_overrides("fully_async")
    assert exc.value.stage == "set-up"


def test_the_resume_starts_from_the_last_checkpoint_for_one_more_step(tmp_path: Path):
    assert resume_overrides(tmp_path, 2) == [
        "trainer.resume_mode=resume_path",
        f"trainer.resume_from_path={tmp_path / 'checkpoints' / 'global_step_2'}",
        "trainer.total_training_steps=3",
        "trainer.val_before_train=False",
    ]


def _rec(step: int, **data: float) -> dict:
    return {"step": step, "data": data}


def test_check_resume_names_what_is_missing(tmp_path: Path):
    step, val = {"actor/grad_norm": 0.1}, {"val-core/x/reward/mean@2": 1.0}
    for records, message in [
        ([_rec(1, **step), _rec(2, **step)], "trained steps [1, 2], expected [3]"),  # started over
        ([_rec(3, **step)], "no validation after the resumed step 3"),
        ([_rec(3, **step, **val)], "no checkpoint at"),
    ]:
        with pytest.raises(SmokeError, match=message.replace("[", r"\[").replace("]", r"\]")) as exc:
            check_resume(tmp_path, 2, records)
        assert exc.value.stage == "resume"
    (tmp_path / "checkpoints" / "global_step_3").mkdir(parents=True)
    check_resume(tmp_path, 2, [_rec(3, **step, **val)])


@pytest.mark.slow
def test_separate_async_composes_two_pools_and_the_cpu_gloo_engine(tmp_path: Path):
    cfg = smoke_config(tmp_path, trainer_mode="separate_async")
    rollout, v1 = cfg["actor_rollout_ref"]["rollout"], cfg["trainer"]["v1"]
    assert v1["trainer_mode"] == "cpu_separate_async" and cfg["ray_kwargs"]["ray_init"]["num_gpus"] == 2
    assert (rollout["nnodes"], rollout["n_gpus_per_node"], cfg["trainer"]["n_gpus_per_node"]) == (1, 1, 1)
    assert rollout["checkpoint_engine"]["backend"] == "cpu_gloo"
    assert rollout["checkpoint_engine"]["engine_kwargs"] == {"cpu_gloo": {"host": "127.0.0.1"}}
    # verl's separate_async rule: train_batch_size == parameter_sync_step * ppo_mini_batch_size
    assert cfg["data"]["train_batch_size"] == (
        v1["separate_async"]["parameter_sync_step"] * cfg["actor_rollout_ref"]["actor"]["ppo_mini_batch_size"]
    )
