"""The telecom agent side: the agent's 13 tools over the customer/line/bill DB (:mod:`.data_model`) and its helpers.

Behaviour follows tau2-bench ``src/tau2/domains/telecom/tools.py``, quirks included:

* collections are lists; lookups scan them in order (``get_customer_by_phone`` tries each customer's own
  number, then the numbers of that customer's lines);
* ``send_payment_request`` does not check whether the bill is already paid;
* ``refuel_data`` does not check the line status; the charge goes on the customer's first ``Draft`` bill;
* every failed lookup raises (the observation is ``"Error: <message>"``) and nothing is rolled back;
* dates are fixed: today is 2025-02-25;
* when ``refuel_data`` finds no Draft bill it creates one named ``"B" + uuid4().hex[:8]`` (random, as tau2; no
  task reaches this path: customer C1001 always has Draft bill B1003).
"""

from __future__ import annotations

import datetime as _dt
import uuid
from typing import Any

from ....engine.state import DBState
from ....engine.toolkit import GENERIC, READ, WRITE, Record, Toolkit, detached_record, tool
from .. import validation as v
from ..common import TRANSFER_MESSAGE
from .data_model import BILL, LINE_ITEM

_EXACT = (str, int)  # value types whose dict lookup finds exactly what a scan with == finds (no bool, float)

TODAY = _dt.date(2025, 2, 25)
"""tau2's fixed "today" in the telecom domain."""


def _month_start(day: _dt.date) -> _dt.date:
    return day.replace(day=1)


