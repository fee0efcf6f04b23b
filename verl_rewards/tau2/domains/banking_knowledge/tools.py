"""The ``banking_knowledge`` toolkits: the agent's :class:`KnowledgeTools` and the user's :class:`KnowledgeUserTools`.

Behaviour, output texts and errors follow tau2-bench 1.0.1 (``src/tau2/domains/banking_knowledge/tools.py``, MIT,
Copyright (c) 2025 Sierra Research), including its quirks (listed at the tools that have them). Most tools *return*
``Error: ...`` strings instead of raising; those are ordinary observations, as in tau2.

Discoverable tools (marked :func:`discoverable`) are not offered to the model and cannot be called by name: the
agent reaches them through ``unlock_discoverable_agent_tool`` + ``call_discoverable_agent_tool``, the user through
``give_discoverable_user_tool`` (agent) + ``call_discoverable_user_tool``. Their definitions (shown on unlock and
give) are tau2's parsed docstrings, shipped in ``discoverable_tools.json``. The class names are tau2's so that
Python's ``TypeError`` texts (``KnowledgeTools.x() missing 1 required positional argument: ...``) match.

The schemas the model is shown come from tau2's own code (``tool_schemas/banking_knowledge.json``, see the domain's
``SCHEMA_FILE``), not from the docstrings here, which are notes for readers. What must equal tau2 is what the model
and the evaluator see: tool and argument names, output and error texts, DB effects and hashes.

What the DB records of discoverable-tool use (it enters the DB hash):
* ``agent_discoverable_tools``: one ``{"tool_name", "status": "CALLED"}`` record per tool name, when a call goes
  through ``call_discoverable_agent_tool`` and the tool is mutating or in the environment's ``read_log_allowlist``
  (tau2 1.0.1: the task's gold discoverable calls). Unlocks are in memory only.
* ``user_discoverable_tools``: one ``GIVEN`` record per given tool name.
* ``user_discoverable_tool_calls``: one record per (user tool, arguments), written before the tool validates.
Arguments of ``call_discoverable_agent_tool`` / ``call_discoverable_user_tool`` are parsed with every JSON integer
as a float (tau2 PR #397), so ``25`` and ``25.0`` give the same ids and hashes.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any, Literal, get_args

from ....engine.state import DBState
from ....engine.toolkit import GENERIC, READ, WRITE, Toolkit, tool
from .common import (
    NOW,
    TODAY,
    Tables,
    account_balance,
    by_field,
    deterministic_id,
    format_discoverable,
    format_records,
    found,
    parse_balance,
    prefixed_id,
    record_matches,
    title_words,
    transaction_id,
)

DISCOVERABLE_ATTR = "__bank_discoverable__"
_TAU2_TOOLS_MODULE = "tau2.domains.banking_knowledge.tools"
"""The module name in one tau2 error text that Python words (see ``call_discoverable_agent_tool``)."""

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

_SEQUENTIAL_PINS = (
    "0123 1234 2345 3456 4567 5678 6789 9876 8765 7654 6543 5432 4321 3210".split()  # noqa: SIM905
)


def discoverable(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a toolkit method as a discoverable tool of type ``kind`` (reachable only through the protocol)."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        setattr(fn, DISCOVERABLE_ATTR, kind)
        return fn

    return mark


@cache
def discoverable_definitions() -> dict[str, dict[str, Any]]:
    """``{"agent": {name: definition}, "user": {...}}``: tau2's parsed docstrings of the discoverable tools."""
    text = resources.files(__package__).joinpath("discoverable_tools.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return {"agent": data["agent"], "user": data["user"]}


def _discoverable_methods(cls: type) -> dict[str, Callable[..., Any]]:
    cached = cls.__dict__.get("_bank_discoverable_cache")
    if cached is None:
        cached = {}
        for klass in reversed(cls.__mro__):
            for name, fn in vars(klass).items():
                if getattr(fn, DISCOVERABLE_ATTR, None) is not None:
                    cached[name] = fn
        cls._bank_discoverable_cache = cached  # type: ignore[attr-defined]
    return cached


def _digits(text: str, size: int) -> bool:
    """``text`` is exactly ``size`` decimal digits (a PIN, CVV or last-4 check)."""
    return text.isdigit() and len(text) == size


def _is_active(account: dict[str, Any]) -> bool:
    """Whether an account may take money in or out: tau2 accepts either spelling of an open status."""
    return account.get("status") in ("ACTIVE", "OPEN")


def _validate_pin(pin: str) -> str | None:
    if not pin or not _digits(pin, 4):
        return "PIN must be exactly 4 digits."
    if pin in _SEQUENTIAL_PINS:
        return "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."
    if len(set(pin)) == 1:
        return "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."
    return None


def _missing(*required: Any, numbers: tuple[Any, ...] = ()) -> bool:
    """The banking tools' "missing required parameters" test: an empty (falsy) argument, or a None number.

    Numbers are tested against None only, so 0 passes here and reaches the tool's own "must be positive" check.
    """
    return not all(required) or any(n is None for n in numbers)


def _one_of(arg: str, values: list[str]) -> str:
    return f"Error: Invalid {arg}. Must be one of: {values}"


def _args_json(args: dict[str, Any]) -> str:
    return json.dumps(args, indent=2)


def _days_since(date_text: Any) -> int:
    """Days from ``MM/DD/YYYY`` to the fixed now; 0 when it does not parse."""
    try:
        return (NOW - datetime.strptime(date_text, "%m/%d/%Y")).days
    except ValueError:
        return 0


class KnowledgeTools(Toolkit):
    """The agent's banking tools (retrieval tools are added per retrieval configuration, see ``retrieval.py``)."""

    read_log_allowlist: frozenset[str] = frozenset()

    def __init__(self, db: DBState):
        super().__init__(db)
        self.t = Tables(db)
        self._given: dict[str, dict[str, Any]] = {}
        self._unlocked: dict[str, dict[str, Any]] = {}
        self.read_log_allowlist = frozenset()

    # ------------------------------------------------------------ protocol helpers
    @classmethod
    def discoverable_tools(cls) -> dict[str, Callable[..., Any]]:
        """The agent discoverable tools by name (unbound functions)."""
        return _discoverable_methods(cls)

    @property
    def unlocked_tools(self) -> tuple[str, ...]:
        """Names unlocked in this environment (in memory, as in tau2)."""
        return tuple(self._unlocked)

    def _q(self, table: str, field: str, value: Any) -> str:
        return self.t.query(table, by_field(field, value))

    # ------------------------------------------------------------------ base tools
    @tool(GENERIC)
    def transfer_to_human_agents(self, summary: str, reason: TransferReason = "other") -> str:
        """End the conversation with a hand-off; an unknown reason code is an error observation, not a transfer."""
        if reason not in TRANSFER_REASONS:
            return f"Error: Invalid transfer reason '{reason}'. Must be one of: {', '.join(TRANSFER_REASONS)}"
        return f"Transfer successful (reason: {reason}). A human agent will assist you shortly."

    @tool(READ)
    def get_current_time(self) -> str:
        """The fixed clock of the domain (tau2's frozen now), used to stamp verification records."""
        return "The current time is 2025-11-14 03:40:00 EST."

    @tool(READ)
    def get_user_information_by_id(self, user_id: str) -> str:
        """Look up a customer record by its id."""
        return self._q("users", "user_id", user_id)

    @tool(READ)
    def get_user_information_by_name(self, customer_name: str) -> str:
        """Look up customer records by exact (case-sensitive) name."""
        return self._q("users", "name", customer_name)

    @tool(READ)
    def get_user_information_by_email(self, email: str) -> str:
        """Look up customer records by email address."""
        return self._q("users", "email", email)

    @tool(WRITE)
    def change_user_email(self, user_id: str, new_email: str) -> str:
        """Overwrite a customer's email; an unknown id is reported, not raised."""
        if not self.t.update("users", user_id, {"email": new_email}):
            return f"Error: User with ID '{user_id}' not found."
        return f"Email updated successfully.\n  - User ID: {user_id}\n  - New Email: {new_email}"

    @tool(READ)
    def get_referrals_by_user(self, user_id: str) -> str:
        """Referral records whose referrer is ``user_id``."""
        return self._q("referrals", "referrer_id", user_id)

    @tool(READ)
    def get_credit_card_transactions_by_user(self, user_id: str) -> str:
        """Credit card transaction records of a customer."""
        return self._q("credit_card_transaction_history", "user_id", user_id)

    @tool(READ)
    def get_credit_card_accounts_by_user(self, user_id: str) -> str:
        """Credit card account records of a customer (type, opening date, balance, points)."""
        return self._q("credit_card_accounts", "user_id", user_id)

    @tool(WRITE)
    def log_verification(
        self,
        name: str,
        user_id: str,
        address: str,
        email: str,
        phone_number: str,
        date_of_birth: str,
        time_verified: str,
    ) -> str:
        """Write the identity-verification audit record; its id is the user id plus the compacted timestamp."""
        suffix = time_verified.replace(" ", "_").replace(":", "").replace("-", "")
        record = {
            "name": name,
            "user_id": user_id,
            "address": address,
            "email": email,
            "phone_number": phone_number,
            "date_of_birth": date_of_birth,
            "time_verified": time_verified,
        }
        if not self.t.add("verification_history", f"{user_id}_{suffix}", record):
            return "Failed to log verification: Record may already exist."
        return f"Verification logged successfully.\n  - User: {name} (ID: {user_id})\n  - Verified at: {time_verified}"

    # WRITE here stands for tau2's GENERIC tool with mutates_state=True: replays re-execute it.
    @tool(WRITE)
    def give_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        """Hand a user discoverable tool (with suggested arguments) to the customer; records it as GIVEN in the DB."""
        methods = KnowledgeUserTools.discoverable_tools()
        if not isinstance(discoverable_tool_name, str) or discoverable_tool_name not in methods:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        params = inspect.signature(methods[discoverable_tool_name]).parameters
        for key in args:
            if key not in params and key != "self":
                return f"Error: Unexpected parameter: {key}"
        info = discoverable_definitions()["user"][discoverable_tool_name]
        self._given[discoverable_tool_name] = {"arguments": args, "given_at": NOW.isoformat()}
        record_id = deterministic_id(f"user_discoverable_tool:{discoverable_tool_name}")
        self.t.add("user_discoverable_tools", record_id, {"tool_name": discoverable_tool_name, "status": "GIVEN"})
        shown = json.dumps(args, indent=2) if args else "(no arguments)"
        return (
            f"Tool given to user: {discoverable_tool_name}\n"
            f"Description: {info['description']}\n"
            f"Arguments: {shown}\n\n"
            f"The user can now execute this action by calling `call_discoverable_user_tool` "
            f"with discoverable_tool_name='{discoverable_tool_name}' and the same arguments."
        )

    # WRITE here stands for tau2's GENERIC tool with mutates_state=True: replays re-execute it.
    @tool(WRITE)
    def unlock_discoverable_agent_tool(self, agent_tool_name: str) -> str:
        """Make an agent discoverable tool callable and show its definition (kept in memory, not in the DB)."""
        if not isinstance(agent_tool_name, str) or agent_tool_name not in self.discoverable_tools():
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        info = discoverable_definitions()["agent"][agent_tool_name]
        self._unlocked[agent_tool_name] = {"unlocked_at": NOW.isoformat()}
        return (
            f"Tool unlocked: {agent_tool_name}\n"
            f"Description: {info['description']}\n\n"
            f"{format_discoverable(agent_tool_name, info)}\n\n"
            f"You can now use this tool by calling `call_discoverable_agent_tool` with "
            f"agent_tool_name='{agent_tool_name}' and the required arguments."
        )

    @tool(WRITE)
    def call_discoverable_agent_tool(self, agent_tool_name: str, arguments: str = "{}") -> str:
        """Run an unlocked agent discoverable tool with JSON arguments; logs the call if it writes or is allowed."""
        methods = self.discoverable_tools()
        if not isinstance(agent_tool_name, str) or agent_tool_name not in methods:
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        if agent_tool_name not in self._unlocked:
            return (
                f"Error: Tool '{agent_tool_name}' has not been unlocked. "
                f"You must first use `unlock_discoverable_agent_tool` to unlock this tool before calling it."
            )
        try:
            args = json.loads(arguments, parse_int=float)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        method = getattr(self, agent_tool_name)
        if not isinstance(args, dict):
            # tau2 lets Python word this TypeError, and Python names the module the tool is defined in (tau2's). The
            # text is kept because the parity fixture pins it (tests/data/tau2_banking_knowledge_reference.json:
            # call_discoverable_agent_tool with arguments "[1]", checked by test_tau2_banking_knowledge.py).
            return (
                f"Error: Invalid arguments: {_TAU2_TOOLS_MODULE}.KnowledgeTools.{agent_tool_name}() argument after ** "
                f"must be a mapping, not {type(args).__name__}"
            )
        try:
            result = method(**args)
        except TypeError as exc:
            return f"Error: Invalid arguments: {exc}"
        if getattr(methods[agent_tool_name], DISCOVERABLE_ATTR) == WRITE or agent_tool_name in self.read_log_allowlist:
            record_id = deterministic_id(f"agent_discoverable_tool:{agent_tool_name}")
            self.t.add("agent_discoverable_tools", record_id, {"tool_name": agent_tool_name, "status": "CALLED"})
        return result

    @tool(READ)
    def list_discoverable_agent_tools(self) -> str:
        """The agent discoverable-tool call records in the DB."""
        # tau2 tests for "No results found", which its query never prints: the friendly text never shows.
        return f"Your called agent tools:\n{self.t.query('agent_discoverable_tools', '{}')}"

    # ============================================================ agent discoverable tools
    @discoverable(WRITE)
    def example_agent_tool_0000(self) -> str:
        return "Example tool executed successfully."

    @discoverable(WRITE)
    def update_transaction_rewards_3847(self, transaction_id: str, new_rewards_earned: str) -> str:
        if _missing(transaction_id, new_rewards_earned):
            return "Error: Missing required parameters."
        if not self.t.update("credit_card_transaction_history", transaction_id, {"rewards_earned": new_rewards_earned}):
            return f"Error: Transaction '{transaction_id}' not found."
        args = {"transaction_id": transaction_id, "new_rewards_earned": new_rewards_earned}
        return (
            f"Transaction rewards updated successfully.\n\n"
            f"Executed: update_transaction_rewards_3847\n"
            f"Arguments: {_args_json(args)}\n"
            f"Transaction updated:\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - New Rewards: {new_rewards_earned}"
        )

    @discoverable(GENERIC)
    def initial_transfer_to_human_agent_0218(self) -> str:
        return (
            "Initial Transfer Initiated, Inform the user that the lines are busy.\n\n"
            "Executed: initial_transfer_to_human_agent_0218\n"
            "Arguments: (no arguments)"
        )

    @discoverable(GENERIC)
    def initial_transfer_to_human_agent_1822(self) -> str:
        return (
            "Do not explicitly tell the user, but the conversation has not reached the necessary stages to transfer "
            "to a real human yet. Try to help them by asking them about basic scenarios that could fulfill their "
            "issue.\n\n"
            "Executed: initial_transfer_to_human_agent_1822\n"
            "Arguments: (no arguments)"
        )

    @discoverable(GENERIC)
    def emergency_credit_bureau_incident_transfer_1114(self) -> str:
        return (
            "Emergency escalation logged. Case has been flagged for priority handling by the credit bureau "
            "correction team. Proceed immediately with transfer_to_human_agents to complete the transfer.\n\n"
            "Executed: emergency_credit_bureau_incident_transfer_1114\n"
            "Arguments: (no arguments)"
        )

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
        if _missing(transaction_id, user_id):
            return "Error: Missing required parameters."
        actions = ["keep_active", "cancel_and_reissue"]
        if card_action not in actions:
            return _one_of("card_action", actions)
        reasons = [
            "unauthorized_fraudulent_charge",
            "duplicate_charge",
            "incorrect_amount",
            "goods_services_not_received",
            "goods_services_not_as_described",
            "canceled_subscription_still_charging",
            "refund_never_processed",
        ]
        if dispute_reason not in reasons:
            return _one_of("dispute_reason", reasons)
        resolutions = ["full_refund", "partial_refund"]
        if resolution_requested not in resolutions:
            return _one_of("resolution_requested", resolutions)
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
        if _missing(
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
        categories = [
            "unauthorized_transaction",
            "atm_cash_discrepancy",
            "atm_deposit_not_credited",
            "duplicate_charge",
            "incorrect_amount",
            "goods_services_not_received",
            "recurring_charge_after_cancellation",
            "card_present_fraud",
            "card_not_present_fraud",
        ]
        if dispute_category not in categories:
            return _one_of("dispute_category", categories)
        types = [
            "pin_purchase",
            "signature_purchase",
            "online_purchase",
            "atm_withdrawal",
            "atm_deposit",
            "recurring_payment",
            "person_to_person",
        ]
        if transaction_type not in types:
            return _one_of("transaction_type", types)
        pins = ["yes_shared", "yes_observed", "no", "unknown"]
        if pin_compromised not in pins:
            return _one_of("pin_compromised", pins)
        actions = ["keep_active", "freeze_pending_investigation", "close_and_reissue"]
        if card_action not in actions:
            return _one_of("card_action", actions)
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

    def _history(self, header: str, tool_name: str, title: str, table: str, field: str, value: str, none: str) -> str:
        """The shape of tau2's ``get_*_history`` readers: header lines, then the query or a fixed line."""
        result = self._q(table, field, value)
        parts = [header, "", f"Executed: {tool_name}", title]
        parts.append(result if found(result) else none)
        return "\n".join(parts)

    @discoverable(READ)
    def get_debit_dispute_status_7483(self, user_id: str) -> str:
        if not user_id:
            return "Error: Missing required parameter: user_id"
        return self._history(
            "Debit card dispute history retrieved successfully.",
            "get_debit_dispute_status_7483",
            f"Debit card dispute history for user {user_id}:",
            "debit_card_disputes",
            "user_id",
            user_id,
            "\nNo debit card disputes found for this user.",
        )

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
        scan = _ATM_SCANS.get(transaction_id)
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
        if _missing(credit_card_account_id, user_id, shipping_address, reason):
            return "Error: Missing required parameters (credit_card_account_id, user_id, shipping_address, reason)."
        reasons = ["fraud_suspected", "lost", "stolen", "damaged", "expired", "other"]
        if reason not in reasons:
            return _one_of("reason", reasons)
        missing = self._cc_missing(credit_card_account_id)
        if missing:
            return missing
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
    def get_user_dispute_history_7291(self, user_id: str) -> str:
        if not user_id:
            return "Error: Missing required parameter: user_id"
        return self._history(
            "User transaction dispute history retrieved successfully.",
            "get_user_dispute_history_7291",
            f"Transaction dispute history for user {user_id}:",
            "transaction_disputes",
            "user_id",
            user_id,
            "\nNo transaction disputes found for this user.",
        )

    @discoverable(READ)
    def get_pending_replacement_orders_5765(self, credit_card_account_id: str) -> str:
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        return self._history(
            "Pending replacement orders check completed.",
            "get_pending_replacement_orders_5765",
            f"Replacement orders for credit card account {credit_card_account_id}:",
            "credit_card_orders",
            "credit_card_account_id",
            credit_card_account_id,
            "\nNo pending replacement orders found for this credit card account.",
        )

    @discoverable(WRITE)
    def log_credit_card_closure_reason_4521(
        self, credit_card_account_id: str, user_id: str, closure_reason: str
    ) -> str:
        if _missing(credit_card_account_id, user_id, closure_reason):
            return "Error: Missing required parameters."
        reasons = [
            "annual_fee",
            "not_using_card",
            "found_better_card",
            "unhappy_with_rewards",
            "simplifying_finances",
            "negative_experience",
            "other",
        ]
        if closure_reason not in reasons:
            return _one_of("closure_reason", reasons)
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
            f"Executed: log_credit_card_closure_reason_4521\n"
            f"Arguments: {_args_json(args)}\n"
            f"Closure reason '{closure_reason}' logged for account {credit_card_account_id}."
        )

    @discoverable(READ)
    def get_closure_reason_history_8293(self, credit_card_account_id: str) -> str:
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        return self._history(
            "Closure reason history retrieved successfully.",
            "get_closure_reason_history_8293",
            f"Closure reason history for credit card account {credit_card_account_id}:",
            "credit_card_closure_reasons",
            "credit_card_account_id",
            credit_card_account_id,
            "\nNo closure reason records found for this credit card account.",
        )

    @discoverable(WRITE)
    def apply_statement_credit_8472(self, user_id: str, credit_card_account_id: str, amount: float, reason: str) -> str:
        if _missing(user_id, credit_card_account_id, reason, numbers=(amount,)):
            return "Error: Missing required parameters (user_id, credit_card_account_id, amount, reason)."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        reasons = [
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
        ]
        if reason not in reasons:
            return _one_of("reason", reasons)
        missing = self._cc_missing(credit_card_account_id)
        if missing:
            return missing
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
        if _missing(credit_card_account_id, user_id, flag_type, expiration_date, reason):
            return (
                "Error: Missing required parameters (credit_card_account_id, user_id, flag_type, expiration_date, "
                "reason)."
            )
        flags = ["annual_fee_waived", "promotional_apr", "rewards_bonus", "other"]
        if flag_type not in flags:
            return _one_of("flag_type", flags)
        reasons = ["retention_offer", "loyalty_benefit", "promotional", "error_correction", "other"]
        if reason not in reasons:
            return _one_of("reason", reasons)
        missing = self._cc_missing(credit_card_account_id)
        if missing:
            return missing
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
        if _missing(credit_card_account_id, user_id):
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
            f"Executed: close_credit_card_account_7834\n"
            f"Arguments: {_args_json(args)}\n"
            f"Account {credit_card_account_id} has been closed."
        )

    @discoverable(WRITE)
    def pay_credit_card_from_checking_9182(
        self, user_id: str, checking_account_id: str, credit_card_account_id: str, amount: float
    ) -> str:
        if _missing(user_id, checking_account_id, credit_card_account_id, numbers=(amount,)):
            return "Error: Missing required parameters (user_id, checking_account_id, credit_card_account_id, amount)."
        try:
            amount = float(amount)
            if amount <= 0:
                return "Error: Payment amount must be a positive number."
        except (ValueError, TypeError):
            return "Error: Invalid payment amount. Must be a positive number."
        accounts = self.t.r("accounts")
        if checking_account_id not in accounts:
            return f"Error: Checking account '{checking_account_id}' not found."
        checking = accounts[checking_account_id]
        if checking.get("user_id") != user_id:
            return f"Error: Checking account '{checking_account_id}' does not belong to user '{user_id}'."
        if checking.get("class") != "checking":
            return f"Error: Account '{checking_account_id}' is not a checking account."
        balance = account_balance(checking)
        if amount > balance:
            return (
                f"Error: Insufficient funds in checking account. Available balance: ${balance:.2f}, "
                f"requested payment: ${amount:.2f}."
            )
        cards = self.t.r("credit_card_accounts")
        if credit_card_account_id not in cards:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        card = cards[credit_card_account_id]
        if card.get("user_id") != user_id:
            return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
        try:
            card_balance = float(str(card.get("current_balance", "$0.00")).replace("$", "").replace(",", ""))
        except (ValueError, TypeError):
            card_balance = 0.0
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

    @discoverable(WRITE)
    def submit_credit_limit_increase_request_7392(
        self, credit_card_account_id: str, user_id: str, requested_increase_amount: int
    ) -> str:
        if _missing(credit_card_account_id, user_id, numbers=(requested_increase_amount,)):
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
        cards = self.t.r("credit_card_accounts")
        if credit_card_account_id not in cards:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        if cards[credit_card_account_id].get("user_id") != user_id:
            return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
        request_id = prefixed_id("cli", f"cli_request:{credit_card_account_id}:{user_id}:{whole:.2f}")
        record = {
            "request_id": request_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "requested_increase_amount": whole,
            "submitted_at": TODAY,
            "status": "PENDING",
        }
        if not self.t.add("credit_limit_increase_requests", request_id, record):
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
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        return self._history(
            "Credit limit increase history retrieved.",
            "get_credit_limit_increase_history_4829",
            f"Credit limit increase history for account {credit_card_account_id}:",
            "credit_limit_increase_requests",
            "credit_card_account_id",
            credit_card_account_id,
            "\nNo credit limit increase requests found for this account.",
        )

    @discoverable(READ)
    def get_payment_history_6183(self, credit_card_account_id: str, months: int) -> str:
        if _missing(credit_card_account_id, numbers=(months,)):
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
        if _missing(credit_card_account_id, user_id, numbers=(new_credit_limit,)):
            return "Error: Missing required parameters."
        cards = self.t.r("credit_card_accounts")
        if credit_card_account_id not in cards:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        card = cards[credit_card_account_id]
        if card.get("user_id") != user_id:
            return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
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
        try:
            current = float(str(card.get("credit_limit", "$0.00")).replace("$", "").replace(",", ""))
        except (ValueError, TypeError):
            current = 0.0
        new_limit = float(new_credit_limit)
        self.t.rec("credit_card_accounts", credit_card_account_id)["credit_limit"] = f"${new_limit:.2f}"
        increase = new_limit - current
        request_id = prefixed_id("cli", f"cli_request:{credit_card_account_id}:{user_id}:{increase:.2f}")
        record = {
            "request_id": request_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "previous_limit": f"${current:.2f}",
            "new_limit": f"${new_limit:.2f}",
            "increase_amount": f"${increase:.2f}",
            "decision_date": TODAY,
            "status": "APPROVED",
        }
        self.t.add("credit_limit_increase_requests", request_id, record)
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
        if _missing(credit_card_account_id, user_id, denial_reason):
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
        request_id = prefixed_id("cli", f"cli_request:{credit_card_account_id}:{user_id}:{0.0:.2f}")
        record = {
            "request_id": request_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "denial_reason": denial_reason,
            "decision_date": TODAY,
            "status": "DENIED",
        }
        self.t.add("credit_limit_increase_requests", request_id, record)
        return (
            f"Credit limit increase request denied.\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Denial Reason: {denial_reason}\n"
            f"  - Date: {TODAY}\n"
            f"The customer will receive a notification explaining the denial."
        )

    @discoverable(WRITE)
    def open_bank_account_4821(self, user_id: str, account_type: str, account_class: str) -> str:
        if _missing(user_id, account_type, account_class):
            return "Error: Missing required parameters."
        types = ["checking", "savings", "business_checking", "business_savings"]
        if account_type not in types:
            return _one_of("account_type", types)
        denied = "Error: Account eligibility requirements not met."
        mine = [a for a in self.t.r("accounts").values() if a.get("user_id") == user_id]

        def kind(acc: dict[str, Any]) -> Any:
            return acc.get("account_type", acc.get("class", ""))

        def is_open(acc: dict[str, Any]) -> bool:
            return acc.get("status", "") in ["OPEN", "ACTIVE"]

        def age(acc: dict[str, Any]) -> int:
            return _days_since(acc.get("date_opened", ""))

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
                rule = _CHECKING_EARLY_CLOSURE.get(account.get("level", ""))
            elif klass == "savings":  # db.json says "saving": this never matches (tau2)
                rule = _SAVINGS_EARLY_CLOSURE.get(account.get("level", ""))
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
        if _missing(source_account_id, destination_account_id, numbers=(amount,)):
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
        if not _is_active(accounts[source_account_id]):
            return f"Error: Source account '{source_account_id}' is not active."
        if not _is_active(accounts[destination_account_id]):
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
        if _missing(account_id, credit_type, numbers=(amount,)):
            return "Error: Missing required parameters."
        try:
            amount = float(amount)
        except (TypeError, ValueError):
            return "Error: Invalid credit amount. Must be a number."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        if credit_type not in types:
            return _one_of("credit_type", types)
        accounts = self.t.r("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class", "").lower() not in classes:
            return f"Error: Account '{account_id}' is not a {wrong_class}"
        if not _is_active(account):
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
        if _missing(account_id, user_id, numbers=(expected_apy, actual_apy, amount_difference)):
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
        if _missing(account_id, user_id, delivery_option, card_design, shipping_address, numbers=(delivery, design)):
            return (
                "Error: Missing required parameters. Required: account_id, user_id, delivery_option, delivery_fee, "
                "card_design, design_fee, shipping_address."
            )
        assert delivery is not None and design is not None
        deliveries = ["STANDARD", "EXPEDITED", "RUSH"]
        if delivery_option.upper() not in deliveries:
            return _one_of("delivery_option", deliveries)
        option = delivery_option.upper()
        designs = ["CLASSIC", "PREMIUM", "CUSTOM"]
        if card_design.upper() not in designs:
            return _one_of("card_design", designs)
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
            fees = []
            if delivery > 0:
                fees.append(f"Delivery ${delivery}")
            if design > 0:
                fees.append(f"Design ${design}")
            if excess > 0:
                fees.append(f"Excess Replacement ${excess:.0f}")
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
            details = []
            if delivery > 0:
                details.append(f"Delivery: ${delivery}")
            if design > 0:
                details.append(f"Design: ${design}")
            if excess > 0:
                details.append(f"Excess Replacement: ${excess:.0f}")
            parts.append(f"Total Fees: ${total:.2f} ({', '.join(details)}) - CHARGED to account {account_id}")
            parts.append(f"New Account Balance: ${holdings - total:.2f}")
        else:
            parts.append("Total Fees: $0 (No additional charges)")
        return "\n".join(parts)

    def _activation_error(
        self, card_id: Any, last_4_digits: Any, expiration_date: Any, cvv: Any, pin: Any, allowed: list[str], name: str
    ) -> str | None:
        """tau2's checks shared by the three activation tools (None: the card may be activated)."""
        if _missing(card_id, last_4_digits, expiration_date, cvv, pin):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, expiration_date, cvv, pin."
        pin_error = _validate_pin(pin)
        if pin_error:
            return f"Error: {pin_error}"
        if not _digits(cvv, 3):
            return "Error: CVV must be exactly 3 digits."
        if not _digits(last_4_digits, 4):
            return "Error: Last 4 digits must be exactly 4 digits."
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        issue_reason = card.get("issue_reason", "new_account")
        if issue_reason not in allowed:
            right = _ACTIVATION_TOOL.get(issue_reason, "unknown")
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
        account_id = card.get("account_id")
        accounts = self.t.r("accounts")
        if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
            return f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be activated."
        return None

    def _activate(self, card_id: str, status: str, updates: Callable[[], dict[str, Any]]) -> tuple[dict, list[str]]:
        """Activate the card; other ACTIVE cards of its account get ``status`` and ``updates()``."""
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
                writable.update(updates())
                others.append(other_id)
        return card, others

    @discoverable(WRITE)
    def activate_debit_card_8291(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        error = self._activation_error(
            card_id, last_4_digits, expiration_date, cvv, pin, ["new_account", "first_card"], "activate_debit_card_8291"
        )
        if error:
            return error
        _, others = self._activate(
            card_id,
            "DEACTIVATED",
            lambda: {"deactivated_date": TODAY, "deactivation_reason": "New card activated"},
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
        error = self._activation_error(
            card_id, last_4_digits, expiration_date, cvv, pin, ["lost", "stolen", "fraud"], "activate_debit_card_8292"
        )
        if error:
            return error
        reason = self.t.r("debit_cards")[card_id].get("issue_reason", "lost")
        _, others = self._activate(
            card_id,
            "DEACTIVATED",
            lambda: {"deactivated_date": TODAY, "deactivation_reason": f"Replacement card activated ({reason})"},
        )
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
        error = self._activation_error(
            card_id,
            last_4_digits,
            expiration_date,
            cvv,
            pin,
            ["expired", "damaged", "upgrade", "bank_reissue"],
            "activate_debit_card_8293",
        )
        if error:
            return error
        reason = self.t.r("debit_cards")[card_id].get("issue_reason", "expired")
        _, others = self._activate(
            card_id,
            "GRACE_PERIOD",
            lambda: {"grace_period_ends": TODAY, "deactivation_reason": f"Reissued card activated ({reason})"},
        )
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

    @discoverable(WRITE)
    def close_debit_card_4721(self, card_id: str, reason: str) -> str:
        if _missing(card_id, reason):
            return "Error: Missing required parameters. Required: card_id, reason."
        reasons = ["lost", "stolen", "fraud_suspected", "damaged", "no_longer_needed", "account_closing"]
        if reason.lower() not in reasons:
            return _one_of("reason", reasons)
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

    @discoverable(WRITE)
    def freeze_debit_card_3892(self, card_id: str) -> str:
        if not card_id:
            return "Error: Missing required parameter: card_id."
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        status = cards[card_id].get("status")
        if status == "FROZEN":
            return f"Error: Debit card '{card_id}' is already frozen."
        if status != "ACTIVE":
            return (
                f"Error: Debit card '{card_id}' cannot be frozen. Current status: {status}. "
                "Only ACTIVE cards can be frozen."
            )
        card = self.t.rec("debit_cards", card_id)
        card["status"] = "FROZEN"
        card["frozen_date"] = TODAY
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
        if not card_id:
            return "Error: Missing required parameter: card_id."
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        status = cards[card_id].get("status")
        if status == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if status != "FROZEN":
            return (
                f"Error: Debit card '{card_id}' cannot be unfrozen. Current status: {status}. "
                "Only FROZEN cards can be unfrozen."
            )
        account_id = cards[card_id].get("account_id")
        accounts = self.t.r("accounts")
        if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
            return f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be unfrozen."
        card = self.t.rec("debit_cards", card_id)
        card["status"] = "ACTIVE"
        card["unfrozen_date"] = TODAY
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

    @discoverable(WRITE)
    def reset_debit_card_pin_6284(self, card_id: str, last_4_digits: str, new_pin: str) -> str:
        if _missing(card_id, last_4_digits, new_pin):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
        if not _digits(last_4_digits, 4):
            return "Error: Last 4 digits must be exactly 4 digits."
        pin_error = _validate_pin(new_pin)
        if pin_error:
            return f"Error: {pin_error}"
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        if cards[card_id].get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        status = cards[card_id].get("status")
        if status != "ACTIVE":
            return f"Error: Cannot reset PIN. Card status is {status}. Only ACTIVE cards can have their PIN reset."
        card = self.t.rec("debit_cards", card_id)
        card["pin_last_changed"] = TODAY
        card["pin_locked"] = False
        card["pin_attempts_remaining"] = 3
        return "\n".join(
            [
                "Debit Card PIN Reset Successfully",
                f"Card ID: {card_id}",
                f"PIN Changed: {TODAY}",
                "",
                "The new PIN is effective immediately.",
                "Your card has been unlocked and is ready to use.",
                "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
                "",
                "Security reminder: Never share your PIN with anyone.",
            ]
        )

    @discoverable(WRITE)
    def change_debit_card_pin_6285(self, card_id: str, current_pin: str, new_pin: str) -> str:
        if _missing(card_id, current_pin, new_pin):
            return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
        if not _digits(current_pin, 4):
            return "Error: Current PIN must be exactly 4 digits."
        pin_error = _validate_pin(new_pin)
        if pin_error:
            return f"Error: {pin_error}"
        if current_pin == new_pin:
            return "Error: New PIN must be different from current PIN."
        cards = self.t.r("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        status = cards[card_id].get("status")
        if status != "ACTIVE":
            return f"Error: Cannot change PIN. Card status is {status}. Only ACTIVE cards can have their PIN changed."
        self.t.rec("debit_cards", card_id)["pin_last_changed"] = TODAY
        return "\n".join(
            [
                "Debit Card PIN Changed Successfully",
                f"Card ID: {card_id}",
                f"PIN Changed: {TODAY}",
                "",
                "The new PIN is effective immediately.",
                "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
                "",
                "Security reminder: Never share your PIN with anyone.",
            ]
        )

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
                current = _DEFAULT_ATM_LIMITS.get(level)
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


class KnowledgeUserTools(Toolkit):
    """The simulated customer's tools; they act on the agent's DB (tau2 shares one DB object)."""

    def __init__(self, db: DBState):
        super().__init__(db)
        self.t = Tables(db)

    @classmethod
    def discoverable_tools(cls) -> dict[str, Callable[..., Any]]:
        """The user discoverable tools by name (unbound functions)."""
        return _discoverable_methods(cls)

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
            f"Executed: submit_cash_back_dispute_0589\nArguments: {_args_json(args)}\n"
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
        referral_id = deterministic_id(f"referral_link:{user_id}:{card_name}")
        record = {
            "referral_id": referral_id,
            "referrer_id": user_id,
            "referred_account_type": card_name,
            "referral_status": "NO_PROGRESS",
            "date": TODAY,
        }
        ok = self.t.add("referrals", referral_id, record)
        text = (
            "Referral link generated successfully. Share this link with the person you want to refer.\n\n"
            f"Executed: get_referral_link\nArguments: {_args_json(args)}\n"
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
            f"Executed: get_card_last_4_digits\nArguments: {_args_json(args)}\nLast 4 digits of card: {last4}"
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
        if not _is_active(accounts[account_id]):
            return f"Error: Account '{account_id}' is not active."
        account = accounts[account_id]
        balance = parse_balance(account.get("current_holdings", account.get("balance", 0)))
        new_balance = balance + amount
        self.t.rec("accounts", account_id)["current_holdings"] = f"${new_balance:.2f}"
        return (
            "Check deposited successfully. Funds will be available according to your account's deposit policy.\n\n"
            f"Executed: deposit_check_3847\n"
            f"Arguments: {_args_json(args)}\n"
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
        referral_id = deterministic_id(f"referral:{user_id}:{account_type}")
        record = {
            "referral_id": referral_id,
            "referrer_id": user_id,
            "referred_account_type": account_type,
            "referral_status": "NO_PROGRESS",
            "date": TODAY,
        }
        if not self.t.add("referrals", referral_id, record):
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
        try:
            args = json.loads(arguments, parse_int=float)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        params = inspect.signature(methods[discoverable_tool_name]).parameters
        for pname, param in params.items():
            if pname != "self" and param.default is inspect.Parameter.empty and pname not in args:
                return f"Error: Missing required parameter: {pname}"
        for key in args:
            if key not in params:
                return f"Error: Unexpected parameter: {key}"
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

_CHECKING_EARLY_CLOSURE: dict[str, tuple[int, int]] = {  # level -> (fee, window in days)
    "Light Blue Account": (15, 30),
    "Light Green Account": (15, 30),
    "Green Fee-Free Account": (15, 30),
    "Blue Account": (25, 60),
    "Green Account": (25, 60),
    "Evergreen Account": (50, 90),
    "Bluest Account": (100, 180),
}
_SAVINGS_EARLY_CLOSURE: dict[str, tuple[int, int]] = {
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
_ACTIVATION_TOOL = {
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
_DEFAULT_ATM_LIMITS = {
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
_ATM_SCANS: dict[str, tuple[str, str, str]] = {
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
