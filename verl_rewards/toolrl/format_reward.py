"""R_format: does the prediction have the tag layout that the ground truth's case asks for?

The case comes from the **ground truth**, not the prediction. Each regex runs with ``re.search`` and
``re.DOTALL``:

- GT has ``<response>`` but no ``<tool_call>``: ``^<think>.*?</think>\\n<response>.*?</response>$``, and the
  prediction has exactly one ``<response>`` and one ``</response>``.
- GT has ``<tool_call>`` but no ``<response>``: ``^<think>.*?</think>\\n<tool_call>\\n.*?\\n</tool_call>$``,
  and exactly one ``<tool_call>`` and one ``</tool_call>``.
- GT has both: ``^<think>.*?</think>\\n<tool_call>\\n.*?\\n</tool_call>\\n<response>.*?</response>$``, and
  exactly one of each of the four tags.
- GT has neither: ``^<think>.*?</think>$``.

Passing gives the format max, anything else the min. ``<think>`` is never counted, so two think blocks
pass. The tag counts are checked *before* the regex: the result is the same as ToolRL's (both must hold),
but with each tag present once, every lazy ``.*?`` has at most one place to stop and the match is linear
in the prediction length (without the pre-check, the both-case regex takes seconds on 11 KB of repeated
separators and minutes on 45 KB).
"""

from __future__ import annotations

import re

RESPONSE_ONLY = re.compile(r"^<think>.*?</think>\n<response>.*?</response>$", re.DOTALL)
TOOL_CALL_ONLY = re.compile(r"^<think>.*?</think>\n<tool_call>\n.*?\n</tool_call>$", re.DOTALL)
TOOL_CALL_AND_RESPONSE = re.compile(
    r"^<think>.*?</think>\n<tool_call>\n.*?\n</tool_call>\n<response>.*?</response>$", re.DOTALL
)
THINK_ONLY = re.compile(r"^<think>.*?</think>$", re.DOTALL)


def _each_once(text: str, tags: tuple[str, ...]) -> bool:
    return all(text.count(tag) == 1 for tag in tags)


def format_passes(prediction: str, ground_truth: str) -> bool:
    """True when ``prediction`` has the layout required by ``ground_truth``'s case (table above)."""
    has_response = "<response>" in ground_truth
    has_tool_call = "<tool_call>" in ground_truth
    if has_response and not has_tool_call:
        tags: tuple[str, ...] = ("<response>", "</response>")
        pattern = RESPONSE_ONLY
    elif has_tool_call and not has_response:
        tags = ("<tool_call>", "</tool_call>")
        pattern = TOOL_CALL_ONLY
    elif has_tool_call and has_response:
        tags = ("<tool_call>", "</tool_call>", "<response>", "</response>")
        pattern = TOOL_CALL_AND_RESPONSE
    else:
        return THINK_ONLY.search(prediction) is not None
    return _each_once(prediction, tags) and pattern.search(prediction) is not None


def format_reward(prediction: str, ground_truth: str, lo: float, hi: float) -> float:
    """``hi`` when :func:`format_passes`, else ``lo``."""
    return float(hi) if format_passes(prediction, ground_truth) else float(lo)
