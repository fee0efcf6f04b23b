"""ToolRL options: config/env precedence, value parsing, schedules and documented score bounds."""

from __future__ import annotations

import dataclasses
import types

import pytest

from verl_rewards.toolrl import ENV_VARS, ToolRLOptions, UnknownOptionError, score_bounds
from verl_rewards.toolrl.options import template_from_experiment_name
from verl_rewards.toolrl.ranges import (
    MAX_STEP,
    check_step,
    correctness_range,
    format_range,
    length_range,
    length_target,
)

ALL_VARS = [*ENV_VARS.values(), "EXPERIMENT_NAME"]
BOOL_FIELDS = list(ENV_VARS)
STEPS = (0, 29, 30, 75, 150, 300)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in ALL_VARS:
        monkeypatch.delenv(var, raising=False)


# ----------------------------------------------------------------------------------- construction


def test_defaults_are_all_off_and_auto():
    opts = ToolRLOptions()
    assert all(getattr(opts, name) is False for name in BOOL_FIELDS)
    assert opts.chat_template == "auto"
    assert ToolRLOptions.from_config(None, environ={}) == opts
    assert ToolRLOptions.from_config({}, environ={}) == opts


def test_field_names_match_brief():
    assert ToolRLOptions.field_names() == (
        "with_length",
        "schedule_length",
        "correct_max1",
        "max1_step30_max3",
        "schedule_reward",
        "refined_reward",
        "intermediate_reward",
        "coarse_reward",
        "chat_template",
    )


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ToolRLOptions().with_length = True  # type: ignore[misc]


