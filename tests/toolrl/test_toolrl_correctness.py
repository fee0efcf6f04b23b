"""R_correctness: parsing, gating, greedy matching and the refined/intermediate/coarse variants (ToolRL: rlla.py)."""

from __future__ import annotations

import json

import pytest

from verl_rewards.toolrl.correctness import (
    MAX_JSON_DEPTH,
    correctness_reward,
    json_depth_exceeds,
    match_score,
    parse_ground_truth_calls,
    tool_call_reward,
)

THINK = "<think> t </think>\n"


def call(name: str, **params) -> dict:
    return {"name": name, "parameters": params}


def block(*calls: dict | str) -> str:
    lines = [c if isinstance(c, str) else json.dumps(c) for c in calls]
    return "<tool_call>\n" + "\n".join(lines) + "\n</tool_call>"


def gt(*calls: dict) -> str:
    return THINK + block(*calls)


def score(pred_calls: list, gt_calls: list, **kw) -> float:
    return correctness_reward(THINK + block(*pred_calls), gt(*gt_calls), -3.0, 3.0, **kw)


# --------------------------------------------------------------------------------------- gating


def test_response_only_ground_truth_gives_zero_t11():
    truth = "<think> t </think>\n<response> Which city? </response>"
    assert correctness_reward(THINK + block(call("f", a=1)), truth, -3.0, 3.0) == 0.0
    assert correctness_reward("garbage", truth, -3.0, 3.0) == 0.0
    assert correctness_reward("garbage", "<think> only </think>", -1.0, 1.0) == 0.0


@pytest.mark.parametrize(
    "pred",
    [
        THINK + '<tool_call>\n{"name": "f", "parameters": {"a": 1}}',  # T5: no </tool_call>
        THINK + '{"name": "f", "parameters": {"a": 1}}\n</tool_call>',  # no <tool_call>
        THINK + "<response> hi </response>",
        "",
    ],
)
def test_missing_tags_give_min(pred):
    assert correctness_reward(pred, gt(call("f", a=1)), -3.0, 3.0) == -3.0


# -------------------------------------------------------------------------------------- parsing


def test_pretty_printed_json_gives_min_t6():
    pretty = json.dumps(call("f", a=1), indent=2)
    assert correctness_reward(THINK + block(pretty), gt(call("f", a=1)), -3.0, 3.0) == -3.0


def test_blank_line_between_calls_gives_min_t28():
    pred = THINK + block(call("f", a=1), "", call("g", b=2))
    assert correctness_reward(pred, gt(call("f", a=1), call("g", b=2)), -3.0, 3.0) == -3.0


@pytest.mark.parametrize(
    "line",
    [
        '[{"name": "f", "parameters": {"a": 1}}]',  # a list line
        '{"parameters": {"a": 1}}',  # no name
        '"f"',
        "42",
        "null",
        '{"name": "f", "parameters": {"a": 1}',  # broken JSON
        "{'name': 'f', 'parameters': {'a': 1}}",  # Python repr, not JSON
        '{"name": ["f"], "parameters": {}}',  # unhashable name reaches the multiset count
    ],
)
def test_malformed_predicted_line_gives_min(line):
    assert correctness_reward(THINK + block(line), gt(call("f", a=1), call("g")), -3.0, 3.0) == -3.0


def test_arguments_instead_of_parameters_fails_only_for_a_matching_name():
    matching = {"name": "f", "arguments": {"a": 1}}
    assert correctness_reward(THINK + block(matching), gt(call("f", a=1)), -3.0, 3.0) == -3.0
    other = {"name": "zzz", "arguments": {"a": 1}}
    # never reaches pd["parameters"]: names Jaccard 0, no candidate -> (6 * 0 / 3) - 3
    assert correctness_reward(THINK + block(other), gt(call("f", a=1)), -3.0, 3.0) == -3.0
    both = THINK + block(call("f", a=1), other)
    # names Jaccard 1/2, f matched fully (1 + 1): (0.5 + 2) / 3 * 6 - 3 = 2.0
    assert correctness_reward(both, gt(call("f", a=1)), -3.0, 3.0) == pytest.approx(2.0)


