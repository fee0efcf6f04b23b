"""The retail agent's tools, re-implemented from tau2-bench's ``src/tau2/domains/retail/tools.py``.

The same tool names, parameters, check order, error messages and upstream quirks, so that replaying a trajectory
here gives the DB hash tau2 would give. Tools read records through :class:`~verl_rewards.tau2.state.DBState` and
mutate only the copies ``db.write`` hands out; a check that fails raises
:class:`~verl_rewards.tau2.toolkit.ToolError` before any write, except where tau2 itself writes first (noted per
tool). The DB is :func:`.normalize.normalize_db`'s.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from ...toolkit import Record, ToolError, Toolkit, detached_record, tool
from .. import validation
from ..common import TRANSFER_MESSAGE, calculate_expression
from .normalize import ADDRESS_FIELDS

CANCEL_REASONS = ("no longer needed", "ordered by mistake")
_ORDER_ID_HELP = "The order id, such as '#W0000000'. Note the '#' at the beginning of the order id."


USER_ADDRESS = validation.Model(
    "UserAddress", tuple((f, validation.string, validation.REQUIRED) for f in ADDRESS_FIELDS)
)


def _check_address(values: dict[str, Any]) -> dict[str, Any]:
    """Validate like tau2's pydantic ``UserAddress`` (every field a string) and return it in model order."""
    return validation.validate(USER_ADDRESS, values)


def _is_gift_card(method: dict[str, Any]) -> bool:
    return method.get("source") == "gift_card"


# ---------------------------------------------------------------------------------------------- toolkit


