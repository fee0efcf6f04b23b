"""The agent's discoverable bank account tools: open, close, list, transfer, credits, interest reports,
transactions (tau2-bench 1.0.1, ``src/tau2/domains/banking_knowledge/tools.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...toolkit import READ, WRITE
from .catalog import ACCOUNT_TYPES, CHECKING_EARLY_CLOSURE, SAVINGS_EARLY_CLOSURE
from .checks import days_since, invalid, is_active, missing_args, one_of
from .common import NOW, TODAY, account_balance, deterministic_id, format_records, found, record_matches
from .protocol import BankTools, discoverable


class AccountTools(BankTools):
    """Bank account tools of the agent (discoverable; part of ``KnowledgeTools``)."""

    @discoverable(WRITE)
    def open_bank_account_4821(self, user_id: str, account_type: str, account_class: str) -> str:
        if missing_args(user_id, account_type, account_class):
            return "Error: Missing required parameters."
        error = invalid(("account_type", account_type, ACCOUNT_TYPES))
        if error:
            return error
        denied = "Error: Account eligibility requirements not met."
        mine = [a for a in self.t.r("accounts").values() if a.get("user_id") == user_id]

        def kind(acc: dict[str, Any]) -> Any:
            return acc.get("account_type", acc.get("class", ""))

        def is_open(acc: dict[str, Any]) -> bool:
            return acc.get("status", "") in ["OPEN", "ACTIVE"]

        def age(acc: dict[str, Any]) -> int:
            return days_since(acc.get("date_opened", ""))

        if account_type == "savings":
            if not any(kind(a) in ["checking", "personal_checking"] and is_open(a) and age(a) >= 14 for a in mine):
                return denied
        if account_type == "business_checking":
            if any(a.get("status") == "CLOSED" for a in mine):
                return denied
            if not any(kind(a) in ["checking", "personal_checking"] and is_open(a) for a in mine):
                return denied
        if account_type == "business_savings":
            if any(account_balance(a) < 0 for a in mine):
                return denied
            if not any(kind(a) == "business_checking" and is_open(a) and age(a) >= 30 for a in mine):
                return denied
        account_id = deterministic_id(f"account:{user_id}:{account_type}:{account_class}")
        record = {
            "account_id": account_id,
            "user_id": user_id,
            "account_type": account_type,
            "account_class": account_class,
            "current_holdings": "0.00",
            "status": "OPEN",
            "date_opened": TODAY,
        }
        if not self.t.add("accounts", account_id, record):
            return f"Failed to open account: Account ID '{account_id}' may already exist."
        return (
            f"Bank account opened successfully!\n"
            f"  - Account ID: {account_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Account Type: {account_type}\n"
            f"  - Account Class: {account_class}\n"
            f"  - Status: OPEN\n"
            f"  - Initial Balance: $0.00\n"
            f"  - Date Opened: {TODAY}"
        )

    @discoverable(WRITE)
    def close_bank_account_7392(
        self,
        account_id: str,
        reason: str = "Customer requested closure",
        waive_early_closure_fee: bool = False,
    ) -> str:
        if not account_id:
            return "Error: Missing required parameter (account_id)."
        accounts = self.t.r("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("status") == "CLOSED":
            return f"Error: Account '{account_id}' is already closed."
        balance = account_balance(account)
        fee = 0.0
        if not waive_early_closure_fee:
            klass = account.get("class", "")
            rule = None
            if klass == "checking":
                rule = CHECKING_EARLY_CLOSURE.get(account.get("level", ""))
            elif klass == "savings":  # db.json says "saving": this never matches (tau2)
                rule = SAVINGS_EARLY_CLOSURE.get(account.get("level", ""))
            opened = account.get("date_opened", "")
            if rule and opened:
                try:
                    days = (NOW - datetime.strptime(opened, "%m/%d/%Y")).days
                    if days < rule[1]:
                        if balance < rule[0]:
                            return "Error: Account unable to be closed."
                        fee = rule[0]
                except ValueError:
                    pass
        if balance - fee != 0:
            return f"Error: Account balance must be $0.00 before closing. Current balance: ${balance:.2f}"
        account = self.t.rec("accounts", account_id)
        account["status"] = "CLOSED"
        account["date_closed"] = TODAY
        account["closure_reason"] = reason
        account["early_closure_fee_waived"] = waive_early_closure_fee
        return (
            f"Bank account closed successfully!\n"
            f"  - Account ID: {account_id}\n"
            f"  - Account Type: {account.get('account_type', 'N/A')}\n"
            f"  - Account Class: {account.get('account_class', 'N/A')}\n"
            f"  - Status: CLOSED\n"
            f"  - Date Closed: {TODAY}\n"
            f"  - Reason: {reason}\n"
            f"  - Early Closure Fee Waived: {'Yes' if waive_early_closure_fee else 'No'}"
        )

    @discoverable(READ)
    def get_all_user_accounts_by_user_id_3847(self, user_id: str) -> str:
        if not user_id:
            return "Error: Missing required parameter: user_id"
        accounts = self._q("accounts", "user_id", user_id)
        cards = self._q("credit_card_accounts", "user_id", user_id)
        parts = [
            "User accounts retrieved successfully.",
            "",
            "Executed: get_all_user_accounts_by_user_id_3847",
            f"Accounts for user {user_id}:",
            "",
            "Bank Accounts:",
            accounts if found(accounts) else "  No bank accounts found.",
            "\nCredit Card Accounts:",
            cards if found(cards) else "  No credit card accounts found.",
        ]
        return "\n".join(parts)

    @discoverable(WRITE)
    def transfer_funds_between_bank_accounts_7291(
        self, source_account_id: str, destination_account_id: str, amount: float
    ) -> str:
        if missing_args(source_account_id, destination_account_id, numbers=(amount,)):
            return "Error: Missing required parameters (source_account_id, destination_account_id, amount)."
        try:
            amount = float(amount)
        except (ValueError, TypeError):
            return f"Error: Invalid amount '{amount}'. Must be a number."
        if amount <= 0:
            return "Error: Transfer amount must be positive."
        if source_account_id == destination_account_id:
            return "Error: Source and destination accounts cannot be the same."
        accounts = self.t.r("accounts")
        if source_account_id not in accounts:
            return f"Error: Source account '{source_account_id}' not found."
        if destination_account_id not in accounts:
            return f"Error: Destination account '{destination_account_id}' not found."
        if not is_active(accounts[source_account_id]):
            return f"Error: Source account '{source_account_id}' is not active."
        if not is_active(accounts[destination_account_id]):
            return f"Error: Destination account '{destination_account_id}' is not active."
        source_balance = account_balance(accounts[source_account_id])
        if source_balance < amount:
            return (
                f"Error: Insufficient funds. Source account balance is ${source_balance:.2f}, "
                f"but transfer amount is ${amount:.2f}."
            )
        dest_balance = account_balance(accounts[destination_account_id])
        new_source, new_dest = source_balance - amount, dest_balance + amount
        self.t.rec("accounts", source_account_id)["current_holdings"] = f"${new_source:.2f}"
        self.t.rec("accounts", destination_account_id)["current_holdings"] = f"${new_dest:.2f}"
        return (
            f"Transfer completed successfully!\n"
            f"  - Amount: ${amount:.2f}\n"
            f"  - From: {source_account_id} (new balance: ${new_source:.2f})\n"
            f"  - To: {destination_account_id} (new balance: ${new_dest:.2f})"
        )

    def _account_credit(
        self,
        account_id: str,
        amount: Any,
        credit_type: str,
        *,
        types: list[str],
        classes: tuple[str, ...],
        wrong_class: str,
        balance_prefix: str,
        seed: str,
        descriptions: dict[str, str],
    ) -> str:
        """tau2's checking/savings credit tools (they differ in the texts passed in)."""
        if missing_args(account_id, credit_type, numbers=(amount,)):
            return "Error: Missing required parameters."
        try:
            amount = float(amount)
        except (TypeError, ValueError):
            return "Error: Invalid credit amount. Must be a number."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        if credit_type not in types:
            return one_of("credit_type", types)
        accounts = self.t.r("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class", "").lower() not in classes:
            return f"Error: Account '{account_id}' is not a {wrong_class}"
        if not is_active(account):
            return f"Error: Account '{account_id}' is not active."
        balance = account_balance(account)
        new_balance = balance + amount
        self.t.rec("accounts", account_id)["current_holdings"] = f"{balance_prefix}{new_balance:.2f}"
        txn_id = f"txn_{deterministic_id(f'{seed}:{account_id}:{credit_type}:{amount}:{TODAY}')}"
        # the same arguments give the same id: the record is overwritten and the balance credited again (tau2)
        self.t.put(
            "bank_account_transaction_history",
            txn_id,
            {
                "transaction_id": txn_id,
                "account_id": account_id,
                "date": TODAY,
                "description": descriptions.get(credit_type, descriptions["*"]),
                "amount": amount,
                "type": credit_type,
                "status": "posted",
            },
        )
        return (
            f"\nCredit applied successfully!\n"
            f"  - Transaction ID: {txn_id}\n"
            f"  - Account: {account_id}\n"
            f"  - Credit Type: {credit_type}\n"
            f"  - Amount: ${amount:.2f}\n"
            f"  - Previous Balance: ${balance:.2f}\n"
            f"  - New Balance: ${new_balance:.2f}"
        )

    @discoverable(WRITE)
    def apply_checking_account_credit_5829(self, account_id: str, amount: float, credit_type: str) -> str:
        return self._account_credit(
            account_id,
            amount,
            credit_type,
            types=["rebate_credit", "fee_refund"],
            classes=("checking",),
            wrong_class="checking account. Credits can only be applied to checking accounts.",
            balance_prefix="$",
            seed="checking_credit",
            descriptions={"rebate_credit": "REBATE CREDIT - CUSTOMER SERVICE", "*": "FEE REFUND - CUSTOMER SERVICE"},
        )

    @discoverable(WRITE)
    def apply_savings_account_credit_6831(self, account_id: str, amount: float, credit_type: str) -> str:
        return self._account_credit(
            account_id,
            amount,
            credit_type,
            types=["interest_correction", "fee_refund", "goodwill_credit"],
            classes=("saving", "savings"),
            wrong_class="savings account. This tool only applies to savings accounts.",
            balance_prefix="",
            seed="savings_credit",
            descriptions={
                "interest_correction": "INTEREST CORRECTION - CUSTOMER SERVICE",
                "fee_refund": "FEE REFUND - CUSTOMER SERVICE",
                "*": "GOODWILL CREDIT - CUSTOMER SERVICE",
            },
        )

    @discoverable(WRITE)
    def submit_interest_discrepancy_report_7294(
        self, account_id: str, user_id: str, expected_apy: float, actual_apy: float, amount_difference: float
    ) -> str:
        if missing_args(account_id, user_id, numbers=(expected_apy, actual_apy, amount_difference)):
            return "Error: Missing required parameters."
        try:
            expected_apy = float(expected_apy)
            actual_apy = float(actual_apy)
            amount_difference = float(amount_difference)
        except (ValueError, TypeError):
            return "Error: expected_apy, actual_apy, and amount_difference must be numbers."
        account = self.t.r("accounts").get(account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        user = self.t.r("users").get(user_id)
        if user is None:
            return f"Error: User '{user_id}' not found."
        seed = f"interest_report:{account_id}:{user_id}:{expected_apy}:{actual_apy}:{TODAY}"
        report_id = f"IDR_{deterministic_id(seed)}"
        # tau2 writes the report to a table that does not exist, so nothing is stored.
        level = account.get("level", "Unknown")
        return (
            f"\nInterest Discrepancy Report Submitted Successfully!\n"
            f"  - Report ID: {report_id}\n"
            f"  - Account: {account_id} ({level})\n"
            f"  - Customer: {user.get('name', 'Unknown')}\n"
            f"  - Expected APY: {expected_apy}%\n"
            f"  - Actual APY: {actual_apy}%\n"
            f"  - APY Difference: {round(expected_apy - actual_apy, 4)}%\n"
            f"  - Amount Difference: ${amount_difference:.2f}\n"
            f"  - Status: PENDING_REVIEW\n"
            f"\nThe backend team will investigate this discrepancy and ensure "
            f"correct APY calculations are applied going forward."
        )

    @discoverable(READ)
    def get_bank_account_transactions_9173(self, account_id: str) -> str:
        if not account_id:
            return "Error: Missing required parameter: account_id"
        if account_id not in self.t.r("accounts"):
            return f"Error: Account '{account_id}' not found."
        rows = [
            (rid, rec)
            for rid, rec in self.t.r("bank_account_transaction_history").items()
            if record_matches(rec, {"account_id": account_id})
        ]

        def when(item: tuple[str, dict[str, Any]]) -> datetime:
            text = str(item[1].get("date", ""))
            for fmt in ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y"):
                try:
                    return datetime.strptime(text, fmt)
                except ValueError:
                    continue
            return datetime.min

        rows = sorted(rows, key=when, reverse=True)
        parts = [
            "Bank account transactions retrieved successfully.",
            "",
            "Executed: get_bank_account_transactions_9173",
            f"Transactions for account {account_id}:",
            format_records("bank_account_transaction_history", rows)
            if rows
            else "\nNo transactions found for this account.",
        ]
        return "\n".join(parts)
