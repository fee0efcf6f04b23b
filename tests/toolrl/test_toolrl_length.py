"""R_length: last think block, rounding, cap, and the uncapped length schedule (ToolRL: rlla.py)."""

from __future__ import annotations

import pytest

from verl_rewards.toolrl import ENV_VARS, ToolRLOptions, compute_score, length_target
from verl_rewards.toolrl.length import length_reward, think_word_count

GT = '<think> t </think>\n<tool_call>\n{"name": "f", "parameters": {}}\n</tool_call>'


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in [*ENV_VARS.values(), "EXPERIMENT_NAME"]:
        monkeypatch.delenv(var, raising=False)


def think(words: int) -> str:
    return "<think> " + " ".join(["w"] * words) + " </think>"


@pytest.mark.parametrize("pred", ["no tags", "<think> only open", "only close </think>", ""])
def test_missing_tag_gives_min(pred):
    assert length_reward(pred, 512) == 0.0
    assert length_reward(pred, 512, lo=-0.5, hi=1.0) == -0.5


def test_word_count_uses_last_think_block():
    pred = think(300) + "\n" + think(10) + "\n<response> x </response>"
    assert think_word_count(pred) == 10


def test_word_count_whitespace_split_includes_newlines_and_unicode_spaces():
    assert think_word_count("<think>a\nb\tc\u3000d  e</think>") == 5


def test_last_open_tag_without_close_after_it_runs_to_end():
    # ToolRL: split("<think>")[-1].split("</think>")[0]
    assert think_word_count("<think> a </think> <think> b c d") == 3


@pytest.mark.parametrize(
    "words,target,expected",
    [
        (0, 512, 0.0),
        (256, 512, 0.5),
        (512, 512, 1.0),
        (2000, 512, 1.0),  # capped
        (3, 512, 0.01),  # round(0.00586, 2)
        (2, 512, 0.0),  # round(0.0039, 2)
        (100, 384, 0.26),
        (1, 200, 0.01),  # Python's round() of the float 0.005
        (5, 8, 0.62),  # round(0.625, 2): ties to even
    ],
)
def test_ratio_rounded_to_two_places(words, target, expected):
    assert length_reward(think(words), target) == pytest.approx(expected)


@pytest.mark.parametrize("step", [0, 29, 30, 75, 150, 300])
def test_length_in_compute_score_with_schedule(step):
    pred = think(400) + '\n<tool_call>\n{"name": "f", "parameters": {}}\n</tool_call>'
    fixed = compute_score(pred, GT, step, with_length=True)
    scheduled = compute_score(pred, GT, step, with_length=True, schedule_length=True)
    assert fixed["length"] == pytest.approx(round(400 / 512, 2))
    target = 256 * step / 105 + 384
    assert target == length_target(ToolRLOptions(schedule_length=True), step)
    assert scheduled["length"] == pytest.approx(min(round(400 / target, 2), 1.0))
    assert scheduled["score"] == pytest.approx(1.0 + 3.0 + scheduled["length"])


SCHEDULED_400_WORDS = {0: 1.0, 29: 0.88, 30: 0.88, 75: 0.71, 150: 0.53, 300: 0.36}


@pytest.mark.parametrize("step", sorted(SCHEDULED_400_WORDS))
def test_scheduled_length_numbers(step):
    pred = think(400) + '\n<tool_call>\n{"name": "f", "parameters": {}}\n</tool_call>'
    assert compute_score(pred, GT, step, with_length=True, schedule_length=True)["length"] == pytest.approx(
        SCHEDULED_400_WORDS[step]
    )


def test_schedule_length_does_nothing_without_with_length():
    pred = think(400) + '\n<tool_call>\n{"name": "f", "parameters": {}}\n</tool_call>'
    assert compute_score(pred, GT, 0, schedule_length=True)["length"] == 0.0


def test_length_is_independent_of_format_and_correctness():
    pred = think(512) + " garbage"
    result = compute_score(pred, GT, with_length=True)
    assert result == {"score": 0.0 - 3.0 + 1.0, "format": 0.0, "correctness": -3.0, "length": 1.0}