def test_direct_construction_validates():
    with pytest.raises(ValueError, match="with_length"):
        ToolRLOptions(with_length=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chat_template"):
        ToolRLOptions(chat_template="mistral")  # type: ignore[arg-type]


def test_as_kwargs_round_trip():
    opts = ToolRLOptions(with_length=True, coarse_reward=True, chat_template="llama")
    assert ToolRLOptions.from_config(opts.as_kwargs(), environ={"WITHLENGTH": "0"}) == opts


# ------------------------------------------------------------------------------- env and precedence


@pytest.mark.parametrize("field,var", sorted(ENV_VARS.items()))
def test_each_env_var_turns_its_option_on(field, var):
    opts = ToolRLOptions.from_config(None, environ={var: "1"})
    assert getattr(opts, field) is True
    assert all(getattr(opts, other) is False for other in BOOL_FIELDS if other != field)


@pytest.mark.parametrize("value", ["0", "true", "True", "yes", " 1", "1 ", "01", "", "2"])
def test_env_is_on_only_for_exact_1(value):
    assert ToolRLOptions.from_config(None, environ={"WITHLENGTH": value}).with_length is False


def test_explicit_config_wins_over_env_both_ways():
    env = {"WITHLENGTH": "1", "COARSEREWARD": "0"}
    opts = ToolRLOptions.from_config({"with_length": False, "coarse_reward": True}, environ=env)
    assert opts.with_length is False
    assert opts.coarse_reward is True


def test_absent_and_none_keys_fall_back_to_env():
    env = {"REFINEDREWARD": "1", "SCHEDULEREWARD": "1"}
    opts = ToolRLOptions.from_config({"refined_reward": None}, environ=env)
    assert opts.refined_reward is True
    assert opts.schedule_reward is True


def test_environ_defaults_to_os_environ(monkeypatch):
    monkeypatch.setenv("CORRECTMAX1", "1")
    assert ToolRLOptions.from_config({}).correct_max1 is True
    monkeypatch.setenv("CORRECTMAX1", "0")
    assert ToolRLOptions.from_config({}).correct_max1 is False


def test_any_mapping_is_accepted():
    cfg = types.MappingProxyType({"with_length": "true"})
    assert ToolRLOptions.from_config(cfg, environ={}).with_length is True


def test_non_mapping_config_rejected():
    with pytest.raises(ValueError, match="mapping"):
        ToolRLOptions.from_config(["with_length"], environ={})  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ value parsing


@pytest.mark.parametrize(
    "value,expected",
    [
        (True, True),
        (False, False),
        (1, True),
        (0, False),
        ("true", True),
        ("TRUE", True),
        (" False ", False),
        ("1", True),
        ("0", False),
        ("yes", True),  # the package's one set of spellings (verl_rewards.coerce)
        ("On", True),
        ("no", False),
        ("off", False),
    ],
)
def test_bool_values_accepted(value, expected):
    assert ToolRLOptions.from_config({"schedule_length": value}, environ={}).schedule_length is expected


@pytest.mark.parametrize("value", ["y", "enable", "", "2", 2, -1, 0.5, 1.0, [], {}, "truee"])
def test_bad_bool_values_name_the_key(value):
    with pytest.raises(ValueError, match="intermediate_reward"):
        ToolRLOptions.from_config({"intermediate_reward": value}, environ={})


def test_numpy_bool_accepted():
    np = pytest.importorskip("numpy")
    assert ToolRLOptions.from_config({"with_length": np.bool_(True)}, environ={}).with_length is True
    assert ToolRLOptions.from_config({"with_length": np.int64(0)}, environ={}).with_length is False


def test_unknown_key_lists_valid_names():
    with pytest.raises(UnknownOptionError) as info:
        ToolRLOptions.from_config({"withlength": True, "strict_match": True}, environ={})
    message = str(info.value)
    assert "withlength" in message and "strict_match" in message
    for name in ToolRLOptions.field_names():
        assert name in message
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


# ------------------------------------------------------------------------------------ chat template


@pytest.mark.parametrize(
    "name,expected",
    [
        ("grpo-qwen-3b", "qwen"),
        ("grpo-llama-8b", "llama"),
        ("qwen-vs-llama", "llama"),  # "llama" is checked first
        ("Qwen2.5-3B", "auto"),  # case-sensitive; ToolRL raised NotImplementedError here, we fall back
        ("LLAMA", "auto"),
        ("", "auto"),
        ("my-run", "auto"),
    ],
)
def test_experiment_name_rule(name, expected):
    assert template_from_experiment_name(name) == expected
    assert ToolRLOptions.from_config(None, environ={"EXPERIMENT_NAME": name}).chat_template == expected


def test_explicit_chat_template_wins_over_experiment_name():
    env = {"EXPERIMENT_NAME": "grpo-llama"}
    assert ToolRLOptions.from_config({"chat_template": "qwen"}, environ=env).chat_template == "qwen"
    assert ToolRLOptions.from_config({"chat_template": "auto"}, environ=env).chat_template == "auto"
    assert ToolRLOptions.from_config({"chat_template": " Llama "}, environ={}).chat_template == "llama"


@pytest.mark.parametrize("value", ["chatml", "", 1, True])
def test_bad_chat_template(value):
    with pytest.raises(ValueError, match="chat_template"):
        ToolRLOptions.from_config({"chat_template": value}, environ={})


# ----------------------------------------------------------------------------------------- schedules


def _opts(**kw) -> ToolRLOptions:
    return ToolRLOptions(**kw)


@pytest.mark.parametrize("step", STEPS)
def test_default_ranges_do_not_move(step):
    assert format_range(_opts(), step) == (0.0, 1.0)
    assert correctness_range(_opts(), step) == (-3.0, 3.0)
    assert correctness_range(_opts(correct_max1=True), step) == (-1.0, 1.0)
    assert length_target(_opts(with_length=True), step) == 512
    assert score_bounds(_opts(), step) == (-3.0, 4.0)
    assert score_bounds(_opts(with_length=True), step) == (-3.0, 5.0)
    assert score_bounds(_opts(correct_max1=True), step) == (-1.0, 2.0)


MAX1STEP30 = {
    # step: (format (lo, hi), correctness (lo, hi))
    0: ((0.0, 1.0), (-1.0, 1.0)),
    29: ((0.0, 1.0), (-1.0, 1.0)),
    30: ((0.0, 0.5), (-3.0, 3.0)),
    75: ((0.0, 0.5), (-3.0, 3.0)),
    150: ((0.0, 0.5), (-3.0, 3.0)),
    300: ((0.0, 0.5), (-3.0, 3.0)),
}


@pytest.mark.parametrize("step", STEPS)
def test_max1_step30_max3(step):
    opts = _opts(max1_step30_max3=True)
    fmt, corr = MAX1STEP30[step]
    assert format_range(opts, step) == pytest.approx(fmt)
    assert correctness_range(opts, step) == pytest.approx(corr)


SCHEDULE = {
    # step: (format (lo, hi), correctness (lo, hi))
    0: ((-2.0, 2.0), (-2.0, 2.0)),
    29: ((-2 + 58 / 150, 2 - 29 / 150), (-2 - 29 / 150, 2 + 29 / 150)),
    30: ((-1.6, 1.8), (-2.2, 2.2)),
    75: ((-1.0, 1.5), (-2.5, 2.5)),
    150: ((-1.0, 1.0), (-3.0, 3.0)),
    300: ((-1.0, 1.0), (-3.0, 3.0)),
}


@pytest.mark.parametrize("step", STEPS)
def test_schedule_reward(step):
    opts = _opts(schedule_reward=True)
    fmt, corr = SCHEDULE[step]
    assert format_range(opts, step) == pytest.approx(fmt)
    assert correctness_range(opts, step) == pytest.approx(corr)
    assert format_range(opts, step)[0] <= -1.0  # the format min is never 0 again (checklist 8)


SCHEDULE_MAX1 = {
    0: (-2.0, 2.0),
    29: (29 / 150 - 2, 2 - 29 / 150),
    30: (-1.8, 1.8),
    75: (-1.5, 1.5),
    150: (-1.0, 1.0),
    300: (0.0, 0.0),
}


@pytest.mark.parametrize("step", STEPS)
def test_schedule_reward_with_correct_max1(step):
    assert correctness_range(_opts(schedule_reward=True, correct_max1=True), step) == pytest.approx(SCHEDULE_MAX1[step])


def test_schedule_reward_with_correct_max1_crosses_after_300():
    lo, hi = correctness_range(_opts(schedule_reward=True, correct_max1=True), 450)
    assert (lo, hi) == pytest.approx((1.0, -1.0))
    assert score_bounds(_opts(schedule_reward=True, correct_max1=True), 450) == pytest.approx((-1.0 - 1.0, 1.0 + 1.0))


SCHEDULE_AND_MAX1STEP30 = {
    # format: the halving at >= 30 happens before the schedule; correctness: /3 before 30
    0: ((-2.0, 2.0), (-2.0, 2.0)),
    29: ((-2 + 58 / 150, 2 - 29 / 150), (29 / 150 - 2, 2 - 29 / 150)),
    30: ((-1.6, 1.7), (-2.2, 2.2)),
    75: ((-1.0, 1.25), (-2.5, 2.5)),
    150: ((-1.0, 1.0), (-3.0, 3.0)),
    300: ((-1.0, 1.0), (-3.0, 3.0)),
}


@pytest.mark.parametrize("step", STEPS)
def test_schedule_reward_after_max1_step30_max3(step):
    opts = _opts(schedule_reward=True, max1_step30_max3=True)
    fmt, corr = SCHEDULE_AND_MAX1STEP30[step]
    assert format_range(opts, step) == pytest.approx(fmt)
    assert correctness_range(opts, step) == pytest.approx(corr)


@pytest.mark.parametrize(
    "step,target",
    [
        (0, 384.0),
        (29, 384 + 256 * 29 / 105),
        (30, 384 + 256 * 30 / 105),
        (75, 384 + 256 * 75 / 105),
        (105, 640.0),
        (150, 384 + 256 * 150 / 105),
        (300, 384 + 256 * 300 / 105),
    ],
)
def test_schedule_length_target_is_uncapped(step, target):
    assert length_target(_opts(with_length=True, schedule_length=True), step) == pytest.approx(target)


def test_length_range():
    assert length_range(_opts()) == (0.0, 0.0)
    assert length_range(_opts(with_length=True)) == (0.0, 1.0)


@pytest.mark.parametrize(
    "kw,step,bounds",
    [
        ({}, 0, (-3.0, 4.0)),
        ({"schedule_reward": True}, 0, (-4.0, 4.0)),
        ({"schedule_reward": True}, 75, (-3.5, 4.0)),
        ({"schedule_reward": True, "with_length": True}, 300, (-4.0, 5.0)),
        ({"max1_step30_max3": True}, 29, (-1.0, 2.0)),
        ({"max1_step30_max3": True}, 30, (-3.0, 3.5)),
        ({"correct_max1": True, "schedule_reward": True}, 300, (-1.0, 1.0)),
        ({"correct_max1": True, "max1_step30_max3": True}, 0, (-1 / 3, 1 + 1 / 3)),
    ],
)
def test_score_bounds_examples(kw, step, bounds):
    assert score_bounds(_opts(**kw), step) == pytest.approx(bounds)


@pytest.mark.parametrize("step", [-1, MAX_STEP + 1])
def test_step_out_of_range(step):
    with pytest.raises(ValueError, match="step"):
        check_step(step)


@pytest.mark.parametrize("step", [1.5, "3", None, True])
def test_step_must_be_int(step):
    with pytest.raises(TypeError, match="step"):
        check_step(step)
