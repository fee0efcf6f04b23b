"""Built-in rewards, registered when this module is imported: ``qa_f1``, ``qa_em`` and ``length_penalty``.

QA answer matching follows the usual SQuAD-style recipe: both texts are normalised (Unicode NFC, lower-case,
punctuation deleted, the articles "a", "an", "the" dropped as whole words, whitespace collapsed), then compared
as whole strings (exact match) or as bags of whitespace tokens (F1 over the multiset overlap). With several
acceptable answers the best one counts.

Edge cases, by definition here: if the normalised prediction and the normalised answer are both empty (e.g. an
answer made only of punctuation or articles) they match, with EM = F1 = precision = recall = 1.0; if only one
of them is empty, everything is 0.0.
"""

from __future__ import annotations

import math
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..coerce import parse_bool
from .decorators import reward

__all__ = [
    "MAX_TEXT_CHARS",
    "normalize_answer",
    "qa_scores",
    "qa_f1",
    "qa_em",
    "length_penalty",
]

MAX_TEXT_CHARS = 32 * 1024  # prediction and answers are cut to this many characters before matching
QA_EXTRA_KEYS = ("f1", "em", "precision", "recall")
_ARTICLES = frozenset({"a", "an", "the"})
_ASCII_PUNCT = frozenset(string.punctuation)


def _is_punct(ch: str) -> bool:
    """ASCII punctuation (which includes symbols such as ``$`` and ``+``) or any Unicode punctuation."""
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def _tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFC", text[:MAX_TEXT_CHARS]).lower()
    text = "".join(ch for ch in text if not _is_punct(ch))
    return [tok for tok in text.split() if tok not in _ARTICLES]


def normalize_answer(text: str) -> str:
    """Normalised form of an answer: lower-case, no punctuation, no articles, single spaces."""
    return " ".join(_tokens(_as_text(text)))


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value if isinstance(value, str) else str(value)


def _answers(ground_truth: Any) -> list[str]:
    """The acceptable answers: one string, or a list / tuple / array of them (an empty list means one "")."""
    if ground_truth is None:
        raise ValueError("qa reward: ground_truth is None; give an answer string or a list of answers")
    if hasattr(ground_truth, "tolist") and not isinstance(ground_truth, (str, bytes)):
        ground_truth = ground_truth.tolist()  # numpy arrays (list columns read from parquet), numpy scalars
    if isinstance(ground_truth, (str, bytes, int, float)):
        return [_as_text(ground_truth)]
    if isinstance(ground_truth, dict) or not isinstance(ground_truth, Iterable):
        raise TypeError(
            f"qa reward: ground_truth must be a string or a list of strings, got {type(ground_truth).__name__}"
        )
    answers = [_as_text(a) for a in ground_truth]
    return answers or [""]


def _match(pred: list[str], truth: list[str]) -> tuple[float, float, float, float]:
    """(f1, em, precision, recall) of one normalised prediction against one normalised answer."""
    if not pred or not truth:
        both_empty = float(not pred and not truth)
        return both_empty, both_empty, both_empty, both_empty
    em = float(pred == truth)
    overlap = sum((Counter(pred) & Counter(truth)).values())
    if overlap == 0:
        return 0.0, em, 0.0, 0.0
    precision = overlap / len(pred)
    recall = overlap / len(truth)
    return 2 * precision * recall / (precision + recall), em, precision, recall


def qa_scores(final_response: str, ground_truth: Any) -> dict[str, float]:
    """F1, EM, precision and recall of a response against the best of the acceptable answers.

    ``f1`` and ``em`` are each the maximum over answers; ``precision`` and ``recall`` are those of the answer
    with the best F1 (ties: the one with exact match, then the first).
    """
    pred = _tokens(_as_text(final_response))
    best: tuple[float, float, float, float] | None = None
    best_em = 0.0
    for answer in _answers(ground_truth):
        scores = _match(pred, _tokens(answer))
        best_em = max(best_em, scores[1])
        if best is None or scores[:2] > best[:2]:
            best = scores
    assert best is not None
    f1, _, precision, recall = best
    return {"f1": f1, "em": best_em, "precision": precision, "recall": recall}


@reward(name="qa_f1", extra_keys=QA_EXTRA_KEYS)
def qa_f1(final_response: str, ground_truth: Any) -> dict[str, float]:
    """Token-level F1 of the response against the answer(s) (SQuAD-style normalisation); extras: em, P, R."""
    scores = qa_scores(final_response, ground_truth)
    return {"reward": scores["f1"], **scores}


@reward(name="qa_em", extra_keys=QA_EXTRA_KEYS)
def qa_em(final_response: str, ground_truth: Any) -> dict[str, float]:
    """1.0 if the normalised response equals a normalised answer, else 0.0; extras: f1, P, R."""
    scores = qa_scores(final_response, ground_truth)
    return {"reward": scores["em"], **scores}


def _parse_flag(value: Any) -> bool:
    """A boolean from config or data (:func:`verl_rewards.coerce.parse_bool`); a missing value (None, empty
    text) is false."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return False
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and value in (0.0, 1.0):
        value = int(value)
    try:
        return parse_bool(value)
    except ValueError:
        raise ValueError(f"length_penalty: expected a boolean (true/false/1/0/yes/no/on/off), got {value!r}") from None


def _parse_max_length(value: Any) -> int | None:
    """A non-negative integer limit from config or data (``"512"``, ``512.0``); ``None``/NaN mean no limit."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and math.isnan(value):  # a missing value in a parquet int column
        return None
    number: float | int
    if isinstance(value, bool):
        raise ValueError(f"length_penalty: max_length must be a non-negative integer, got {value!r}")
    if isinstance(value, (int, float)):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.strip()) if any(c in value for c in ".eE") else int(value.strip())
        except ValueError:
            raise ValueError(f"length_penalty: max_length must be a non-negative integer, got {value!r}") from None
    else:
        raise ValueError(
            f"length_penalty: max_length must be a non-negative integer, got {type(value).__name__} {value!r}"
        )
    if isinstance(number, float) and not (math.isfinite(number) and number.is_integer()):
        raise ValueError(f"length_penalty: max_length must be a non-negative integer, got {value!r}")
    if number < 0:
        raise ValueError(f"length_penalty: max_length must be >= 0, got {value!r}")
    return int(number)


@reward(name="length_penalty", extra_keys=("length", "over_length"))
def length_penalty(final_response: str, length_penalty: bool = False, max_length: int | None = None) -> dict:
    """0.0 when the penalty is on and the response is longer than ``max_length`` characters, else 1.0.

    ``over_length`` reports whether the response exceeds ``max_length`` even when the penalty is off (a
    monitoring metric); ``max_length`` may be given as a number string (parquet columns).
    """
    text = _as_text(final_response)
    limit = _parse_max_length(max_length)
    over = limit is not None and len(text) > limit
    penalised = _parse_flag(length_penalty) and over
    return {"reward": 0.0 if penalised else 1.0, "length": len(text), "over_length": int(over)}
