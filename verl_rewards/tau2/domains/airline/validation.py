"""The models tau2's airline tools build from their arguments, checked by the shared tau2 validation.

tau2-bench's airline tools (``src/tau2/domains/airline/tools.py``) build models of ``data_model.py``
(``FlightInfo``, ``Passenger``, ``Payment``, ``Reservation``, ...) from the model's arguments. :func:`validate`
checks them as pydantic v2 would (:mod:`verl_rewards.tau2.domains.validation`: extra keys dropped, lax coercion
``"3"`` -> 3, fields in model order); a failure is a :class:`~verl_rewards.engine.toolkit.ToolError` with pydantic's
message, which becomes the observation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ....engine.toolkit import ToolError
from .. import validation as v

_FLIGHT_INFO = v.Model("FlightInfo", (("flight_number", v.string, v.REQUIRED), ("date", v.string, v.REQUIRED)))
_PASSENGER = v.Model(
    "Passenger",
    (("first_name", v.string, v.REQUIRED), ("last_name", v.string, v.REQUIRED), ("dob", v.string, v.REQUIRED)),
)
_PAYMENT = v.Model("Payment", (("payment_id", v.string, v.REQUIRED), ("amount", v.lax_int, v.REQUIRED)))
_CERTIFICATE = v.Model(
    "Certificate",
    (
        ("source", v.literal("certificate"), v.REQUIRED),
        ("id", v.string, v.REQUIRED),
        ("amount", v.lax_float, v.REQUIRED),
    ),
)
_RESERVATION_FLIGHT = v.Model(
    "ReservationFlight",
    (
        ("flight_number", v.string, v.REQUIRED),
        ("origin", v.string, v.REQUIRED),
        ("destination", v.string, v.REQUIRED),
        ("date", v.string, v.REQUIRED),
        ("price", v.lax_int, v.REQUIRED),
    ),
)
_RESERVATION = v.Model(
    "Reservation",
    (
        ("reservation_id", v.string, v.REQUIRED),
        ("user_id", v.string, v.REQUIRED),
        ("origin", v.string, v.REQUIRED),
        ("destination", v.string, v.REQUIRED),
        ("flight_type", v.literal("round_trip", "one_way"), v.REQUIRED),
        ("cabin", v.literal("business", "economy", "basic_economy"), v.REQUIRED),
        ("flights", v.list_of(v.record(_RESERVATION_FLIGHT)), v.REQUIRED),
        ("passengers", v.list_of(v.record(_PASSENGER)), v.REQUIRED),
        ("payment_history", v.list_of(v.record(_PAYMENT)), v.REQUIRED),
        ("created_at", v.string, v.REQUIRED),
        ("total_baggages", v.lax_int, v.REQUIRED),
        ("nonfree_baggages", v.lax_int, v.REQUIRED),
        ("insurance", v.literal("yes", "no"), v.REQUIRED),
        ("status", v.optional(v.literal("cancelled")), None),
    ),
)
MODELS: dict[str, v.Model] = {
    m.name: m for m in (_FLIGHT_INFO, _PASSENGER, _PAYMENT, _CERTIFICATE, _RESERVATION_FLIGHT, _RESERVATION)
}
"""The models the airline tools build, by name."""


def validate(model: str, data: dict[str, Any]) -> dict[str, Any]:
    """Build the model named ``model`` from ``data`` as pydantic would (see the module doc)."""
    return v.validate(MODELS[model], data)


def convert_all(items: Iterable[Any], model: str) -> tuple[Any, bool]:
    """tau2 turns a list argument into models only when *every* item is a dict; otherwise it keeps it raw."""
    if all(isinstance(item, dict) for item in items):  # a non-iterable raises TypeError, as in tau2
        return [validate(model, item) for item in items], True
    return items, False


def no_attribute(item: Any, attr: str) -> ToolError:
    """The AttributeError tau2 hits when it reads a field of an unconverted (non-model) list item."""
    return ToolError(f"'{type(item).__name__}' object has no attribute '{attr}'")
