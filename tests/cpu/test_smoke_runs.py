"""``verl-rewards smoke``: verl's real ``main_ppo`` (V1 sync trainer, GRPO, FSDP2, the hf_cpu rollout) runs the
family recipes on the CPU with a tiny model, each training group mixing a scripted gold rollout and a sampled one
(validation plays the gold script); the tau-bench run uses GAE with a critic and C-1 read from the critic's values.
Everything is read from verl's file-logger JSONL (and once from the offline wandb run), never from log text.

Each run takes a few minutes on 2 cores (mostly Ray and the actors starting): run these under the shared lock.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from verl_rewards.engine.data_dir import TAU2_DATA, TAU_BENCH_DATA

from data_support import require_root
from repo_paths import REPO
from wandb_offline import history_rows

pytestmark = [pytest.mark.slow, pytest.mark.smoke]

STEPS = 2
#: environment of the caller that would change what a recipe runs
_DROPPED = ("CONTRIBUTION", "CONTRIB_TYPE", "BETA", "MODE", "DOMAIN", "EXPERIMENT_NAME", "SMOKE", "USER_BACKEND")


def _smoke(out: Path, family: str, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env["VERL_REWARDS_SMOKE_QUIET"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "verl_rewards.cli", "smoke", family, "--steps", str(STEPS), "--out", str(out), *args]
    proc = subprocess.run(cmd, env=env, cwd=str(REPO), capture_output=True, text=True, timeout=1500)
    log = out / "run.log"
    assert proc.returncode == 0, (
        proc.stdout[-3000:] + proc.stderr[-3000:] + (log.read_text()[-4000:] if log.exists() else "")
    )
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return {"out": out, "records": records, "stdout": proc.stdout}


def _train(run: dict[str, Any]) -> list[dict[str, Any]]:
    return [r["data"] for r in run["records"] if "actor/grad_norm" in r["data"]]


def _val(run: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(r["step"], r["data"]) for r in run["records"] if any(k.startswith("val-core/") for k in r["data"])]


@pytest.fixture(scope="module")
def toolrl_run(tmp_path_factory):
    """ToolRL with the recipe's settings (no contribution term: single-turn rows record no step dicts), wandb
    offline too."""
    return _smoke(tmp_path_factory.mktemp("smoke") / "toolrl", "toolrl", "--wandb")


@pytest.fixture(scope="module")
def tau2_run(tmp_path_factory):
    """tau2 airline, normal mode, the scripted user."""
    data = require_root(TAU2_DATA, "airline")
    out = tmp_path_factory.mktemp("smoke") / "tau2"
    return _smoke(out, "tau2", "--domain", "airline", "--mode", "normal", "--user", "scripted", "--data-dir", str(data))


#: C-1 read from the critic (``value_source: critic``) in a run with GAE and a critic (verl's ``TrainingWorker`` on the
#: CPU backend): the tau-bench run below carries it, so one start of Ray and the actors covers both
BETA = 0.5
CRITIC = (
    "--",
    "algorithm.adv_estimator=gae",
    "reward.reward_kwargs.contribution.type=C1",
    f"reward.reward_kwargs.contribution.beta={BETA}",
    "+reward.reward_kwargs.contribution.value_source=critic",
)


@pytest.fixture(scope="module")
def tau_bench_run(tmp_path_factory):
    """tau-bench v1 retail, normal mode, the scripted user; GAE with a critic and C-1 from the critic's values.
    Normal-mode rows have several assistant turns with user and tool messages between them, so the critic's value
    has points to rise between (a one-turn ToolRL row has only its first and last token)."""
    data = require_root(TAU_BENCH_DATA, "retail")
    out = tmp_path_factory.mktemp("smoke") / "tau_bench"
    return _smoke(out, "tau_bench", "--domain", "retail", "--mode", "normal", "--data-dir", str(data), *CRITIC)


RUNS = {
    "toolrl": ("toolrl_run", "rlla", ("format", "correctness", "length")),
    "tau2": ("tau2_run", "tau2/airline", ("tau2_db", "tau2_action", "tau2_communicate", "contrib_c1")),
    "tau_bench": ("tau_bench_run", "tau_bench/retail", ("tb_r_actions", "tb_r_outputs", "contrib_c1")),
}


@pytest.fixture(params=sorted(RUNS))
def run(request):
    fixture, source, keys = RUNS[request.param]
    return request.param, request.getfixturevalue(fixture), source, keys


def test_the_steps_ran_and_updated_the_actor(run):
    _, result, _, _ = run
    train = _train(result)
    assert len(train) == STEPS
    assert all(step["actor/grad_norm"] > 0 for step in train)
    assert "smoke: PASSED" in result["stdout"]


def test_reward_extra_metrics_of_our_components(run):
    _, result, _, keys = run
    for step in _train(result):
        for key in ("base_score", *keys):
            for stat in ("mean", "max", "min"):
                assert f"reward_extra/{key}/{stat}" in step, f"reward_extra/{key}/{stat}"


def test_validation_before_and_after_with_pass_k(run):
    family, result, source, _ = run
    val = _val(result)
    assert [step for step, _ in val] == [0, STEPS]
    for _, data in val:
        assert any(k.startswith(f"val-core/{source}/") for k in data)
        if family != "toolrl":  # pass^k for tau2 / tau-bench sources
            assert data[f"val-aux/{source}/pass^1"] == 1.0 and f"val-aux/{source}/pass^2" in data


def test_the_checkpoint_exists(run):
    _, result, _, _ = run
    actor = result["out"] / "checkpoints" / f"global_step_{STEPS}" / "actor"
    assert actor.is_dir() and any(actor.iterdir())


def test_rollout_and_actor_log_probs_agree(run):
    """The rollout server holds the actor's current weights (weight sync works): log-probs nearly equal."""
    _, result, _, _ = run
    for step in _train(result):
        assert step["training/rollout_probs_diff_max"] < 1e-3


