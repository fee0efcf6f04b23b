"""The fixed data of the ``banking_knowledge`` tools: transfer reasons, card catalogue and reward rates, fee and limit
tables, the ATM deposit scans tau2 hard-codes (tau2-bench 1.0.1, ``src/tau2/domains/banking_knowledge/tools.py``)."""

from __future__ import annotations

from typing import Literal, NamedTuple, get_args

TransferReason = Literal[
    "fraud_or_security_concern",
    "account_closure_request",
    "deceased_account_holder",
    "legal_or_regulatory_matter",
    "account_ownership_dispute",
    "complex_billing_dispute",
    "abusive_customer_behavior",
    "third_party_inquiry",
    "technical_system_error",
    "unconfirmed_external_communication",
    "customer_demands_after_unavailable_offer_refusal",
    "kb_search_unsuccessful_customer_requests_transfer",
    "specialized_department_required",
    "accessibility_or_special_needs",
    "customer_frustrated_demands_human",
    "supervisor_request_service_complaint",
    "customer_requests_human_no_specific_reason",
    "request_completed_customer_wants_human_followup",
    "other",
]
TRANSFER_REASONS: tuple[str, ...] = get_args(TransferReason)

SEQUENTIAL_PINS = (
    "0123 1234 2345 3456 4567 5678 6789 9876 8765 7654 6543 5432 4321 3210".split()  # noqa: SIM905
)


CARD_TYPES = (
    "Bronze Rewards Card",
    "Business Bronze Rewards Card",
    "Business Gold Rewards Card",
    "Business Platinum Rewards Card",
    "Business Silver Rewards Card",
    "Crypto-Cash Back",
    "Diamond Elite Card",
    "EcoCard",
    "Gold Rewards Card",
    "Green Rewards Card",
    "Platinum Rewards Card",
    "Silver Rewards Card",
    "Silver Zoom Card",
)

CARD_REWARDS: dict[str, dict[str, float]] = {
    "Bronze Rewards Card": {"default": 1.0},
    "Silver Rewards Card": {"Travel": 4.0, "Software": 4.0, "default": 1.0},
    "Gold Rewards Card": {"default": 2.5},
    "Platinum Rewards Card": {"default": 10.0},
    "Business Bronze Rewards Card": {"default": 1.0},
    "Business Silver Rewards Card": {"Travel": 10.0, "Software": 10.0, "default": 1.0},
    "Green Rewards Card": {"Sustainable": 3.0, "default": 1.0},
    "Business Gold Rewards Card": {"Operations": 2.5, "default": 1.0},
    "Business Platinum Rewards Card": {"Travel": 4.0, "Software": 4.0, "Media": 4.0, "default": 1.5},
    "Silver Zoom Card": {"Transportation": 3.0, "default": 1.0},
    "Diamond Elite Card": {"default": 5.0},
    "EcoCard": {"Green": 5.0, "default": 1.0},
    "Crypto-Cash Back": {"default": 2.0},
}
"""Reward rate (points per dollar) by card and category (``default`` otherwise), as tau2's ``submit_transaction``."""

CHECKING_EARLY_CLOSURE: dict[str, tuple[int, int]] = {  # level -> (fee, window in days)
    "Light Blue Account": (15, 30),
    "Light Green Account": (15, 30),
    "Green Fee-Free Account": (15, 30),
    "Blue Account": (25, 60),
    "Green Account": (25, 60),
    "Evergreen Account": (50, 90),
    "Bluest Account": (100, 180),
}
SAVINGS_EARLY_CLOSURE: dict[str, tuple[int, int]] = {
    "Bronze Account": (20, 60),
    "Silver Account": (35, 90),
    "Silver Plus Account": (35, 90),
    "Gold Account": (75, 180),
    "Gold Plus Account": (75, 180),
    "Gold Years Account": (75, 180),
    "Platinum Account": (150, 270),
    "Platinum Plus Account": (150, 270),
    "Diamond Elite Account": (150, 270),
}
ACTIVATION_TOOL = {
    "new_account": "activate_debit_card_8291",
    "first_card": "activate_debit_card_8291",
    "lost": "activate_debit_card_8292",
    "stolen": "activate_debit_card_8292",
    "fraud": "activate_debit_card_8292",
    "expired": "activate_debit_card_8293",
    "damaged": "activate_debit_card_8293",
    "upgrade": "activate_debit_card_8293",
    "bank_reissue": "activate_debit_card_8293",
}
DEFAULT_ATM_LIMITS = {
    "blue account": 500,
    "green account": 600,
    "light blue account": 400,
    "green fee-free account": 500,
    "evergreen account": 750,
    "bluest account": 1500,
    "dark green account": 300,
    "gold years account": 600,
    "purple account": 1000,
}