def test_only_the_first_block_is_read():
    pred = THINK + block(call("f", a=1)) + "\n" + block(call("g", b=2))
    assert correctness_reward(pred, gt(call("f", a=1)), -3.0, 3.0) == 3.0
    truth = gt(call("f", a=1)) + "\n" + block(call("g", b=2))
    assert parse_ground_truth_calls(truth) == [call("f", a=1)]


def test_block_before_a_second_open_tag_ends_there():
    pred = THINK + '<tool_call>\n{"name": "f", "parameters": {"a": 1}}\n<tool_call>\n</tool_call>'
    assert correctness_reward(pred, gt(call("f", a=1)), -3.0, 3.0) == 3.0


def test_empty_block_gives_min():
    assert correctness_reward(THINK + "<tool_call>\n\n</tool_call>", gt(call("f")), -3.0, 3.0) == -3.0


PRED_ANY = THINK + block(call("f"))


def test_ground_truth_invalid_json_raises_value_error():
    with pytest.raises(ValueError, match="ground truth tool-call line 2"):
        correctness_reward(PRED_ANY, THINK + '<tool_call>\n{"name": "f", "parameters": {}}\n{oops\n</tool_call>', -3, 3)


def test_ground_truth_without_name_scores_min_like_toolrl():
    truth = THINK + block({"parameters": {}})
    assert correctness_reward(PRED_ANY, truth, -3.0, 3.0) == -3.0


# ------------------------------------------------------------------------------------- equality


def test_exact_match_gives_max():
    calls = [call("f", a=1, b="x"), call("g")]
    assert score(calls, calls) == 3.0


def test_python_equality_true_equals_1_and_1_equals_1_0():
    assert score([call("f", a=True)], [call("f", a=1)]) == 3.0
    assert score([call("f", a=1.0)], [call("f", a=1)]) == 3.0
    assert score([call("f", a=False)], [call("f", a=0)]) == 3.0


def test_string_1_is_not_int_1_t2():
    # names 1 + keys 1 + values 0 out of 1 + (1 + 1): 6 * 2/3 - 3 = 1.0
    assert score([call("set_volume", level="1")], [call("set_volume", level=1)]) == pytest.approx(1.0)


def test_dict_key_order_is_irrelevant_for_exact_equality():
    truth = [call("f", a=1, b=2)]
    reordered = [{"name": "f", "parameters": {"b": 2, "a": 1}}]
    assert score(reordered, truth) == 3.0
    assert score(reordered, truth, refined=True) == 3.0  # equal dicts short-circuit before refined matching


# -------------------------------------------------------------------------------------- partial


def test_reordered_calls_reach_max_t9():
    a, b = call("get_weather", city="Oslo", days=1), call("get_stock_quote", symbol="NVDA")
    assert score([b, a], [a, b]) == pytest.approx(3.0)


def test_duplicate_call_lowers_name_jaccard_t29():
    a = call("set_volume", level=1)
    # names 1/2, a matched (1 + 1): (0.5 + 2) / 3 -> 6 * 2.5 / 3 - 3 = 2.0
    assert score([a, a], [a]) == pytest.approx(2.0)


def test_wrong_name_scores_min():
    assert score([call("g", a=1)], [call("f", a=1)]) == -3.0


def test_partial_parameters():
    truth = [call("book_hotel", city="Rome", guests=2, breakfast=True)]
    pred = [call("book_hotel", city="Rome", guests=3)]
    # names 1; keys Jaccard 2/3 + 1 value; local max 1 + 4
    expected = 6 * (1 + 2 / 3 + 1) / 5 - 3
    assert score(pred, truth) == pytest.approx(expected)


def test_extra_parameter_lowers_key_jaccard():
    pred = [call("f", a=1, extra=0)]
    # names 1; keys 1/2 + value 1; local max 3 -> 6 * 2.5/3 - 3 = 2.0
    assert score(pred, [call("f", a=1)]) == pytest.approx(2.0)


