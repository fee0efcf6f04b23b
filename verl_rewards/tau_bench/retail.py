"""tau-bench v1 retail: the 16 tools of ``tau_bench/envs/retail/tools/`` over the raw retail data.

Data: ``orders.json``, ``products.json``, ``users.json`` as shipped (order ids carry the ``#``; users have no
``user_id`` field; gift-card balances may be ints). Differences from our tau2 retail that matter for the hash:
the ``modify_*`` tools need status exactly ``"pending"``; ``modify_pending_order_items`` accepts same-id pairs,
gives each item its own new variant's price and options, and records an unrounded price difference (a refund of
0 when nothing changes); gift cards are recognised by ``"gift_card"`` in the payment method id where
tau-bench does so.
"""

from __future__ import annotations

from typing import Any

from ..engine.retail_airline import request_exchange, user_id_by_email, user_id_by_name_zip
from ..engine.toolkit import READ, WRITE, clone_json, tool
from .domain_spec import TauBenchDomainSpec
from .toolkit import TauBenchToolkit, dumps

NAME = "retail"
CANCEL_REASONS = ["no longer needed", "ordered by mistake"]


def _address(address1: Any, address2: Any, city: Any, state: Any, country: Any, zip: Any) -> dict[str, Any]:
    return {"address1": address1, "address2": address2, "city": city, "state": state, "country": country, "zip": zip}