class AgentTools(Toolkit):
    """The retail agent's tools (tau2 ``RetailTools``), over a copy-on-write :class:`DBState`."""

    # ------------------------------------------------------------------ lookups (tau2's private getters)
    def _get_order(self, order_id: str) -> dict[str, Any]:
        order = self.db.get("orders", order_id)
        if order is None:
            raise ToolError("Order not found")
        return order

    def _get_user(self, user_id: str) -> dict[str, Any]:
        user = self.db.get("users", user_id)
        if user is None:
            raise ToolError("User not found")
        return user

    def _get_product(self, product_id: str) -> dict[str, Any]:
        product = self.db.get("products", product_id)
        if product is None:
            raise ToolError("Product not found")
        return product

    def _get_variant(self, product_id: str, variant_id: str) -> dict[str, Any]:
        product = self._get_product(product_id)
        if variant_id not in product["variants"]:
            raise ToolError("Variant not found")
        return product["variants"][variant_id]

    def _get_payment_method(self, user_id: str, payment_method_id: str) -> dict[str, Any]:
        user = self._get_user(user_id)
        if payment_method_id not in user["payment_methods"]:
            raise ToolError("Payment method not found")
        return user["payment_methods"][payment_method_id]

    def _adjust_gift_card(self, user_id: str, payment_method_id: str, delta: float) -> None:
        """Add ``delta`` to a gift card's balance and round to cents at once, as tau2 does."""
        method = self.db.write("users", user_id)["payment_methods"][payment_method_id]
        method["balance"] = round(method["balance"] + delta, 2)

    @staticmethod
    def _check_item_counts(order: dict[str, Any], item_ids: list[str], message: str) -> None:
        """Each id may be asked for at most as many times as the order holds it (multiset inclusion)."""
        held = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > held.count(item_id):
                raise ToolError(message.format(item_id=item_id))

    # ------------------------------------------------------------------------------------ generic tools
    @tool("generic")
    def calculate(self, expression: str) -> str:
        """Calculate the result of a mathematical expression.

        Args:
            expression: The mathematical expression to calculate, such as '2 + 2'. It may contain numbers,
                operators (+, -, *, /), parentheses and spaces.
        """
        return calculate_expression(expression)

    @tool("generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the user's issue. Only transfer if the user \
explicitly asks for a human agent, or if, given the policy and the available tools, you cannot solve the user's issue.

        Args:
            summary: A summary of the user's issue.
        """
        return TRANSFER_MESSAGE

    # --------------------------------------------------------------------------------------- read tools
    def _swap_price_difference(
        self, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str], *, allow_same: bool
    ) -> tuple[float, dict[str, Any]]:
        """Validate each (old item, new variant) pair in order and sum the price differences.

        Returns the unrounded sum and the last validated variant (tau2's modify quirk copies its price and options
        onto every modified item). ``allow_same=False`` rejects a pair whose ids are equal (modify, not exchange).
        """
        diff_price: float = 0
        variant: dict[str, Any] = {}
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            if not allow_same and item_id == new_item_id:
                raise ToolError("The new item id should be different from the old item id")
            item = next((it for it in order["items"] if it["item_id"] == item_id), None)
            if item is None:
                raise ToolError(f"Item {item_id} not found")
            variant = self._get_variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ToolError(f"New item {new_item_id} not found or available")
            diff_price += variant["price"] - item["price"]
        return diff_price, variant

    @tool("read")
    def find_user_id_by_email(self, email: str) -> str:
        """Find a user id by email. Returns an error if no user has this email.

        Args:
            email: The email of the user, such as 'something@example.com'.
        """
        for user_id, user in self.db.items("users"):
            if user["email"].lower() == email.lower():
                return user_id
        raise ToolError("User not found")

    @tool("read")
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Find a user id by first name, last name and zip code. Returns an error if no user matches. Look users \
up by email by default; use this only if the user cannot be found by email or does not remember it.

        Args:
            first_name: The first name of the customer, such as 'John'.
            last_name: The last name of the customer, such as 'Doe'.
            zip: The zip code of the customer, such as '12345'.
        """
        for user_id, user in self.db.items("users"):
            if (
                user["name"]["first_name"].lower() == first_name.lower()
                and user["name"]["last_name"].lower() == last_name.lower()
                and user["address"]["zip"] == zip
            ):
                return user_id
        raise ToolError("User not found")

    @tool("read")
    def get_order_details(self, order_id: str) -> Record:
        """Get the status and details of an order.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the beginning of the order id.
        """
        return detached_record(self._get_order(order_id))

    @tool("read")
    def get_product_details(self, product_id: str) -> Record:
        """Get the inventory details of a product, including all its variants (items).

        Args:
            product_id: The product id, such as '6086499569'. The product id is different from the item id.
        """
        return detached_record(self._get_product(product_id))

    @tool("read")
    def get_item_details(self, item_id: str) -> Record:
        """Get the inventory details of an item (a variant of a product).

        Args:
            item_id: The item id, such as '6086499569'. The item id is different from the product id.
        """
        for product in self.db.values("products"):
            if item_id in product["variants"]:
                return detached_record(product["variants"][item_id])
        raise ToolError("Item not found")

    @tool("read")
    def get_user_details(self, user_id: str) -> Record:
        """Get the details of a user, including their payment methods and orders.

        Args:
            user_id: The user id, such as 'sara_doe_496'.
        """
        return detached_record(self._get_user(user_id))

    @tool("read")
    def list_all_product_types(self) -> str:
        """List the name and product id of every product type. Each product type has a variety of items with \
unique item ids and options. There are only 50 product types in the store. Returns a JSON object mapping product \
names to product ids, sorted by name."""
        names = {product["name"]: product["product_id"] for product in self.db.values("products")}
        return json.dumps(names, sort_keys=True)

    # -------------------------------------------------------------------------------------- write tools
    @tool("write")
    def cancel_pending_order(self, order_id: str, reason: Literal["no longer needed", "ordered by mistake"]) -> Record:
        """Cancel a pending order. Processed or delivered orders cannot be cancelled. Explain the cancellation \
details and ask for explicit user confirmation (yes/no) before calling. The order status becomes 'cancelled' and \
the payments are refunded: immediately to gift cards, within 5-7 business days to other payment methods. Returns \
the order details after the cancellation.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the beginning of the order id.
            reason: The reason for cancellation, either 'no longer needed' or 'ordered by mistake'.
        """
        order = self._get_order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ToolError("Invalid reason")
        refunds = []
        for payment in order["payment_history"]:
            method_id = payment["payment_method_id"]
            refunds.append(
                {"transaction_type": "refund", "amount": float(payment["amount"]), "payment_method_id": method_id}
            )
            user = self._get_user(order["user_id"])
            # tau2 quirk: a missing method fails here, after earlier gift-card refunds were already credited
            method = self._get_payment_method(user["user_id"], method_id)
            if _is_gift_card(method):
                self._adjust_gift_card(user["user_id"], method_id, payment["amount"])
        order = self.db.write("orders", order_id)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return detached_record(order)

    @tool("write")
    def modify_pending_order_address(
        self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> Record:
        """Modify the shipping address of a pending order. Explain the modification details and ask for explicit \
user confirmation (yes/no) before calling. Returns the order details after the modification.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the beginning of the order id.
            address1: The first line of the address, such as '123 Main St'.
            address2: The second line of the address, such as 'Apt 1' or ''.
            city: The city, such as 'San Francisco'.
            state: The state, such as 'CA'.
            country: The country, such as 'USA'.
            zip: The zip code, such as '12345'.
        """
        order = self._get_order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified")
        address = _check_address(
            {"address1": address1, "address2": address2, "city": city, "state": state, "country": country, "zip": zip}
        )
        order = self.db.write("orders", order_id)
        order["address"] = address
        return detached_record(order)

    @tool("write")
    def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Record:
        """Modify items in a pending order to new items of the same product type. This can be done only once per \
pending order. Explain the modification details and ask for explicit user confirmation (yes/no) before calling. \
Returns the order details after the modification.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the beginning of the order id.
            item_ids: The item ids to be modified, each such as '1008292230'. The list may contain duplicates.
            new_item_ids: The item ids to modify them into, each such as '1008292230'. The list may contain \
duplicates. Each new item id must be of the same product as the item id in the same position.
            payment_method_id: The payment method id to pay or receive the refund of the price difference, such \
as 'gift_card_0000000' or 'credit_card_0000000'. It can be looked up in the user or order details.
        """
        order = self._get_order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be modified")
        self._check_item_counts(order, item_ids, "{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        # tau2 does not round this difference
        diff_price, variant = self._swap_price_difference(order, item_ids, new_item_ids, allow_same=False)
        method = self._get_payment_method(order["user_id"], payment_method_id)
        if _is_gift_card(method) and method["balance"] < diff_price:
            raise ToolError("Insufficient gift card balance to pay for the new item")

        order = self.db.write("orders", order_id)
        order["payment_history"].append(
            {
                "transaction_type": "payment" if diff_price > 0 else "refund",
                "amount": float(abs(diff_price)),
                "payment_method_id": payment_method_id,
            }
        )
        if _is_gift_card(method):
            self._adjust_gift_card(order["user_id"], payment_method_id, -diff_price)
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            item = next(it for it in order["items"] if it["item_id"] == item_id)
            item["item_id"] = new_item_id
            # tau2 quirk: every modified item takes the price and options of the *last* validated new variant
            item["price"] = variant["price"]
            item["options"] = dict(variant["options"])
        order["status"] = "pending (item modified)"
        return detached_record(order)

    @tool("write")
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Record:
        """Modify the payment method of a pending order. Explain the modification details and ask for explicit \
user confirmation (yes/no) before calling. Returns the order details after the modification.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the beginning of the order id.
            payment_method_id: The new payment method id, such as 'gift_card_0000000' or 'credit_card_0000000'. \
It can be looked up in the user or order details.
        """
        order = self._get_order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified")
        method = self._get_payment_method(order["user_id"], payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ToolError("There should be exactly one payment for a pending order")
        old_method_id = history[0]["payment_method_id"]
        if old_method_id == payment_method_id:
            raise ToolError("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if _is_gift_card(method) and method["balance"] < amount:
            raise ToolError("Insufficient gift card balance to pay for the order")

        order = self.db.write("orders", order_id)
        order["payment_history"].extend(
            [
                {"transaction_type": "payment", "amount": float(amount), "payment_method_id": payment_method_id},
                {"transaction_type": "refund", "amount": float(amount), "payment_method_id": old_method_id},
            ]
        )
        if _is_gift_card(method):
            self._adjust_gift_card(order["user_id"], payment_method_id, -amount)
        # tau2 looks the old method up only now: if it is gone, the writes above stay and the call errors
        old_method = self._get_payment_method(order["user_id"], old_method_id)
        if _is_gift_card(old_method):
            self._adjust_gift_card(order["user_id"], old_method_id, amount)
        return detached_record(order)

    @tool("write")
    def modify_user_address(
        self, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> Record:
        """Modify the default address of a user. Explain the modification details and ask for explicit user \
confirmation (yes/no) before calling. Returns the user details after the modification.

        Args:
            user_id: The user id, such as 'sara_doe_496'.
            address1: The first line of the address, such as '123 Main St'.
            address2: The second line of the address, such as 'Apt 1' or ''.
            city: The city, such as 'San Francisco'.
            state: The state, such as 'CA'.
            country: The country, such as 'USA'.
            zip: The zip code, such as '12345'.
        """
        self._get_user(user_id)
        address = _check_address(
            {"address1": address1, "address2": address2, "city": city, "state": state, "country": country, "zip": zip}
        )
        user = self.db.write("users", user_id)
        user["address"] = address
        return detached_record(user)

    @tool("write")
    def exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Record:
        """Exchange items in a delivered order for new items of the same product type. A delivered order can be \
returned or exchanged only once. Explain the exchange details and ask for explicit user confirmation (yes/no) \
before calling. Returns the order details after the exchange request.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the beginning of the order id.
            item_ids: The item ids to be exchanged, each such as '1008292230'. The list may contain duplicates.
            new_item_ids: The item ids to exchange them for, each such as '1008292230'. The list may contain \
duplicates. Each new item id must be of the same product as the item id in the same position.
            payment_method_id: The payment method id to pay or receive the refund of the price difference, such \
as 'gift_card_0000000' or 'credit_card_0000000'. It can be looked up in the user or order details.
        """
        order = self._get_order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        self._check_item_counts(order, item_ids, "Number of {item_id} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match.")
        diff_price, _ = self._swap_price_difference(order, item_ids, new_item_ids, allow_same=True)
        diff_price = round(diff_price, 2)  # int 0 when no items are given, as in tau2
        method = self._get_payment_method(order["user_id"], payment_method_id)
        if _is_gift_card(method) and method["balance"] < diff_price:
            raise ToolError("Insufficient gift card balance to pay for the price difference")

        order = self.db.write("orders", order_id)
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff_price
        return detached_record(order)

    @tool("write")
    def return_delivered_order_items(self, order_id: str, item_ids: list[str], payment_method_id: str) -> Record:
        """Return some items of a delivered order. The order status becomes 'return requested' and the user will \
receive a follow-up email on how and where to return the items. Explain the return details and ask for explicit \
user confirmation (yes/no) before calling. Returns the order details after the return request.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the beginning of the order id.
            item_ids: The item ids to be returned, each such as '1008292230'. The list may contain duplicates.
            payment_method_id: The payment method id to receive the refund, such as 'gift_card_0000000' or \
'credit_card_0000000'. It must be the original payment method or a gift card.
        """
        order = self._get_order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        user = self._get_user(order["user_id"])
        method = self._get_payment_method(user["user_id"], payment_method_id)
        if not _is_gift_card(method) and payment_method_id != order["payment_history"][0]["payment_method_id"]:
            raise ToolError("Payment method should be the original payment method")
        self._check_item_counts(order, item_ids, "Some item not found")

        order = self.db.write("orders", order_id)
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return detached_record(order)
