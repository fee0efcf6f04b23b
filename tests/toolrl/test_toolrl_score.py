"""compute_score end to end: numbered test vectors, a checklist of ToolRL's rules, and each option's effect in
numbers. Each vector's input is built to exercise exactly the rule it names (default options unless stated)."""

from __future__ import annotations

import json
import math

import pytest

from verl_rewards.toolrl import (
    ENV_VARS,
    ToolRLOptions,
    UnknownOptionError,
    compute_score,
    score_bounds,
    score_prediction,
    score_with_options,
)

from repo_paths import REPO

SAMPLE = REPO / "verl_rewards" / "toolrl" / "sample_data" / "toolrl_sample.jsonl"
STEPS = (0, 29, 30, 75, 150, 300)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in [*ENV_VARS.values(), "EXPERIMENT_NAME"]:
        monkeypatch.delenv(var, raising=False)


def line(name: str, **params) -> str:
    return json.dumps({"name": name, "parameters": params})


def tool_gt(*lines: str) -> str:
    body = "\n".join(lines)
    return f"<think> Use the right tool. </think>\n<tool_call>\n{body}\n</tool_call>"


def tool_pred(*lines: str, think: str = "I will call the tool.", sep: str = "\n") -> str:
    body = "\n".join(lines)
    return f"<think> {think} </think>{sep}<tool_call>\n{body}\n</tool_call>"


RESPONSE_GT = "<think> Ask for details. </think>\n<response> Which city? </response>"
VOLUME = line("set_volume", level=1)
WEATHER = line("get_weather", city="Oslo", days=1)
QUOTE = line("get_stock_quote", symbol="NVDA")


def result(score, fmt, correctness, length=0.0) -> dict:
    return {"score": score, "format": fmt, "correctness": correctness, "length": length}


# ------------------------------------------------------------------------------------ test vectors

VECTORS = {
    # T2: "1" vs 1 loses the value point: correctness 6 * 2/3 - 3 = 1.0
    "T2": (tool_pred(line("set_volume", level="1")), tool_gt(VOLUME), {}, result(2.0, 1.0, 1.0)),
    # T5: missing </tool_call>: format 0 and correctness -3
    "T5": (f"<think> x </think>\n<tool_call>\n{VOLUME}", tool_gt(VOLUME), {}, result(-3.0, 0.0, -3.0)),
    # T6: pretty-printed JSON passes the format regex but fails per-line parsing
    "T6": (
        tool_pred(json.dumps(json.loads(VOLUME), indent=2)),
        tool_gt(VOLUME),
        {},
        result(-2.0, 1.0, -3.0),
    ),
    # T7: a space instead of "\n" after </think>: format 0, correctness unaffected
    "T7": (tool_pred(VOLUME, sep=" "), tool_gt(VOLUME), {}, result(3.0, 0.0, 3.0)),
    # T9: right calls, other order: max
    "T9": (tool_pred(QUOTE, WEATHER), tool_gt(WEATHER, QUOTE), {}, result(4.0, 1.0, 3.0)),
    # T11: a tool call against a response-only GT: format 0, correctness 0 (no penalty)
    "T11": (tool_pred(VOLUME), RESPONSE_GT, {}, result(0.0, 0.0, 0.0)),
    # T17: keys reordered and one value wrong; refined: key component 0 -> 6 * 2/4 - 3 = 0.0
    "T17": (
        tool_pred(json.dumps({"name": "f", "parameters": {"b": 2, "a": 3}})),
        tool_gt(line("f", a=1, b=2)),
        {"refined_reward": True},
        result(1.0, 1.0, 0.0),
    ),
    "T17-default": (
        tool_pred(json.dumps({"name": "f", "parameters": {"b": 2, "a": 3}})),
        tool_gt(line("f", a=1, b=2)),
        {},
        result(2.5, 1.0, 1.5),
    ),
    # T25: two think blocks pass the format
    "T25": (
        f"<think> a </think>\n<think> b </think>\n<tool_call>\n{VOLUME}\n</tool_call>",
        tool_gt(VOLUME),
        {},
        result(4.0, 1.0, 3.0),
    ),
    # T28: a blank line between calls: json.loads("") fails -> -3
    "T28": (tool_pred(WEATHER, "", QUOTE), tool_gt(WEATHER, QUOTE), {}, result(-2.0, 1.0, -3.0)),
    # T29: a duplicated call: names Jaccard 1/2 -> 6 * 2.5/3 - 3 = 2.0
    "T29": (tool_pred(VOLUME, VOLUME), tool_gt(VOLUME), {}, result(3.0, 1.0, 2.0)),
}


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_vectors(name):
    pred, truth, options, expected = VECTORS[name]
    got = compute_score(pred, truth, 0, **options)
    assert got == pytest.approx(expected)
    assert all(type(v) is float for v in got.values())


