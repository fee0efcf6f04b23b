"""The ``banking_knowledge`` toolkits: the agent's :class:`KnowledgeTools` and the user's :class:`KnowledgeUserTools`.

Behaviour, output texts and errors follow tau2-bench 1.0.1 (``src/tau2/domains/banking_knowledge/tools.py``, MIT,
Copyright (c) 2025 Sierra Research), including its quirks (listed at the tools that have them). Most tools *return*
``Error: ...`` strings instead of raising; those are ordinary observations, as in tau2.

This module holds the agent's base tools and the discoverable-tool protocol (see :mod:`.protocol`); the agent's
discoverable tools live one module per concern (:mod:`.accounts`, :mod:`.credit_cards`, :mod:`.debit_cards`,
:mod:`.debit_orders`, :mod:`.disputes`), the user's in :mod:`.user_tools`. The class names are tau2's so that
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

import inspect
import json
from typing import Any

from ....engine.state import DBState
from ....engine.toolkit import GENERIC, READ, WRITE, tool
from .accounts import AccountTools
from .catalog import TRANSFER_REASONS, TransferReason
from .common import NOW, deterministic_id, format_discoverable
from .credit_cards import CreditCardTools
from .debit_cards import DebitCardTools
from .debit_orders import DebitOrderTools
from .disputes import DisputeTools
from .protocol import (
    DISCOVERABLE_ATTR,
    discoverable,
    discoverable_definitions,
    notice_tool,
    parse_arguments,
    tau2_method_names,
    unexpected_parameter,
)
from .user_tools import KnowledgeUserTools

_TAU2_TOOLS_MODULE = "tau2.domains.banking_knowledge.tools"
"""The module name in one tau2 error text that Python words (see ``call_discoverable_agent_tool``)."""


@tau2_method_names
class KnowledgeTools(AccountTools, CreditCardTools, DebitCardTools, DebitOrderTools, DisputeTools):
    """The agent's banking tools (retrieval tools are added per retrieval configuration, see ``retrieval.py``)."""

    read_log_allowlist: frozenset[str] = frozenset()

    def __init__(self, db: DBState):
        super().__init__(db)
        self._given: dict[str, dict[str, Any]] = {}
        self._unlocked: dict[str, dict[str, Any]] = {}
        self.read_log_allowlist = frozenset()

    # ------------------------------------------------------------ protocol helpers
    @property
    def unlocked_tools(self) -> tuple[str, ...]:
        """Names unlocked in this environment (in memory, as in tau2)."""
        return tuple(self._unlocked)

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

    @tool(GENERIC, mutates_state=True)
    def give_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        """Hand a user discoverable tool (with suggested arguments) to the customer; records it as GIVEN in the DB."""
        methods = KnowledgeUserTools.discoverable_tools()
        if not isinstance(discoverable_tool_name, str) or discoverable_tool_name not in methods:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        args, error = parse_arguments(arguments, floats=False)
        error = error or unexpected_parameter(args, inspect.signature(methods[discoverable_tool_name]).parameters)
        if error:
            return error
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

    @tool(GENERIC, mutates_state=True)
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
        args, error = parse_arguments(arguments, floats=True)
        if error:
            return error
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

    # tau2's GENERIC discoverable tools that answer a fixed notice (the texts: catalog.NOTICES)
    initial_transfer_to_human_agent_0218 = notice_tool("initial_transfer_to_human_agent_0218")
    initial_transfer_to_human_agent_1822 = notice_tool("initial_transfer_to_human_agent_1822")
    emergency_credit_bureau_incident_transfer_1114 = notice_tool("emergency_credit_bureau_incident_transfer_1114")


__all__ = ["KnowledgeTools"]
