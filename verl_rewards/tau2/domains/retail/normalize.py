"""The retail DB in the shape of tau2-bench's ``RetailDB.model_dump()`` (``src/tau2/domains/retail/data_model.py``).

:func:`normalize_db` gives every record the models' field order, every optional field and the declared float types,
so that ``dict_hash(normalize_db(raw))`` equals tau2's ``get_db_hash()``.
"""

from __future__ import annotations

from typing import Any

ORDER_OPTIONAL_FIELDS = (
    "cancel_reason",
    "exchange_items",
    "exchange_new_items",
    "exchange_payment_method_id",
    "exchange_price_difference",
    "return_items",
    "return_payment_method_id",
)
ADDRESS_FIELDS = ("address1", "address2", "city", "country", "state", "zip")  # tau2 UserAddress field order


def _strings(raw: dict[str, Any]) -> dict[str, str]:
    return {str(k): v for k, v in raw.items()}


def _address(raw: dict[str, Any]) -> dict[str, Any]:
    return {f: raw[f] for f in ADDRESS_FIELDS}


def _variant(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "item_id": raw["item_id"],
        "options": _strings(raw["options"]),
        "available": raw["available"],
        "price": float(raw["price"]),
    }


def _product(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": raw["name"],
        "product_id": raw["product_id"],
        "variants": {k: _variant(v) for k, v in raw["variants"].items()},
    }


def _payment_method(raw: dict[str, Any]) -> dict[str, Any]:
    source = raw["source"]
    if source == "credit_card":
        return {"source": source, "id": raw["id"], "brand": raw["brand"], "last_four": raw["last_four"]}
    if source == "gift_card":
        return {"source": source, "id": raw["id"], "balance": float(raw["balance"])}
    if source == "paypal":
        return {"source": source, "id": raw["id"]}
    raise ValueError(f"unknown payment method source {source!r} (id {raw.get('id')!r})")


def _user(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "user_id": raw["user_id"],
        "name": {"first_name": raw["name"]["first_name"], "last_name": raw["name"]["last_name"]},
        "address": _address(raw["address"]),
        "email": raw["email"],
        "payment_methods": {k: _payment_method(v) for k, v in raw["payment_methods"].items()},
        "orders": list(raw["orders"]),
    }


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _order(raw: dict[str, Any]) -> dict[str, Any]:
    order = {
        "order_id": raw["order_id"],
        "user_id": raw["user_id"],
        "address": _address(raw["address"]),
        "items": [
            {
                "name": it["name"],
                "product_id": it["product_id"],
                "item_id": it["item_id"],
                "price": float(it["price"]),
                "options": _strings(it["options"]),
            }
            for it in raw["items"]
        ],
        "status": raw["status"],
        "fulfillments": [
            {"tracking_id": list(f["tracking_id"]), "item_ids": list(f["item_ids"])} for f in raw["fulfillments"]
        ],
        "payment_history": [
            {
                "transaction_type": p["transaction_type"],
                "amount": float(p["amount"]),
                "payment_method_id": p["payment_method_id"],
            }
            for p in raw["payment_history"]
        ],
    }
    for field in ORDER_OPTIONAL_FIELDS:
        value = raw.get(field)
        if field == "exchange_price_difference":
            value = _optional_float(value)
        elif isinstance(value, list):
            value = list(value)
        order[field] = value
    return order


def normalize_db(raw: dict[str, Any]) -> dict[str, Any]:
    """The retail DB in the shape of tau2's ``RetailDB.model_dump()``.

    Every model field is present in model order (absent optional order fields become ``None``), float-typed
    fields (prices, amounts, gift-card balances, exchange price differences) are floats, unknown keys are
    dropped, and record order follows ``raw``. Hashing the result with ``dict_hash`` gives tau2's
    ``get_db_hash()``. ``raw`` is not modified.
    """
    return {
        "products": {k: _product(v) for k, v in raw["products"].items()},
        "users": {k: _user(v) for k, v in raw["users"].items()},
        "orders": {k: _order(v) for k, v in raw["orders"].items()},
    }