def test_default_total_range_is_minus_3_to_4():
    assert compute_score(tool_pred(VOLUME), tool_gt(VOLUME))["score"] == 4.0
    assert compute_score("nonsense", tool_gt(VOLUME))["score"] == -3.0
    assert score_bounds(ToolRLOptions(), 0) == (-3.0, 4.0)


# ------------------------------------------------------------------------------ checklist §1.9


def test_checklist_1_gt_decides_the_format_case():
    got = compute_score(tool_pred(VOLUME), RESPONSE_GT)
    assert got["format"] == 0.0 and got["correctness"] == 0.0


def test_checklist_2_missing_close_tag_total_minus_3():
    assert compute_score(f"<think> x </think>\n<tool_call>\n{VOLUME}", tool_gt(VOLUME))["score"] == -3.0


def test_checklist_3_multiline_or_blank_lines_fail_even_if_right():
    assert compute_score(tool_pred(json.dumps(json.loads(VOLUME), indent=1)), tool_gt(VOLUME))["correctness"] == -3.0
    assert compute_score(tool_pred(WEATHER, "", QUOTE), tool_gt(WEATHER, QUOTE))["correctness"] == -3.0
    # a blank line at the edge of the block is stripped away first, so it does no harm
    assert compute_score(tool_pred(VOLUME, ""), tool_gt(VOLUME))["correctness"] == 3.0


def test_checklist_4_python_equality():
    assert compute_score(tool_pred(line("f", on=True)), tool_gt(line("f", on=1)))["correctness"] == 3.0
    assert compute_score(tool_pred(line("f", x=1.0)), tool_gt(line("f", x=1)))["correctness"] == 3.0
    assert compute_score(tool_pred(line("f", x="1")), tool_gt(line("f", x=1)))["correctness"] == pytest.approx(1.0)


def test_checklist_5_order_of_calls_free_key_order_only_under_refined():
    assert compute_score(tool_pred(QUOTE, WEATHER), tool_gt(WEATHER, QUOTE), refined_reward=True)[
        "correctness"
    ] == pytest.approx(6 * (0 + 2 + 3) / 6 - 3)
    swapped = json.dumps({"name": "f", "parameters": {"b": 2, "a": 3}})
    assert compute_score(tool_pred(swapped), tool_gt(line("f", a=1, b=2)))["correctness"] == pytest.approx(1.5)


def test_checklist_6_experiment_name_case_and_priority(monkeypatch):
    qwen = f"<|im_start|>assistant\n{tool_pred(VOLUME)}<|im_end|>"
    llama = f"<|start_header_id|>assistant<|end_header_id|>\n\n{tool_pred(VOLUME)}<|eot_id|>"
    monkeypatch.setenv("EXPERIMENT_NAME", "llama-and-qwen")
    assert compute_score(llama, tool_gt(VOLUME))["score"] == 4.0
    assert compute_score(qwen, tool_gt(VOLUME))["format"] == 0.0
    monkeypatch.setenv("EXPERIMENT_NAME", "Llama-Qwen")  # no lower-case word: auto, no error
    assert compute_score(qwen, tool_gt(VOLUME))["score"] == 4.0


def test_checklist_7_empty_response_scores_finite_min():
    # The manager places the score on the last valid token; an empty response must still score.
    got = compute_score("<|im_start|>assistant\n<|im_end|>", tool_gt(VOLUME))
    assert got == result(-3.0, 0.0, -3.0)
    assert compute_score("", RESPONSE_GT) == result(0.0, 0.0, 0.0)


def test_checklist_8_schedule_reward_format_can_be_negative():
    for step in STEPS:
        assert compute_score("x", tool_gt(VOLUME), step, schedule_reward=True)["format"] <= -1.0


def test_checklist_9_schedules_uncapped_and_opposite():
    assert compute_score(tool_pred(VOLUME), tool_gt(VOLUME), 29, max1_step30_max3=True) == pytest.approx(
        result(2.0, 1.0, 1.0)
    )
    assert compute_score(tool_pred(VOLUME), tool_gt(VOLUME), 30, max1_step30_max3=True) == pytest.approx(
        result(3.5, 0.5, 3.0)
    )


