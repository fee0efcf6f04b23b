"""Arguments the airline tools turn into pydantic models, checked as pydantic v2 would check them.

tau2-bench's airline tools (``src/tau2/domains/airline/tools.py``) build models of ``data_model.py``
(``FlightInfo``, ``Passenger``, ``Payment``, ``Reservation``, ...) from the model's arguments. :func:`validate`
does the same without pydantic: extra keys dropped, lax coercion (``"3"`` -> 3), fields in model order, and on
failure a :class:`~verl_rewards.engine.toolkit.ToolError` with pydantic's message layout, which becomes the
observation. :func:`lax_int` and :func:`lax_float` are the lax conversions, also used to normalise the DB.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from ....engine.toolkit import ToolError

# A field spec is "str" | "int" | "float" | ("lit", values) | ("opt_lit", values) | ("list", model).
_MODELS: dict[str, tuple[tuple[str, Any], ...]] = {
    "FlightInfo": (("flight_number", "str"), ("date", "str")),
    "Passenger": (("first_name", "str"), ("last_name", "str"), ("dob", "str")),
    "Payment": (("payment_id", "str"), ("amount", "int")),
    "Certificate": (("source", ("lit", ("certificate",))), ("id", "str"), ("amount", "float")),
    "ReservationFlight": (
        ("flight_number", "str"),
        ("origin", "str"),
        ("destination", "str"),
        ("date", "str"),
        ("price", "int"),
    ),
    "Reservation": (
        ("reservation_id", "str"),
        ("user_id", "str"),
        ("origin", "str"),
        ("destination", "str"),
        ("flight_type", ("lit", ("round_trip", "one_way"))),
        ("cabin", ("lit", ("business", "economy", "basic_economy"))),
        ("flights", ("list", "ReservationFlight")),
        ("passengers", ("list", "Passenger")),
        ("payment_history", ("list", "Payment")),
        ("created_at", "str"),
        ("total_baggages", "int"),
        ("nonfree_baggages", "int"),
        ("insurance", ("lit", ("yes", "no"))),
        ("status", ("opt_lit", ("cancelled",))),
    ),
}
_OPTIONAL_DEFAULTS = {("Reservation", "status"): None}
_INT_TEXT = re.compile(r"[+-]?\d+(?:_\d+)*(?:\.0+)?")
_MAX_LAX_INT = 2**63  # pydantic refuses floats beyond i64 when converting them to int

_Err = tuple[str, str, str, Any]  # (location, message, error type, input)


class LaxError(Exception):
    """One failed field conversion (message, pydantic error type)."""

    def __init__(self, msg: str, kind: str):
        super().__init__(msg)
        self.msg = msg
        self.kind = kind


def lax_int(value: Any) -> int:
    """pydantic v2 lax ``int``: ints and bools, integral finite floats, integer strings (``" 3 "``, ``"3.00"``)."""
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise LaxError("Input should be a finite number", "finite_number")
        if abs(value) > _MAX_LAX_INT:
            raise LaxError("Unable to parse input string as an integer, exceeded maximum size", "int_parsing_size")
        if value != int(value):
            raise LaxError("Input should be a valid integer, got a number with a fractional part", "int_from_float")
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if _INT_TEXT.fullmatch(text):
            return int(text.split(".")[0].replace("_", ""))
        raise LaxError("Input should be a valid integer, unable to parse string as an integer", "int_parsing")
    raise LaxError("Input should be a valid integer", "int_type")


def lax_float(value: Any) -> float:
    """pydantic v2 lax ``float``: ints, bools, floats and numeric strings."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            message = "Input should be a valid number, unable to parse string as a number"
            raise LaxError(message, "float_parsing") from None
    raise LaxError("Input should be a valid number", "float_type")


def _literal_message(values: tuple[str, ...]) -> str:
    quoted = [repr(v) for v in values]
    if len(quoted) == 1:
        return f"Input should be {quoted[0]}"
    return "Input should be " + ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _check_field(spec: Any, value: Any, loc: str, errors: list[_Err]) -> Any:
    try:
        if spec == "str":
            if not isinstance(value, str):
                raise LaxError("Input should be a valid string", "string_type")
            return value
        if spec == "int":
            return lax_int(value)
        if spec == "float":
            return lax_float(value)
        kind, arg = spec
        if kind == "opt_lit" and value is None:
            return None
        if kind in ("lit", "opt_lit"):
            if not (isinstance(value, str) and value in arg):
                raise LaxError(_literal_message(arg), "literal_error")
            return value
        # ("list", model)
        if not isinstance(value, list | tuple):
            raise LaxError("Input should be a valid list", "list_type")
        return [_check_model(arg, item, f"{loc}.{i}", errors) for i, item in enumerate(value)]
    except LaxError as bad:
        errors.append((loc, bad.msg, bad.kind, value))
        return None


def _check_model(model: str, data: Any, loc: str, errors: list[_Err]) -> dict[str, Any] | None:
    if not isinstance(data, dict):
        errors.append((loc, f"Input should be a valid dictionary or instance of {model}", "model_type", data))
        return None
    out: dict[str, Any] = {}
    for name, spec in _MODELS[model]:
        where = f"{loc}.{name}" if loc else name
        if name not in data:
            if (model, name) in _OPTIONAL_DEFAULTS:
                out[name] = _OPTIONAL_DEFAULTS[(model, name)]
            else:
                errors.append((where, "Field required", "missing", data))
            continue
        out[name] = _check_field(spec, data[name], where, errors)
    return out


def _pyd_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 50 else text[:25] + "..." + text[-24:]


def validate(model: str, data: dict[str, Any]) -> dict[str, Any]:
    """Build ``model`` from ``data`` as pydantic would (extra keys dropped, lax coercion, field order).

    Raises ToolError with pydantic's message layout (without the version-specific documentation URL line).
    """
    errors: list[_Err] = []
    out = _check_model(model, data, "", errors)
    if errors or out is None:
        n = len(errors)
        lines = [f"{n} validation error{'s' if n != 1 else ''} for {model}"]
        for loc, msg, kind, value in errors:
            lines.append(loc)
            lines.append(f"  {msg} [type={kind}, input_value={_pyd_repr(value)}, input_type={type(value).__name__}]")
        raise ToolError("\n".join(lines))
    return out


def convert_all(items: Iterable[Any], model: str) -> tuple[Any, bool]:
    """tau2 turns a list argument into models only when *every* item is a dict; otherwise it keeps it raw."""
    if all(isinstance(item, dict) for item in items):  # a non-iterable raises TypeError, as in tau2
        return [validate(model, item) for item in items], True
    return items, False


def no_attribute(item: Any, attr: str) -> ToolError:
    """The AttributeError tau2 hits when it reads a field of an unconverted (non-model) list item."""
    return ToolError(f"'{type(item).__name__}' object has no attribute '{attr}'")
