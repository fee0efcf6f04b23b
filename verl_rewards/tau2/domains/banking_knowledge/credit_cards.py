"""The agent's discoverable credit card tools: replacement, closure, statement credits, account flags, payments
from checking, credit limit increases (tau2-bench 1.0.1, ``src/tau2/domains/banking_knowledge/tools.py``)."""

from __future__ import annotations

from typing import Any

from ...toolkit import READ, WRITE
from .catalog import CLOSURE_REASONS, FLAG_REASONS, FLAG_TYPES, REPLACEMENT_REASONS, STATEMENT_CREDIT_REASONS
from .checks import dollars_or_zero, executed, invalid, missing_args
from .common import TODAY, account_balance, found, prefixed_id, title_words, transaction_id
from .protocol import BankTools, discoverable


class CreditCardTools(BankTools):
    """Credit card tools of the agent (discoverable; part of ``KnowledgeTools``)."""

    @discoverable(WRITE)
    def update_transaction_rewards_3847(self, transaction_id: str, new_rewards_earned: str) -> str:
        if missing_args(transaction_id, new_rewards_earned):
            return "Error: Missing required parameters."
        if not self.t.update("credit_card_transaction_history", transaction_id, {"rewards_earned": new_rewards_earned}):
            return f"Error: Transaction '{transaction_id}' not found."
        args = {"transaction_id": transaction_id, "new_rewards_earned": new_rewards_earned}
        return (
            f"Transaction rewards updated successfully.\n\n"
            f"{executed('update_transaction_rewards_3847', args)}\n"
            f"Transaction updated:\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - New Rewards: {new_rewards_earned}"
        )

    def _cc_missing(self, credit_card_account_id: str) -> str | None:
        result = self._q("credit_card_accounts", "account_id", credit_card_account_id)
        if not found(result):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        return None

    @discoverable(WRITE)
    def order_replacement_credit_card_7291(
        self,
        credit_card_account_id: str,
        user_id: str,
        shipping_address: str,
        reason: str,
        expedited_shipping: bool = False,
    ) -> str:
        if missing_args(credit_card_account_id, user_id, shipping_address, reason):
            return "Error: Missing required parameters (credit_card_account_id, user_id, shipping_address, reason)."
        error = invalid(("reason", reason, REPLACEMENT_REASONS)) or self._cc_missing(credit_card_account_id)
        if error:
            return error
        order_id = prefixed_id("ccord", f"credit_card_order:{credit_card_account_id}:{user_id}:{reason}")
        record = {
            "order_id": order_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "shipping_address": shipping_address,
            "reason": reason,
            "expedited_shipping": expedited_shipping,
            "order_date": TODAY,
            "status": "ORDERED",
            "old_card_cancelled": True,
        }
        if not self.t.add("credit_card_orders", order_id, record):
            return "Error: Order may have already been placed for this card replacement."
        if credit_card_account_id in self.t.r("credit_card_accounts"):
            account = self.t.rec("credit_card_accounts", credit_card_account_id)
            account["status"] = "CLOSED"
            account["closed_date"] = TODAY
        return "\n".join(
            [
                f"Order ID: {order_id}",
                f"Card Account: {credit_card_account_id}",
                f"Reason: {title_words(reason)}",
                f"Shipping Address: {shipping_address}",
                f"Shipping Method: {'Expedited' if expedited_shipping else 'Standard'}",
                f"Expected Delivery: {'2-3 business days' if expedited_shipping else '7-10 business days'}",
                "",
                "The old card has been cancelled for security. The new card will have the same account number but "
                "a new card number and CVV.",
            ]
        )

    @discoverable(READ)
    def get_pending_replacement_orders_5765(self, credit_card_account_id: str) -> str:
        return self._history("get_pending_replacement_orders_5765", credit_card_account_id)

    @discoverable(WRITE)
    def log_credit_card_closure_reason_4521(
        self, credit_card_account_id: str, user_id: str, closure_reason: str
    ) -> str:
        if missing_args(credit_card_account_id, user_id, closure_reason):
            return "Error: Missing required parameters."
        error = invalid(("closure_reason", closure_reason, CLOSURE_REASONS))
        if error:
            return error
        record_id = prefixed_id("clsr", f"closure_reason:{credit_card_account_id}:{user_id}")
        record = {
            "record_id": record_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "closure_reason": closure_reason,
            "logged_at": TODAY,
            "status": "LOGGED",
        }
        self.t.add("credit_card_closure_reasons", record_id, record)  # a duplicate is silently ignored (tau2)
        args = {"credit_card_account_id": credit_card_account_id, "user_id": user_id, "closure_reason": closure_reason}
        return (
            f"Closure reason logged successfully.\n\n"
            f"{executed('log_credit_card_closure_reason_4521', args)}\n"
            f"Closure reason '{closure_reason}' logged for account {credit_card_account_id}."
        )

    @discoverable(READ)
    def get_closure_reason_history_8293(self, credit_card_account_id: str) -> str:
        return self._history("get_closure_reason_history_8293", credit_card_account_id)

    @discoverable(WRITE)
    def apply_statement_credit_8472(self, user_id: str, credit_card_account_id: str, amount: float, reason: str) -> str:
        if missing_args(user_id, credit_card_account_id, reason, numbers=(amount,)):
            return "Error: Missing required parameters (user_id, credit_card_account_id, amount, reason)."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        error = invalid(("reason", reason, STATEMENT_CREDIT_REASONS)) or self._cc_missing(credit_card_account_id)
        if error:
            return error
        txn_id = transaction_id(user_id, "STATEMENT_CREDIT", reason, amount, "Statement Credit")
        record = {
            "transaction_id": txn_id,
            "user_id": user_id,
            "credit_card_account_id": credit_card_account_id,
            "credit_card_type": "N/A",
            "merchant_name": "Rho-Bank Statement Credit",
            "transaction_amount": f"-${amount:.2f}",
            "transaction_date": TODAY,
            "category": "Statement Credit",
            "status": "COMPLETED",
            "rewards_earned": "0 points",
            "credit_reason": reason,
        }
        if not self.t.add("credit_card_transaction_history", txn_id, record):
            return f"Error: Failed to apply statement credit. Transaction ID '{txn_id}' may already exist."
        return (
            f"Statement credit applied successfully.\n\n"
            f"Executed: apply_statement_credit_8472\n"
            f"  - Transaction ID: {txn_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Credit Amount: ${amount:.2f}\n"
            f"  - Reason: {title_words(reason)}\n"
            f"  - Date: {TODAY}"
        )

    @discoverable(WRITE)
    def apply_credit_card_account_flag_6147(
        self, credit_card_account_id: str, user_id: str, flag_type: str, expiration_date: str, reason: str
    ) -> str:
        if missing_args(credit_card_account_id, user_id, flag_type, expiration_date, reason):
            return (
                "Error: Missing required parameters (credit_card_account_id, user_id, flag_type, expiration_date, "
                "reason)."
            )
        error = invalid(("flag_type", flag_type, FLAG_TYPES), ("reason", reason, FLAG_REASONS)) or self._cc_missing(
            credit_card_account_id
        )
        if error:
            return error
        flag_id = prefixed_id("ccflag", f"account_flag:{credit_card_account_id}:{flag_type}:{expiration_date}")
        record = {
            "flag_id": flag_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "flag_type": flag_type,
            "effective_date": TODAY,
            "expiration_date": expiration_date,
            "reason": reason,
            "applied_at": TODAY,
            "status": "ACTIVE",
        }
        if not self.t.add("credit_card_account_flags", flag_id, record):
            return f"Error: Failed to apply account flag. Flag ID '{flag_id}' may already exist."
        return (
            f"Account flag applied successfully!\n"
            f"  - Flag ID: {flag_id}\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Flag Type: {title_words(flag_type)}\n"
            f"  - Effective Date: {TODAY}\n"
            f"  - Expiration Date: {expiration_date}\n"
            f"  - Reason: {title_words(reason)}"
        )

    @discoverable(WRITE)
    def close_credit_card_account_7834(self, credit_card_account_id: str, user_id: str) -> str:
        if missing_args(credit_card_account_id, user_id):
            return "Error: Missing required parameters (credit_card_account_id, user_id)."
        missing = self._cc_missing(credit_card_account_id)
        if missing:
            return missing
        updates = {"status": "CLOSED", "closed_date": TODAY, "closed_by": user_id}
        if not self.t.update("credit_card_accounts", credit_card_account_id, updates):
            return f"Error: Failed to close credit card account '{credit_card_account_id}'."
        args = {"credit_card_account_id": credit_card_account_id, "user_id": user_id}
        return (
            f"Credit card account closed successfully.\n\n"
            f"{executed('close_credit_card_account_7834', args)}\n"
            f"Account {credit_card_account_id} has been closed."
        )

    @discoverable(WRITE)
    def pay_credit_card_from_checking_9182(
        self, user_id: str, checking_account_id: str, credit_card_account_id: str, amount: float
    ) -> str:
        if missing_args(user_id, checking_account_id, credit_card_account_id, numbers=(amount,)):
            return "Error: Missing required parameters (user_id, checking_account_id, credit_card_account_id, amount)."
        try:
            amount = float(amount)
            if amount <= 0:
                return "Error: Payment amount must be a positive number."
        except (ValueError, TypeError):
            return "Error: Invalid payment amount. Must be a positive number."
        checking, error = self._owned("accounts", checking_account_id, user_id, "Checking account")
        if error:
            return error
        if checking.get("class") != "checking":
            return f"Error: Account '{checking_account_id}' is not a checking account."
        balance = account_balance(checking)
        if amount > balance:
            return (
                f"Error: Insufficient funds in checking account. Available balance: ${balance:.2f}, "
                f"requested payment: ${amount:.2f}."
            )
        card, error = self._owned("credit_card_accounts", credit_card_account_id, user_id, "Credit card account")
        if error:
            return error
        card_balance = dollars_or_zero(card.get("current_balance", "$0.00"))
        if amount > card_balance:
            return (
                f"Error: Payment amount (${amount:.2f}) exceeds credit card balance (${card_balance:.2f}). "
                "Please specify an amount up to the outstanding balance."
            )
        new_checking = balance - amount
        new_card = card_balance - amount
        self.t.rec("accounts", checking_account_id)["current_holdings"] = f"{new_checking:.2f}"
        self.t.rec("credit_card_accounts", credit_card_account_id)["current_balance"] = f"${new_card:.2f}"
        return (
            f"Payment processed successfully!\n"
            f"  - Payment Amount: ${amount:.2f}\n"
            f"  - From Checking Account: {checking_account_id}\n"
            f"  - To Credit Card Account: {credit_card_account_id}\n"
            f"  - New Checking Balance: ${new_checking:.2f}\n"
            f"  - New Credit Card Balance: ${new_card:.2f}\n"
            f"The payment has been applied immediately."
        )

    def _limit_request(
        self, credit_card_account_id: str, user_id: str, amount: float, **fields: Any
    ) -> tuple[str, bool]:
        """Record a credit limit increase request (submitted, approved or denied) under tau2's id for ``amount``;
        returns its id and whether it was added (False: that id exists, nothing changes)."""
        request_id = prefixed_id("cli", f"cli_request:{credit_card_account_id}:{user_id}:{amount:.2f}")
        record = {"request_id": request_id, "credit_card_account_id": credit_card_account_id, "user_id": user_id}
        return request_id, self.t.add("credit_limit_increase_requests", request_id, {**record, **fields})

    @discoverable(WRITE)
    def submit_credit_limit_increase_request_7392(
        self, credit_card_account_id: str, user_id: str, requested_increase_amount: int
    ) -> str:
        if missing_args(credit_card_account_id, user_id, numbers=(requested_increase_amount,)):
            return "Error: Missing required parameters."
        try:
            amount = float(requested_increase_amount)
        except (TypeError, ValueError):
            return "Error: Invalid requested_increase_amount. Must be a whole number."
        if not amount.is_integer():
            return "Error: Invalid requested_increase_amount. Must be a whole number of dollars."
        whole = int(amount)
        if whole <= 0:
            return "Error: Requested increase amount must be positive."
        _, error = self._owned("credit_card_accounts", credit_card_account_id, user_id, "Credit card account")
        if error:
            return error
        request_id, added = self._limit_request(
            credit_card_account_id,
            user_id,
            whole,
            requested_increase_amount=whole,
            submitted_at=TODAY,
            status="PENDING",
        )
        if not added:
            return "Error: A similar request may already exist."
        return (
            f"Credit limit increase request submitted successfully.\n\n"
            f"Executed: submit_credit_limit_increase_request_7392\n"
            f"  - Request ID: {request_id}\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Requested Increase: ${whole:,}\n"
            f"  - Status: PENDING"
        )

    @discoverable(READ)
    def get_credit_limit_increase_history_4829(self, credit_card_account_id: str) -> str:
        return self._history("get_credit_limit_increase_history_4829", credit_card_account_id)

    @discoverable(READ)
    def get_payment_history_6183(self, credit_card_account_id: str, months: int) -> str:
        if missing_args(credit_card_account_id, numbers=(months,)):
            return "Error: Missing required parameters (credit_card_account_id, months)."
        try:
            months = int(months)
            if months <= 0:
                return "Error: months must be a positive integer."
        except (ValueError, TypeError):
            return "Error: Invalid months value. Must be a positive integer."
        payments = [
            p for p in self.t.r("payment_history").values() if p.get("credit_card_account_id") == credit_card_account_id
        ]
        if not payments:
            return f"No payment history found for account '{credit_card_account_id}'."
        # tau2 sorts the MM/DD/YYYY strings, not the dates
        payments = sorted(payments, key=lambda p: p.get("payment_date") or "", reverse=True)[:months]
        on_time = 0
        for payment in payments:
            if payment.get("status") != "ON_TIME":
                break
            on_time += 1
        parts = [
            f"Payment history for account '{credit_card_account_id}' (last {months} months):",
            f"Consecutive on-time payments: {on_time}",
        ]
        parts.extend(
            f"\n  - Payment Date: {p.get('payment_date')}\n    Amount: {p.get('amount')}\n    Status: {p.get('status')}"
            for p in payments
        )
        return "\n".join(parts)

    @discoverable(WRITE)
    def approve_credit_limit_increase_5847(
        self, credit_card_account_id: str, user_id: str, new_credit_limit: int
    ) -> str:
        if missing_args(credit_card_account_id, user_id, numbers=(new_credit_limit,)):
            return "Error: Missing required parameters."
        card, error = self._owned("credit_card_accounts", credit_card_account_id, user_id, "Credit card account")
        if error:
            return error
        ineligible = any(
            d.get("user_id") == user_id and d.get("status") in ["SUBMITTED", "UNDER_REVIEW", "PENDING"]
            for d in self.t.r("transaction_disputes").values()
        )
        if not ineligible:
            ineligible = any(
                o.get("credit_card_account_id") == credit_card_account_id
                and o.get("status") in ["PENDING", "PROCESSING", "SHIPPED"]
                for o in self.t.r("credit_card_orders").values()
            )
        if not ineligible:
            ineligible = card.get("account_status", "").upper() in ["PAST_DUE", "DELINQUENT", "COLLECTIONS", "CLOSED"]
        if ineligible:
            return "Error: Credit limit increase request cannot be approved at this time."
        current = dollars_or_zero(card.get("credit_limit", "$0.00"))
        new_limit = float(new_credit_limit)
        self.t.rec("credit_card_accounts", credit_card_account_id)["credit_limit"] = f"${new_limit:.2f}"
        increase = new_limit - current
        self._limit_request(
            credit_card_account_id,
            user_id,
            increase,
            previous_limit=f"${current:.2f}",
            new_limit=f"${new_limit:.2f}",
            increase_amount=f"${increase:.2f}",
            decision_date=TODAY,
            status="APPROVED",
        )
        return (
            f"Credit limit increase approved!\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Previous Limit: ${current:.2f}\n"
            f"  - New Limit: ${new_limit:.2f}\n"
            f"  - Increase: ${increase:.2f}\n"
            f"  - Effective Date: {TODAY}\n"
            f"The customer will receive a confirmation email."
        )

    @discoverable(WRITE)
    def deny_credit_limit_increase_5848(self, credit_card_account_id: str, user_id: str, denial_reason: str) -> str:
        if missing_args(credit_card_account_id, user_id, denial_reason):
            return "Error: Missing required parameters."
        reasons = [
            "insufficient_account_age",
            "cooldown_period_active",
            "pending_disputes",
            "pending_replacement_card",
            "past_due_balance",
            "high_utilization",
            "insufficient_payment_history",
            "requested_amount_exceeds_limit",
            "other",
        ]
        if denial_reason not in reasons:
            return f"Error: Invalid denial_reason. Must be one of: {', '.join(reasons)}"
        if credit_card_account_id not in self.t.r("credit_card_accounts"):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        self._limit_request(
            credit_card_account_id, user_id, 0.0, denial_reason=denial_reason, decision_date=TODAY, status="DENIED"
        )
        return (
            f"Credit limit increase request denied.\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Denial Reason: {denial_reason}\n"
            f"  - Date: {TODAY}\n"
            f"The customer will receive a notification explaining the denial."
        )
