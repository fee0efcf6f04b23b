"""Reward ranges of the ToolRL components as functions of the options and the training step.

ToolRL scales each component between a (min, max) pair that some variants move with the step. These
functions compute those pairs in ToolRL's order of operations so that scores are reproduced to the bit,
and :func:`score_bounds` turns them into the documented range of the total.
"""

from __future__ import annotations

import operator

from .options import ToolRLOptions

#: Largest step accepted. Far beyond any real run; keeps every schedule finite in float arithmetic.
MAX_STEP = 10**9

FORMAT_BASE = (0.0, 1.0)
CORRECTNESS_BASE = (-3.0, 3.0)
CORRECTNESS_BASE_MAX1 = (-1.0, 1.0)
LENGTH_BASE = (0.0, 1.0)


def check_step(step: object) -> int:
    """Validate the training step: an integer in [0, MAX_STEP]; returns it as ``int``."""
    if isinstance(step, bool):
        raise TypeError("step must be an int, got bool")
    try:
        value = operator.index(step)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"step must be an int, got {type(step).__name__}") from None
    if not 0 <= value <= MAX_STEP:
        raise ValueError(f"step must be in [0, {MAX_STEP}], got {value}")
    return value


def format_range(options: ToolRLOptions, step: int) -> tuple[float, float]:
    """(min, max) of R_format at ``step``; the format reward is always exactly one of the two."""
    lo, hi = FORMAT_BASE
    if options.max1_step30_max3 and step >= 30:
        hi, lo = hi / 2, lo / 2
    if options.schedule_reward:
        hi = 2 - (2 - hi) * step / 150
        lo = -2 + (2 + lo) * step / 150
        if hi < 1.0:
            hi = 1.0
        if lo > -1.0:
            lo = -1.0
    return lo, hi


def correctness_range(options: ToolRLOptions, step: int) -> tuple[float, float]:
    """(min, max) of R_correctness at ``step``. Under correct_max1 + schedule_reward, min > max after step 300."""
    lo, hi = CORRECTNESS_BASE_MAX1 if options.correct_max1 else CORRECTNESS_BASE
    if options.max1_step30_max3 and step < 30:
        hi, lo = hi / 3, lo / 3
    if options.schedule_reward:
        hi = (hi - 2) * step / 150 + 2
        lo = (lo + 2) * step / 150 - 2
        if hi > 3.0:
            hi = 3.0
        if lo < -3.0:
            lo = -3.0
    return lo, hi


def length_target(options: ToolRLOptions, step: int) -> float:
    """The word count L that earns the full length reward (512, or 256*step/105 + 384 if scheduled)."""
    if options.schedule_length:
        return 256 * step / 105 + 384
    return 512


def length_range(options: ToolRLOptions) -> tuple[float, float]:
    """(min, max) of R_length: (0, 1) with ``with_length``, else (0, 0)."""
    return LENGTH_BASE if options.with_length else (0.0, 0.0)


def score_bounds(options: ToolRLOptions, step: int = 0) -> tuple[float, float]:
    """Documented (low, high) of the total score for these options at ``step``.

    total = format + correctness + length, where, with (fmin, fmax) = :func:`format_range`,
    (cmin, cmax) = :func:`correctness_range` and (lmin, lmax) = :func:`length_range`:

    - format is fmin or fmax (fmin may be negative under ``schedule_reward``);
    - correctness lies between cmin and cmax (whichever is smaller), or is exactly 0.0 when the ground
      truth has no tool call, so its range is [min(0, cmin, cmax), max(0, cmin, cmax)];
    - length lies in [lmin, lmax].

    low = fmin + min(0, cmin, cmax) + lmin and high = fmax + max(0, cmin, cmax) + lmax. Scores stay
    within these bounds up to float rounding (1e-9).
    """
    step = check_step(step)
    f_lo, f_hi = format_range(options, step)
    c_lo, c_hi = correctness_range(options, step)
    l_lo, l_hi = length_range(options)
    return f_lo + min(0.0, c_lo, c_hi) + l_lo, f_hi + max(0.0, c_lo, c_hi) + l_hi
