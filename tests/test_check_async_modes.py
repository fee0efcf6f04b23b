"""``verl-rewards check`` on verl's async V1 trainer modes: what their trainer, replay buffer and checkpoint engine
assert at start-up is checked before a run, one line naming the mode, the keys and verl's file."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_check import base, one_line, rlla, run_check  # noqa: F401 - rlla is a fixture

from repo_paths import REPO

SEPARATE = [
    "trainer.v1.trainer_mode=separate_async",
    "trainer.v1.separate_async.parameter_sync_step=1",
    "actor_rollout_ref.rollout.nnodes=1",
    "actor_rollout_ref.rollout.n_gpus_per_node=1",
]
SWITCH = [
    "trainer.v1.separate_async.hybrid_rollout.enable_switch=True",
    "actor_rollout_ref.rollout.disaggregation.enabled=True",
]
#: rlla rows record no step dicts: a run that passes has its contribution terms off (check stage contribution)
NO_TERMS = "reward.reward_kwargs.contribution.type=none"


@pytest.mark.parametrize(
    ("extra", "stage", "message"),
    [
        (
            ["trainer.v1.trainer_mode=separate_async"],  # verl's default parameter_sync_step is 4
            "trainer mode separate_async",
            "data.train_batch_size (4) must equal trainer.v1.separate_async.parameter_sync_step (4) x "
            "actor_rollout_ref.actor.ppo_mini_batch_size (4)",
        ),
        (
            [*SEPARATE, "actor_rollout_ref.rollout.nnodes=0"],
            "trainer mode separate_async",
            "actor_rollout_ref.rollout.nnodes must be > 0",
        ),
        (
            [*SEPARATE, "actor_rollout_ref.rollout.n_gpus_per_node=0"],
            "trainer mode separate_async",
            "actor_rollout_ref.rollout.n_gpus_per_node must be > 0",
        ),
        (SEPARATE, "trainer mode separate_async", "checkpoint_engine.backend must not be naive"),
        (
            [*SEPARATE, "actor_rollout_ref.rollout.checkpoint_engine.backend=nope"],
            "checkpoint engine",
            "Checkpoint engine nope not registered",
        ),
        (
            [*SEPARATE, "actor_rollout_ref.rollout.checkpoint_engine.backend=nope", "reward.reward_model.enable=True"],
            "trainer mode separate_async",
            "reward.reward_model.enable_resource_pool must be True",
        ),
        (
            [*SEPARATE, "actor_rollout_ref.rollout.checkpoint_engine.backend=nope", *SWITCH],
            "trainer mode separate_async",
            "trainer.v1.separate_async.hybrid_rollout.enable_switch does not support "
            "actor_rollout_ref.rollout.disaggregation.enabled",
        ),
        (  # verl ignores the switch without hybrid replicas: the next stage is reached
            [
                *SEPARATE,
                "actor_rollout_ref.rollout.checkpoint_engine.backend=nope",
                *SWITCH,
                "actor_rollout_ref.hybrid_engine=False",
            ],
            "checkpoint engine",
            "Checkpoint engine nope not registered",
        ),
        (
            ["trainer.v1.trainer_mode=colocate_async", "+trainer.v1.colocate_async.parameter_sync_step=3"],
            "trainer mode colocate_async",
            "data.train_batch_size (4) must be divisible by trainer.v1.colocate_async.parameter_sync_step (3)",
        ),
        (
            ["trainer.v1.trainer_mode=colocate_async", "trainer.v1.sampler.max_off_policy_threshold=0"],
            "trainer mode colocate_async",
            "max_off_policy_threshold must be an integer > 0 or null, got 0",
        ),
        (
            ["trainer.v1.trainer_mode=colocate_async", "trainer.v1.sampler.max_off_policy_strategy=keep"],
            "trainer mode colocate_async",
            "max_off_policy_strategy must be drop or wait, got 'keep'",
        ),
    ],
    ids=[
        "sync-step-x-mini-batch",
        "rollout-nnodes",
        "rollout-gpus",
        "naive-engine",
        "unregistered-engine",
        "colocated-reward-model",
        "switch-with-disaggregation",
        "switch-ignored-without-hybrid-engine",
        "colocate-sync-step",
        "staleness-threshold",
        "staleness-strategy",
    ],
)
def test_an_async_mode_constraint_is_one_line(capsys, small_tokenizer_dir, rlla, extra, stage, message):  # noqa: F811
    code, out, err = run_check(capsys, base(small_tokenizer_dir, rlla, *extra))
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"verl-rewards check: error: {stage}: "), line
    assert message in line, line


def test_colocate_async_prints_its_settings(capsys, small_tokenizer_dir, rlla):  # noqa: F811
    code, out, err = run_check(
        capsys, base(small_tokenizer_dir, rlla, "trainer.v1.trainer_mode=colocate_async", NO_TERMS)
    )
    assert code == 0, err[-3000:]
    assert "V1 PPOTrainerColocateAsync (trainer_mode=colocate_async)" in out
    assert "trainer mode: colocate_async (parameter_sync_step 1, max_off_policy_threshold 8 (drop), " in out


def test_the_sync_trainer_has_no_async_line(capsys, small_tokenizer_dir, rlla):  # noqa: F811
    code, out, _ = run_check(capsys, base(small_tokenizer_dir, rlla, NO_TERMS))
    assert code == 0 and "trainer mode:" not in out


@pytest.mark.slow
def test_the_cpu_separate_async_trainer_passes_with_the_cpu_gloo_engine(small_tokenizer_dir, rlla):  # noqa: F811
    """``cpu_separate_async`` is verl's separate_async trainer (same start-up rules), registered with the CPU
    backend, whose ``cpu_gloo`` engine joins verl's checkpoint-engine registry."""
    env = {**os.environ, "VERL_PLATFORM": "cpu", "PYTHONPATH": str(REPO)}
    overrides = base(
        small_tokenizer_dir,
        rlla,
        *SEPARATE,
        "trainer.v1.trainer_mode=cpu_separate_async",
        "actor_rollout_ref.rollout.checkpoint_engine.backend=cpu_gloo",
        "trainer.device=cpu",
        NO_TERMS,
    )
    cmd = [sys.executable, "-m", "verl_rewards.cli", "check", "-v", "--", *overrides]  # -v: the summary lines
    proc = subprocess.run(cmd, env=env, cwd=str(REPO), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "V1 CpuPPOTrainerSeparateAsync (trainer_mode=cpu_separate_async)" in proc.stdout
    assert (
        "trainer mode: separate_async (parameter_sync_step 1, standalone rollout 1 x 1 devices, checkpoint engine "
        "cpu_gloo, max_off_policy_threshold 8 (drop), num_warmup_batches 1)"
    ) in proc.stdout
