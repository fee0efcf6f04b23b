"""Reading the step dicts a rollout leaves in a batch (``prev_step_dict`` / ``cur_step_dict``) and the training step.

A step dict is a dict, a list of per-turn dicts, or the JSON text of either. Both the scoring contract (which puts
them on a :class:`~verl_rewards.scoring.sample.Sample`) and the contribution terms (which compare them) read them
with these functions, so this module sits below both and imports nothing of the package.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

#: the longest step-dict text that is parsed (a longer one is malformed)
MAX_STEP_DICT_CHARS = 1_000_000
#: the largest training step (exact in a float); a larger one is read as this one
MAX_STEP = 2**53


def read_step_dict(value: Any) -> tuple[dict[str, Any] | list[dict[str, Any]], bool]:
    """Normalise a step dict found in a batch: a dict, a list of dicts, or their JSON text.

    Returns ``(step_dict, malformed)``. Anything unusable (unparsable, oversized or too deeply nested text, a
    value of another type, non-dict turns) becomes ``{}`` or ``{}`` turns, which mean "use the defaults", and
    sets ``malformed`` so the sample can be flagged. ``None``, NaN and empty text are simply absent.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return {}, False
    if isinstance(value, str):
        if not value.strip():
            return {}, False
        if len(value) > MAX_STEP_DICT_CHARS:
            return {}, True
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {}, True
    if hasattr(value, "tolist") and not isinstance(value, Mapping):
        value = value.tolist()
    if isinstance(value, Mapping):
        return dict(value), False
    if isinstance(value, list | tuple):
        turns = [dict(v) if isinstance(v, Mapping) else {} for v in value]
        return turns, not all(isinstance(v, Mapping) for v in value)
    return {}, True


def parse_step_dict(value: Any) -> dict[str, Any] | list[dict[str, Any]]:
    """:func:`read_step_dict` without the malformed flag."""
    return read_step_dict(value)[0]


def step_pairs(prev: Any, cur: Any) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """The (before, after) steps a contribution term compares: one pair per turn when both sides are lists of
    equal length, else the first "before" with the last "after"."""
    prev, cur = _normalised(prev), _normalised(cur)
    if isinstance(prev, list) and isinstance(cur, list):
        if len(prev) == len(cur):
            return list(zip(prev, cur, strict=True))
        return [(prev[0] if prev else {}, cur[-1] if cur else {})]
    if isinstance(prev, list):
        prev = prev[0] if prev else {}
    if isinstance(cur, list):
        cur = cur[-1] if cur else {}
    return [(prev, cur)]


def _normalised(value: Any) -> dict[str, Any] | list[dict[str, Any]]:
    """``value`` itself when it is already what :func:`read_step_dict` returns (a dict, or a list of dicts: a
    :class:`~verl_rewards.scoring.sample.Sample`'s step dicts, only read here), else its reading."""
    if type(value) is dict:
        return value
    if type(value) is list and all(type(v) is dict for v in value):
        return value
    return parse_step_dict(value)
