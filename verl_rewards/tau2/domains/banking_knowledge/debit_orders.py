"""The agent's discoverable tools that issue debit cards: ordering one and the three activation tools
(tau2-bench 1.0.1, ``src/tau2/domains/banking_knowledge/tools.py``)."""

from __future__ import annotations

from typing import Any

from ...toolkit import WRITE
from .catalog import ACTIVATION_TOOL
from .checks import digits, missing_args, one_of, pin_problem
from .common import TODAY, deterministic_id, prefixed_id, title_words
from .protocol import BankTools, discoverable


class DebitOrderTools(BankTools):
    """Debit card ordering and activation tools of the agent (discoverable; part of ``KnowledgeTools``)."""

    @discoverable(WRITE)
    def order_debit_card_5739(
        self,
        account_id: str,
        user_id: str,
        delivery_option: str,
        delivery_fee: float,
        card_design: str,
        design_fee: float,
        shipping_address: str,
        excess_replacement_fee: float | None = None,
    ) -> str:
        excess: Any = excess_replacement_fee or 0
        try:
            delivery = float(delivery_fee) if delivery_fee is not None else None
        except (TypeError, ValueError):
            return "Error: delivery_fee must be a number."
        try:
            design = float(design_fee) if design_fee is not None else None
        except (TypeError, ValueError):
            return "Error: design_fee must be a number."
        try:
            excess = float(excess)
        except (TypeError, ValueError):
            excess = 0
        if missing_args(
            account_id, user_id, delivery_option, card_design, shipping_address, numbers=(delivery, design)
        ):
            return (
                "Error: Missing required parameters. Required: account_id, user_id, delivery_option, delivery_fee, "
                "card_design, design_fee, shipping_address."
            )
        assert delivery is not None and design is not None
        deliveries = ["STANDARD", "EXPEDITED", "RUSH"]
        if delivery_option.upper() not in deliveries:
            return one_of("delivery_option", deliveries)
        option = delivery_option.upper()
        designs = ["CLASSIC", "PREMIUM", "CUSTOM"]
        if card_design.upper() not in designs:
            return one_of("card_design", designs)
        look = card_design.upper()
        accounts = self.t.r("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class") != "checking":
            return (
                f"Error: Debit cards can only be ordered for checking accounts. Account '{account_id}' is a "
                f"{account.get('class')} account."
            )
        if account.get("status") != "OPEN":
            return f"Error: Account must be OPEN. Account '{account_id}' has status: {account.get('status')}"
        if account.get("user_id") != user_id:
            return f"Error: Account '{account_id}' does not belong to user '{user_id}'."
        try:  # tau2 strips only "," here: a "$" balance fails to parse and counts as 0
            holdings = float(str(account.get("current_holdings", "0")).replace(",", ""))
        except ValueError:
            holdings = 0.0
        if holdings < 25.0:
            return f"Error: Account must have a minimum balance of $25. Current balance: ${holdings:.2f}"
        for order in self.t.r("debit_card_orders").values():
            if order.get("account_id") == account_id and order.get("status") == "PENDING":
                return f"Error: There is already a pending debit card order for account '{account_id}'."
        cards = self.t.r("debit_cards")
        if any(c.get("account_id") == account_id and c.get("status") == "ACTIVE" for c in cards.values()):
            return (
                f"Error: Account '{account_id}' already has an active debit card. Maximum 1 active card per "
                "checking account."
            )
        total = delivery + design + excess
        if total > 0 and holdings < total:
            return f"Error: Insufficient funds for fees. Total fees: ${total:.2f}. Current balance: ${holdings:.2f}"
        expected = {"STANDARD": "7-10 business days", "EXPEDITED": "3-5 business days", "RUSH": "1-2 business days"}[
            option
        ]
        order_id = prefixed_id("dcord", f"debit_card_order:{account_id}:{user_id}:{option}")
        order = {
            "order_id": order_id,
            "account_id": account_id,
            "user_id": user_id,
            "delivery_option": option,
            "card_design": look,
            "shipping_address": shipping_address,
            "delivery_fee": delivery,
            "design_fee": design,
            "excess_replacement_fee": excess,
            "total_fee": total,
            "order_date": TODAY,
            "expected_delivery": expected,
            "status": "PENDING",
        }
        if not self.t.add("debit_card_orders", order_id, order):
            return "Error: Failed to create debit card order. Order may already exist."
        if total > 0:
            self.t.rec("accounts", account_id)["current_holdings"] = f"{holdings - total:.2f}"
            fees = _fee_items(delivery, design, excess, "")
            fee_txn = f"btxn_dcfee_{order_id[-8:]}"
            self.t.add(
                "bank_account_transaction_history",
                fee_txn,
                {
                    "transaction_id": fee_txn,
                    "account_id": account_id,
                    "date": TODAY,
                    "description": f"DEBIT CARD ORDER FEE - {', '.join(fees)}",
                    "amount": -total,
                    "type": "debit_card_fee",
                    "status": "posted",
                },
            )
        card_id = self._new_card(account_id, user_id, look)
        parts = [
            "Debit Card Order Confirmed",
            f"Order ID: {order_id}",
            f"Card ID: {card_id}",
            f"Linked Account: {account_id}",
            f"Delivery Option: {option}",
            f"Card Design: {look}",
            f"Shipping Address: {shipping_address}",
            f"Expected Delivery: {expected}",
            "",
            "Note: Card will arrive with status PENDING. Customer must call to activate after receiving the card.",
        ]
        if total > 0:
            details = _fee_items(delivery, design, excess, ":")
            parts.append(f"Total Fees: ${total:.2f} ({', '.join(details)}) - CHARGED to account {account_id}")
            parts.append(f"New Account Balance: ${holdings - total:.2f}")
        else:
            parts.append("Total Fees: $0 (No additional charges)")
        return "\n".join(parts)

    def _new_card(self, account_id: str, user_id: str, look: str) -> str:
        """Add the PENDING card of a new order (number, CVV, holder, expiry and issue reason as tau2 derives them)."""
        card_id = prefixed_id("dbc", f"debit_card:{account_id}:{user_id}:{TODAY}")
        seed = f"card_details:{card_id}"
        last4 = "".join(c for c in deterministic_id(seed + ":last4", 8) if c.isdigit())[:4].zfill(4)
        cvv = "".join(c for c in deterministic_id(seed + ":cvv", 6) if c.isdigit())[:3].zfill(3)
        holder = "CARDHOLDER"
        users = self.t.r("users")
        if user_id in users:
            holder = users[user_id].get("name", "CARDHOLDER").upper()
        month, _, year = TODAY.split("/")
        day = "31" if month in ["01", "03", "05", "07", "08", "10", "12"] else ("28" if month == "02" else "30")
        existing = [c for c in self.t.r("debit_cards").values() if c.get("account_id") == account_id]
        closed = next((c for c in existing if c.get("status") == "CLOSED"), None)
        if closed:
            why = closed.get("closure_reason", "first_card")
            if why in ["lost", "stolen", "fraud", "fraud_suspected"]:
                issue_reason = why if why != "fraud_suspected" else "fraud"
            else:
                issue_reason = "first_card"
        elif existing:
            issue_reason = "first_card"
        else:
            issue_reason = "new_account"
        self.t.add(
            "debit_cards",
            card_id,
            {
                "card_id": card_id,
                "account_id": account_id,
                "user_id": user_id,
                "cardholder_name": holder,
                "last_4_digits": last4,
                "cvv": cvv,
                "status": "PENDING",
                "issue_date": TODAY,
                "expiration_date": f"{month}/{day}/{int(year) + 4}",
                "card_design": look,
                "issue_reason": issue_reason,
            },
        )
        return card_id

    def _activation_error(
        self, name: str, card_id: Any, last_4_digits: Any, expiration_date: Any, cvv: Any, pin: Any
    ) -> str | None:
        """tau2's checks shared by the three activation tools (None: the card may be activated); the tool ``name``
        activates the cards whose issue reason :data:`~.catalog.ACTIVATION_TOOL` maps to it."""
        if missing_args(card_id, last_4_digits, expiration_date, cvv, pin):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, expiration_date, cvv, pin."
        pin_error = pin_problem(pin)
        if pin_error:
            return f"Error: {pin_error}"
        if not digits(cvv, 3):
            return "Error: CVV must be exactly 3 digits."
        if not digits(last_4_digits, 4):
            return "Error: Last 4 digits must be exactly 4 digits."
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        issue_reason = card.get("issue_reason", "new_account")
        if ACTIVATION_TOOL.get(issue_reason) != name:
            right = ACTIVATION_TOOL.get(issue_reason, "unknown")
            return (
                f"Error: Wrong activation tool. This card has issue_reason='{issue_reason}'. "
                f"Please use {right} instead of {name}."
            )
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if card.get("status") != "PENDING":
            return (
                f"Error: Debit card '{card_id}' cannot be activated. Current status: {card.get('status')}. "
                "Only PENDING cards can be activated."
            )
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        return self._closed_account_error(card, "activated")

    def _activate(self, card_id: str, status: str, updates: dict[str, Any]) -> list[str]:
        """Activate the card; other ACTIVE cards of its account get ``status`` and ``updates`` (their ids returned)."""
        card = self.t.rec("debit_cards", card_id)
        card["status"] = "ACTIVE"
        card["activated_date"] = TODAY
        others = []
        for other_id, other in list(self.t.r("debit_cards").items()):
            if (
                other_id != card_id
                and other.get("account_id") == card.get("account_id")
                and other.get("status") == "ACTIVE"
            ):
                writable = self.t.rec("debit_cards", other_id)
                writable["status"] = status
                writable.update(updates)
                others.append(other_id)
        return others

    @discoverable(WRITE)
    def activate_debit_card_8291(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        error = self._activation_error("activate_debit_card_8291", card_id, last_4_digits, expiration_date, cvv, pin)
        if error:
            return error
        others = self._activate(
            card_id, "DEACTIVATED", {"deactivated_date": TODAY, "deactivation_reason": "New card activated"}
        )
        parts = [
            "New Debit Card Activation Successful",
            f"Card ID: {card_id}",
            "Status: ACTIVE",
            f"Activation Date: {TODAY}",
            "",
            "Your card is now ready to use at any ATM or point of sale terminal.",
            "For security, please sign the back of your card.",
        ]
        if others:
            parts.append(f"\nNote: Previous card(s) have been deactivated: {', '.join(others)}")
        return "\n".join(parts)

    @discoverable(WRITE)
    def activate_debit_card_8292(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        error = self._activation_error("activate_debit_card_8292", card_id, last_4_digits, expiration_date, cvv, pin)
        if error:
            return error
        reason = self.t.r("debit_cards")[card_id].get("issue_reason", "lost")
        retired = {"deactivated_date": TODAY, "deactivation_reason": f"Replacement card activated ({reason})"}
        others = self._activate(card_id, "DEACTIVATED", retired)
        parts = [
            "Replacement Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Replacement Reason: {title_words(reason)}",
            "Status: ACTIVE",
            f"Activation Date: {TODAY}",
            "",
            "Your replacement card is now ready to use.",
            "",
            "IMPORTANT SECURITY REMINDERS:",
            "- Please review your recent transactions for any unauthorized charges",
            "- Report any suspicious activity immediately",
        ]
        if reason == "fraud":
            parts.append("- Since fraud was suspected, we recommend changing your online banking password")
        if others:
            parts.append(f"\nPrevious card(s) have been deactivated for security: {', '.join(others)}")
        return "\n".join(parts)

    @discoverable(WRITE)
    def activate_debit_card_8293(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        error = self._activation_error("activate_debit_card_8293", card_id, last_4_digits, expiration_date, cvv, pin)
        if error:
            return error
        reason = self.t.r("debit_cards")[card_id].get("issue_reason", "expired")
        retired = {"grace_period_ends": TODAY, "deactivation_reason": f"Reissued card activated ({reason})"}
        others = self._activate(card_id, "GRACE_PERIOD", retired)
        parts = [
            "Reissued Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Reissue Reason: {title_words(reason)}",
            "Status: ACTIVE",
            f"Activation Date: {TODAY}",
            "",
            "Your reissued card is now ready to use.",
        ]
        if others:
            parts.append(
                f"\nNote: Your previous card(s) ({', '.join(others)}) will remain active for 24 hours as a grace "
                "period."
            )
            parts.append("After 24 hours, the old card(s) will be automatically deactivated.")
        if reason in ["expired", "bank_reissue"]:
            parts.append(
                "\nReminder: If your card number changed, please update any recurring payments with your new card "
                "details."
            )
        return "\n".join(parts)


def _fee_items(delivery: float, design: float, excess: float, sep: str) -> list[str]:
    """The charged fees of a debit card order as tau2 lists them (``sep`` after each label: "" or ":")."""
    items = [
        (f"Delivery{sep} ${delivery}", delivery),
        (f"Design{sep} ${design}", design),
        (f"Excess Replacement{sep} ${excess:.0f}", excess),
    ]
    return [text for text, fee in items if fee > 0]
