"""Reading config values: one set of boolean spellings and one finite-number rule for every option.

Booleans accept ``True``/``False``, ``1``/``0`` and the strings ``true``/``false``, ``1``/``0``, ``yes``/``no``,
``on``/``off`` (any case, surrounding blanks ignored); anything else is rejected, never silently false.
"""

from __future__ import annotations

import math
from typing import Any

TRUE_STRINGS = frozenset({"true", "1", "yes", "on"})
FALSE_STRINGS = frozenset({"false", "0", "no", "off"})


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
    raise ValueError(f"expected a boolean (true/false, 1/0, yes/no, on/off), got {value!r}")


def finite_float(value: Any, *, positive: bool = False, maximum: float | None = None) -> float:
    """``value`` as a finite float (not a bool), optionally > 0 and <= ``maximum``; :class:`ValueError` otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()  # numpy scalars
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"expected a finite number, got {value!r}")
    if positive and out <= 0:
        raise ValueError(f"expected a positive number, got {value!r}")
    if maximum is not None and out > maximum:
        raise ValueError(f"expected a number <= {maximum:g}, got {value!r}")
    return out