def test_checklist_10_always_four_components():
    got = compute_score("x", tool_gt(VOLUME))
    assert set(got) == {"score", "format", "correctness", "length"}


# ------------------------------------------------------------------------------ options in numbers

GOOD = tool_pred(VOLUME)  # passes format, correct
HALF = tool_pred(line("set_volume", level="1"))  # passes format, correctness 1/3 of the way up (2/3 ratio)
BAD = "I think you should set the volume."  # fails everything


def expected_total(fmt_range, corr_range, fmt_pass: bool, ratio: float | None) -> float:
    f_lo, f_hi = fmt_range
    c_lo, c_hi = corr_range
    fmt = f_hi if fmt_pass else f_lo
    corr = c_lo if ratio is None else (c_hi if ratio == 1 else (c_hi - c_lo) * ratio + c_lo)
    return fmt + corr


OPTION_TABLE = {
    # option set: {step: (GOOD total, HALF total, BAD total)}
    "default": ({}, {s: (4.0, 2.0, -3.0) for s in STEPS}),
    "correct_max1": ({"correct_max1": True}, {s: (2.0, 1 + 1 / 3, -1.0) for s in STEPS}),
    "max1_step30_max3": (
        {"max1_step30_max3": True},
        {
            0: (2.0, 1 + 1 / 3, -1.0),
            29: (2.0, 1 + 1 / 3, -1.0),
            30: (3.5, 1.5, -3.0),
            75: (3.5, 1.5, -3.0),
            150: (3.5, 1.5, -3.0),
            300: (3.5, 1.5, -3.0),
        },
    ),
    "schedule_reward": (
        {"schedule_reward": True},
        {
            0: (4.0, 2 + 2 / 3, -4.0),
            29: (4.0, 2 - 29 / 150 + 4 * (2 + 29 / 150) / 3 - 2 - 29 / 150, -2 + 58 / 150 - 2 - 29 / 150),
            30: (4.0, 1.8 + 4.4 * 2 / 3 - 2.2, -3.8),
            75: (4.0, 1.5 + 5 * 2 / 3 - 2.5, -3.5),
            150: (4.0, 2.0, -4.0),
            300: (4.0, 2.0, -4.0),
        },
    ),
    "coarse": ({"coarse_reward": True}, {s: (4.0, -2.0, -3.0) for s in STEPS}),
    "refined": ({"refined_reward": True}, {s: (4.0, 2.0, -3.0) for s in STEPS}),
    "intermediate": ({"intermediate_reward": True}, {s: (4.0, 1.0, -3.0) for s in STEPS}),
}


@pytest.mark.parametrize("name", sorted(OPTION_TABLE))
@pytest.mark.parametrize("step", STEPS)
def test_option_effects(name, step):
    options, table = OPTION_TABLE[name]
    good, half, bad = table[step]
    truth = tool_gt(VOLUME)
    assert compute_score(GOOD, truth, step, **options)["score"] == pytest.approx(good)
    assert compute_score(HALF, truth, step, **options)["score"] == pytest.approx(half)
    assert compute_score(BAD, truth, step, **options)["score"] == pytest.approx(bad)


def test_intermediate_half_case_explained():
    # intermediate: names 1, the call is not exactly equal -> 0; local max 2 -> 6 * 1/2 - 3 = 0.0
    assert compute_score(HALF, tool_gt(VOLUME), intermediate_reward=True)["correctness"] == pytest.approx(0.0)


@pytest.mark.parametrize("truth", [json.dumps({"name": "get_time"}), json.dumps({"name": "get_time", "arguments": {}})])
def test_intermediate_ground_truth_call_without_parameters_scores_as_toolrl(truth, monkeypatch):
    # ToolRL's rlla.py on these inputs returns (-2, 1, -3, 0), by option and by its environment variable
    pred = tool_pred(line("get_time"))
    expected = result(-2.0, 1.0, -3.0, 0.0)
    assert compute_score(pred, tool_gt(truth), intermediate_reward=True) == expected
    monkeypatch.setenv("INTERMEDIATEREWARD", "1")
    assert compute_score(pred, tool_gt(truth)) == expected


@pytest.mark.parametrize("step", STEPS)
def test_with_length_adds_up_to_one(step):
    long_think = tool_pred(VOLUME, think=" ".join(["word"] * 600))
    got = compute_score(long_think, tool_gt(VOLUME), step, with_length=True)
    assert got == result(5.0, 1.0, 3.0, 1.0)
    assert score_bounds(ToolRLOptions(with_length=True), step) == (-3.0, 5.0)


