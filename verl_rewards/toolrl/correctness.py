"""R_correctness: how well the predicted tool calls match the ground truth's.

Rules (ToolRL's, including the quirks that shape its scores):

- A ground truth without ``<tool_call>`` scores 0.0, whatever the prediction holds.
- Only the first ``<tool_call>`` block of each side is read: the text after the first ``<tool_call>`` (up to
  a second one, if any), cut at the first ``</tool_call>``, stripped, split on ``"\\n"``; each line must be
  one JSON object ``{"name": ..., "parameters": {...}}``. Pretty-printed JSON, blank lines, a list line, a
  missing ``"name"`` -- any parse or scoring error gives the **min**. So does a prediction lacking
  ``<tool_call>`` or ``</tool_call>``.
- Exact equality of the parsed lists (Python ``==``: ``True == 1``, ``1 == 1.0``, ``"1" != 1``) gives the max.
  Otherwise ``coarse_reward`` gives the min; else the score is the name match plus, per ground-truth call
  in order, the best *unused* predicted call with the same name (greedy; strictly largest total > 0; ties
  to the earliest): key match + number of equal parameter values. It is scaled to
  ``(max - min) * score / local_max + min``.

The ground truth is trusted data: a ground-truth line that is not valid JSON raises ``ValueError`` (ToolRL
raised ``json.JSONDecodeError``, a ``ValueError``), while a structurally odd ground truth (say, no
``"name"``) fails inside the scoring and gives the min, as in ToolRL. That includes a ground-truth call
without a ``"parameters"`` key (missing, or Qwen's native ``"arguments"`` instead) whenever the lists are not
exactly equal: ToolRL reads each ground-truth call's ``"parameters"`` before it looks at the variant, so even
with ``intermediate`` (which never uses them) such a call gives the min rather than credit for its name.

Caps on the untrusted side (besides the 64 KiB prediction cap): a predicted JSON line nested deeper than
:data:`MAX_JSON_DEPTH` is treated as unparsable (min) without calling ``json.loads``; integers longer than
Python's ``int`` digit limit (4300) fail to parse the same way.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Hashable
from typing import Any

#: Deepest nesting of arrays/objects accepted in one predicted tool-call line. A real call is 2-4 deep.
MAX_JSON_DEPTH = 64

_STRUCTURE_TOKENS = re.compile(r'["\\\[\]{}]')


class _ParseError(ValueError):
    """A predicted tool-call block that cannot be parsed (scored as the min)."""


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when the brackets of ``text`` (outside JSON strings) nest deeper than ``limit``. Linear time."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    in_string = False
    escaped = False
    last = -2
    for match in _STRUCTURE_TOKENS.finditer(text):
        char = match.group()
        pos = match.start()
        if in_string:
            if escaped and pos == last + 1:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            last = pos
            continue
        if char == '"':
            in_string = True
            escaped = False
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
        last = pos
    return False


def tool_call_lines(text: str) -> list[str]:
    """ToolRL's ``text.split("<tool_call>")[1].split("</tool_call>")[0].strip().split("\\n")``."""
    return text.split("<tool_call>", 2)[1].split("</tool_call>", 1)[0].strip().split("\n")


def parse_ground_truth_calls(ground_truth: str) -> list[Any]:
    """The parsed JSON lines of the ground truth's first tool-call block (``ValueError`` if one is not JSON)."""
    calls = []
    for number, line in enumerate(tool_call_lines(ground_truth), start=1):
        try:
            calls.append(json.loads(line))
        except ValueError as exc:
            raise ValueError(f"ToolRL ground truth tool-call line {number} is not valid JSON: {exc}") from None
    return calls


def parse_predicted_calls(prediction: str) -> list[Any]:
    """The parsed JSON lines of the prediction's first tool-call block; raises ``_ParseError`` on any failure."""
    if "<tool_call>" not in prediction or "</tool_call>" not in prediction:
        raise _ParseError("missing <tool_call> or </tool_call>")
    calls = []
    for line in tool_call_lines(prediction):
        if json_depth_exceeds(line):
            raise _ParseError(f"tool-call JSON nested deeper than {MAX_JSON_DEPTH}")
        try:
            calls.append(json.loads(line))
        except (ValueError, RecursionError) as exc:
            raise _ParseError(str(exc)) from None
    return calls


def match_score(expected: list[Any], actual: list[Any], refined: bool = False) -> float:
    """1.0 for equal lists; under ``refined`` 0.0 otherwise; else the multiset Jaccard index (0.0 if one is empty).

    Items must be hashable for the Jaccard path (an unhashable predicted name raises ``TypeError``, which the
    caller scores as the min, as ToolRL's ``Counter`` did).
    """
    if expected == actual:
        return 1.0
    if refined:
        return 0.0
    if not expected or not actual:
        return 0.0
    count_expected: Counter[Hashable] = Counter(expected)
    count_actual: Counter[Hashable] = Counter(actual)
    common = sum(min(count_expected[k], count_actual[k]) for k in count_expected.keys() & count_actual.keys())
    union = len(expected) + len(actual) - common
    return common / union if union > 0 else 0.0


def tool_call_reward(
    gt_calls: list[Any],
    pd_calls: list[Any],
    lo: float,
    hi: float,
    *,
    refined: bool = False,
    intermediate: bool = False,
    coarse: bool = False,
) -> float:
    """Score parsed predicted calls against parsed ground-truth calls in [lo, hi] (may raise on odd input)."""
    if gt_calls == pd_calls:
        return hi
    if coarse:
        return lo
    gt_names = [call["name"] for call in gt_calls]
    pd_names = [call["name"] for call in pd_calls]
    score = match_score(gt_names, pd_names, refined)
    local_max = 1.0
    used: set[int] = set()
    for gt_call in gt_calls:
        gt_name = gt_call["name"]
        gt_params = gt_call["parameters"]  # read in every mode: a call without it is the min, as in ToolRL
        if intermediate:
            local_max += 1
        else:
            local_max += 1 + len(gt_params)
        best_index = -1
        best_total = 0.0
        for index, pd_call in enumerate(pd_calls):
            if index in used or pd_call["name"] != gt_name:
                continue
            if intermediate:
                if gt_call == pd_call:
                    best_index, best_total = index, 1.0
                    break
                continue
            pd_params = pd_call["parameters"]
            total = match_score(list(gt_params.keys()), list(pd_params.keys()), refined)
            total += sum(1 for key, value in gt_params.items() if key in pd_params and pd_params[key] == value)
            if total > best_total:
                best_index, best_total = index, total
        if best_index >= 0:
            used.add(best_index)
            score += best_total
    return (hi - lo) * score / local_max + lo


def correctness_reward(
    prediction: str,
    ground_truth: str,
    lo: float,
    hi: float,
    *,
    refined: bool = False,
    intermediate: bool = False,
    coarse: bool = False,
) -> float:
    """R_correctness of ``prediction`` in [lo, hi], or 0.0 when the ground truth has no tool call."""
    if "<tool_call>" not in ground_truth:
        return 0.0
    gt_calls = parse_ground_truth_calls(ground_truth)
    try:
        pd_calls = parse_predicted_calls(prediction)
        value = tool_call_reward(gt_calls, pd_calls, lo, hi, refined=refined, intermediate=intermediate, coarse=coarse)
    except Exception:  # noqa: BLE001 - ToolRL: any parsing or scoring failure of the prediction is the min
        return float(lo)
    return float(value)
