"""The simulated customer's toolkit of ``banking_knowledge``: :class:`KnowledgeUserTools` (tau2-bench 1.0.1).

Its discoverable tools are handed over by the agent (``give_discoverable_user_tool``) and run through
``call_discoverable_user_tool``; every call is logged in ``user_discoverable_tool_calls`` before it validates (tau2).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from typing import Any

from ...toolkit import READ, WRITE, tool
from .catalog import CARD_REWARDS, CARD_TYPES
from .checks import executed, is_active
from .common import TODAY, by_field, deterministic_id, found, parse_balance, prefixed_id, transaction_id
from .protocol import (
    BankTools,
    discoverable,
    parse_arguments,
    tau2_method_names,
    unexpected_parameter,
)


@tau2_method_names
class KnowledgeUserTools(BankTools):
    """The simulated customer's tools; they act on the agent's DB (tau2 shares one DB object)."""

    def _not_given(self, name: str) -> str | None:
        if not found(self.t.query("user_discoverable_tools", by_field("tool_name", name))):
            return (
                f"Error: Tool '{name}' has not been given to you by the agent. "
                f"The agent must first use `give_discoverable_user_tool` to give this tool to you."
            )
        return None

    def _given_and_logged(self, name: str, args: dict[str, Any]) -> str | None:
        """The preamble of every user discoverable tool: refuse a tool not given (nothing logged), else log the call."""
        error = self._not_given(name)
        if error is None:
            self._log_call(name, args)
        return error

    def _log_call(self, name: str, args: dict[str, Any]) -> None:
        """Recorded before the tool validates anything, so failed calls change the DB too (tau2)."""
        record_id = deterministic_id(f"user_discoverable_tool_call:{name}:{json.dumps(args, sort_keys=True)}")
        record = {"tool_name": name, "arguments": args, "called_at": TODAY, "status": "CALLED"}
        self.t.add("user_discoverable_tool_calls", record_id, record)

    def _referral(self, seed: str, user_id: str, account_type: str) -> tuple[str, bool]:
        """Record a NO_PROGRESS referral by ``user_id`` under the id of ``seed``; its id and whether it was added."""
        referral_id = deterministic_id(seed)
        record = {
            "referral_id": referral_id,
            "referrer_id": user_id,
            "referred_account_type": account_type,
            "referral_status": "NO_PROGRESS",
            "date": TODAY,
        }
        return referral_id, self.t.add("referrals", referral_id, record)

    # ------------------------------------------------------------ user discoverable tools
    @discoverable(WRITE)
    def submit_cash_back_dispute_0589(self, user_id: str, transaction_id: str) -> str:
        args = {"user_id": user_id, "transaction_id": transaction_id}
        error = self._given_and_logged("submit_cash_back_dispute_0589", args)
        if error:
            return error
        dispute_id = prefixed_id("dsp", f"dispute:{user_id}:{transaction_id}")
        config = self.t.r("task_config")
        auto = bool(config) and config.get("dispute_settings", {}).get("auto_resolve_disputes", False)
        record = {
            "dispute_id": dispute_id,
            "user_id": user_id,
            "transaction_id": transaction_id,
            "submitted_at": TODAY,
            "status": "RESOLVED" if auto else "SUBMITTED",
        }
        if auto:
            record["resolution"] = "APPROVED"
            status = (
                "Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to be "
                "updated."
            )
        else:
            status = "Status: SUBMITTED - Your dispute has been queued for review."
        ok = self.t.add("cash_back_disputes", dispute_id, record)
        text = (
            "Cash back dispute submitted successfully. Your case has been queued for review.\n\n"
            f"{executed('submit_cash_back_dispute_0589', args)}\n"
        )
        if ok:
            return text + f"Dispute ID: {dispute_id}\n{status}"
        return text + "Note: Dispute may have already been submitted for this transaction."

    @discoverable(WRITE)
    def get_referral_link(self, user_id: str, card_name: str) -> str:
        args = {"user_id": user_id, "card_name": card_name}
        error = self._given_and_logged("get_referral_link", args)
        if error:
            return error
        referral_id, ok = self._referral(f"referral_link:{user_id}:{card_name}", user_id, card_name)
        text = (
            "Referral link generated successfully. Share this link with the person you want to refer.\n\n"
            f"{executed('get_referral_link', args)}\n"
        )
        if ok:
            return text + f"Referral ID: {referral_id}\nReferral link: https://rhobank.com/refer/{referral_id}"
        return text + "Note: A referral link for this card may have already been generated."

    @discoverable(READ)
    def get_card_last_4_digits(self, credit_card_account_id: str) -> str:
        args = {"credit_card_account_id": credit_card_account_id}
        error = self._given_and_logged("get_card_last_4_digits", args)
        if error:
            return error
        if not found(self.t.query("credit_card_accounts", by_field("account_id", credit_card_account_id))):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        digest = hashlib.sha256(f"card_last4:{credit_card_account_id}".encode()).hexdigest()
        last4 = "".join(c for c in digest if c.isdigit())[:4].ljust(4, "0")
        return (
            "Card information retrieved successfully.\n\n"
            f"{executed('get_card_last_4_digits', args)}\nLast 4 digits of card: {last4}"
        )

    @discoverable(WRITE)
    def deposit_check_3847(self, account_id: str, check_amount: float) -> str:
        args = {"account_id": account_id, "check_amount": check_amount}
        error = self._given_and_logged("deposit_check_3847", args)
        if error:
            return error
        try:
            amount = float(check_amount)
        except (ValueError, TypeError):
            return f"Error: Invalid check amount '{check_amount}'. Must be a number."
        if amount <= 0:
            return "Error: Check amount must be positive."
        accounts = self.t.r("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        if not is_active(accounts[account_id]):
            return f"Error: Account '{account_id}' is not active."
        account = accounts[account_id]
        balance = parse_balance(account.get("current_holdings", account.get("balance", 0)))
        new_balance = balance + amount
        self.t.rec("accounts", account_id)["current_holdings"] = f"${new_balance:.2f}"
        return (
            "Check deposited successfully. Funds will be available according to your account's deposit policy.\n\n"
            f"{executed('deposit_check_3847', args)}\n"
            f"Check deposit processed!\n"
            f"  - Account: {account_id}\n"
            f"  - Check Amount: ${amount:.2f}\n"
            f"  - Previous Balance: ${balance:.2f}\n"
            f"  - New Balance: ${new_balance:.2f}"
        )

    # ------------------------------------------------------------------ user tools
    @tool(WRITE)
    def apply_for_credit_card(
        self, card_type: str, customer_name: str, annual_income: float, rho_bank_subscription: bool = False
    ) -> str:
        """File a PENDING credit card application for the customer."""
        if card_type not in CARD_TYPES:
            return f"Error: Invalid card_type '{card_type}'. Must be one of: {list(CARD_TYPES)}"
        try:
            income = float(annual_income)
        except (TypeError, ValueError):
            return "Error: Invalid annual_income. Must be a number."
        application_id = deterministic_id(f"credit_card:{card_type}:{customer_name}:{income}:{rho_bank_subscription}")
        record = {
            "application_id": application_id,
            "card_type": card_type,
            "customer_name": customer_name,
            "annual_income": income,
            "rho_bank_subscription": rho_bank_subscription,
            "status": "PENDING",
            "date": TODAY,
        }
        if not self.t.add("credit_card_applications", application_id, record):
            return f"Failed to submit application: Record ID '{application_id}' may already exist."
        return (
            "Credit card application submitted:\n"
            "Your application has been successfully submitted. "
            "You will receive a decision within 5-7 business days via email."
        )

    @tool(WRITE)
    def submit_referral(self, user_id: str, account_type: str) -> str:
        """Record a referral the customer makes for a new account."""
        referral_id, added = self._referral(f"referral:{user_id}:{account_type}", user_id, account_type)
        if not added:
            return f"Failed to submit referral: Record ID '{referral_id}' may already exist."
        return (
            f"Referral request submitted successfully!\n"
            f"  - Referral ID: {referral_id}\n"
            f"  - Referrer ID: {user_id}\n"
            f"  - Account Type: {account_type}\n"
            f"  - Status: NO_PROGRESS\n"
            f"  - Date: {TODAY}\n\n"
            f"Share your referral ID with the person you're referring. "
            f"They will need to use this when applying for their account."
        )

    @tool(WRITE)
    def call_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        """Run a tool the agent gave the customer, with JSON arguments checked against its signature."""
        methods = self.discoverable_tools()
        if not isinstance(discoverable_tool_name, str) or discoverable_tool_name not in methods:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        args, error = parse_arguments(arguments, floats=True)
        if error:
            return error
        params = inspect.signature(methods[discoverable_tool_name]).parameters
        for pname, param in params.items():
            if pname != "self" and param.default is inspect.Parameter.empty and pname not in args:
                return f"Error: Missing required parameter: {pname}"
        error = unexpected_parameter(args, params)
        if error:
            return error
        try:
            return getattr(self, discoverable_tool_name)(**args)
        except TypeError as exc:
            return f"Error: Invalid arguments for tool '{discoverable_tool_name}': {exc}"

    @tool(READ)
    def list_discoverable_user_tools(self) -> str:
        """The discoverable tools the agent has given the customer, as stored in the DB."""
        # tau2 tests for "No results found", which its query never prints: the friendly text never shows.
        return f"Tools given to you by the agent:\n{self.t.query('user_discoverable_tools', '{}')}"

    @tool(WRITE)
    def request_human_agent_transfer(self) -> str:
        """Log one more numbered request by the customer to speak to a human."""
        existing = self.t.query("human_transfer_requests", "{}")
        count = 1 if not found(existing) else existing.count("request_id") + 1
        request_id = f"transfer_request_{count}"
        record = {"request_id": request_id, "request_number": count, "requested_at": TODAY, "status": "PENDING"}
        self.t.add("human_transfer_requests", request_id, record)
        return f"Transfer request #{count} submitted.\nThe agent will process your request."

    @tool(WRITE)
    def submit_transaction(
        self, user_id: str, credit_card_type: str, merchant_name: str, amount: float, category: str
    ) -> str:
        """Record a customer's card purchase and the reward points its card and category earn."""
        if credit_card_type not in CARD_REWARDS:
            return f"Error: Unknown credit card type '{credit_card_type}'. Available types: {list(CARD_REWARDS)}"
        txn_id = transaction_id(user_id, credit_card_type, merchant_name, amount, category)
        rewards = CARD_REWARDS[credit_card_type]
        rate = rewards.get(category, rewards["default"])
        points = int(amount * rate)
        record = {
            "transaction_id": txn_id,
            "user_id": user_id,
            "credit_card_type": credit_card_type,
            "merchant_name": merchant_name,
            "transaction_amount": f"${amount:.2f}",
            "transaction_date": TODAY,
            "category": category,
            "status": "COMPLETED",
            "rewards_earned": f"{points} points",
        }
        if not self.t.add("credit_card_transaction_history", txn_id, record):
            return f"Failed to submit transaction: Record ID '{txn_id}' may already exist."
        return (
            f"Transaction submitted successfully!\n"
            f"  - Transaction ID: {txn_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Card Type: {credit_card_type}\n"
            f"  - Merchant: {merchant_name}\n"
            f"  - Amount: ${amount:.2f}\n"
            f"  - Category: {category}\n"
            f"  - Date: {TODAY}\n"
            f"  - Rewards Earned: {points} points ({rate}% cashback rate)\n"
        )
