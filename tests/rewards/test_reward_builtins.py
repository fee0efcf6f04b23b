"""Built-in rewards: qa_f1 / qa_em (SQuAD-style answer matching) and length_penalty, with hand-checked values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verl_rewards.rewards.decorators import get_reward
from verl_rewards.rewards.text import (
    MAX_TEXT_CHARS,
    length_penalty,
    normalize_answer,
    qa_em,
    qa_f1,
    qa_scores,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The Cat", "cat"),
        ("  a   quick,  brown fox! ", "quick brown fox"),
        ("An apple a day", "apple day"),
        ("A", ""),  # an article, once lower-cased
        ("the the THE", ""),
        ("theatre another", "theatre another"),  # articles only as whole words
        ("Hello, World!!!", "hello world"),
        ("rock-n-roll", "rocknroll"),  # punctuation is deleted, not turned into a space
        ("$100 + 5%", "100 5"),  # ASCII symbols count as punctuation, as in SQuAD
        ("«Bonjour», dit-il…", "bonjour ditil"),  # Unicode punctuation too
        ("東京。", "東京"),
        ("CAFÉ", "café"),
        ("Cafe\u0301", "café"),  # decomposed accent: NFC makes it the same string
        ("tab\tand\nnewline", "tab and newline"),
        ("", ""),
    ],
)
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


# (prediction, ground truth, f1, em, precision, recall); token counts are after normalisation
QA_CASES = [
    # both normalise to "cat sat on mat"
    ("the cat sat on the mat", "a cat sat on a mat", 1.0, 1.0, 1.0, 1.0),
    # pred [paris is capital of france] (5) vs [paris] (1): overlap 1, P=1/5, R=1, F1=2*(1/5)/(6/5)=1/3
    ("Paris is the capital of France.", "Paris", 1 / 3, 0.0, 0.2, 1.0),
    # [new york city] vs [new york]: overlap 2, P=2/3, R=1, F1=2*(2/3)/(5/3)=4/5
    ("New York City", "new york", 0.8, 0.0, 2 / 3, 1.0),
    # multiset overlap: min(3, 1) = 1 "yes": P=1/3, R=1/2, F1=2*(1/6)/(5/6)=2/5
    ("yes yes yes", "yes no", 0.4, 0.0, 1 / 3, 0.5),
    # min(2, 3) = 2 "green": P=2/2=1, R=2/3, F1=0.8
    ("green green", "green green green", 0.8, 0.0, 1.0, 2 / 3),
    # same tokens, other order: F1 1, but not an exact match
    ("France Paris", "Paris, France", 1.0, 0.0, 1.0, 1.0),
    ("London", "Paris", 0.0, 0.0, 0.0, 0.0),
    # unicode: case and punctuation differ only
    ("São Paulo!", "são paulo", 1.0, 1.0, 1.0, 1.0),
    # accents are kept: "zürich" != "zurich"
    ("Zürich", "Zurich", 0.0, 0.0, 0.0, 0.0),
    # [in 1984] vs [1984] (a number as ground truth): P=1/2, R=1, F1=2*(1/2)/(3/2)=2/3
    ("In 1984.", 1984, 2 / 3, 0.0, 0.5, 1.0),
    # empty vs empty (also after normalisation) is a match; one side empty scores 0
    ("", "", 1.0, 1.0, 1.0, 1.0),
    ("The!", "a", 1.0, 1.0, 1.0, 1.0),
    ("", "Paris", 0.0, 0.0, 0.0, 0.0),
    ("Paris", "!!!", 0.0, 0.0, 0.0, 0.0),
    ("anything", [], 0.0, 0.0, 0.0, 0.0),  # no answers: like a single empty answer
    # several answers: pred [eiffel tower in paris] (4);
    #   "Louvre" -> 0;  "Eiffel Tower" -> overlap 2, P=2/4, R=2/2, F1=2*(1/2)/(3/2)=2/3;
    #   "Paris France" -> overlap 1, P=1/4, R=1/2, F1=2*(1/8)/(3/4)=1/3.  Best: 2/3 with P=1/2, R=1.
    ("the Eiffel tower in Paris", ["Louvre", "Eiffel Tower", "Paris France"], 2 / 3, 0.0, 0.5, 1.0),
    ("Paris", ["paris france", "Paris."], 1.0, 1.0, 1.0, 1.0),
    # tie on F1 = 1: the exact match wins
    ("paris france", ("france paris", "Paris France"), 1.0, 1.0, 1.0, 1.0),
    # numpy array of answers (a list column read from parquet): [one two] vs [two three]: overlap 1, P=R=1/2
    ("one two", np.array(["two three", "four"]), 0.5, 0.0, 0.5, 0.5),
]


@pytest.mark.parametrize("pred, truth, f1, em, precision, recall", QA_CASES)
def test_qa_f1_and_em_values(pred, truth, f1, em, precision, recall):
    expected = {"f1": f1, "em": em, "precision": precision, "recall": recall}
    out_f1 = qa_f1(final_response=pred, ground_truth=truth)
    out_em = qa_em(final_response=pred, ground_truth=truth)
    assert out_f1 == pytest.approx({"reward": f1, **expected})
    assert out_em == pytest.approx({"reward": em, **expected})
    assert set(out_f1) == {"reward", "f1", "em", "precision", "recall"}


def test_em_is_max_over_answers_even_when_another_answer_has_the_same_f1():
    scores = qa_scores("a b", ["b a", "c", "A B!"])
    assert scores == {"f1": 1.0, "em": 1.0, "precision": 1.0, "recall": 1.0}


def test_registered_with_extra_keys():
    for name in ("qa_f1", "qa_em"):
        spec = get_reward(name)
        assert spec.extra_keys == ("f1", "em", "precision", "recall")
        assert spec.required == ("final_response", "ground_truth")
        assert not spec.is_async
    spec = get_reward("length_penalty")
    assert spec.extra_keys == ("length", "over_length")
    assert spec.required == ("final_response",)


def test_inputs_are_truncated():
    long_pred = "x " * 40_000  # 80,000 chars; the first 32,768 hold 16,384 "x" tokens
    scores = qa_scores(long_pred, "x")
    assert scores["precision"] == pytest.approx(1 / (MAX_TEXT_CHARS // 2))
    assert scores["recall"] == 1.0
    assert qa_scores("x", "y " * 40_000 + "x")["recall"] == 0.0  # the "x" beyond the cut is not seen


def test_bad_ground_truth():
    with pytest.raises(ValueError, match="ground_truth is None"):
        qa_f1(final_response="x", ground_truth=None)
    with pytest.raises(TypeError, match="ground_truth must be a string or a list"):
        qa_f1(final_response="x", ground_truth={"target": "x"})


@pytest.mark.parametrize(
    "text, penalty, max_length, reward, length, over",
    [
        ("abc", False, 2, 1.0, 3, 1),  # penalty off: reward 1, but over_length is still reported
        ("abc", True, 2, 0.0, 3, 1),
        ("abc", True, 3, 1.0, 3, 0),  # at the limit is fine
        ("abc", True, None, 1.0, 3, 0),
        ("abc", True, "2", 0.0, 3, 1),  # max_length as a string from parquet
        ("abc", "true", " 2.0 ", 0.0, 3, 1),
        ("abc", "False", 2, 1.0, 3, 1),  # the string "False" is false
        ("abc", 1, np.int64(2), 0.0, 3, 1),
        ("abc", np.bool_(True), 2.0, 0.0, 3, 1),
        ("abc", True, math.nan, 1.0, 3, 0),  # NaN: a missing value, no limit
        ("", True, 0, 1.0, 0, 0),
        ("héllo", True, 4, 0.0, 5, 1),  # characters, not bytes
    ],
)
def test_length_penalty(text, penalty, max_length, reward, length, over):
    out = length_penalty(final_response=text, length_penalty=penalty, max_length=max_length)
    assert out == {"reward": reward, "length": length, "over_length": over}


def test_length_penalty_defaults_off():
    assert length_penalty(final_response="x" * 10_000) == {"reward": 1.0, "length": 10_000, "over_length": 0}


@pytest.mark.parametrize("bad", ["abc", "", "-1", -1, 2.5, "2.5", "inf", math.inf, True, [3]])
def test_length_penalty_invalid_max_length(bad):
    with pytest.raises(ValueError, match="max_length must be"):
        length_penalty(final_response="abc", length_penalty=True, max_length=bad)


def test_length_penalty_invalid_flag():
    with pytest.raises(ValueError, match="expected a boolean"):
        length_penalty(final_response="abc", length_penalty="maybe", max_length=2)
