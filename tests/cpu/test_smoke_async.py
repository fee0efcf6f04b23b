"""``verl-rewards smoke --trainer-mode colocate_async --resume``: verl's real ``main_ppo`` under its asynchronous V1
trainer (``cpu_colocate_async``: rollout and training share the one logical GPU, verl's warm-up batch keeps one batch
of prompts in flight ahead of the trainer), the ToolRL recipe with smoke's default mixed groups (one scripted, one
sampled rollout per prompt), then resumed from its checkpoint for one more step. Read from verl's file-logger JSONL
only. The fastest family in the fastest async mode, for the smoke stage; ``separate_async`` (a standalone rollout,
weights over ``cpu_gloo``) and the tau2 / tau-bench runs are documented commands (docs/guides/cpu-backend.md).

It shows what the sync smoke shows (the actor updated, ``reward_extra/*``, validation before and after, the
checkpoint) and what the async trainer adds: verl's per-trajectory weights versions (``min_global_steps`` /
``max_global_steps``, logged as ``training/off_policy/*``), a step that trains on trajectories of an earlier
dispatch (verl's warm-up batch), the TransferQueue state in the checkpoint and back on resume, and a β schedule
that reads the step verl hands the reward: the step the prompt was dispatched at (``global_steps``).

β is linear from 0 at step 0 to 1 at step 1000, so ``1000 * beta_c0`` is the step each sample's reward read. The
term is C0 (the recipe has none: ToolRL's single-turn rows record no step dicts, so ``contrib_c0`` is 0 there); its
``beta_c0`` is the schedule's value at the step the reward was given, whatever the term adds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_smoke_runs import STEPS, _smoke, _val

pytestmark = [pytest.mark.slow, pytest.mark.smoke]

MODE = "colocate_async"
SCALE = 1000  # beta_c0 = step / SCALE
BETA = [
    "reward.reward_kwargs.contribution.type=C0",
    "reward.reward_kwargs.contribution.beta=0.0",
    "+reward.reward_kwargs.contribution.schedule=linear",
    "+reward.reward_kwargs.contribution.beta_end=1.0",
    f"+reward.reward_kwargs.contribution.end_step={SCALE}",
]
OFF_POLICY = ("trajectory_spans", "trajectory_staleness", "trajectory_staleness_worst")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke") / "toolrl_async"
    result = _smoke(out, "toolrl", "--trainer-mode", MODE, "--resume", "--", *BETA)
    lines = (out / "metrics_resume.jsonl").read_text().splitlines()
    result["resumed"] = [json.loads(line) for line in lines if line.strip()]
    return result


def _steps(run) -> list[tuple[int, dict]]:
    """(step, metrics) of every training step, the resumed one included."""
    both = [*run["records"], *run["resumed"]]
    return [(r["step"], r["data"]) for r in both if "actor/grad_norm" in r["data"]]


def test_the_async_trainer_ran_updated_the_actor_and_resumed(run):
    assert [step for step, _ in _steps(run)] == [1, 2, STEPS + 1]
    assert all(data["actor/grad_norm"] > 0 for _, data in _steps(run))
    assert "smoke: PASSED" in run["stdout"] and "(with its TransferQueue state)" in run["stdout"]
    logged = json.loads((Path(run["out"]) / "metrics.jsonl").read_text().splitlines()[0])
    assert logged["step"] == 0  # validation before training


def test_every_step_trains_on_mixed_groups_with_non_zero_advantages(run):
    """Smoke's default groups (one scripted, one sampled rollout per prompt) survive the async trainer's streaming
    and replay buffer: every step, the resumed one included, trains on groups whose rewards differ."""
    for step, data in _steps(run):
        assert data["reward_extra/base_score/min"] < data["reward_extra/base_score/max"], step
        assert data["critic/advantages/min"] < 0 < data["critic/advantages/max"], step
        assert data["actor/pg_loss"] != 0, step
        assert data["reward_extra/reward_error/mean"] == 0, step


def test_reward_extra_metrics_and_validation_before_after_and_on_resume(run):
    for _, data in _steps(run):
        for key in ("base_score", "format", "correctness", "length", "contrib_c0", "beta_c0"):
            assert f"reward_extra/{key}/mean" in data, key
    assert [step for step, _ in _val(run)] == [0, STEPS]
    resumed_val = [r["step"] for r in run["resumed"] if any(k.startswith("val-core/rlla/") for k in r["data"])]
    assert resumed_val == [STEPS + 1]


def test_checkpoints_hold_the_actor_and_the_transfer_queue(run):
    for step in (STEPS, STEPS + 1):
        ckpt = Path(run["out"]) / "checkpoints" / f"global_step_{step}"
        assert any((ckpt / "actor").iterdir()) and (ckpt / "data.pt").is_file()
        assert (ckpt / "transfer_queue").is_dir(), "an async checkpoint keeps the TransferQueue state"


def test_verl_records_each_trajectorys_weights_versions(run):
    """``training/off_policy/*`` are verl's own reduction of the per-trajectory ``min_global_steps`` /
    ``max_global_steps`` tags (cast to int): present, ordered, within the steps run so far."""
    for step, data in _steps(run):
        for name in OFF_POLICY:
            lo, mean, hi = (data[f"training/off_policy/{name}/{s}"] for s in ("min", "mean", "max"))
            assert lo <= mean <= hi, (step, name)
        assert data["training/off_policy/trajectory_spans/min"] >= 1
        assert 0 <= data["training/off_policy/trajectory_staleness/min"]
        assert (
            data["training/off_policy/trajectory_staleness/max"]
            <= data["training/off_policy/trajectory_staleness_worst/max"]
        )
        assert data["training/off_policy/trajectory_staleness_worst/max"] <= step - 1  # weights exist from step 0
    assert any(data["training/off_policy/trajectory_staleness_worst/max"] >= 1 for _, data in _steps(run)), (
        "no step trained on trajectories of an earlier policy (verl's warm-up batch)"
    )


def test_the_beta_schedule_reads_the_step_each_prompt_was_dispatched_at(run):
    """The reward reads ``global_steps``, the step verl dispatched the prompt at: never after the step that trains
    on it, and no later than the first weights the trajectory was generated with allow
    (dispatch <= min_global_steps + 1, so dispatch <= step - staleness_worst)."""
    lagged = False
    for step, data in _steps(run):
        read = [round(SCALE * data[f"reward_extra/beta_c0/{s}"]) for s in ("min", "max")]
        assert 1 <= read[0] <= read[1] <= step, (step, read)
        assert read[0] <= step - data["training/off_policy/trajectory_staleness_worst/max"], (step, read)
        lagged = lagged or read[0] < step
    assert lagged, "every step trained on prompts dispatched at that step: the async lag is not visible"
    for step, data in _val(run):
        assert data["val-aux/rlla/beta_c0/mean@2"] == pytest.approx(step / SCALE)  # validation: the current step