def test_each_group_mixes_the_gold_reward_with_sampled_ones(run):
    """The default --script-ratio 0.5 with two rollouts per prompt: one scripted rollout per group earns the gold
    reward, the sampled one of a random model less. On ToolRL and tau-bench retail the task reward itself differs
    (measured: 4 vs -3, 1 vs 0); the first tau2 airline rows are read-only tasks whose DB check a policy that changes
    nothing passes too (both 1.0), so there the scripted rollout's lead is the recipe's C-1 term (1.1 vs 1.0)."""
    family, result, _, _ = run
    first = _train(result)[0]
    if family == "toolrl":
        from verl_rewards.gold import gold_reward, row_info

        rows = pd.read_parquet(result["out"] / "data" / "train.parquet").to_dict("records")[:2]
        assert first["reward_extra/base_score/max"] == max(gold_reward(row_info(r)) for r in rows)
    else:
        assert first["reward_extra/base_score/max"] == 1.0
    if family != "tau2":
        assert first["reward_extra/base_score/min"] < first["reward_extra/base_score/max"]
    assert first["critic/score/min"] < first["critic/score/max"]


def test_the_reward_reached_the_update(run):
    """The advantages are non-zero in some step and so is the policy's gradient (with scripted groups only, both
    were 0 in every step). GRPO: the policy-gradient loss is non-zero. GAE (the tau-bench run): verl whitens the
    advantages over the batch's tokens, so with one update per step (ratio 1) the token-mean loss is their mean,
    ~0 by construction; the gradient norm is the evidence there."""
    _, result, _, _ = run
    train = _train(result)
    assert any(s["critic/advantages/max"] > 0 > s["critic/advantages/min"] for s in train)
    if "critic/vf_loss" in train[0]:  # a critic trained: GAE
        assert all(s["actor/grad_norm"] > 1e-3 and abs(s["actor/pg_loss"]) < 1e-4 for s in train)
    else:
        assert any(s["actor/pg_loss"] != 0 for s in train)


def test_the_critic_trains_and_the_critic_term_is_logged_non_zero(tau_bench_run):
    train = _train(tau_bench_run)
    for step in train:
        assert "critic/vf_loss" in step and "critic/values/mean" in step  # verl's critic ran
        for stat in ("mean", "max", "min"):
            assert f"reward_extra/contrib_c1/{stat}" in step
        assert step["reward_extra/beta_c1/mean"] == pytest.approx(BETA)
    assert max(step["num_turns/max"] for step in train) > 2  # multi-turn rows
    assert any(step["reward_extra/contrib_c1/max"] > 0 and step["reward_extra/contrib_c1/mean"] > 0 for step in train)


def test_the_total_reward_the_advantage_saw_is_the_score_plus_the_logged_bonus(tau_bench_run):
    for step in _train(tau_bench_run):
        bonus = step["reward_extra/contrib/mean"]
        assert bonus == pytest.approx(BETA * step["reward_extra/contrib_c1/mean"], abs=1e-5)
        assert step["critic/rewards/mean"] == pytest.approx(step["critic/score/mean"] + bonus, abs=1e-4)


def test_wandb_offline_history_has_the_same_metric_names(toolrl_run):
    runs = sorted((toolrl_run["out"] / "wandb").glob("offline-run-*"))
    assert len(runs) == 1
    logged: set[str] = set()
    for row in history_rows(runs[0]):
        logged.update(row)
    jsonl: set[str] = set()
    for rec in toolrl_run["records"]:
        jsonl.update(rec["data"])
    assert {k for k in jsonl if k.startswith("reward_extra/")}, "no reward_extra metrics to compare"
    assert jsonl - logged == set()