def test_correct_max1_with_schedule_reward_crosses_after_step_300():
    truth = tool_gt(VOLUME)
    at_300 = compute_score(GOOD, truth, 300, correct_max1=True, schedule_reward=True)
    assert at_300["correctness"] == pytest.approx(0.0)
    at_450_good = compute_score(GOOD, truth, 450, correct_max1=True, schedule_reward=True)
    at_450_bad = compute_score(BAD, truth, 450, correct_max1=True, schedule_reward=True)
    assert at_450_good["correctness"] == pytest.approx(-1.0)  # the "max" is now below the "min"
    assert at_450_bad["correctness"] == pytest.approx(1.0)


def test_option_values_accept_config_strings():
    assert compute_score(BAD, tool_gt(VOLUME), correct_max1="true")["score"] == -1.0
    with pytest.raises(ValueError, match="correct_max1"):
        compute_score(BAD, tool_gt(VOLUME), correct_max1="maybe")


def test_env_vars_apply_when_option_absent_and_explicit_wins(monkeypatch):
    monkeypatch.setenv("CORRECTMAX1", "1")
    assert compute_score(BAD, tool_gt(VOLUME))["score"] == -1.0
    assert compute_score(BAD, tool_gt(VOLUME), correct_max1=False)["score"] == -3.0
    # score_with_options never reads the environment
    assert score_with_options(BAD, tool_gt(VOLUME))["score"] == -3.0


# ------------------------------------------------------------------------------------------- API


def test_unknown_option_names_raise_type_error_listing_valid_names():
    with pytest.raises(TypeError) as info:
        compute_score(GOOD, tool_gt(VOLUME), withlength=True)
    assert isinstance(info.value, UnknownOptionError)
    assert "withlength" in str(info.value)
    for name in ToolRLOptions.field_names():
        assert name in str(info.value)


def test_verl_style_keywords_are_accepted():
    got = compute_score(
        solution_str=GOOD, ground_truth=tool_gt(VOLUME), data_source="rlla", extra_info={"index": 3}, step=5
    )
    assert got["score"] == 4.0


def test_toolrl_fork_step_dicts_are_accepted_and_do_not_change_the_score():
    # The contribution term (beta * R_contrib) is the reward manager's job, not compute_score's.
    got = compute_score(
        GOOD, tool_gt(VOLUME), 5, prev_step_dict={"bb_hash": "a"}, cur_step_dict={"bb_hash": "b"}, data_source="rlla"
    )
    assert got == result(4.0, 1.0, 3.0)


def test_bad_argument_types():
    with pytest.raises(TypeError):
        compute_score(None, tool_gt(VOLUME))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compute_score(GOOD, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="step"):
        compute_score(GOOD, tool_gt(VOLUME), -1)


def test_score_prediction_and_score_with_options_agree():
    opts = ToolRLOptions(with_length=True, schedule_reward=True)
    for pred in (GOOD, HALF, BAD):
        assert score_with_options(pred, tool_gt(VOLUME), 40, opts) == score_prediction(pred, tool_gt(VOLUME), 40, opts)
        assert score_with_options(pred, tool_gt(VOLUME), 40, opts) == compute_score(
            pred, tool_gt(VOLUME), 40, **opts.as_kwargs()
        )


def test_response_and_both_cases():
    both_gt = f"<think> t </think>\n<tool_call>\n{VOLUME}\n</tool_call>\n<response> Done. </response>"
    both_pred = f"<think> x </think>\n<tool_call>\n{VOLUME}\n</tool_call>\n<response> Setting it. </response>"
    assert compute_score(both_pred, both_gt) == result(4.0, 1.0, 3.0)
    assert compute_score("<think> x </think>\n<response> Which one? </response>", RESPONSE_GT) == result(1.0, 1.0, 0.0)


def test_sample_dataset_ground_truths_score_max():
    rows = [json.loads(text) for text in SAMPLE.read_text(encoding="utf-8").splitlines() if text.strip()]
    assert len(rows) >= 20
    for row in rows:
        got = compute_score(row["output"], row["output"])
        expected_correctness = 3.0 if "<tool_call>" in row["output"] else 0.0
        assert got == result(1.0 + expected_correctness, 1.0, expected_correctness)
        assert math.isfinite(got["score"])
