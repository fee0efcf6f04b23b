"""ToolRL's reward: total = R_format + R_correctness + R_length, for one decoded rollout.

:func:`compute_score` is the entry point for a reward manager; :func:`score_with_options` does the same
with a ready :class:`~verl_rewards.toolrl.options.ToolRLOptions` (cheaper in a loop: no env look-up).

Differences from ToolRL's ``rlla.compute_score``: it returns a dict of floats instead of a 4-tuple, it
prints nothing, the chat markers come from options (with an ``"auto"`` mode) rather than only from
``EXPERIMENT_NAME``, an ``EXPERIMENT_NAME`` without "llama"/"qwen" does not raise, the prediction is
capped at 64 KiB, predicted JSON at 64 levels of nesting, and ``step`` must be an int in [0, 10**9].
"""

from __future__ import annotations

from typing import Any

from .correctness import correctness_reward
from .extraction import extract_prediction
from .format_reward import format_reward
from .length import length_reward
from .options import ToolRLOptions, UnknownOptionError
from .ranges import check_step, correctness_range, format_range, length_range, length_target


def score_prediction(prediction: str, ground_truth: str, step: int, options: ToolRLOptions) -> dict[str, float]:
    """Score an already extracted (stripped, capped) prediction; see :func:`score_with_options`."""
    step = check_step(step)
    f_lo, f_hi = format_range(options, step)
    c_lo, c_hi = correctness_range(options, step)
    fmt = format_reward(prediction, ground_truth, f_lo, f_hi)
    correct = correctness_reward(
        prediction,
        ground_truth,
        c_lo,
        c_hi,
        refined=options.refined_reward,
        intermediate=options.intermediate_reward,
        coarse=options.coarse_reward,
    )
    if options.with_length:
        l_lo, l_hi = length_range(options)
        length = length_reward(prediction, length_target(options, step), l_lo, l_hi)
    else:
        length = 0.0
    return {"score": fmt + correct + length, "format": fmt, "correctness": correct, "length": length}


def score_with_options(
    solution_str: str, ground_truth: str, step: int = 0, options: ToolRLOptions | None = None
) -> dict[str, float]:
    """Score one rollout with explicit options (``None`` = all variants off, ``chat_template="auto"``).

    ``solution_str`` is the decoded prompt + response with special tokens kept (or just the response);
    ``ground_truth`` is ToolRL's ground-truth string. Returns ``{"score", "format", "correctness",
    "length"}`` as floats.
    """
    if not isinstance(ground_truth, str):
        raise TypeError(f"ground_truth must be a str, got {type(ground_truth).__name__}")
    opts = ToolRLOptions() if options is None else options
    prediction = extract_prediction(solution_str, opts.chat_template)
    return score_prediction(prediction, ground_truth, step, opts)


def compute_score(
    solution_str: str,
    ground_truth: str,
    step: int = 0,
    *,
    data_source: str | None = None,
    extra_info: Any = None,
    prev_step_dict: Any = None,
    cur_step_dict: Any = None,
    **options: Any,
) -> dict[str, float]:
    """ToolRL's score of one rollout: ``{"score": total, "format": f, "correctness": c, "length": l}``.

    ``options`` are :class:`ToolRLOptions` field names (config-style values accepted, e.g. ``"true"``); an
    option not given falls back to ToolRL's environment variable, as in
    :meth:`ToolRLOptions.from_config`. Unknown names raise :class:`UnknownOptionError` (a ``TypeError``).
    ``data_source``, ``extra_info``, ``prev_step_dict`` and ``cur_step_dict`` are accepted and ignored, so that
    verl's reward managers (and this package's, which adds the contribution term itself) can pass them.
    """
    del data_source, extra_info, prev_step_dict, cur_step_dict
    valid = ToolRLOptions.field_names()
    unknown = sorted(name for name in options if name not in valid)
    if unknown:
        raise UnknownOptionError(
            f"compute_score() got unknown ToolRL option(s) {unknown}; valid names: {', '.join(valid)}"
        )
    return score_with_options(solution_str, ground_truth, step, ToolRLOptions.from_config(options))
