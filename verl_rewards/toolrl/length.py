"""R_length: reward for thinking long enough (only with the ``with_length`` option).

Without ``<think>`` or ``</think>`` anywhere in the prediction the reward is the min. Otherwise the words
(``str.split()``) of the text after the **last** ``<think>``, up to the first ``</think>`` after it, are
counted; ``r = min(round(words / L, 2), 1.0)`` and the reward is ``r * (max - min) + min``. L is 512, or
``256*step/105 + 384`` under ``schedule_length`` (see :func:`verl_rewards.toolrl.ranges.length_target`).
"""

from __future__ import annotations


def think_word_count(prediction: str) -> int:
    """Words in the last think block (ToolRL's ``split("<think>")[-1].split("</think>")[0]``)."""
    start = prediction.rfind("<think>")
    segment = prediction if start < 0 else prediction[start + len("<think>") :]
    stop = segment.find("</think>")
    if stop >= 0:
        segment = segment[:stop]
    return len(segment.split())


def length_reward(prediction: str, target: float, lo: float = 0.0, hi: float = 1.0) -> float:
    """The length reward for ``target`` words (L), scaled to [lo, hi]."""
    if "<think>" not in prediction or "</think>" not in prediction:
        return float(lo)
    ratio = min(round(think_word_count(prediction) / target, 2), 1.0)
    return float(ratio * (hi - lo) + lo)
