"""What ``smoke`` reads from a finished run: the real failed stage, the first reward error, and whether the reward
reached the update. The logs are cut from real runs of ``verl-rewards smoke toolrl`` (verl 0.9.1): an unknown
``algorithm.adv_estimator``, a reward that needs a field no row has (a ``RewardInputError`` that ends in an unrelated
TransferQueue error), a reward that always raises (every sample scored the fallback, and ``main_ppo`` exits 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verl_rewards.smoke.checks import check_signal, failed_stage, first_reward_error
from verl_rewards.smoke.errors import SmokeError

TQ = "\x1b[36m(TaskRunnerV1 pid=14905)\x1b[0m "
RW = "\x1b[36m(RewardLoopWorker pid=16124)\x1b[0m "
AL = "\x1b[36m(AgentLoopWorkerTQ pid=26183)\x1b[0m "
SITE = "/usr/lib/python3.11/site-packages"

#: `smoke toolrl -- algorithm.adv_estimator=bogus`: the traceback is followed by reward-worker lines
ADV_LOG = f"""{TQ}INFO:2026-11-28 12:49:42,303:all initialize finished, ready to fit
{TQ}step:0 - val-core/rlla/reward/mean@2:np.float64(4.0)
Error executing job with overrides: ['algorithm.adv_estimator=bogus']
Traceback (most recent call last):
  File "{SITE}/verl/trainer/main_ppo.py", line 93, in run_ppo
    ray.get(runner.run.remote(config))