class TelecomTools(Toolkit):
    """The agent's tools, its initialisation helpers and assertion helpers."""

    db: DBState

    # ------------------------------------------------------------------ lookups (not tools)
    def _find(self, collection: str, key: str, value: Any, label: str) -> int:
        for i, rec in self.db.items(collection):
            if rec[key] == value:
                return i
        raise ValueError(f"{label} with ID {value} not found")

    def _customer_index(self, customer_id: Any) -> int:
        return self._find("customers", "customer_id", customer_id, "Customer")

    def _line_index(self, line_id: Any) -> int:
        return self._find("lines", "line_id", line_id, "Line")

    def _bill_index(self, bill_id: Any) -> int:
        return self._find("bills", "bill_id", bill_id, "Bill")

    def _plan(self, plan_id: Any) -> dict[str, Any]:
        return self.db.get("plans", self._find("plans", "plan_id", plan_id, "Plan"))

    def _target_line(self, customer_id: Any, line_id: Any) -> int:
        customer = self.db.get("customers", self._customer_index(customer_id))
        if line_id not in customer["line_ids"]:
            raise ValueError(f"Line {line_id} not found for customer {customer_id}")
        return self._line_index(line_id)

    def _first_index(self, collection: str, key: str) -> dict[Any, int] | None:
        """``{record[key]: index}`` of the first record holding each value, what ``_find`` returns for it; None
        when a record's value is not a str or int (then ``==`` and a dict lookup could disagree: use ``_find``)."""
        out: dict[Any, int] = {}
        for i, rec in self.db.items(collection):
            value = rec[key]
            if type(value) not in _EXACT:
                return None
            out.setdefault(value, i)
        return out

    def _indexed(self, index: dict[Any, int] | None, value: Any, find: Any) -> int:
        """``find(value)`` through ``index`` when both sides are plain str/int values."""
        if index is not None and type(value) in _EXACT:
            at = index.get(value)
            if at is not None:
                return at
        return int(find(value))  # raises tau2's "... not found" (or finds what the index could not)

    def _customer_by_phone(self, phone_number: Any) -> int:
        lines: dict[Any, int] | None = None  # one pass over the lines instead of one per line id
        indexed = False
        for i, customer in self.db.items("customers"):
            if customer["phone_number"] == phone_number:
                return i
            for line_id in customer["line_ids"]:
                if not indexed:
                    lines, indexed = self._first_index("lines", "line_id"), True
                at = self._indexed(lines, line_id, self._line_index)
                if self.db.get("lines", at)["phone_number"] == phone_number:
                    return i
        raise ValueError(f"Customer with phone number {phone_number} not found")

    def line_by_phone(self, phone_number: Any) -> dict[str, Any] | None:
        """The line with that phone number (read-only), or None. Used by the environment sync."""
        for _, line in self.db.items("lines"):
            if line["phone_number"] == phone_number:
                return line
        return None

    def plan_of(self, line: dict[str, Any]) -> dict[str, Any]:
        """The plan of a line (read-only); raises when the plan does not exist."""
        return self._plan(line["plan_id"])

    def bills_awaiting_payment(self, phone_number: Any) -> list[dict[str, Any]]:
        """The Awaiting Payment bills of the customer owning that number, in ``bill_ids`` order."""
        customer = self.db.get("customers", self._customer_by_phone(phone_number))
        return self._awaiting(customer)

    def _awaiting(self, customer: dict[str, Any]) -> list[dict[str, Any]]:
        index = self._first_index("bills", "bill_id")
        bills = [self.db.get("bills", self._indexed(index, b, self._bill_index)) for b in customer["bill_ids"]]
        return [b for b in bills if b["status"] == "Awaiting Payment"]

    def mark_bill_paid(self, bill_id: Any) -> str:
        """Set a bill to Paid (what the environment sync does once the customer has paid)."""
        self.db.write("bills", self._bill_index(bill_id))["status"] = "Paid"
        return f"Bill {bill_id} set to paid"

    # ------------------------------------------------------------------ READ tools
    @tool(READ)
    def get_customer_by_phone(self, phone_number: str) -> Record:
        """Finds a customer by their primary contact or line phone number.

        Args:
            phone_number: The phone number to search for.

        Returns:
            Customer object if found, None otherwise.
        """
        return detached_record(self.db.get("customers", self._customer_by_phone(phone_number)))

    @tool(READ)
    def get_customer_by_id(self, customer_id: str) -> Record:
        """Retrieves a customer directly by their unique ID.

        Args:
            customer_id: The unique identifier of the customer.

        Returns:
            Customer object if found, None otherwise.
        """
        return detached_record(self.db.get("customers", self._customer_index(customer_id)))

    @tool(READ)
    def get_customer_by_name(self, full_name: str, dob: str) -> list[Record]:
        """Searches for customers by name and DOB. May return multiple matches if names are similar, DOB helps
        disambiguate.

        Args:
            full_name: The full name of the customer.
            dob: Date of birth for verification, in the format YYYY-MM-DD.

        Returns:
            List of matching Customer objects.
        """
        return [
            detached_record(c)
            for c in self.db.values("customers")
            if c["full_name"].lower() == full_name.lower() and c["date_of_birth"] == dob
        ]

    @tool(READ)
    def get_details_by_id(self, id: str) -> Record:  # noqa: A002 - tau2's parameter name
        """Retrieves the details for a given ID. The ID must be a valid ID for a Customer, Line, Device, Bill,
        or Plan.

        Args:
            id: The ID of the object to retrieve.

        Returns:
            The object corresponding to the ID.
        """
        if id.startswith("L"):
            return detached_record(self.db.get("lines", self._line_index(id)))
        if id.startswith("D"):
            return detached_record(self.db.get("devices", self._find("devices", "device_id", id, "Device")))
        if id.startswith("B"):
            return detached_record(self.db.get("bills", self._bill_index(id)))
        if id.startswith("C"):
            return detached_record(self.db.get("customers", self._customer_index(id)))
        if id.startswith("P"):
            return detached_record(self._plan(id))
        raise ValueError(f"Unknown ID format or type: {id}")

    @tool(READ)
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[Record]:
        """Retrieves a list of the customer's bills, most recent first.

        Args:
            customer_id: ID of the customer.
            limit: Maximum number of bills to return.

        Returns:
            List of Bill objects, ordered by issue date (newest first).
        """
        customer = self.db.get("customers", self._customer_index(customer_id))
        index = self._first_index("bills", "bill_id")
        bills = [self.db.get("bills", self._indexed(index, b, self._bill_index)) for b in customer["bill_ids"]]
        ordered = sorted(bills, key=lambda bill: bill["issue_date"], reverse=True)
        return [detached_record(b) for b in ordered[:limit]]

    @tool(READ)
    def get_data_usage(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Retrieves current billing cycle data usage for a line, including data refueling amount, data limit,
        and cycle end date.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to check usage for.

        Returns:
            Dictionary with usage information.
        """
        line = self.db.get("lines", self._target_line(customer_id, line_id))
        plan = self._plan(line["plan_id"])
        next_month = _dt.date(TODAY.year + TODAY.month // 12, TODAY.month % 12 + 1, 1)
        return {
            "line_id": line_id,
            "data_used_gb": line["data_used_gb"],
            "data_limit_gb": plan["data_limit_gb"],
            "data_refueling_gb": line["data_refueling_gb"],
            "cycle_end_date": next_month - _dt.timedelta(days=1),
        }

    # ------------------------------------------------------------------ WRITE tools
    @tool(WRITE)
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> dict[str, Any]:
        """Suspends a specific line (max 6 months). Checks: Line status must be Active. Logic: Sets line status
        to Suspended, records suspension_start_date.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to suspend.
            reason: Reason for suspension.

        Returns:
            Dictionary with success status, message, and updated line if applicable.
        """
        index = self._target_line(customer_id, line_id)
        if self.db.get("lines", index)["status"] != "Active":
            raise ValueError("Line must be active to suspend")
        line = self.db.write("lines", index)
        line["status"] = "Suspended"
        line["suspension_start_date"] = str(TODAY)
        return {
            "message": "Line suspended successfully. $5/month holding fee will apply.",
            "line": detached_record(line),
        }

    @tool(WRITE)
    def resume_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Resumes a suspended line. Checks: Line status must be Suspended or Pending Activation. Logic: Sets
        line status to Active, clears suspension_start_date.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to resume.

        Returns:
            Dictionary with success status, message, and updated line if applicable.
        """
        index = self._target_line(customer_id, line_id)
        if self.db.get("lines", index)["status"] not in ("Suspended", "Pending Activation"):
            raise ValueError("Line must be suspended to resume")
        line = self.db.write("lines", index)
        line["status"] = "Active"
        line["suspension_start_date"] = None
        return {"message": "Line resumed successfully", "line": detached_record(line)}

    @tool(WRITE)
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        """Sends a payment request to the customer for a specific bill. Checks: the customer exists, the bill
        exists and belongs to the customer, and no other bill of the customer is already awaiting payment.
        Logic: Sets bill status to AWAITING_PAYMENT and notifies customer. Warning: This method does not check
        if the bill is already PAID. Always check the bill status before calling this method.

        Args:
            customer_id: ID of the customer who owns the bill.
            bill_id: ID of the bill to send payment request for.

        Returns:
            Message indicating the payment request has been sent.
        """
        customer = self.db.get("customers", self._customer_index(customer_id))
        if self._awaiting(customer):
            raise ValueError("A bill is already awaiting payment for this customer")
        if bill_id not in customer["bill_ids"]:
            raise ValueError(f"Bill {bill_id} not found for customer {customer_id}")
        bill = self.db.write("bills", self._bill_index(bill_id))
        bill["status"] = "Awaiting Payment"
        return f"Payment request sent to the customer for bill {bill['bill_id']}"

    @tool(WRITE)
    def enable_roaming(self, customer_id: str, line_id: str) -> str:
        """Enables international roaming on a line.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to enable roaming for.

        Returns:
            Message indicating the roaming has been enabled.
        """
        index = self._target_line(customer_id, line_id)
        if self.db.get("lines", index)["roaming_enabled"]:
            return "Roaming was already enabled"
        self.db.write("lines", index)["roaming_enabled"] = True
        return "Roaming enabled successfully"

    @tool(WRITE)
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        """Disables international roaming on a line.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to disable roaming for.

        Returns:
            Message indicating the roaming has been disabled.
        """
        index = self._target_line(customer_id, line_id)
        if not self.db.get("lines", index)["roaming_enabled"]:
            return "Roaming was already disabled"
        self.db.write("lines", index)["roaming_enabled"] = False
        return "Roaming disabled successfully"

    @tool(GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the user's issue. Only transfer if the user
        explicitly asks for a human agent, or if, given the policy and the available tools, you cannot solve the
        user's issue.

        Args:
            summary: A summary of the user's issue.

        Returns:
            A message indicating the user has been transferred to a human agent.
        """
        return TRANSFER_MESSAGE

    @tool(WRITE)
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> dict[str, Any]:
        """Refuels data for a specific line, adding to the customer's bill. Checks: Line status must be Active,
        Customer owns the line. Logic: Adds data to the line and charges customer based on the plan's refueling
        rate.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to refuel data for.
            gb_amount: Amount of data to add in gigabytes.

        Returns:
            Dictionary with success status, message, charge amount, and updated line if applicable.
        """
        index = self._target_line(customer_id, line_id)
        if gb_amount <= 0:
            raise ValueError("Refuel amount must be positive")
        plan = self._plan(self.db.get("lines", index)["plan_id"])
        price = plan["data_refueling_price_per_gb"]
        charge = gb_amount * price
        line = self.db.write("lines", index)
        line["data_refueling_gb"] += gb_amount
        self._apply_one_time_charge(customer_id, charge, f"Data refueling: {gb_amount} GB at ${price}/GB")
        return {
            "message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
            "new_data_refueling_gb": line["data_refueling_gb"],
            "charge": charge,
        }

    def _apply_one_time_charge(self, customer_id: Any, amount: float, description: str) -> None:
        """Add a line item to the customer's first Draft bill, creating one for next month if there is none."""
        c_index = self._customer_index(customer_id)
        draft = None
        for bill_id in self.db.get("customers", c_index)["bill_ids"]:
            b_index = self._bill_index(bill_id)
            if self.db.get("bills", b_index)["status"] == "Draft":
                draft = b_index
                break
        item = v.validate(
            LINE_ITEM,
            {
                "description": description,
                "amount": amount,
                "date": TODAY,
                "item_type": "Credit" if amount < 0 else "Charge",
            },
        )
        if draft is None:
            start = _month_start(_month_start(TODAY) + _dt.timedelta(days=32))
            end = _month_start(start + _dt.timedelta(days=32)) - _dt.timedelta(days=1)
            bill = v.validate(
                BILL,
                {
                    "bill_id": self._new_bill_id(customer_id),
                    "customer_id": customer_id,
                    "period_start": start,
                    "period_end": end,
                    "issue_date": start,
                    "total_due": 0,
                    "due_date": start + _dt.timedelta(days=14),
                    "status": "Draft",
                },
            )
            draft = self.db.append("bills", bill)
            self.db.write("customers", c_index)["bill_ids"].append(bill["bill_id"])
        bill = self.db.write("bills", draft)
        bill["line_items"].append(item)
        bill["total_due"] += amount

    def _new_bill_id(self, customer_id: Any) -> str:
        """tau2's name of a bill ``refuel_data`` creates: ``"B"`` and 8 random hex digits."""
        return f"B{uuid.uuid4().hex[:8]}"

    # ------------------------------------------------------------------ helpers (not tools)
    def get_available_plan_ids(self) -> list[str]:
        """Helper: the ids of every plan."""
        return [p["plan_id"] for p in self.db.values("plans")]

    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        """Initialisation helper: set a line's data used this cycle (stored as given, like tau2)."""
        index = self._target_line(customer_id, line_id)
        self.db.write("lines", index)["data_used_gb"] = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    def suspend_line_for_overdue_bill(
        self, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
    ) -> str:
        """Initialisation helper: add an Overdue bill for last month's plan price and suspend the line."""
        l_index = self._line_index(line_id)
        line = self.db.get("lines", l_index)
        if line["status"] != "Active":
            raise ValueError("Line must be active to suspend for unpaid bill")
        amount = self._plan(line["plan_id"])["price_per_month"]
        if amount <= 0:
            raise ValueError("Amount must be positive for overdue bill")
        c_index = self._customer_index(customer_id)
        for bill_id in self.db.get("customers", c_index)["bill_ids"]:
            if self.db.get("bills", self._bill_index(bill_id))["status"] == "Overdue":
                raise ValueError("Customer already has an overdue bill")
        last_month_end = _month_start(TODAY) - _dt.timedelta(days=1)
        last_month_start = _month_start(last_month_end)
        bill = v.validate(
            BILL,
            {
                "bill_id": new_bill_id,
                "customer_id": customer_id,
                "period_start": last_month_start,
                "period_end": last_month_end,
                "issue_date": last_month_start,
                "total_due": 0,
                "due_date": last_month_start + _dt.timedelta(days=14),
                "status": "Overdue",
                "line_items": [
                    {
                        "description": f"Charge for line {line['line_id']}",
                        "amount": amount,
                        "date": TODAY,
                        "item_type": "Charge",
                    }
                ],
            },
        )
        bill["total_due"] += amount
        self.db.append("bills", bill)
        self.db.write("customers", c_index)["bill_ids"].append(new_bill_id)
        line = self.db.write("lines", l_index)
        line["status"] = "Suspended"
        line["suspension_start_date"] = str(TODAY)
        if contract_ended:
            line["contract_end_date"] = str(last_month_end)
        return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"

    def assert_data_refueling_amount(self, customer_id: str, line_id: str, expected_amount: float) -> bool:
        """Env assertion: the line's refuelled data equals ``expected_amount`` (within 1e-6)."""
        line = self.db.get("lines", self._target_line(customer_id, line_id))
        return abs(line["data_refueling_gb"] - expected_amount) < 1e-6

    def assert_line_status(self, customer_id: str, line_id: str, expected_status: str) -> bool:
        """Env assertion: the line has status ``expected_status``."""
        return self.db.get("lines", self._target_line(customer_id, line_id))["status"] == expected_status

    def assert_overdue_bill_exists(self, customer_id: str, overdue_bill_id: str) -> bool:
        """Env assertion: the customer has that bill and it is Overdue (raises otherwise, like tau2)."""
        customer = self.db.get("customers", self._customer_index(customer_id))
        if overdue_bill_id not in customer["bill_ids"]:
            raise ValueError(f"Overdue bill {overdue_bill_id} not found")
        if self.db.get("bills", self._bill_index(overdue_bill_id))["status"] != "Overdue":
            raise ValueError(f"Overdue bill {overdue_bill_id} is not overdue")
        return True

    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        """Env assertion: the bill does not exist or is Paid."""
        for bill in self.db.values("bills"):
            if bill["bill_id"] == overdue_bill_id:
                return bill["status"] == "Paid"
        return True