def test_missing_call():
    a, b = call("f", a=1), call("g", b=2)
    # names 1/2; a matched 2; local max 1 + 2 + 2 -> 6 * 2.5 / 5 - 3 = 0.0
    assert score([a], [a, b]) == pytest.approx(0.0)


def test_greedy_ties_go_to_the_earliest_candidate():
    truth = [call("f", a=1, b=2), call("f", a=1, b=9)]
    # p0 scores 2 for gt0 (keys 1 + a); p1 scores 2 too (keys 1 + a): tie -> p0 taken by gt0.
    p0, p1 = call("f", a=1, b=9), call("f", a=1, b=7)
    # gt1 then only has p1 (keys 1 + a = 2), although p0 would have scored 3 for it.
    expected = 6 * (1 + 2 + 2) / (1 + 3 + 3) - 3
    assert score([p0, p1], truth) == pytest.approx(expected)


def test_greedy_picks_the_best_candidate_per_ground_truth_call():
    truth = [call("f", a=1), call("f", a=1, b=2)]
    pred = [call("f", a=1, b=2), call("f", a=1)]
    # gt0: p0 = keys 1/2 + 1 = 1.5, p1 = keys 1 + 1 = 2.0 -> p1; gt1: p0 = keys 1 + 2 = 3.0
    assert score(pred, truth) == pytest.approx(6 * (1 + 2 + 3) / (1 + 2 + 3) - 3)


def test_greedy_is_not_an_optimal_assignment():
    truth = [call("f", a=1), call("f", a=1, b=2)]
    pred = [call("f", a=1, b=2)]
    # gt0 grabs the only prediction (1.5) and gt1 is left empty, although gt1 would have scored 3.0
    assert score(pred, truth) == pytest.approx(6 * (0.5 + 1.5) / 6 - 3)


def test_candidate_needs_a_positive_total():
    truth = [call("f", a=1)]
    pred = [call("f", b=2)]  # keys Jaccard 0, no value: never chosen
    assert score(pred, truth) == pytest.approx(6 * 1 / 3 - 3)


def test_parameterless_call():
    truth = [call("get_time")]
    # name match 1, keys [] == [] -> 1, no values: 6 * 2 / 2 - 3 = 3 (also the exact path)
    assert score([call("get_time")], truth) == 3.0
    assert score([call("get_time"), call("get_time")], truth) == pytest.approx(6 * (0.5 + 1) / 2 - 3)


# --------------------------------------------------------------------------------------- variants


def test_refined_reordered_keys_lose_the_key_component_t17():
    truth = [call("f", a=1, b=2)]
    pred = [{"name": "f", "parameters": {"b": 2, "a": 3}}]
    # default: names 1 + keys 1 + value b -> 6 * 3 / 4 - 3 = 1.5; refined: keys 0 -> 6 * 2 / 4 - 3 = 0.0
    assert score(pred, truth) == pytest.approx(1.5)
    assert score(pred, truth, refined=True) == pytest.approx(0.0)


def test_refined_names_are_order_sensitive():
    a, b = call("f", a=1), call("g", b=2)
    assert score([b, a], [a, b], refined=True) == pytest.approx(6 * (0 + 2 + 2) / 5 - 3)
    assert score([a, a], [a], refined=True) == pytest.approx(6 * (0 + 2) / 3 - 3)


def test_intermediate_one_point_per_exact_call():
    a, b = call("f", a=1), call("g", b=2, c=3)
    wrong_b = call("g", b=2, c=4)
    # names 1; a exact -> 1; b not exact -> 0; local max 1 + 1 + 1
    assert score([a, wrong_b], [a, b], intermediate=True) == pytest.approx(6 * 2 / 3 - 3)
    assert score([wrong_b, a], [a, b], intermediate=True) == pytest.approx(6 * 2 / 3 - 3)
    assert score([b, a], [a, b], intermediate=True) == pytest.approx(3.0)


def test_intermediate_does_not_touch_parameters_of_other_calls():
    other = {"name": "f", "arguments": {"a": 1}}
    assert score([other], [call("f", a=1)], intermediate=True) == pytest.approx(6 * 1 / 2 - 3)


