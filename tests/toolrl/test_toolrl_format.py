"""R_format: the four ground-truth cases, separators, tag counts (ToolRL's verl/utils/reward_score/rlla.py)."""

from __future__ import annotations

import pytest

from verl_rewards.toolrl.format_reward import format_passes, format_reward

CALL = '{"name": "get_stock_quote", "parameters": {"symbol": "NVDA"}}'
GT_CALL = f"<think> Quote. </think>\n<tool_call>\n{CALL}\n</tool_call>"
GT_RESPONSE = "<think> Ask. </think>\n<response> Which city? </response>"
GT_BOTH = f"<think> Both. </think>\n<tool_call>\n{CALL}\n</tool_call>\n<response> On it. </response>"
GT_NEITHER = "<think> Nothing to do. </think>"

PRED_CALL = f"<think> NVDA is Nvidia. </think>\n<tool_call>\n{CALL}\n</tool_call>"
PRED_RESPONSE = "<think> Missing the city. </think>\n<response> Which city do you mean? </response>"
PRED_BOTH = f"<think> x </think>\n<tool_call>\n{CALL}\n</tool_call>\n<response> Fetching it. </response>"
PRED_THINK = "<think> just thinking </think>"


@pytest.mark.parametrize(
    "gt,pred,passes",
    [
        (GT_CALL, PRED_CALL, True),
        (GT_CALL, PRED_RESPONSE, False),
        (GT_CALL, PRED_BOTH, False),
        (GT_RESPONSE, PRED_RESPONSE, True),
        (GT_RESPONSE, PRED_CALL, False),  # checklist 1: a tool call against a response-only GT
        (GT_BOTH, PRED_BOTH, True),
        (GT_BOTH, PRED_CALL, False),
        (GT_BOTH, PRED_RESPONSE, False),
        (GT_NEITHER, PRED_THINK, True),
        (GT_NEITHER, PRED_CALL, False),
    ],
)
def test_case_is_chosen_by_ground_truth(gt, pred, passes):
    assert format_passes(pred, gt) is passes


def test_reward_is_max_or_min():
    assert format_reward(PRED_CALL, GT_CALL, -2.0, 2.0) == 2.0
    assert format_reward(PRED_RESPONSE, GT_CALL, -2.0, 2.0) == -2.0
    assert isinstance(format_reward(PRED_CALL, GT_CALL, 0, 1), float)


@pytest.mark.parametrize(
    "pred",
    [
        f"<think> x </think> <tool_call>\n{CALL}\n</tool_call>",  # T7: space instead of \n
        f"<think> x </think><tool_call>\n{CALL}\n</tool_call>",
        f"<think> x </think>\n<tool_call>{CALL}\n</tool_call>",
        f"<think> x </think>\n<tool_call>\n{CALL}</tool_call>",
        f"<think> x </think>\r\n<tool_call>\n{CALL}\n</tool_call>",
        f"<think> x </think>\n\n<tool_call>\n{CALL}\n</tool_call>",
        f"x <think> x </think>\n<tool_call>\n{CALL}\n</tool_call>",  # must start with <think>
        f"<think> x </think>\n<tool_call>\n{CALL}\n</tool_call> done",  # must end with </tool_call>
        f"<tool_call>\n{CALL}\n</tool_call>",  # no think
    ],
)
def test_separators_and_anchors_are_exact(pred):
    assert not format_passes(pred, GT_CALL)


def test_two_think_blocks_pass_t25():
    pred = f"<think> a </think>\n<think> b </think>\n<tool_call>\n{CALL}\n</tool_call>"
    assert format_passes(pred, GT_CALL)


def test_multiline_content_passes_format():
    pred = f"<think> line one\nline two </think>\n<tool_call>\n{CALL}\n{CALL}\n</tool_call>"
    assert format_passes(pred, GT_CALL)


@pytest.mark.parametrize(
    "gt,pred",
    [
        (GT_CALL, f"<think> x </think>\n<tool_call>\n{CALL}\n</tool_call>\n<tool_call>\n{CALL}\n</tool_call>"),
        (GT_CALL, f"<think> x <tool_call> </think>\n<tool_call>\n{CALL}\n</tool_call>"),
        (GT_RESPONSE, "<think> x </think>\n<response> a </response>\n<response> b </response>"),
        (GT_RESPONSE, "<think> x </think>\n<response> a </response></response>"),
        (GT_BOTH, f"<think> x </think>\n<tool_call>\n{CALL}\n</tool_call>\n<response> <response> </response>"),
    ],
)
def test_each_tag_counted_once(gt, pred):
    assert not format_passes(pred, gt)


def test_response_only_does_not_forbid_tool_call_inside_response():
    pred = f"<think> x </think>\n<response> <tool_call>\n{CALL}\n</tool_call> </response>"
    assert format_passes(pred, GT_RESPONSE)


def test_think_only_case_accepts_anything_between_first_think_and_last_close():
    assert format_passes("<think> a </think> <response> b </response> </think>", GT_NEITHER)
    assert not format_passes("<think> a </think> tail", GT_NEITHER)


def test_trailing_newline_is_allowed_by_dollar():
    # `$` matches before one final "\n"; real predictions are stripped before this point anyway.
    assert format_passes(PRED_CALL + "\n", GT_CALL)
    assert not format_passes(PRED_CALL + "\n\n", GT_CALL)
