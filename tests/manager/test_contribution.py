"""C-0 / C-1 values, step-dict parsing, and contribution config (Hydra keys, env fallback, errors)."""

from __future__ import annotations

import math

import pytest

from verl_rewards.contribution import (
    ContributionConfig,
    ContributionConfigError,
    compute_contribution,
    contrib_binary,
    contrib_value_delta,
)
from verl_rewards.step_dicts import parse_step_dict


@pytest.mark.parametrize(
    ("prev", "cur", "expected"),
    [
        ("{}", "{}", 0),
        ("abc", "abc", 0),
        ("abc", "abd", 1),
        (None, "{}", 0),  # None is the empty blackboard
        (None, "x", 1),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, 0),  # dicts compare by canonical JSON
        ({"a": 1}, {"a": 2}, 1),
    ],
)
def test_c0_is_one_exactly_when_blackboard_changes(prev, cur, expected):
    assert contrib_binary(prev, cur) == expected


@pytest.mark.parametrize(
    ("prev", "cur", "expected"),
    [
        (0.0, 0.5, 0.5),
        (0.5, 0.25, 0.0),
        (0.3, 0.3, 0.0),
        ("0.1", "0.4", 0.30000000000000004),
        (None, 0.7, 0.7),
        ("bad", 0.2, 0.2),
        (0.1, float("nan"), 0.0),
        (0.0, float("inf"), 0.0),
        (True, 1.0, 0.0),
    ],
)
def test_c1_is_positive_part_of_value_delta(prev, cur, expected):
    assert contrib_value_delta(prev, cur) == pytest.approx(expected)


def test_step_dict_parsing_accepts_dicts_json_and_rejects_garbage():
    assert parse_step_dict({"bb_hash": "h"}) == {"bb_hash": "h"}
    assert parse_step_dict('{"value_est": 0.5}') == {"value_est": 0.5}
    assert parse_step_dict("not json") == {}
    assert parse_step_dict(None) == {}
    assert parse_step_dict(float("nan")) == {}
    assert parse_step_dict("x" * 2_000_000) == {}
    assert parse_step_dict('[{"bb_hash": "a"}, 3]') == [{"bb_hash": "a"}, {}]


def test_compute_contribution_uses_design_defaults_for_missing_fields():
    assert compute_contribution("C0", {}, {}) == 0.0
    assert compute_contribution("C0", {}, {"bb_hash": "changed"}) == 1.0
    assert compute_contribution("C1", {}, {"value_est": 0.4}) == pytest.approx(0.4)
    assert compute_contribution("none", {"bb_hash": "a"}, {"bb_hash": "b"}) == 0.0


def test_per_turn_step_lists_sum_over_turns():
    prev = [{"bb_hash": "a", "value_est": 0.0}, {"bb_hash": "b", "value_est": 0.5}, {"bb_hash": "b", "value_est": 0.6}]
    cur = [{"bb_hash": "b", "value_est": 0.5}, {"bb_hash": "b", "value_est": 0.6}, {"bb_hash": "c", "value_est": 0.2}]
    assert compute_contribution("C0", prev, cur) == 2.0
    assert compute_contribution("C1", prev, cur) == pytest.approx(0.6)


def test_config_hydra_keys_win_over_environment():
    env = {"CONTRIBUTION": "1", "CONTRIB_TYPE": "C1", "BETA": "0.9"}
    cfg = ContributionConfig.from_config({"type": "c0", "beta": 0.1}, env)
    assert cfg == ContributionConfig.single("C0", 0.1)
    assert (cfg.type, cfg.terms[0].schedule.beta) == ("C0", 0.1)


def test_config_env_fallback_when_keys_absent():
    assert ContributionConfig.from_config(None, {"CONTRIBUTION": "1", "CONTRIB_TYPE": "C1", "BETA": "0.2"}) == (
        ContributionConfig.single("C1", 0.2)
    )
    assert ContributionConfig.from_config(None, {"CONTRIBUTION": "1"}) == ContributionConfig.single("C0", 0.05)
    assert ContributionConfig.from_config(None, {"CONTRIB_TYPE": "C1"}).type == "none"  # not enabled
    assert ContributionConfig.from_config({"beta": 0.3}, {"CONTRIBUTION": "0"}) == ContributionConfig()


@pytest.mark.parametrize(
    ("section", "env", "message"),
    [
        ({"type": "C3"}, {}, "contribution.type: unknown contribution type 'C3'"),
        (None, {"CONTRIBUTION": "1", "CONTRIB_TYPE": "C7"}, "CONTRIB_TYPE: unknown contribution type 'C7'"),
        ({"type": "C0", "beta": "abc"}, {}, "contribution.beta: expected a number, got 'abc'"),
        ({"type": "C0", "beta": float("nan")}, {}, "contribution.beta: expected a finite number"),
        ({"type": "C0", "beta": "inf"}, {}, "contribution.beta: expected a finite number"),
        ({"type": "C0", "beta": True}, {}, "contribution.beta: expected a number, got True"),
        (None, {"BETA": "x"}, "BETA: expected a number, got 'x'"),
        ({"typ": "C0"}, {}, "unknown key(s) ['typ']"),
    ],
)
def test_config_errors_are_clear(section, env, message):
    with pytest.raises(ContributionConfigError) as info:
        ContributionConfig.from_config(section, env)
    assert message in str(info.value)


def test_contribution_total_is_finite_for_any_step_values():
    for prev, cur in [({"value_est": "nan"}, {"value_est": "inf"}), ({"value_est": []}, {"value_est": {}})]:
        assert math.isfinite(compute_contribution("C1", prev, cur))