@pytest.mark.parametrize("truth_call", [{"name": "get_time"}, {"name": "get_time", "arguments": {"tz": "UTC"}}])
def test_intermediate_ground_truth_call_without_parameters_is_the_min(truth_call):
    # ToolRL reads the ground-truth call's "parameters" before looking at the variant: a KeyError -> min.
    pred = call("get_time")
    assert score([pred], [truth_call], intermediate=True) == -3.0
    assert score([pred], [truth_call]) == -3.0
    assert score([pred, pred], [call("get_time"), truth_call], intermediate=True) == -3.0  # the second call too


def test_intermediate_ground_truth_without_parameters_still_exact_matches():
    bare = {"name": "get_time"}
    assert score([bare], [bare], intermediate=True) == 3.0  # equal lists win before any key is read


def test_intermediate_parameters_of_any_type_are_only_read():
    odd = {"name": "get_time", "parameters": "now"}  # never used under intermediate, so no error
    assert score([call("get_time")], [odd], intermediate=True) == pytest.approx(6 * 1 / 2 - 3)
    assert score([call("get_time")], [odd]) == -3.0  # default: "now".keys() raises inside the scoring -> min


def test_coarse_is_all_or_nothing():
    a = call("f", a=1)
    assert score([a], [a], coarse=True) == 3.0
    assert score([call("f", a=2)], [a], coarse=True) == -3.0
    assert score([a, a], [a], coarse=True) == -3.0


def test_scaled_into_other_ranges():
    truth = THINK + block(call("set_volume", level=1))
    pred = THINK + block(call("set_volume", level="1"))
    assert correctness_reward(pred, truth, -1.0, 1.0) == pytest.approx(2 * 2 / 3 - 1)
    assert correctness_reward(pred, truth, 1.0, -1.0) == pytest.approx(-2 * 2 / 3 + 1)  # crossed schedule


# ----------------------------------------------------------------------------------- match_score


@pytest.mark.parametrize(
    "a,b,refined,expected",
    [
        (["f", "g"], ["f", "g"], False, 1.0),
        (["f", "g"], ["g", "f"], False, 1.0),
        (["f", "g"], ["g", "f"], True, 0.0),
        (["f"], [], False, 0.0),
        ([], [], False, 1.0),
        (["f", "f", "g"], ["f", "h"], False, 1 / 4),
        (["f"], ["f", "f"], False, 1 / 2),
    ],
)
def test_match_score(a, b, refined, expected):
    assert match_score(a, b, refined) == pytest.approx(expected)


def test_tool_call_reward_direct():
    assert tool_call_reward([call("f")], [call("f")], -3.0, 3.0) == 3.0


# ------------------------------------------------------------------------------------------- caps


def test_deep_json_is_rejected_without_parsing():
    deep = '{"name": "f", "parameters": {"a": ' + "[" * (MAX_JSON_DEPTH + 10) + "]" * (MAX_JSON_DEPTH + 10) + "}}"
    assert json_depth_exceeds(deep)
    assert correctness_reward(THINK + block(deep), gt(call("f", a=[])), -3.0, 3.0) == -3.0


def test_depth_scan_ignores_brackets_in_strings():
    text = json.dumps(call("f", a="[" * 500 + '\\"{' * 100))
    assert not json_depth_exceeds(text)
    nested = {"name": "f", "parameters": {"a": [[[[1]]]]}}
    assert score([nested], [nested]) == 3.0


def test_moderate_nesting_is_fine():
    value: list = []
    for _ in range(MAX_JSON_DEPTH - 3):
        value = [value]
    truth = [call("f", a=value)]
    assert not json_depth_exceeds(json.dumps(truth[0]))
    assert score(truth, truth) == 3.0


def test_huge_integer_is_a_parse_failure():
    line = '{"name": "f", "parameters": {"a": ' + "9" * 5000 + "}}"
    assert correctness_reward(THINK + block(line), gt(call("f", a=1)), -3.0, 3.0) == -3.0
