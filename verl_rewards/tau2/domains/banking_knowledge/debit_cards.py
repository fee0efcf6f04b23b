"""The agent's discoverable tools on an issued debit card: close, freeze, unfreeze, alerts, PINs, limits, recurring
blocks, listing (tau2-bench 1.0.1, ``src/tau2/domains/banking_knowledge/tools.py``)."""

from __future__ import annotations

import json
from datetime import datetime

from ...toolkit import READ, WRITE
from .catalog import DEFAULT_ATM_LIMITS
from .checks import digits, missing_args, one_of, pin_problem
from .common import TODAY, title_words
from .protocol import BankTools, discoverable


class DebitCardTools(BankTools):
    """Debit card tools of the agent (discoverable; part of ``KnowledgeTools``)."""

    @discoverable(WRITE)
    def set_debit_card_recurring_block_7382(self, card_id: str, block_recurring: bool) -> str:
        if not card_id:
            return "Error: Missing required parameter: card_id"
        card = self.t.r("debit_cards").get(card_id)
        if not card:
            return f"Error: Debit card '{card_id}' not found."
        status = card.get("status", "").upper()
        if status != "ACTIVE":
            return (
                f"Error: Cannot update recurring block settings for a card with status '{status}'. Card must be ACTIVE."
            )
        self.t.rec("debit_cards", card_id)["recurring_blocked"] = block_recurring
        if block_recurring:
            return (
                f"Recurring payments BLOCKED for debit card {card_id}.\n"
                f"All recurring/subscription charges will be declined.\n"
                f"One-time purchases are not affected.\n"
                f"This change takes effect within 24 hours."
            )
        return (
            f"Recurring payments UNBLOCKED for debit card {card_id}.\n"
            f"Recurring/subscription charges will now be allowed.\n"
            f"This change takes effect within 24 hours."
        )

    @discoverable(WRITE)
    def close_debit_card_4721(self, card_id: str, reason: str) -> str:
        if missing_args(card_id, reason):
            return "Error: Missing required parameters. Required: card_id, reason."
        reasons = ["lost", "stolen", "fraud_suspected", "damaged", "no_longer_needed", "account_closing"]
        if reason.lower() not in reasons:
            return one_of("reason", reasons)
        reason = reason.lower()
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        previous = cards[card_id].get("status")
        if previous not in ["ACTIVE", "PENDING"]:
            return (
                f"Error: Debit card '{card_id}' cannot be closed. Current status: {previous}. "
                "Only ACTIVE or PENDING cards can be closed."
            )
        card = self.t.rec("debit_cards", card_id)
        card["status"] = "CLOSED"
        card["closed_date"] = TODAY
        card["closure_reason"] = reason
        parts = [
            "Debit Card Closed Successfully",
            f"Card ID: {card_id}",
            f"Previous Status: {previous}",
            "New Status: CLOSED",
            f"Closure Reason: {title_words(reason)}",
            f"Closure Date: {TODAY}",
            "",
        ]
        if reason in ["lost", "stolen", "fraud_suspected"]:
            parts.append("IMPORTANT: This card has been immediately deactivated for security.")
            parts.append("Any pending transactions may still be processed.")
            if reason == "fraud_suspected":
                parts.append(
                    "Please advise the customer to review recent transactions and file disputes for any "
                    "unauthorized charges."
                )
                parts.append("Also recommend changing their online banking password.")
        parts.append("")
        parts.append(
            "Note: This card cannot be reactivated. If the customer needs a new card, they can order one through "
            "the standard ordering process."
        )
        parts.append("Any recurring payments linked to this card will need to be updated with new payment information.")
        return "\n".join(parts)

    def _move_card(self, card_id: str, *, to: str, done: str, already: str, needs: str) -> str | None:
        """tau2's checks before freezing or unfreezing: the card exists, is not already ``to`` (``already`` names
        that state), has status ``needs`` and, when unfreezing, its checking account is open; then the move."""
        if not card_id:
            return "Error: Missing required parameter: card_id."
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        status = cards[card_id].get("status")
        if status == to:
            return f"Error: Debit card '{card_id}' is already {already}."
        if status != needs:
            return (
                f"Error: Debit card '{card_id}' cannot be {done}. Current status: {status}. "
                f"Only {needs} cards can be {done}."
            )
        if to == "ACTIVE":
            error = self._closed_account_error(cards[card_id], done)
            if error:
                return error
        card = self.t.rec("debit_cards", card_id)
        card["status"] = to
        card[f"{done}_date"] = TODAY
        return None

    @discoverable(WRITE)
    def freeze_debit_card_3892(self, card_id: str) -> str:
        error = self._move_card(card_id, to="FROZEN", done="frozen", already="frozen", needs="ACTIVE")
        if error:
            return error
        return "\n".join(
            [
                "Debit Card Frozen Successfully",
                f"Card ID: {card_id}",
                "Status: FROZEN",
                f"Frozen Date: {TODAY}",
                "",
                "While frozen:",
                "- All new purchase transactions will be declined",
                "- Recurring payments and subscriptions will be declined",
                "- Pending transactions already authorized may still process",
                "",
                "To unfreeze, the customer can call customer service or use the mobile app.",
                "If the card is confirmed lost or stolen, recommend closing the card permanently instead.",
            ]
        )

    @discoverable(WRITE)
    def unfreeze_debit_card_3893(self, card_id: str) -> str:
        error = self._move_card(card_id, to="ACTIVE", done="unfrozen", already="active", needs="FROZEN")
        if error:
            return error
        return "\n".join(
            [
                "Debit Card Unfrozen Successfully",
                f"Card ID: {card_id}",
                "Status: ACTIVE",
                f"Unfrozen Date: {TODAY}",
                "",
                "The card is now active and ready to use immediately.",
                "All transactions will process normally.",
            ]
        )

    @discoverable(WRITE)
    def clear_debit_card_fraud_alert_4892(self, card_id: str, reason: str) -> str:
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not reason:
            return "Error: Missing required parameter: reason."
        reasons = ["customer_verified", "velocity_clear"]
        if reason not in reasons:
            return f"Error: Invalid reason '{reason}'. Must be one of: {', '.join(reasons)}"
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if reason == "velocity_clear":
            if not card.get("velocity_blocked", False):
                return f"Error: Debit card '{card_id}' does not have an active velocity block."
            card = self.t.rec("debit_cards", card_id)
            card["velocity_blocked"] = False
            card["velocity_cleared_date"] = TODAY
            return "\n".join(
                [
                    "Velocity Block Cleared Successfully",
                    f"Card ID: {card_id}",
                    f"Cleared Date: {TODAY}",
                    "",
                    "The card is now unblocked and ready for normal use.",
                    "The velocity monitoring will continue - if the same unusual patterns recur,",
                    "the card may be blocked again automatically.",
                ]
            )
        if not card.get("fraud_alert_active", False):
            return f"Error: Debit card '{card_id}' does not have an active fraud alert."
        if card.get("alert_source") == "bank_initiated":
            return (
                "Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud detection system "
                "and cannot be cleared by customer service agents. Please transfer the customer to the security team "
                "using transfer_to_human_agents."
            )
        card = self.t.rec("debit_cards", card_id)
        card["fraud_alert_active"] = False
        card["alert_source"] = None
        card["fraud_alert_cleared_date"] = TODAY
        return "\n".join(
            [
                "Fraud Alert Cleared Successfully",
                f"Card ID: {card_id}",
                f"Cleared Date: {TODAY}",
                "",
                "The fraud alert has been removed from the card.",
                "All transactions will process normally.",
                "",
                "Remind the customer to review recent transactions and report any unauthorized charges.",
            ]
        )

    def _pin_error(self, card_id: str, new_pin: str, verb: str, *, last_4: str | None = None) -> str | None:
        """tau2's checks of a new PIN and its card (exists, matches ``last_4`` when given, ACTIVE) for ``verb``."""
        pin_error = pin_problem(new_pin)
        if pin_error:
            return f"Error: {pin_error}"
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        if last_4 is not None and cards[card_id].get("last_4_digits") != last_4:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        status = cards[card_id].get("status")
        if status != "ACTIVE":
            done = {"reset": "reset", "change": "changed"}[verb]
            return f"Error: Cannot {verb} PIN. Card status is {status}. Only ACTIVE cards can have their PIN {done}."
        return None

    @staticmethod
    def _pin_text(title: str, card_id: str, *notes: str) -> str:
        return "\n".join(
            [
                f"Debit Card PIN {title} Successfully",
                f"Card ID: {card_id}",
                f"PIN Changed: {TODAY}",
                "",
                "The new PIN is effective immediately.",
                *notes,
                "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
                "",
                "Security reminder: Never share your PIN with anyone.",
            ]
        )

    @discoverable(WRITE)
    def reset_debit_card_pin_6284(self, card_id: str, last_4_digits: str, new_pin: str) -> str:
        if missing_args(card_id, last_4_digits, new_pin):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
        if not digits(last_4_digits, 4):
            return "Error: Last 4 digits must be exactly 4 digits."
        error = self._pin_error(card_id, new_pin, "reset", last_4=last_4_digits)
        if error:
            return error
        card = self.t.rec("debit_cards", card_id)
        card.update(pin_last_changed=TODAY, pin_locked=False, pin_attempts_remaining=3)
        return self._pin_text("Reset", card_id, "Your card has been unlocked and is ready to use.")

    @discoverable(WRITE)
    def change_debit_card_pin_6285(self, card_id: str, current_pin: str, new_pin: str) -> str:
        if missing_args(card_id, current_pin, new_pin):
            return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
        if not digits(current_pin, 4):
            return "Error: Current PIN must be exactly 4 digits."
        if current_pin == new_pin and not pin_problem(new_pin):
            return "Error: New PIN must be different from current PIN."
        error = self._pin_error(card_id, new_pin, "change")
        if error:
            return error
        self.t.rec("debit_cards", card_id)["pin_last_changed"] = TODAY
        return self._pin_text("Changed", card_id)

    @discoverable(READ)
    def get_debit_cards_by_account_id_7823(self, account_id: str) -> str:
        if not account_id:
            return "Error: Missing required parameter 'account_id'."
        accounts = self.t.r("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        if accounts[account_id].get("class", "").lower() not in ["checking", "business_checking"]:
            return (
                f"Error: Account '{account_id}' is not a checking account. Debit cards are only available for "
                "checking accounts."
            )
        found_cards = []
        for card_id, card in self.t.r("debit_cards").items():
            if card.get("account_id") != account_id:
                continue
            info = {"card_id": card_id}
            info.update(card)
            if "last_4_digits" in info and "card_number_last_4" not in info:
                info["card_number_last_4"] = info.pop("last_4_digits")
            if "issue_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("issue_date")
            elif "created_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("created_date")
            found_cards.append(info)
        if not found_cards:
            return f"No debit cards found for account '{account_id}'."
        found_cards.sort(key=lambda c: c.get("date_issued") or "", reverse=True)  # string order, as tau2
        return json.dumps(found_cards, indent=2)

    @discoverable(WRITE)
    def request_temporary_debit_card_limit_increase_8374(self, card_id: str, limit_type: str, new_limit: int) -> str:
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not limit_type:
            return "Error: Missing required parameter: limit_type."
        if limit_type not in ["atm", "purchase"]:
            return f"Error: Invalid limit_type '{limit_type}'. Must be 'atm' or 'purchase'."
        if new_limit is None:
            return "Error: Missing required parameter: new_limit."
        try:
            wanted = float(new_limit)
        except (ValueError, TypeError):
            return f"Error: new_limit must be an integer, got '{new_limit}'."
        if not wanted.is_integer():
            return f"Error: new_limit must be an integer, got '{wanted}'."
        limit = int(wanted)
        if limit <= 0:
            return "Error: new_limit must be a positive amount."
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Debit card '{card_id}' is not active. Current status: {card.get('status')}. "
                "Only ACTIVE cards can have limit increases."
            )
        account_id = card.get("account_id")
        accounts = self.t.r("accounts")
        if not account_id or account_id not in accounts:
            return f"Error: Could not find linked account for debit card '{card_id}'."
        account = accounts[account_id]
        if account.get("status") != "OPEN":
            return (
                f"Error: The linked account '{account_id}' is not in good standing. "
                f"Account status: {account.get('status')}."
            )
        opened = account.get("date_opened")
        if opened:
            try:
                age = (datetime.strptime(TODAY, "%m/%d/%Y") - datetime.strptime(opened, "%m/%d/%Y")).days
                if age < 60:
                    return (
                        "Error: Account must be at least 60 days old for a temporary limit increase. "
                        f"Account age: {age} days."
                    )
            except ValueError:
                pass
        if limit_type == "atm":
            current = card.get("daily_atm_limit")
            field, label = "daily_atm_limit", "Daily ATM Withdrawal Limit"
            if current is None:
                level = account.get("level", "").lower()
                if "light green" in level:
                    return (
                        "Error: Light Green Account (teen checking) cards have policy-based limits that cannot be "
                        "modified. The daily ATM withdrawal limit of $150 is fixed by account policy for safety "
                        "reasons. The customer may request the parent/guardian to withdraw cash from their own "
                        "account if needed."
                    )
                current = DEFAULT_ATM_LIMITS.get(level)
                if current is None:
                    return (
                        f"Error: Could not determine the default ATM limit for account type '{account.get('level')}'. "
                        "Please verify the account type."
                    )
        else:
            current = card.get("daily_purchase_limit")
            field, label = "daily_purchase_limit", "Daily Purchase Limit"
        if current is None:
            return (
                f"Error: The card does not have a {label.lower()} configured. This may be a restricted account type "
                "where limits are set by account policy and cannot be modified."
            )
        most = int(current * 1.5)
        if limit > most:
            return (
                f"Error: Requested limit ${limit} exceeds the maximum allowed temporary increase. Maximum temporary "
                f"limit is ${most} (150% of current ${current} limit)."
            )
        if limit <= current:
            return f"Error: Requested limit ${limit} is not higher than the current limit of ${current}."
        card = self.t.rec("debit_cards", card_id)
        card[field] = limit
        card[f"temporary_{limit_type}_limit_increase"] = True
        card[f"original_{limit_type}_limit"] = current
        card[f"temporary_{limit_type}_limit_expires"] = TODAY
        return "\n".join(
            [
                f"Temporary {label} Increase Granted Successfully",
                f"Card ID: {card_id}",
                f"Previous Limit: ${current}",
                f"New Temporary Limit: ${limit}",
                f"Increase Amount: ${limit - current}",
                "",
                "Important Information:",
                "- This temporary increase expires in 24 hours",
                f"- After expiration, the limit will revert to ${current}",
                "- Only one temporary increase is allowed per 24-hour period",
                "",
                "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have its own",
                "per-transaction or daily limits that Rho-Bank cannot override. The customer may need to",
                "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs.",
            ]
        )
