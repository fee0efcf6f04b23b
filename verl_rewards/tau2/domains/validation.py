"""Validation of tool arguments and DB records as tau2's pydantic v2 models do it, without pydantic.

tau2-bench builds pydantic models from a tool's arguments (airline: ``FlightInfo``, ``Passenger``, ``Payment``, ...;
telecom: ``APNSettings``) and from its DB files; a failure's message is the observation the model sees. A
:class:`Model` lists its fields ``(name, kind, default)``; :func:`validate` checks a mapping against it as
pydantic's lax mode does: ``"3"`` -> 3 for an int, fields in model order, defaults filled, unknown keys dropped or
refused (``extra``), every failing field reported. The error is a :class:`ValidationError` whose text is
pydantic's ``str(ValidationError)`` without its version-specific documentation URL lines::

    2 validation errors for APNSettings
    apn_name
      Input should be 'internet' or 'broken' [type=enum, input_value='weird', input_type=str]
    colour
      Extra inputs are not permitted [type=extra_forbidden, input_value=1, input_type=int]

A kind is a function that returns the converted value or raises :class:`FieldError` (message, pydantic error
type); :func:`lax_int` and :func:`lax_float` are also used directly to normalise DB files. Dates and datetimes are
kept as text in the form ``str(date)`` / ``str(datetime)`` give, which is what tau2's DB hash
(``json.dumps(..., default=str)``) and tool outputs print.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..toolkit import ToolError

REQUIRED: Any = object()
"""Default of a field that must be given."""

Kind = Callable[[Any], Any]
FieldSpec = tuple[str, Kind, Any]  # (name, kind, default: a value, a zero-argument factory, or REQUIRED)

_INT_TEXT = re.compile(r"[+-]?\d+(?:_\d+)*(?:\.0+)?")
_MAX_LAX_INT = 2**63  # pydantic refuses floats beyond i64 when converting them to int
_TRUE = frozenset({"true", "1", "yes", "on", "t", "y"})
_FALSE = frozenset({"false", "0", "no", "off", "f", "n"})


@dataclass(frozen=True)
class Model:
    """One pydantic model: its name (shown in errors), its fields in order, and what happens to unknown keys."""

    name: str
    fields: tuple[FieldSpec, ...]
    extra: Literal["ignore", "forbid"] = "ignore"
    names: frozenset[str] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", frozenset(spec[0] for spec in self.fields))


class FieldError(Exception):
    """One value a kind refused: pydantic's message and error type."""

    def __init__(self, msg: str, kind: str):
        super().__init__(msg)
        self.msg = msg
        self.kind = kind


class ValidationError(ToolError, ValueError):
    """A value does not fit its model; the message is pydantic's (see the module doc)."""


_Err = tuple[tuple[str, ...], str, str, Any]  # (location, message, error type, input)


class _Invalid(Exception):
    """The errors found inside a nested value (locations relative to it)."""

    def __init__(self, errors: list[_Err]):
        self.errors = errors


# ---------------------------------------------------------------------------------------------- scalar kinds
def string(value: Any) -> str:
    """pydantic ``str`` (strict on type: no number is turned into text)."""
    if not isinstance(value, str):
        raise FieldError("Input should be a valid string", "string_type")
    return value


def lax_int(value: Any) -> int:
    """pydantic v2 lax ``int``: ints and bools, integral finite floats, integer strings (``" 3 "``, ``"3.00"``)."""
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FieldError("Input should be a finite number", "finite_number")
        if abs(value) > _MAX_LAX_INT:
            raise FieldError("Unable to parse input string as an integer, exceeded maximum size", "int_parsing_size")
        if value != int(value):
            raise FieldError("Input should be a valid integer, got a number with a fractional part", "int_from_float")
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if _INT_TEXT.fullmatch(text):
            return int(text.split(".")[0].replace("_", ""))
        raise FieldError("Input should be a valid integer, unable to parse string as an integer", "int_parsing")
    raise FieldError("Input should be a valid integer", "int_type")


