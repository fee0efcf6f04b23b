"""Record validation for the telecom DBs: what tau2's pydantic models accept, and the shape they dump.

A model is a tuple of fields ``(name, kind, default)``; :func:`validate` checks a raw mapping against it and
returns a plain dict in model field order with every field present (defaults filled), as ``model_dump()``
gives it. Unknown keys are refused (tau2's telecom models forbid extra keys). Kinds convert leniently where
pydantic's lax mode does (an int for a float field becomes a float, ``"2025-01-20T14:30:00"`` for a datetime
field is kept as the text tau2's hash writes, ``"2025-01-20 14:30:00"``).

Dates and datetimes are stored as text in the form ``str(date)`` / ``str(datetime)`` produce: that is what
both tau2's DB hash (``json.dumps(..., default=str)``) and its tool outputs print, and text is cheap to copy
and compare (ISO text sorts like the dates it names).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from typing import Any

REQUIRED = object()
"""Default marker of a field that must be given."""

Kind = Callable[[Any], Any]
Model = tuple[str, tuple[tuple[str, Kind, Any], ...]]

_SHOWN = 60


class ModelError(ValueError):
    """A value does not fit its model; the message names the model and the field path."""


class _Invalid(Exception):
    def __init__(self, message: str, loc: tuple[str, ...] = ()):
        self.message = message
        self.loc = loc


def _bad(value: Any, message: str, kind: str) -> _Invalid:
    shown = repr(value)
    shown = shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "..."
    return _Invalid(f"{message} [type={kind}, input_value={shown}, input_type={type(value).__name__}]")


def string(value: Any) -> str:
    if not isinstance(value, str):
        raise _bad(value, "Input should be a valid string", "string_type")
    return value


def floating(value: Any) -> float:
    if isinstance(value, bool):
        raise _bad(value, "Input should be a valid number", "float_type")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
        raise _bad(value, "Input should be a valid number, unable to parse string as a number", "float_parsing")
    raise _bad(value, "Input should be a valid number", "float_type")


def integer(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
        raise _bad(value, "Input should be a valid integer, unable to parse string as an integer", "int_parsing")
    raise _bad(value, "Input should be a valid integer", "int_type")


_TRUE = {"true", "1", "yes", "on", "t", "y"}
_FALSE = {"false", "0", "no", "off", "f", "n"}


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise _bad(value, "Input should be a valid boolean", "bool_type")


def date(value: Any) -> str:
    if isinstance(value, _dt.datetime):
        if value.time() != _dt.time(0):
            raise _bad(value, "Datetimes provided to dates should have zero time", "date_from_datetime_inexact")
        return str(value.date())
    if isinstance(value, _dt.date):
        return str(value)
    if isinstance(value, str):
        try:
            return str(_dt.date.fromisoformat(value))
        except ValueError:
            pass
    raise _bad(value, "Input should be a valid date in the format YYYY-MM-DD", "date_from_datetime_parsing")


def datetime(value: Any) -> str:
    if isinstance(value, _dt.datetime):
        return str(value)
    if isinstance(value, str):
        try:
            return str(_dt.datetime.fromisoformat(value))
        except ValueError:
            pass
    raise _bad(value, "Input should be a valid datetime", "datetime_parsing")


def optional(kind: Kind) -> Kind:
    def check(value: Any) -> Any:
        return None if value is None else kind(value)

    return check


def enum(*values: str) -> Kind:
    listed = ", ".join(repr(v) for v in values[:-1]) + f" or {values[-1]!r}"

    def check(value: Any) -> str:
        if isinstance(value, str) and value in values:
            return value
        raise _bad(value, f"Input should be {listed}", "enum")

    return check


def list_of(kind: Kind) -> Kind:
    def check(value: Any) -> list[Any]:
        if not isinstance(value, list | tuple):
            raise _bad(value, "Input should be a valid list", "list_type")
        out = []
        for i, item in enumerate(value):
            try:
                out.append(kind(item))
            except _Invalid as exc:
                raise _Invalid(exc.message, (str(i), *exc.loc)) from None
        return out

    return check


def dict_of(kind: Kind) -> Kind:
    def check(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _bad(value, "Input should be a valid dictionary", "dict_type")
        out = {}
        for key, item in value.items():
            try:
                out[string(key)] = kind(item)
            except _Invalid as exc:
                raise _Invalid(exc.message, (str(key), *exc.loc)) from None
        return out

    return check


def record(model: Model) -> Kind:
    """A nested model as a kind."""

    def check(value: Any) -> dict[str, Any]:
        return _record(model, value)

    return check


def _record(model: Model, value: Any) -> dict[str, Any]:
    name, fields = model
    if not isinstance(value, dict):
        raise _bad(value, f"Input should be a valid dictionary or instance of {name}", "model_type")
    known = {f[0] for f in fields}
    for key in value:
        if key not in known:
            raise _Invalid(
                f"Extra inputs are not permitted [type=extra_forbidden, input_value={value[key]!r:.60}]", (str(key),)
            )
    out: dict[str, Any] = {}
    for field, kind, default in fields:
        if field not in value:
            if default is REQUIRED:
                raise _Invalid("Field required [type=missing]", (field,))
            out[field] = default() if callable(default) else default
            continue
        try:
            out[field] = kind(value[field])
        except _Invalid as exc:
            raise _Invalid(exc.message, (field, *exc.loc)) from None
    return out


def validate(model: Model, value: Any, where: str = "") -> dict[str, Any]:
    """``value`` as a dict of ``model`` (see the module doc); raises :class:`ModelError` naming the field."""
    try:
        return _record(model, value)
    except _Invalid as exc:
        loc = ".".join(exc.loc)
        prefix = f"{where}: " if where else ""
        raise ModelError(f"{prefix}1 validation error for {model[0]}\n{loc}\n  {exc.message}") from None
