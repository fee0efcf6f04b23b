"""pass^k against hand-computed values, tau2's success rule, and the per-source summary (grouping, k limits,
infrastructure errors, task reward instead of the total)."""

from __future__ import annotations

import pytest

from verl_rewards.evaluation import (
    EvalError,
    Run,
    pass_at_k,
    pass_at_ks,
    pass_hat_k,
    pass_hat_ks,
    success_rule,
    summarize,
)

# C(c, k) / C(4, k) written out by hand for n = 4: rows c = 0..4, columns k = 1..4
HAND_N4 = {
    0: (0.0, 0.0, 0.0, 0.0),
    1: (1 / 4, 0.0, 0.0, 0.0),
    2: (2 / 4, 1 / 6, 0.0, 0.0),
    3: (3 / 4, 3 / 6, 1 / 4, 0.0),
    4: (1.0, 1.0, 1.0, 1.0),
}


@pytest.mark.parametrize("c", range(5))
@pytest.mark.parametrize("k", range(1, 5))
def test_pass_hat_k_n4_matches_hand_table(c, k):
    assert pass_hat_k(4, c, k) == pytest.approx(HAND_N4[c][k - 1], abs=1e-12)


# 1 - C(4 - c, k) / C(4, k) by hand: the chance that at least one of k trials drawn from 4 succeeds
HAND_AT_N4 = {
    0: (0.0, 0.0, 0.0, 0.0),
    1: (1 / 4, 1 - 3 / 6, 1 - 1 / 4, 1.0),
    2: (2 / 4, 1 - 1 / 6, 1.0, 1.0),
    3: (3 / 4, 1.0, 1.0, 1.0),
    4: (1.0, 1.0, 1.0, 1.0),
}


@pytest.mark.parametrize("c", range(5))
@pytest.mark.parametrize("k", range(1, 5))
def test_pass_at_k_n4_matches_hand_table(c, k):
    assert pass_at_k(4, c, k) == pytest.approx(HAND_AT_N4[c][k - 1], abs=1e-12)
    if k == 1:
        assert pass_at_k(4, c, 1) == pass_hat_k(4, c, 1)  # the two agree only at k = 1


def test_pass_at_ks_beside_pass_hat_ks_in_the_summary():
    runs = _runs("a", [1, 0, 0, 1]) + _runs("b", [0, 0, 0, 0]) + _runs("c", [1, 1, 1, 1])
    s = summarize("tau2/mock", runs, success_rule("tau2/mock"), expected_trials=4)
    assert s.pass_at_k == pytest.approx({1: (2 / 4 + 0 + 1) / 3, 2: (5 / 6 + 0 + 1) / 3, 3: 2 / 3, 4: 2 / 3})
    assert s.pass_k == pytest.approx({1: (2 / 4 + 0 + 1) / 3, 2: (1 / 6 + 0 + 1) / 3, 3: 1 / 3, 4: 1 / 3})
    metrics = s.metrics()
    assert metrics["pass@2"] == pytest.approx((5 / 6 + 1) / 3) and metrics["pass^2"] == pytest.approx((1 / 6 + 1) / 3)
    assert s.to_dict()["pass_at_k"]["4"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="pass@5 needs"):
        pass_at_ks({"a": [True] * 4}, 5)
    assert pass_at_ks({}, 3) == {}


def test_pass_hat_ks_averages_over_tasks_with_unequal_trials():
    # task a: 2 of 3; task b: 5 of 5 -> k up to 3 (the fewest trials)
    got = pass_hat_ks({"a": [True, False, True], "b": [True] * 5}, 3)
    assert got == pytest.approx({1: (2 / 3 + 1) / 2, 2: (1 / 3 + 1) / 2, 3: (0 + 1) / 2})
    with pytest.raises(ValueError, match="1 <= k <= number of trials"):
        pass_hat_ks({"a": [True, False, True], "b": [True] * 5}, 4)


def test_tau2_rule_is_within_1e6_of_one_and_thresholds_are_at_least():
    tau = success_rule("tau2/airline")
    assert tau(1.0) and tau(1 - 5e-7) and tau(1 + 5e-7)
    assert not tau(0.98) and not tau(1 - 2e-6) and not tau(1.05) and not tau(None) and not tau(float("nan"))
    assert success_rule("tau_bench/retail") == tau
    assert success_rule("rlla") is None and success_rule("gsm8k") is None and success_rule("tau2x") is None
    at_least = success_rule("rlla", 2.5)
    assert at_least(2.5) and at_least(3.0) and not at_least(2.4)


def _runs(task, rewards, source="tau2/mock", **kw):
    return [Run(source=source, task=task, reward=r, **kw) for r in rewards]


def test_summary_limits_k_to_fewest_trials_and_warns():
    runs = _runs("a", [1, 1, 0, 1]) + _runs("b", [1, 0, 1])  # b lost a trial
    s = summarize("tau2/mock", runs, success_rule("tau2/mock"), expected_trials=4)
    assert sorted(s.pass_k) == [1, 2, 3]
    assert s.pass_k[1] == pytest.approx((3 / 4 + 2 / 3) / 2)
    assert s.pass_k[3] == pytest.approx((1 / 4 + 0) / 2)
    assert s.min_trials == 3 and s.expected_trials == 4
    assert any("fewer than the expected 4" in w for w in s.warnings)
    with pytest.raises(EvalError, match="pass\\^4 needs at least 4 trials per task, but task 'b' has 3"):
        summarize("tau2/mock", runs, success_rule("tau2/mock"), k=4)


def test_infrastructure_errors_are_left_out_like_tau2():
    runs = _runs("a", [1, 1]) + [Run("tau2/mock", "a", None, termination="infrastructure_error")]
    runs += _runs("b", [0, 1])
    s = summarize("tau2/mock", runs, success_rule("tau2/mock"), expected_trials=2)
    assert s.num_trials == 4 and s.infra_errors == 1 and s.num_tasks == 2
    assert s.pass_k == pytest.approx({1: (1 + 0.5) / 2, 2: (1 + 0) / 2})
    assert s.metrics()["infra_errors"] == 1.0


def test_no_rule_reports_mean_reward_only():
    s = summarize("rlla", _runs("a", [2.0, 3.0], source="rlla") + _runs("b", [1.0, 0.0], source="rlla"), None)
    assert s.pass_k == {} and s.task_reward == pytest.approx(1.5)
    assert not any(name.startswith("pass^") for name in s.metrics())