def lax_float(value: Any) -> float:
    """pydantic v2 lax ``float``: ints, bools, floats and numeric strings."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            message = "Input should be a valid number, unable to parse string as a number"
            raise FieldError(message, "float_parsing") from None
    raise FieldError("Input should be a valid number", "float_type")


def boolean(value: Any) -> bool:
    """pydantic v2 lax ``bool``: bools, 0/1, 0.0/1.0 and the words pydantic knows (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if value in (0, 1):
            return bool(value)
    elif isinstance(value, str):
        word = value.lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    else:
        raise FieldError("Input should be a valid boolean", "bool_type")
    raise FieldError("Input should be a valid boolean, unable to interpret input", "bool_parsing")


def date(value: Any) -> str:
    """A date, kept as ``str(date)`` (``"2025-01-20"``)."""
    if isinstance(value, _dt.datetime):
        if value.time() != _dt.time(0):
            raise FieldError("Datetimes provided to dates should have zero time", "date_from_datetime_inexact")
        return str(value.date())
    if isinstance(value, _dt.date):
        return str(value)
    if isinstance(value, str):
        try:
            return str(_dt.date.fromisoformat(value))
        except ValueError:
            pass
    raise FieldError("Input should be a valid date in the format YYYY-MM-DD", "date_from_datetime_parsing")


def datetime(value: Any) -> str:
    """A datetime, kept as ``str(datetime)`` (``"2025-01-20 14:30:00"``)."""
    if isinstance(value, _dt.datetime):
        return str(value)
    if isinstance(value, str):
        try:
            return str(_dt.datetime.fromisoformat(value))
        except ValueError:
            pass
    raise FieldError("Input should be a valid datetime", "datetime_parsing")


# ---------------------------------------------------------------------------------------------- kind builders
def _one_of(values: tuple[str, ...]) -> str:
    quoted = [repr(v) for v in values]
    if len(quoted) == 1:
        return f"Input should be {quoted[0]}"
    return "Input should be " + ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _choice(values: tuple[str, ...], error_type: str) -> Kind:
    message = _one_of(values)
    allowed = frozenset(values)

    def check(value: Any) -> str:
        if isinstance(value, str) and value in allowed:
            return value
        raise FieldError(message, error_type)

    return check


def literal(*values: str) -> Kind:
    """A ``Literal[...]`` of strings."""
    return _choice(values, "literal_error")


def enum(*values: str) -> Kind:
    """A string ``Enum`` (kept as its value)."""
    return _choice(values, "enum")


def optional(kind: Kind) -> Kind:
    """``kind | None``."""

    def check(value: Any) -> Any:
        return None if value is None else kind(value)

    return check


def list_of(kind: Kind) -> Kind:
    """``list[kind]`` (a tuple is accepted, as pydantic does)."""

    def check(value: Any) -> list[Any]:
        if not isinstance(value, list | tuple):
            raise FieldError("Input should be a valid list", "list_type")
        out: list[Any] = []
        errors: list[_Err] = []
        for i, item in enumerate(value):
            out.append(_check(kind, item, (str(i),), errors))
        if errors:
            raise _Invalid(errors)
        return out

    return check


def dict_of(kind: Kind) -> Kind:
    """``dict[str, kind]``."""

    def check(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise FieldError("Input should be a valid dictionary", "dict_type")
        out: dict[str, Any] = {}
        errors: list[_Err] = []
        for key, item in value.items():
            name = _check(string, key, (str(key), "[key]"), errors)
            out[name] = _check(kind, item, (str(key),), errors)
        if errors:
            raise _Invalid(errors)
        return out

    return check


def record(model: Model) -> Kind:
    """A nested model."""

    def check(value: Any) -> dict[str, Any]:
        errors: list[_Err] = []
        out = _check_model(model, value, errors)
        if errors:
            raise _Invalid(errors)
        return out

    return check


# ---------------------------------------------------------------------------------------------- the check
def _check(kind: Kind, value: Any, loc: tuple[str, ...], errors: list[_Err]) -> Any:
    try:
        return kind(value)
    except FieldError as bad:
        errors.append((loc, bad.msg, bad.kind, value))
    except _Invalid as nested:
        errors.extend((loc + where, msg, kind_, input_) for where, msg, kind_, input_ in nested.errors)
    return None


def _check_model(model: Model, data: Any, errors: list[_Err]) -> dict[str, Any]:
    if not isinstance(data, dict):
        errors.append(((), f"Input should be a valid dictionary or instance of {model.name}", "model_type", data))
        return {}
    out: dict[str, Any] = {}
    for name, kind, default in model.fields:
        if name in data:
            value = data[name]
            try:  # inlined _check: this loop runs for every field of every record of a DB file
                out[name] = kind(value)
            except FieldError as bad:
                errors.append(((name,), bad.msg, bad.kind, value))
            except _Invalid as nested:
                errors.extend(((name, *where), msg, kind_, input_) for where, msg, kind_, input_ in nested.errors)
        elif default is REQUIRED:
            errors.append(((name,), "Field required", "missing", data))
        else:
            out[name] = default() if callable(default) else default
    if model.extra == "forbid" and not model.names.issuperset(data):
        for key, value in data.items():
            if key not in model.names:
                errors.append(((str(key),), "Extra inputs are not permitted", "extra_forbidden", value))
    return out


def _shown(value: Any) -> str:
    """pydantic's ``input_value``: the repr, middle cut out beyond 50 characters."""
    text = repr(value)
    return text if len(text) <= 50 else text[:25] + "..." + text[-24:]


def validate(model: Model, data: Any) -> dict[str, Any]:
    """``data`` as a plain dict of ``model`` (see the module doc); raises :class:`ValidationError`."""
    errors: list[_Err] = []
    out = _check_model(model, data, errors)
    if errors:
        n = len(errors)
        lines = [f"{n} validation error{'s' if n != 1 else ''} for {model.name}"]
        for loc, msg, kind, value in errors:
            lines.append(".".join(loc))
            lines.append(f"  {msg} [type={kind}, input_value={_shown(value)}, input_type={type(value).__name__}]")
        raise ValidationError("\n".join(lines))
    return out


def no_extra(name: str, fields: tuple[FieldSpec, ...]) -> Model:
    """A model refusing unknown keys (tau2's ``BaseModelNoExtra``, the base of its telecom models)."""
    return Model(name, fields, extra="forbid")