ray.exceptions.RayTaskError(ValueError): \x1b[36mray::TaskRunnerV1.run()\x1b[39m (pid=14905, ip=192.0.2.2)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "{SITE}/verl/trainer/ppo/v1/trainer_base.py", line 477, in fit
    batch = self.step(metrics, self.timing_raw)
  File "{SITE}/verl/trainer/ppo/v1/trainer_base.py", line 600, in _step_once
    batch = self._compute_advantage(batch, metrics=metrics)
  File "/repo/verl_rewards/metrics.py", line 240, in compute_advantage
    return original_advantage(self, batch, metrics)
  File "{SITE}/verl/trainer/ppo/ray_trainer.py", line 250, in compute_advantage
    adv_estimator_fn = core_algos.get_adv_estimator_fn(adv_estimator)
  File "{SITE}/verl/trainer/ppo/core_algos.py", line 149, in get_adv_estimator_fn
    raise ValueError(f"Unknown advantage estimator simply: {{name}}")
ValueError: Unknown advantage estimator simply: bogus

Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.
{RW}INFO:2026-11-28 12:56:31,018:Platform override from VERL_PLATFORM: cpu
{RW}WARNING:2026-11-28 12:56:35,517:target_num_threads 8 should not exceed total physical CPU cores 2.
"""

_INPUT_ERROR = (
    "verl_rewards.scoring.contract.RewardInputError: reward 'needs' requires parameter(s) ['no_such_field'] that no "
    "field provides; available fields: ['ability', 'data_source']"
)
#: `smoke toolrl` with a custom reward needing a missing field: every group fails, then TransferQueue gets no keys
INPUT_LOG = f"""{TQ}INFO:2026-11-28 13:02:48,000:all initialize finished, ready to fit
{AL}ERROR:2026-11-28 13:02:50,064:Error in _run_prompt for uid=76e00f49
{AL}Traceback (most recent call last):
{AL}  File "{SITE}/verl/experimental/agent_loop/agent_loop.py", line 1026, in _compute_score
{AL}    result = await selected_reward_loop_worker_handle.compute_score.remote(data)
{AL}ray.exceptions.RayTaskError(RewardInputError): \x1b[36mray::RewardLoopWorker.compute_score()\x1b[39m (pid=25681)
{AL}  File "{SITE}/verl/experimental/reward_loop/reward_loop.py", line 148, in compute_score
{AL}    return await self.reward_manager.run_single(data)
{AL}  File "/repo/verl_rewards/scoring/inputs.py", line 168, in resolve_inputs
{AL}    raise RewardInputError(
{AL}{_INPUT_ERROR}
Error executing job with overrides: ['reward.custom_reward_function.name=needs']
Traceback (most recent call last):
  File "{SITE}/verl/trainer/main_ppo.py", line 93, in run_ppo
    ray.get(runner.run.remote(config))
ray.exceptions.RayTaskError(ValueError): \x1b[36mray::TaskRunnerV1.run()\x1b[39m (pid=24454)
  File "{SITE}/verl/trainer/ppo/v1/trainer_base.py", line 441, in fit
    val_metrics = self._validate()
  File "{SITE}/verl/trainer/ppo/v1/trainer_base.py", line 1107, in _validate
    text_data = tq.kv_batch_get(
  File "{SITE}/transfer_queue/client.py", line 961, in async_kv_retrieve_meta
    raise ValueError("Received an empty list as keys.")
ValueError: Received an empty list as keys.
"""

#: a reward that always raises: the manager logs the first failures (each scored the fallback) and the run goes on
BOOM_LOG = f"""{TQ}INFO:2026-11-28 13:00:30,000:all initialize finished, ready to fit
{RW}WARNING:2026-11-28 13:00:33,072:verl-rewards: ValueError in boom for sample 675c5ed8 (failure 1; later ones are counted, not logged)
{RW}Traceback (most recent call last):
{RW}  File "/repo/verl_rewards/scoring/executors/threads.py", line 120, in _call
{RW}    return fn(**kwargs)
{RW}  File "/tmp/rewards.py", line 2, in boom
{RW}    raise ValueError("boom: this reward always fails")
{RW}ValueError: boom: this reward always fails
{RW}WARNING:2026-11-28 13:00:33,079:verl-rewards: ValueError in boom for sample 04bb1944 (failure 2; later ones are counted, not logged)
"""  # noqa: E501


def test_an_unknown_advantage_estimator_fails_in_the_update_not_in_the_reward():
    assert failed_stage(ADV_LOG, 0) == "update"
    assert first_reward_error(ADV_LOG) is None


def test_a_reward_input_error_names_the_reward_stage_and_its_message_over_the_queue_error():
    assert failed_stage(INPUT_LOG, 0) == "reward"
    assert first_reward_error(INPUT_LOG) == _INPUT_ERROR.removeprefix("verl_rewards.scoring.contract.")


def test_a_rollout_error_is_named_by_the_first_unhandled_traceback():
    """An agent loop that raises fails its group; the run then dies on the same TransferQueue error."""
    first = INPUT_LOG.index("Error executing job")
    rollout = f"""{AL}ERROR:2026-11-28 13:02:50,064:Error in _run_prompt for uid=76e00f49
{AL}Traceback (most recent call last):
{AL}  File "{SITE}/verl/experimental/agent_loop/agent_loop.py", line 695, in _run_agent_loop
{AL}    output: AgentLoopOutput = await agent_loop.run(sampling_params, **kwargs)
{AL}  File "/repo/verl_rewards/cpu/policy.py", line 230, in run
{AL}    return await inner.run(sampling_params, **kwargs)
{AL}  File "{SITE}/verl/experimental/agent_loop/tool_agent_loop.py", line 160, in run
{AL}    raise KeyError("no such tool")
{AL}KeyError: 'no such tool'
"""
    log = INPUT_LOG.splitlines(keepends=True)[0] + rollout + INPUT_LOG[first:]
    assert failed_stage(log, 0) == "rollout"
    assert first_reward_error(log) is None


def test_the_first_failed_reward_call_is_quoted_with_its_exception():
    assert first_reward_error(BOOM_LOG) == (
        "ValueError in boom for sample 675c5ed8: ValueError: boom: this reward always fails"
    )


def _records(*steps: dict) -> list[dict]:
    return [{"step": i, "data": data} for i, data in enumerate(steps)]


VAL = {"val-core/rlla/reward/mean@2": 4.0, "val-aux/rlla/reward_error/mean@2": 0.0}
MOVED = {"actor/pg_loss": -0.1, "critic/advantages/max": 0.7, "critic/advantages/min": -0.7}
TIED = {"actor/pg_loss": 0.0, "critic/advantages/max": 0.0, "critic/advantages/min": 0.0}


def test_a_run_whose_reward_reached_the_update_passes(tmp_path: Path):
    check_signal(_records(VAL, TIED | {"reward_extra/reward_error/mean": 0.0}, MOVED | VAL), tmp_path / "run.log")


def test_every_group_tied_fails_naming_the_advantages(tmp_path: Path):
    with pytest.raises(SmokeError) as exc:
        check_signal(_records(VAL, TIED, TIED | VAL), tmp_path / "run.log")
    assert exc.value.stage == "update"
    assert "critic/advantages/max > 0 > critic/advantages/min" in str(exc.value)
    assert "--script-ratio" in str(exc.value)


def test_a_zero_policy_loss_in_every_step_fails(tmp_path: Path):
    with pytest.raises(SmokeError) as exc:
        check_signal(_records(VAL, MOVED | {"actor/pg_loss": 0.0}, MOVED | {"actor/pg_loss": 0.0}), tmp_path / "x")
    assert exc.value.stage == "update" and "actor/pg_loss was 0 in every training step" in str(exc.value)


@pytest.mark.parametrize(
    "records,where",
    [
        (_records(VAL, MOVED | {"reward_extra/reward_error/mean": 1.0}), "training step 1"),
        (_records(VAL | {"val-aux/rlla/reward_error/mean@2": 1.0}, MOVED), "the validation at step 0"),
    ],
)
def test_every_reward_of_a_step_failed_fails_with_the_first_error(tmp_path: Path, records, where):
    (tmp_path / "run.log").write_text(BOOM_LOG)
    with pytest.raises(SmokeError) as exc:
        check_signal(records, tmp_path / "run.log")
    assert exc.value.stage == "reward"
    assert f"every reward of {where} failed" in str(exc.value)
    assert "first error: ValueError in boom for sample 675c5ed8: ValueError: boom" in str(exc.value)


def test_the_boom_run_s_metrics_fail_as_reward(tmp_path: Path):
    """The metrics of the real run (PASSED before): validation and training every reward failed, advantages 0."""
    lines = [
        {"step": 0, "data": {"val-aux/rlla/reward_error/mean@2": 1.0, "val-core/rlla/reward/mean@2": 0.0}},
        {"step": 1, "data": {"actor/pg_loss": 0.0, "critic/advantages/max": 0.0, "critic/advantages/min": 0.0,
                             "reward_extra/reward_error/mean": 1.0}},
    ]  # fmt: skip
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (tmp_path / "run.log").write_text(BOOM_LOG)
    from verl_rewards.smoke.data import read_metrics

    with pytest.raises(SmokeError, match="every reward of the validation at step 0 failed"):
        check_signal(read_metrics(tmp_path / "metrics.jsonl"), tmp_path / "run.log")


def _fake_recipe(tmp_path: Path, log: str, records: list[dict], code: int) -> Path:
    """A recipe that prints ``log`` (``smoke`` keeps it as ``run.log``), writes ``records`` where verl's file logger
    writes and the last checkpoint, and exits with ``code``: what ``main_ppo`` leaves behind."""
    (tmp_path / "log.txt").write_text(log)
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    recipe = tmp_path / "recipe.sh"
    recipe.write_text(
        f'cat {tmp_path / "log.txt"}\ncp {tmp_path / "records.jsonl"} "$VERL_FILE_LOGGER_PATH"\n'
        f'mkdir -p "$(dirname "$VERL_FILE_LOGGER_PATH")/checkpoints/global_step_2"\nexit {code}\n'
    )
    return recipe


def _smoke(tmp_path: Path, recipe: Path, capsys) -> tuple[int, str, str]:
    from verl_rewards.cli import main

    code = main(["smoke", "toolrl", "--recipe", str(recipe), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    return code, out, err


def test_smoke_fails_a_run_whose_every_reward_failed_quoting_the_first_error(tmp_path: Path, capsys):
    """The always-failing reward's run exited 0 with every reward at the fallback: smoke said PASSED."""
    records = [
        {"step": 0, "data": {"val-aux/rlla/reward_error/mean@2": 1.0, "val-core/rlla/reward/mean@2": 0.0}},
        *({"step": s, "data": TIED | {"actor/grad_norm": 0.0, "reward_extra/reward_error/mean": 1.0}} for s in (1, 2)),
        {"step": 2, "data": {"val-aux/rlla/reward_error/mean@2": 1.0, "val-core/rlla/reward/mean@2": 0.0}},
    ]
    code, out, err = _smoke(tmp_path, _fake_recipe(tmp_path, BOOM_LOG, records, 0), capsys)
    assert code == 1 and "PASSED" not in out
    assert "smoke: FAILED at stage reward: every reward of the validation at step 0 failed" in err
    assert "first error: ValueError in boom for sample 675c5ed8: ValueError: boom: this reward always fails" in err


def test_smoke_fails_a_run_whose_groups_all_tied(tmp_path: Path, capsys):
    records = [{"step": 0, "data": VAL}, *({"step": s, "data": TIED | {"actor/grad_norm": 1e-4}} for s in (1, 2))]
    records.append({"step": 2, "data": VAL})
    code, out, err = _smoke(tmp_path, _fake_recipe(tmp_path, "all initialize finished\n", records, 0), capsys)
    assert code == 1 and "PASSED" not in out
    assert "smoke: FAILED at stage update: no training step had critic/advantages/max > 0" in err


@pytest.mark.parametrize(
    "log,stage,first",
    [
        (ADV_LOG, "update", None),
        (INPUT_LOG, "reward", _INPUT_ERROR.removeprefix("verl_rewards.scoring.contract.")),
    ],
    ids=["unknown-adv-estimator", "reward-input-error"],
)
def test_a_failed_run_names_its_stage_and_the_first_reward_error(tmp_path: Path, capsys, log, stage, first):
    code, _, err = _smoke(tmp_path, _fake_recipe(tmp_path, log, [{"step": 0, "data": VAL}], 1), capsys)
    assert code == 1
    assert f"smoke: FAILED at stage {stage}: main_ppo exited with 1" in err
    if first:
        assert f"smoke: first reward error: {first}" in err
    else:
        assert "first reward error" not in err
