"""The airline DB in the shape of tau2-bench's ``FlightDB.model_dump()`` (``src/tau2/domains/airline/data_model.py``).

:func:`normalize_db` gives every record the models' field order, every optional field, and the declared int or
float types, so that ``dict_hash(normalize_db(raw))`` equals tau2's ``get_db_hash()`` and every tool can keep the
DB in that shape.
"""

from __future__ import annotations

from typing import Any

from ..validation import FieldError, lax_float, lax_int

_DATE_STATUS_FIELDS: dict[str, tuple[str, ...]] = {
    "available": ("available_seats", "prices"),
    "landed": ("actual_departure_time_est", "actual_arrival_time_est"),
    "cancelled": (),
    "delayed": ("estimated_departure_time_est", "estimated_arrival_time_est"),
    "flying": ("actual_departure_time_est", "estimated_arrival_time_est"),
    "on time": ("estimated_departure_time_est", "estimated_arrival_time_est"),
}


def _int(value: Any) -> int:
    if type(value) is int:
        return value
    try:
        return lax_int(value)
    except FieldError as bad:
        raise ValueError(f"{bad.msg}: {value!r}") from None


def _float(value: Any) -> float:
    if type(value) is float:
        return value
    try:
        return lax_float(value)
    except FieldError as bad:
        raise ValueError(f"{bad.msg}: {value!r}") from None


def _norm_date_status(raw: dict[str, Any]) -> dict[str, Any]:
    status = raw["status"]
    out: dict[str, Any] = {"status": status}
    for name in _DATE_STATUS_FIELDS[status]:
        value = raw[name]
        out[name] = {k: _int(v) for k, v in value.items()} if status == "available" else value
    return out


def _norm_flight(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "flight_number": raw["flight_number"],
        "origin": raw["origin"],
        "destination": raw["destination"],
        "scheduled_departure_time_est": raw["scheduled_departure_time_est"],
        "scheduled_arrival_time_est": raw["scheduled_arrival_time_est"],
        "dates": {d: _norm_date_status(s) for d, s in raw["dates"].items()},
    }


def _norm_passenger(raw: dict[str, Any]) -> dict[str, Any]:
    return {"first_name": raw["first_name"], "last_name": raw["last_name"], "dob": raw["dob"]}


def _norm_payment_method(raw: dict[str, Any]) -> dict[str, Any]:
    source = raw["source"]
    if source == "credit_card":
        return {"source": source, "id": raw["id"], "brand": raw["brand"], "last_four": raw["last_four"]}
    if source in ("gift_card", "certificate"):
        return {"source": source, "id": raw["id"], "amount": _float(raw["amount"])}
    raise ValueError(f"unknown payment method source {source!r}")


def _norm_user(raw: dict[str, Any]) -> dict[str, Any]:
    name, addr = raw["name"], raw["address"]
    return {
        "user_id": raw["user_id"],
        "name": {"first_name": name["first_name"], "last_name": name["last_name"]},
        "address": {
            "address1": addr["address1"],
            "address2": addr.get("address2"),
            "city": addr["city"],
            "country": addr["country"],
            "state": addr["state"],
            "zip": addr["zip"],
        },
        "email": raw["email"],
        "dob": raw["dob"],
        "payment_methods": {k: _norm_payment_method(v) for k, v in raw["payment_methods"].items()},
        "saved_passengers": [_norm_passenger(p) for p in raw["saved_passengers"]],
        "membership": raw["membership"],
        "reservations": list(raw["reservations"]),
    }


def _norm_reservation(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "reservation_id": raw["reservation_id"],
        "user_id": raw["user_id"],
        "origin": raw["origin"],
        "destination": raw["destination"],
        "flight_type": raw["flight_type"],
        "cabin": raw["cabin"],
        "flights": [
            {
                "flight_number": f["flight_number"],
                "origin": f["origin"],
                "destination": f["destination"],
                "date": f["date"],
                "price": _int(f["price"]),
            }
            for f in raw["flights"]
        ],
        "passengers": [_norm_passenger(p) for p in raw["passengers"]],
        "payment_history": [
            {"payment_id": p["payment_id"], "amount": _int(p["amount"])} for p in raw["payment_history"]
        ],
        "created_at": raw["created_at"],
        "total_baggages": _int(raw["total_baggages"]),
        "nonfree_baggages": _int(raw["nonfree_baggages"]),
        "insurance": raw["insurance"],
        "status": raw.get("status"),
    }


def normalize_db(raw: dict[str, Any]) -> dict[str, Any]:
    """The airline DB in tau2's ``FlightDB.model_dump()`` shape, so its hash equals tau2's ``get_db_hash()``.

    Records keep the file's order within each collection (tools iterate in DB order); fields follow the pydantic
    models' declaration order (e.g. ``flight_number`` first), optional fields are filled (reservation
    ``status: None``, address ``address2: None``), gift-card/certificate amounts are floats and prices, seats,
    baggage counts and payment amounts ints. Idempotent: normalising a normalised DB changes nothing.
    """
    return {
        "flights": {k: _norm_flight(v) for k, v in raw["flights"].items()},
        "users": {k: _norm_user(v) for k, v in raw["users"].items()},
        "reservations": {k: _norm_reservation(v) for k, v in raw["reservations"].items()},
    }