class RetailTools(TauBenchToolkit):
    """The retail agent's tools (tau-bench ``ALL_TOOLS`` order is kept by ``tools_info.json``)."""

    DOMAIN = NAME

    # ----------------------------------------------------------------------------------------- helpers
    def _item_swap(
        self, order_id: Any, status: str, refusal: str, item_ids: Any, new_item_ids: Any
    ) -> tuple[dict[str, Any], float] | str:
        """The checks exchanges and item modifications share, in tau-bench's order: the order and the price
        difference, or the error text to answer."""
        if not self.has("orders", order_id):
            return "Error: order not found"
        order = self.at("orders", order_id)
        if order["status"] != status:
            return f"Error: {refusal}"
        missing = self._count_check(order, item_ids)
        if missing is not _OK:
            return f"Error: {missing} not found"
        if len(item_ids) != len(new_item_ids):
            return "Error: the number of items to be exchanged should match"
        diff = self._price_difference(order, item_ids, new_item_ids)
        if isinstance(diff, _Refused):
            return diff.text
        return order, diff

    def _count_check(self, order: dict[str, Any], item_ids: Any) -> str | None:
        """The first requested item id asked for more often than the order holds it."""
        all_item_ids = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > all_item_ids.count(item_id):
                return item_id
        return _OK

    def _price_difference(self, order: dict[str, Any], item_ids: Any, new_item_ids: Any) -> Any:
        """Σ(new - old) over the pairs, or the error text of the first unavailable new item."""
        diff = 0
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            item = [item for item in order["items"] if item["item_id"] == item_id][0]
            variants = self.at("products", item["product_id"])["variants"]
            if not (new_item_id in variants and variants[new_item_id]["available"]):
                return _Refused(f"Error: new item {new_item_id} not found or available")
            diff += variants[new_item_id]["price"] - item["price"]
        return diff

    # ------------------------------------------------------------------------------------------- reads
    @tool(READ)
    def find_user_id_by_email(self, email: Any) -> str:
        """The user id whose email matches (case-insensitive), first in file order."""
        user_id = user_id_by_email(self.db, email)
        return "Error: user not found" if user_id is None else user_id

    @tool(READ)
    def find_user_id_by_name_zip(self, first_name: Any, last_name: Any, zip: Any) -> str:
        """The user id with these names (case-insensitive) and zip (exact), first in file order."""
        user_id = user_id_by_name_zip(self.db, first_name, last_name, zip)
        return "Error: user not found" if user_id is None else user_id

    @tool(READ)
    def get_order_details(self, order_id: Any) -> str:
        """The order as JSON."""
        return self.record_json("orders", order_id, missing="order not found")

    @tool(READ)
    def get_product_details(self, product_id: Any) -> str:
        """The product with all its variants as JSON."""
        return self.record_json("products", product_id, missing="product not found")

    @tool(READ)
    def get_user_details(self, user_id: Any) -> str:
        """The user profile as JSON."""
        return self.record_json("users", user_id, missing="user not found")

    @tool(READ)
    def list_all_product_types(self) -> str:
        """``{product name: product id}`` sorted by name."""
        names = {product["name"]: product["product_id"] for product in self.db.values("products")}
        return dumps(dict(sorted(names.items())))

    # ------------------------------------------------------------------------------------------ writes
    @tool(WRITE)
    def cancel_pending_order(self, order_id: Any, reason: Any) -> str:
        """Cancel a pending order; payments are refunded (gift cards at once)."""
        if not self.has("orders", order_id):
            return "Error: order not found"
        if self.at("orders", order_id)["status"] != "pending":
            return "Error: non-pending order cannot be cancelled"
        if reason not in CANCEL_REASONS:
            return "Error: invalid reason"
        order = self.db.write("orders", order_id)
        refunds = []
        for payment in order["payment_history"]:
            payment_id = payment["payment_method_id"]
            refunds.append({"transaction_type": "refund", "amount": payment["amount"], "payment_method_id": payment_id})
            if "gift_card" in payment_id:
                card = self.db.write("users", order["user_id"])["payment_methods"][payment_id]
                card["balance"] += payment["amount"]
                card["balance"] = round(card["balance"], 2)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return dumps(order)

    @tool(WRITE)
    def exchange_delivered_order_items(
        self, order_id: Any, item_ids: Any, new_item_ids: Any, payment_method_id: Any
    ) -> str:
        """Request an exchange of delivered items for other variants of the same products."""
        checked = self._item_swap(
            order_id, "delivered", "non-delivered order cannot be exchanged", item_ids, new_item_ids
        )
        if isinstance(checked, str):
            return checked
        order, diff = checked
        diff = round(diff, 2)
        methods = self.at("users", order["user_id"])["payment_methods"]
        if payment_method_id not in methods:
            return "Error: payment method not found"
        method = methods[payment_method_id]
        if method["source"] == "gift_card" and method["balance"] < diff:
            return "Error: insufficient gift card balance to pay for the price difference"
        return dumps(request_exchange(self.db, order_id, item_ids, new_item_ids, payment_method_id, diff))

    @tool(WRITE)
    def modify_pending_order_address(
        self, order_id: Any, address1: Any, address2: Any, city: Any, state: Any, country: Any, zip: Any
    ) -> str:
        """Replace the shipping address of a pending order."""
        if not self.has("orders", order_id):
            return "Error: order not found"
        if self.at("orders", order_id)["status"] != "pending":
            return "Error: non-pending order cannot be modified"
        order = self.db.write("orders", order_id)
        order["address"] = _address(address1, address2, city, state, country, zip)
        return dumps(order)

    @tool(WRITE)
    def modify_pending_order_items(
        self, order_id: Any, item_ids: Any, new_item_ids: Any, payment_method_id: Any
    ) -> str:
        """Swap items of a pending order for other variants; the difference is paid or refunded."""
        checked = self._item_swap(order_id, "pending", "non-pending order cannot be modified", item_ids, new_item_ids)
        if isinstance(checked, str):
            return checked
        order, diff = checked
        user_id = order["user_id"]
        methods = self.at("users", user_id)["payment_methods"]
        if payment_method_id not in methods:
            return "Error: payment method not found"
        if methods[payment_method_id]["source"] == "gift_card" and methods[payment_method_id]["balance"] < diff:
            return "Error: insufficient gift card balance to pay for the new item"
        order = self.db.write("orders", order_id)
        order["payment_history"].append(
            {
                "transaction_type": "payment" if diff > 0 else "refund",
                "amount": abs(diff),
                "payment_method_id": payment_method_id,
            }
        )
        if methods[payment_method_id]["source"] == "gift_card":
            card = self.db.write("users", user_id)["payment_methods"][payment_method_id]
            card["balance"] -= diff
            card["balance"] = round(card["balance"], 2)
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            item = [item for item in order["items"] if item["item_id"] == item_id][0]
            variant = self.at("products", item["product_id"])["variants"][new_item_id]
            item["item_id"] = new_item_id
            item["price"] = variant["price"]
            item["options"] = clone_json(variant["options"])
        order["status"] = "pending (item modified)"
        return dumps(order)

    @tool(WRITE)
    def modify_pending_order_payment(self, order_id: Any, payment_method_id: Any) -> str:
        """Pay a pending order with another method; the old payment is refunded."""
        if not self.has("orders", order_id):
            return "Error: order not found"
        order = self.at("orders", order_id)
        if order["status"] != "pending":
            return "Error: non-pending order cannot be modified"
        user_id = order["user_id"]
        methods = self.at("users", user_id)["payment_methods"]
        if payment_method_id not in methods:
            return "Error: payment method not found"
        history = order["payment_history"]
        if len(history) > 1 or history[0]["transaction_type"] != "payment":
            return "Error: there should be exactly one payment for a pending order"
        if history[0]["payment_method_id"] == payment_method_id:
            return "Error: the new payment method should be different from the current one"
        amount = history[0]["amount"]
        if methods[payment_method_id]["source"] == "gift_card" and methods[payment_method_id]["balance"] < amount:
            return "Error: insufficient gift card balance to pay for the order"
        order = self.db.write("orders", order_id)
        old_id = order["payment_history"][0]["payment_method_id"]
        order["payment_history"].extend(
            [
                {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
                {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
            ]
        )
        if methods[payment_method_id]["source"] == "gift_card":
            card = self.db.write("users", user_id)["payment_methods"][payment_method_id]
            card["balance"] -= amount
            card["balance"] = round(card["balance"], 2)
        if "gift_card" in old_id:
            old_card = self.db.write("users", user_id)["payment_methods"][old_id]
            old_card["balance"] += amount
            old_card["balance"] = round(old_card["balance"], 2)
        return dumps(order)

    @tool(WRITE)
    def modify_user_address(
        self, user_id: Any, address1: Any, address2: Any, city: Any, state: Any, country: Any, zip: Any
    ) -> str:
        """Replace a user's default address."""
        if not self.has("users", user_id):
            return "Error: user not found"
        user = self.db.write("users", user_id)
        user["address"] = _address(address1, address2, city, state, country, zip)
        return dumps(user)

    @tool(WRITE)
    def return_delivered_order_items(self, order_id: Any, item_ids: Any, payment_method_id: Any) -> str:
        """Request a return of delivered items, refunded to the original method or a gift card."""
        if not self.has("orders", order_id):
            return "Error: order not found"
        order = self.at("orders", order_id)
        if order["status"] != "delivered":
            return "Error: non-delivered order cannot be returned"
        if payment_method_id not in self.at("users", order["user_id"])["payment_methods"]:
            return "Error: payment method not found"
        history = order["payment_history"]
        if "gift_card" not in payment_method_id and payment_method_id != history[0]["payment_method_id"]:
            return "Error: payment method should be either the original payment method or a gift card"
        if self._count_check(order, item_ids) is not _OK:
            return "Error: some item not found"
        order = self.db.write("orders", order_id)
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return dumps(order)


class _Refused:
    """An error text returned from a helper (distinct from any value a tool computes)."""

    def __init__(self, text: str):
        self.text = text


_OK: Any = object()

SPEC = TauBenchDomainSpec(name=NAME, data_files=("orders", "products", "users"), agent_toolkit=RetailTools)
