"""What a reward returns, normalised: :class:`ScoreResult` (the score and its named components).

A reward may return

* a number (``int``/``float``/``bool``): the score (plain functions also report it as ``acc``);
* a dict with ``score`` (or ``reward``): the score, every other key a component;
* a tuple ``(score, format, correctness, length)`` as ToolRL's ``compute_score`` returns.

Anything else, a non-finite score, or one beyond :data:`~verl_rewards.coerce.MAX_MAGNITUDE` (``2**108``: verl
stores rewards as float32 and sums a group of them in float32) raises :class:`ScoreResultError`; the engine turns
it into the fallback score with ``reward_error=1``. Components are only normalised here (numpy scalars to Python
numbers, long text cut); :class:`~verl_rewards.scoring.extras.ExtraKeys` drops and flags the ones that are not
finite numbers in range when they leave the manager.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..coerce import read_float

__all__ = ["ScoreResult", "ScoreResultError", "normalise_result", "sanitize_extra"]

TUPLE_KEYS = ("format", "correctness", "length")
#: the component a plain-number result is also reported under (as verl's naive manager does)
NUMBER_KEY = "acc"
_MAX_TEXT_EXTRA = 512
#: components a dict result may carry; more is an invalid score (bounds the work on a result after the call)
MAX_COMPONENTS = 1024


class ScoreResultError(ValueError):
    """The scoring function returned something that is not a score."""


@dataclass
class ScoreResult:
    """A normalised score: the number and the named components that become ``reward_extra_info``."""

    score: float
    components: dict[str, Any] = field(default_factory=dict)


def _finite(value: Any) -> float:
    out = read_float(value)
    if out is None:
        raise ScoreResultError(
            f"score must be a finite number within +-2**108 (verl sums a group's rewards in float32), "
            f"got {type(value).__name__}: {value!r:.80}"
        )
    return out


def sanitize_extra(value: Any) -> Any:
    """Make a component storable in a numpy array row: scalars stay (numpy ones become Python numbers), everything
    else becomes short text. Whether a number is finite and in range is checked when it leaves the manager."""
    if value is None or isinstance(value, bool | int | float | str):
        if isinstance(value, str) and len(value) > _MAX_TEXT_EXTRA:
            return value[:_MAX_TEXT_EXTRA]
        return value
    if hasattr(value, "item") and callable(value.item):
        try:
            return sanitize_extra(value.item())
        except (ValueError, TypeError):
            pass
    return str(value)[:_MAX_TEXT_EXTRA]


def normalise_result(result: Any, number_key: str | None = NUMBER_KEY) -> ScoreResult:
    """Turn whatever a scoring function returned into a :class:`ScoreResult` (or raise ScoreResultError).

    A plain number is also reported under ``number_key`` (``acc``, as verl's naive manager does), unless None.
    """
    if isinstance(result, Mapping):
        if len(result) > MAX_COMPONENTS + 1:
            raise ScoreResultError(f"a dict result has {len(result)} keys; at most {MAX_COMPONENTS} components")
        if "score" in result:
            key = "score"
        elif "reward" in result:
            key = "reward"
        else:
            raise ScoreResultError(f"a dict result must contain 'score' or 'reward'; got keys {sorted(result)[:20]}")
        score = _finite(result[key])
        components = {str(k): sanitize_extra(v) for k, v in result.items() if k not in ("score", "reward")}
        return ScoreResult(score, components)
    if isinstance(result, tuple | list):
        if not result:
            raise ScoreResultError("an empty tuple is not a score")
        score = _finite(result[0])
        components = {k: sanitize_extra(v) for k, v in zip(TUPLE_KEYS, result[1:], strict=False)}
        return ScoreResult(score, components)
    if result is None or isinstance(result, str):
        raise ScoreResultError(f"a reward must return a number or a dict, got {type(result).__name__}")
    score = _finite(result)
    return ScoreResult(score, {number_key: score} if number_key else {})