_SCAN_HEAD = "\n=== ATM DEPOSIT ENVELOPE SCAN ===\n"
_SCAN_FULL = """Item 1: Personal Check
  - Check Number: {check}
  - Drawn On: {bank}
  - Payee: {payee}
  - Amount: $875.00
  - Memo: "October rent refund"
  - Signature: Present and legible
  - Date on Check: {date}

Item 2: Cash
  - Denomination breakdown:
    * 2 x $100 bills = $200.00
    * 3 x $20 bills = $60.00
  - Total Cash: $260.00

--- DEPOSIT SUMMARY ---
Check Total: $875.00
Cash Total: $260.00
GRAND TOTAL: $1,135.00

--- MACHINE RECORD ---
Amount Recorded by ATM: $385.00
DISCREPANCY DETECTED: $750.00 difference

--- IMAGE QUALITY ---
Envelope scan: CLEAR
Check front: CLEAR
Check back (endorsement): CLEAR - endorsed "For Deposit Only - {payee}"
Cash image: CLEAR - bills visible and countable
"""
_DISCREPANCY_NOTE = (
    "Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only $385.00. "
    "Discrepancy of $750.00 confirmed via image review."
)
ATM_SCANS: dict[str, tuple[str, str, str]] = {
    "btxn_834027370c20": (
        "ATM #3921",
        _SCAN_HEAD
        + "Envelope ID: ENV-2025-3921-00923\nDeposit Time: 3:47 PM CST\n"
        + "ATM Location: Rho-Bank ATM #3921, Cedar Lane Branch, Austin, TX\n\n--- ENVELOPE CONTENTS ---\n"
        + _SCAN_FULL.format(check="7284", bank="First Texas Bank", payee="Derek Yamamoto", date="11/03/2025"),
        _DISCREPANCY_NOTE,
    ),
    "btxn_test_deposit_001": (
        "ATM #3921",
        _SCAN_HEAD
        + "Envelope ID: ENV-2025-3921-00847\nDeposit Time: 2:34 PM EST\n"
        + "ATM Location: Rho-Bank ATM #3921, 742 Oak Avenue, Portland, OR\n\n--- ENVELOPE CONTENTS ---\n"
        + _SCAN_FULL.format(check="4821", bank="First National Bank", payee="Linda Patterson", date="11/05/2025"),
        _DISCREPANCY_NOTE,
    ),
    "btxn_test_atm_dep_partial": (
        "ATM #5847",
        _SCAN_HEAD
        + "Envelope ID: ENV-2025-5847-00293\nDeposit Time: 10:15 AM EST\n\n--- ENVELOPE CONTENTS ---\n"
        + "Item 1: Personal Check\n  - Check Number: 7392\n  - Amount: $500.00\n\n--- DEPOSIT SUMMARY ---\n"
        + "Check Total: $500.00\nCash Total: $0.00\nGRAND TOTAL: $500.00\n\n--- MACHINE RECORD ---\n"
        + "Amount Recorded by ATM: $500.00\nNo discrepancy detected.\n",
        "Images confirm deposit matches recorded amount. No discrepancy found.",
    ),
}
"""The three deposits whose envelope scans tau2 hard-codes: ``(atm, scan text, verification notes)``."""


NOTICES: dict[str, str] = {
    "initial_transfer_to_human_agent_0218": "Initial Transfer Initiated, Inform the user that the lines are busy.",
    "initial_transfer_to_human_agent_1822": (
        "Do not explicitly tell the user, but the conversation has not reached the necessary stages to transfer to a "
        "real human yet. Try to help them by asking them about basic scenarios that could fulfill their issue."
    ),
    "emergency_credit_bureau_incident_transfer_1114": (
        "Emergency escalation logged. Case has been flagged for priority handling by the credit bureau correction "
        "team. Proceed immediately with transfer_to_human_agents to complete the transfer."
    ),
}
"""The fixed answers of tau2's argument-less GENERIC discoverable tools (see :func:`~.protocol.notice_tool`)."""


class HistoryReader(NamedTuple):
    """One of tau2's ``get_*_history`` readers: a header, ``Executed: <tool>``, a title, then the records whose
    ``field`` is the argument (tau2's query text) or ``none``. The tool's one argument is named ``field``."""

    header: str
    title: str  # ``{}``: the argument
    table: str
    field: str
    none: str


