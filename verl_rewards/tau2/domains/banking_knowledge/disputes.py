"""The agent's discoverable dispute tools: filing credit and debit card disputes, dispute histories, ATM deposit
images (tau2-bench 1.0.1, ``src/tau2/domains/banking_knowledge/tools.py``; texts and quirks as there)."""

from __future__ import annotations

from ...toolkit import READ, WRITE
from .catalog import (
    ATM_SCANS,
    CREDIT_DISPUTE_CARD_ACTIONS,
    CREDIT_DISPUTE_REASONS,
    CREDIT_DISPUTE_RESOLUTIONS,
    DEBIT_DISPUTE_CARD_ACTIONS,
    DEBIT_DISPUTE_CATEGORIES,
    DEBIT_DISPUTE_PIN_ANSWERS,
    DEBIT_DISPUTE_TRANSACTION_TYPES,
)
from .checks import invalid, missing_args
from .common import TODAY, prefixed_id, title_words
from .protocol import BankTools, discoverable


class DisputeTools(BankTools):
    """Dispute tools of the agent (discoverable; part of ``KnowledgeTools``)."""

    @discoverable(WRITE)
    def file_credit_card_transaction_dispute_4829(
        self,
        transaction_id: str,
        card_action: str,
        card_last_4_digits: str,
        full_name: str,
        user_id: str,
        phone: str,
        email: str,
        address: str,
        contacted_merchant: bool,
        purchase_date: str,
        issue_noticed_date: str,
        dispute_reason: str,
        resolution_requested: str,
        eligible_for_provisional_credit: bool,
        partial_refund_amount: float | None = None,
    ) -> str:
        if missing_args(transaction_id, user_id):
            return "Error: Missing required parameters."
        error = invalid(
            ("card_action", card_action, CREDIT_DISPUTE_CARD_ACTIONS),
            ("dispute_reason", dispute_reason, CREDIT_DISPUTE_REASONS),
            ("resolution_requested", resolution_requested, CREDIT_DISPUTE_RESOLUTIONS),
        )
        if error:
            return error
        if resolution_requested == "partial_refund" and partial_refund_amount is None:
            return "Error: partial_refund_amount is required when resolution_requested is 'partial_refund'."
        dispute_id = prefixed_id("dsp", f"dispute:{user_id}:{transaction_id}")
        record = {
            "dispute_id": dispute_id,
            "transaction_id": transaction_id,
            "user_id": user_id,
            "card_action": card_action,
            "card_last_4_digits": card_last_4_digits,
            "full_name": full_name,
            "phone": phone,
            "email": email,
            "address": address,
            "contacted_merchant": contacted_merchant,
            "purchase_date": purchase_date,
            "issue_noticed_date": issue_noticed_date,
            "dispute_reason": dispute_reason,
            "resolution_requested": resolution_requested,
            "partial_refund_amount": partial_refund_amount,
            "eligible_for_provisional_credit": eligible_for_provisional_credit,
            "provisional_credit_given": eligible_for_provisional_credit,
            "submitted_at": TODAY,
            "status": "SUBMITTED",
        }
        if not self.t.add("transaction_disputes", dispute_id, record):
            return "Error: Dispute may have already been filed for this transaction."
        parts = [
            "Credit card transaction dispute filed successfully. A case has been opened and will be reviewed "
            "within 10 business days.",
            "",
            "Executed: file_credit_card_transaction_dispute_4829",
            f"Dispute ID: {dispute_id}",
            f"Transaction: {transaction_id}",
            f"Reason: {title_words(dispute_reason)}",
            f"Resolution Requested: {title_words(resolution_requested)}",
        ]
        if partial_refund_amount:
            parts.append(f"Partial Refund Amount: ${partial_refund_amount:.2f}")
        if eligible_for_provisional_credit:
            parts.append("Provisional Credit: ELIGIBLE - Credit will be applied within 2 business days.")
        else:
            parts.append("Provisional Credit: Not eligible at this time.")
        return "\n".join(parts)

    @discoverable(WRITE)
    def file_debit_card_transaction_dispute_6281(
        self,
        transaction_id: str,
        account_id: str,
        card_id: str,
        user_id: str,
        dispute_category: str,
        transaction_date: str,
        discovery_date: str,
        disputed_amount: float,
        transaction_type: str,
        card_in_possession: bool,
        pin_compromised: str,
        contacted_merchant: bool,
        police_report_filed: bool,
        written_statement_provided: bool,
        provisional_credit_eligible: bool,
        customer_max_liability_amount: float,
        card_action: str,
    ) -> str:
        if missing_args(
            transaction_id,
            account_id,
            card_id,
            user_id,
            dispute_category,
            transaction_date,
            discovery_date,
            disputed_amount,  # a text-style check: 0 counts as missing (tau2)
            transaction_type,
            pin_compromised,
            card_action,
        ):
            return "Error: Missing required parameters."
        if customer_max_liability_amount is None:
            return "Error: customer_max_liability_amount is required."
        if None in (card_in_possession, contacted_merchant, police_report_filed, written_statement_provided):
            return (
                "Error: card_in_possession, contacted_merchant, police_report_filed, and written_statement_provided "
                "are required boolean fields."
            )
        error = invalid(
            ("dispute_category", dispute_category, DEBIT_DISPUTE_CATEGORIES),
            ("transaction_type", transaction_type, DEBIT_DISPUTE_TRANSACTION_TYPES),
            ("pin_compromised", pin_compromised, DEBIT_DISPUTE_PIN_ANSWERS),
            ("card_action", card_action, DEBIT_DISPUTE_CARD_ACTIONS),
        )
        if error:
            return error
        if disputed_amount <= 0:
            return "Error: disputed_amount must be a positive number."
        dispute_id = prefixed_id("dsp", f"dispute:{user_id}:{transaction_id}")
        is_fraud = dispute_category in ["unauthorized_transaction", "card_present_fraud", "card_not_present_fraud"]
        pin_shared = pin_compromised == "yes_shared"
        record = {
            "dispute_id": dispute_id,
            "transaction_id": transaction_id,
            "account_id": account_id,
            "card_id": card_id,
            "user_id": user_id,
            "dispute_category": dispute_category,
            "transaction_date": transaction_date,
            "discovery_date": discovery_date,
            "disputed_amount": disputed_amount,
            "transaction_type": transaction_type,
            "card_in_possession": card_in_possession,
            "pin_compromised": pin_compromised,
            "contacted_merchant": contacted_merchant,
            "police_report_filed": police_report_filed,
            "written_statement_provided": written_statement_provided,
            "provisional_credit_eligible": provisional_credit_eligible,
            "provisional_credit_issued": provisional_credit_eligible,
            "provisional_credit_amount": disputed_amount if provisional_credit_eligible else None,
            "customer_max_liability_amount": customer_max_liability_amount,
            "card_action": card_action,
            "is_fraud_category": is_fraud,
            "pin_shared_voluntarily": pin_shared,
            "submitted_at": TODAY,
            "status": "OPEN",
        }
        if not self.t.add("debit_card_disputes", dispute_id, record):
            return "Error: Dispute may have already been filed for this transaction."
        parts = [
            f"Dispute ID: {dispute_id}",
            f"Transaction: {transaction_id}",
            f"Account: {account_id}",
            f"Category: {title_words(dispute_category)}",
            f"Disputed Amount: ${disputed_amount:.2f}",
            f"Card Action: {title_words(card_action)}",
        ]
        if provisional_credit_eligible:
            parts.append(
                f"Provisional Credit: ISSUED - ${disputed_amount:.2f} credited within 10 business days per "
                "Regulation E."
            )
        else:
            parts.append("Provisional Credit: Not eligible - see Debit Card Provisional Credit Guidelines for details.")
        if pin_shared:
            parts.append(
                "WARNING: Customer indicated PIN was shared voluntarily. This may affect liability determination."
            )
        if is_fraud and not police_report_filed and disputed_amount > 500:
            parts.append("RECOMMENDATION: For fraud disputes over $500, filing a police report is recommended.")
        return "\n".join(parts)

    @discoverable(READ)
    def get_debit_dispute_status_7483(self, user_id: str) -> str:
        return self._history("get_debit_dispute_status_7483", user_id)

    @discoverable(READ)
    def get_atm_deposit_images_8473(self, transaction_id: str) -> str:
        if not transaction_id:
            return "Error: Missing required parameter: transaction_id"
        txn = self.t.r("bank_account_transaction_history").get(transaction_id)
        if txn is None:
            return f"Error: Transaction '{transaction_id}' not found."
        if txn.get("type") != "atm_deposit":
            return (
                f"Error: Transaction '{transaction_id}' is not an ATM deposit. "
                "This tool only works for ATM deposit transactions."
            )
        description = txn.get("description", "")
        if "RHO-BANK" not in description.upper() and "RHOBANK" not in description.upper():
            return (
                f"Error: Transaction '{transaction_id}' is from a third-party ATM. Deposit images are only available "
                "for Rho-Bank ATM deposits. For third-party ATM disputes, a chargeback request must be submitted to "
                "the ATM network."
            )
        scan = ATM_SCANS.get(transaction_id)
        date = txn.get("date", "Unknown")
        if scan is not None:
            atm_id, contents, notes = scan
            return (
                "ATM Deposit Image Retrieval Results\n=====================================\n"
                f"Transaction ID: {transaction_id}\nATM: {atm_id}\nDeposit Date: {date}\n\n{contents}\n\n"
                f"--- VERIFICATION NOTES ---\n{notes}\n"
            )
        return (
            "ATM Deposit Image Retrieval Results\n=====================================\n"
            f"Transaction ID: {transaction_id}\nATM: {description}\nDeposit Date: {date}\n"
            f"Amount Recorded: ${abs(txn.get('amount', 0)):.2f}\n\n"
            "--- IMAGE STATUS ---\nStatus: IMAGES NOT AVAILABLE\n"
            "Reason: Deposit images for this transaction have either expired (older than 90 days) or were not "
            "captured by the ATM system.\n\n"
            "For deposits without available images, the dispute will proceed based on customer statement and ATM "
            "journal records only. Investigation timeline may be extended.\n"
        )

    @discoverable(READ)
    def get_user_dispute_history_7291(self, user_id: str) -> str:
        return self._history("get_user_dispute_history_7291", user_id)
