"""Reading values: one set of boolean spellings and one finite-number rule for every option and every number.

Booleans accept ``True``/``False``, ``1``/``0`` and the strings ``true``/``false``, ``1``/``0``, ``yes``/``no``,
``on``/``off`` (any case, surrounding blanks ignored); anything else is rejected, never silently false.

Numbers: every number that enters a score, a training step, a β schedule, a step-dict value or a reward
component is read by :func:`read_float`, which never raises. It accepts ``int``, ``float`` (subclasses read by
their value, never by an overridden ``__float__``), numpy / torch scalars and, when asked, numeric text; it
rejects NaN, infinities and magnitudes beyond a limit (a 400-digit integer included) by returning ``None``, so
the caller uses its default and flags the value instead of failing the step. Configuration keys use
:func:`finite_float`, the same reading with an error message.

The default limit, :data:`MAX_MAGNITUDE` (``2**108``, about 3.2e32), is what a reward, a component or a
contribution value may be: verl stores them as float32 and sums a group's values in float32 to normalise them
(GRPO, GDPO), so ``2**20`` values of that size still sum to a finite float32; a value near the float32 maximum
would make the whole group's advantages NaN.
"""

from __future__ import annotations

import math
from typing import Any

TRUE_STRINGS = frozenset({"true", "1", "yes", "on"})
FALSE_STRINGS = frozenset({"false", "0", "no", "off"})
#: the largest float32
FLOAT32_MAX = 3.4028234663852886e38
#: the largest magnitude of a score, a component or a contribution value (see the module doc)
MAX_MAGNITUDE = 2.0**108
_MAX_NUMBER_TEXT = 400  # longer text is not read as a number (float() of a huge digit string is slow)


def parse_bool(value: Any) -> bool:
    """The boolean ``value`` spells; :class:`ValueError` for anything that is not one of the spellings above."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # numpy scalars
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in TRUE_STRINGS:
            return True
        if text in FALSE_STRINGS:
            return False
    raise ValueError(f"expected a boolean (true/false, 1/0, yes/no, on/off), got {value!r:.80}")


def _to_float(value: Any, *, bools: bool, text: bool) -> float | None:
    """``value`` as a float (maybe NaN or infinite; a huge integer becomes an infinity), or None for a non-number."""
    if isinstance(value, bool):
        return float(value) if bools else None
    if isinstance(value, float):
        return float.__float__(value)  # the stored value, even for a subclass that overrides __float__
    if isinstance(value, int):
        try:
            return int.__float__(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        if not text or len(value) > _MAX_NUMBER_TEXT:
            return None
        try:
            return float(value.strip())
        except ValueError:
            return None
    item = getattr(type(value), "item", None)  # numpy / torch scalars and 0-d arrays
    if item is None or not callable(item) or isinstance(value, bytes):
        return None
    try:
        inner = value.item()
    except Exception:  # noqa: BLE001 - a multi-element array or a foreign object is simply not a number
        return None
    if inner is value or hasattr(type(inner), "item") and not isinstance(inner, int | float | bool):
        return None
    return _to_float(inner, bools=bools, text=False)


def read_float(
    value: Any,
    *,
    maximum: float = MAX_MAGNITUDE,
    bools: bool = True,
    text: bool = False,
    clamp: bool = False,
) -> float | None:
    """``value`` as a finite float with ``|value| <= maximum``, else None (see the module doc). Never raises.

    ``bools``: ``True``/``False`` read as 1.0/0.0; ``text``: numeric strings are read too; ``clamp``: a value
    beyond ``±maximum`` (an infinity or a huge integer included) becomes ``±maximum`` instead of None (NaN and
    non-numbers are still None).
    """
    out = _to_float(value, bools=bools, text=text)
    if out is None or math.isnan(out):
        return None
    if math.isfinite(out) and abs(out) <= maximum:
        return out
    return math.copysign(maximum, out) if clamp and math.isfinite(maximum) else None


def finite_float(value: Any, *, positive: bool = False, maximum: float | None = None) -> float:
    """``value`` as a finite float (not a bool), optionally > 0 and <= ``maximum``; :class:`ValueError` otherwise."""
    if _to_float(value, bools=False, text=True) is None:
        raise ValueError(f"expected a number, got {value!r:.80}")
    out = read_float(value, maximum=math.inf, bools=False, text=True)
    if out is None:
        raise ValueError(f"expected a finite number, got {value!r:.80}")
    if positive and out <= 0:
        raise ValueError(f"expected a positive number, got {value!r:.80}")
    if maximum is not None and out > maximum:
        raise ValueError(f"expected a number <= {maximum:g}, got {value!r:.80}")
    return out