HISTORY_READERS: dict[str, HistoryReader] = {
    "get_pending_replacement_orders_5765": HistoryReader(
        "Pending replacement orders check completed.",
        "Replacement orders for credit card account {}:",
        "credit_card_orders",
        "credit_card_account_id",
        "\nNo pending replacement orders found for this credit card account.",
    ),
    "get_closure_reason_history_8293": HistoryReader(
        "Closure reason history retrieved successfully.",
        "Closure reason history for credit card account {}:",
        "credit_card_closure_reasons",
        "credit_card_account_id",
        "\nNo closure reason records found for this credit card account.",
    ),
    "get_credit_limit_increase_history_4829": HistoryReader(
        "Credit limit increase history retrieved.",
        "Credit limit increase history for account {}:",
        "credit_limit_increase_requests",
        "credit_card_account_id",
        "\nNo credit limit increase requests found for this account.",
    ),
    "get_debit_dispute_status_7483": HistoryReader(
        "Debit card dispute history retrieved successfully.",
        "Debit card dispute history for user {}:",
        "debit_card_disputes",
        "user_id",
        "\nNo debit card disputes found for this user.",
    ),
    "get_user_dispute_history_7291": HistoryReader(
        "User transaction dispute history retrieved successfully.",
        "Transaction dispute history for user {}:",
        "transaction_disputes",
        "user_id",
        "\nNo transaction disputes found for this user.",
    ),
}

# The allowed values of enumerated tool arguments, by the tool that checks them (tau2 prints them as a list in its
# error text: ``Error: Invalid <argument>. Must be one of: [...]``, see ``checks.invalid``).
# open_bank_account_4821
ACCOUNT_TYPES: tuple[str, ...] = ("checking", "savings", "business_checking", "business_savings")
# order_replacement_credit_card_7291
REPLACEMENT_REASONS: tuple[str, ...] = ("fraud_suspected", "lost", "stolen", "damaged", "expired", "other")
# log_credit_card_closure_reason_4521
CLOSURE_REASONS: tuple[str, ...] = (
    "annual_fee",
    "not_using_card",
    "found_better_card",
    "unhappy_with_rewards",
    "simplifying_finances",
    "negative_experience",
    "other",
)
# apply_statement_credit_8472
STATEMENT_CREDIT_REASONS: tuple[str, ...] = (
    "goodwill_adjustment",
    "promotional_credit",
    "annual_fee_reversal",
    "late_fee_reversal",
    "interest_charge_reversal",
    "dispute_resolution",
    "price_match",
    "retention_offer",
    "error_correction",
    "other",
)
# apply_credit_card_account_flag_6147
FLAG_TYPES: tuple[str, ...] = ("annual_fee_waived", "promotional_apr", "rewards_bonus", "other")
# apply_credit_card_account_flag_6147
FLAG_REASONS: tuple[str, ...] = ("retention_offer", "loyalty_benefit", "promotional", "error_correction", "other")
# file_credit_card_transaction_dispute_4829
CREDIT_DISPUTE_CARD_ACTIONS: tuple[str, ...] = ("keep_active", "cancel_and_reissue")
# file_credit_card_transaction_dispute_4829
CREDIT_DISPUTE_REASONS: tuple[str, ...] = (
    "unauthorized_fraudulent_charge",
    "duplicate_charge",
    "incorrect_amount",
    "goods_services_not_received",
    "goods_services_not_as_described",
    "canceled_subscription_still_charging",
    "refund_never_processed",
)
# file_credit_card_transaction_dispute_4829
CREDIT_DISPUTE_RESOLUTIONS: tuple[str, ...] = ("full_refund", "partial_refund")
# file_debit_card_transaction_dispute_6281
DEBIT_DISPUTE_CATEGORIES: tuple[str, ...] = (
    "unauthorized_transaction",
    "atm_cash_discrepancy",
    "atm_deposit_not_credited",
    "duplicate_charge",
    "incorrect_amount",
    "goods_services_not_received",
    "recurring_charge_after_cancellation",
    "card_present_fraud",
    "card_not_present_fraud",
)
# file_debit_card_transaction_dispute_6281
DEBIT_DISPUTE_TRANSACTION_TYPES: tuple[str, ...] = (
    "pin_purchase",
    "signature_purchase",
    "online_purchase",
    "atm_withdrawal",
    "atm_deposit",
    "recurring_payment",
    "person_to_person",
)
# file_debit_card_transaction_dispute_6281
DEBIT_DISPUTE_PIN_ANSWERS: tuple[str, ...] = ("yes_shared", "yes_observed", "no", "unknown")
# file_debit_card_transaction_dispute_6281
DEBIT_DISPUTE_CARD_ACTIONS: tuple[str, ...] = ("keep_active", "freeze_pending_investigation", "close_and_reissue")
