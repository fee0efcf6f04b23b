"""C-1 from the critic in a real run: ``verl-rewards smoke tau2`` (airline, solo mode: several assistant turns with
tool results between them) with GAE and a critic (verl's ``TrainingWorker`` on the CPU backend), the C-1 term
reading the critic's values (``value_source: critic``). Read from verl's file-logger JSONL. Two steps, a few minutes
on 2 cores: run it under the shared lock.

Not ToolRL: a one-turn row has only two points, its first and last token (in the one ToolRL run measured, before the
CPU critic's value head was seeded, V fell between them on every row: ``contrib_c1`` 0 in both steps). Airline solo
rows have several assistant turns with tool results between them; with the seeded critic, two runs log the same
``contrib_c1``."""

from __future__ import annotations

from typing import Any

import pytest
from test_smoke_runs import _smoke, _train

from verl_rewards.engine.data_dir import TAU2_DATA

from data_support import require_root

pytestmark = [pytest.mark.slow, pytest.mark.smoke]

BETA = 0.5
CRITIC = [
    "--",
    "algorithm.adv_estimator=gae",
    "reward.reward_kwargs.contribution.type=C1",
    f"reward.reward_kwargs.contribution.beta={BETA}",
    "+reward.reward_kwargs.contribution.value_source=critic",
]


@pytest.fixture(scope="module")
def critic_run(tmp_path_factory) -> dict[str, Any]:
    data = require_root(TAU2_DATA, "airline")
    solo = ["--domain", "airline", "--mode", "solo", "--data-dir", str(data)]
    return _smoke(tmp_path_factory.mktemp("smoke") / "critic", "tau2", *solo, *CRITIC)


def test_the_critic_trains_and_the_critic_term_is_logged_non_zero(critic_run):
    train = _train(critic_run)
    assert len(train) == 2
    for step in train:
        assert "critic/vf_loss" in step and "critic/values/mean" in step  # verl's critic ran
        for stat in ("mean", "max", "min"):
            assert f"reward_extra/contrib_c1/{stat}" in step
        assert step["reward_extra/beta_c1/mean"] == pytest.approx(BETA)
    assert max(step["num_turns/max"] for step in train) > 2  # multi-turn rows
    assert any(step["reward_extra/contrib_c1/max"] > 0 and step["reward_extra/contrib_c1/mean"] > 0 for step in train)


def test_the_total_reward_the_advantage_saw_is_the_score_plus_the_logged_bonus(critic_run):
    for step in _train(critic_run):
        bonus = step["reward_extra/contrib/mean"]
        assert bonus == pytest.approx(BETA * step["reward_extra/contrib_c1/mean"], abs=1e-5)
        assert step["critic/rewards/mean"] == pytest.approx(step["critic/score/mean"] + bonus, abs=1e-4)
