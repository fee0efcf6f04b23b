"""What the retail and airline tools of tau-bench v1 and of tau2 share: tau2's two domains come from tau-bench's,
so some lookups and records are the same in both (``tau_bench/envs/<domain>/tools/`` and tau2-bench's
``src/tau2/domains/<domain>/tools.py``). Both toolkits (:mod:`verl_rewards.tau2.domains` and
:mod:`verl_rewards.tau_bench`) call these; each wraps the result in its own benchmark's output and error rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .state import DBState


def user_id_by_email(db: DBState, email: Any) -> Any | None:
    """The first user (in DB order) whose email equals ``email`` ignoring case, else None."""
    for user_id, user in db.items("users"):
        if user["email"].lower() == email.lower():
            return user_id
    return None


def user_id_by_name_zip(db: DBState, first_name: Any, last_name: Any, zip: Any) -> Any | None:
    """The first user (in DB order) with these names (ignoring case) and this zip code (exactly), else None."""
    for user_id, user in db.items("users"):
        if (
            user["name"]["first_name"].lower() == first_name.lower()
            and user["name"]["last_name"].lower() == last_name.lower()
            and user["address"]["zip"] == zip
        ):
            return user_id
    return None


def request_exchange(
    db: DBState, order_id: Any, item_ids: Any, new_item_ids: Any, payment_method_id: Any, price_difference: Any
) -> dict[str, Any]:
    """Mark a delivered retail order as ``exchange requested`` (items, new items, payment method, price difference);
    returns the written order record (the caller's to serialise)."""
    order = db.write("orders", order_id)
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = price_difference
    return order


BOOKING_FIELDS = (
    "user_id",
    "origin",
    "destination",
    "flight_type",
    "cabin",
    "passengers",
    "payment_methods",
    "total_baggages",
    "nonfree_baggages",
    "insurance",
)
"""The ``book_reservation`` arguments a new reservation stores as given."""


def reservation_record(
    booking: Mapping[str, Any], *, reservation_id: Any, flights: Any, created_at: str
) -> dict[str, Any]:
    """A new airline reservation, keys in the data's order, from ``book_reservation``'s arguments (``booking``:
    any mapping holding :data:`BOOKING_FIELDS`, e.g. the tool's ``locals()``; ``payment_methods`` is stored as
    ``payment_history``), the new id, the flight segments and the booking time."""
    return {
        "reservation_id": reservation_id,
        "user_id": booking["user_id"],
        "origin": booking["origin"],
        "destination": booking["destination"],
        "flight_type": booking["flight_type"],
        "cabin": booking["cabin"],
        "flights": flights,
        "passengers": booking["passengers"],
        "payment_history": booking["payment_methods"],
        "created_at": created_at,
        "total_baggages": booking["total_baggages"],
        "nonfree_baggages": booking["nonfree_baggages"],
        "insurance": booking["insurance"],
    }
