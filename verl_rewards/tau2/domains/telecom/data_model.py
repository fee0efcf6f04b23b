"""The telecom agent DB (``db.toml``): customers, lines, bills, plans and devices, as tau2's pydantic models.

tau2-bench ``src/tau2/domains/telecom/data_model.py``; :func:`normalize_db` gives ``TelecomDB.model_dump()``
(dates as text, see :mod:`.models`).
"""

from __future__ import annotations

from typing import Any

from . import models as m

LINE_STATUSES = ("Active", "Suspended", "Pending Activation", "Closed")
BILL_STATUSES = ("Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed")

PLAN: m.Model = (
    "Plan",
    (
        ("plan_id", m.string, m.REQUIRED),
        ("name", m.string, m.REQUIRED),
        ("data_limit_gb", m.floating, m.REQUIRED),
        ("price_per_month", m.floating, m.REQUIRED),
        ("data_refueling_price_per_gb", m.floating, m.REQUIRED),
    ),
)
ADDRESS: m.Model = (
    "Address",
    (
        ("street", m.string, m.REQUIRED),
        ("city", m.string, m.REQUIRED),
        ("state", m.string, m.REQUIRED),
        ("zip_code", m.string, m.REQUIRED),
    ),
)
PAYMENT_METHOD: m.Model = (
    "PaymentMethod",
    (
        ("method_type", m.enum("Credit Card", "Debit Card", "PayPal"), m.REQUIRED),
        ("account_number_last_4", m.string, m.REQUIRED),
        ("expiration_date", m.string, m.REQUIRED),
    ),
)
CUSTOMER: m.Model = (
    "Customer",
    (
        ("customer_id", m.string, m.REQUIRED),
        ("full_name", m.string, m.REQUIRED),
        ("date_of_birth", m.string, m.REQUIRED),
        ("email", m.string, m.REQUIRED),
        ("phone_number", m.string, m.REQUIRED),
        ("address", m.record(ADDRESS), m.REQUIRED),
        ("account_status", m.enum("Active", "Suspended", "Pending Verification", "Closed"), "Pending Verification"),
        ("payment_methods", m.list_of(m.record(PAYMENT_METHOD)), list),
        ("line_ids", m.list_of(m.string), list),
        ("bill_ids", m.list_of(m.string), list),
        # tau2's default is a date object (not validated), which its hash prints as "2025-01-01"
        ("created_at", m.datetime, "2025-01-01"),
        ("last_extension_date", m.optional(m.date), None),
        ("goodwill_credit_used_this_year", m.floating, 0.0),
    ),
)
LINE: m.Model = (
    "Line",
    (
        ("line_id", m.string, m.REQUIRED),
        ("phone_number", m.string, m.REQUIRED),
        ("status", m.enum(*LINE_STATUSES), "Pending Activation"),
        ("plan_id", m.string, m.REQUIRED),
        ("device_id", m.optional(m.string), None),
        ("data_used_gb", m.floating, 0.0),
        ("data_refueling_gb", m.floating, 0.0),
        ("roaming_enabled", m.boolean, False),
        ("contract_end_date", m.optional(m.date), None),
        ("last_plan_change_date", m.optional(m.date), None),
        ("last_sim_replacement_date", m.optional(m.date), None),
        ("suspension_start_date", m.optional(m.date), None),
    ),
)
LINE_ITEM: m.Model = (
    "LineItem",
    (
        ("description", m.string, m.REQUIRED),
        ("amount", m.floating, m.REQUIRED),
        ("date", m.date, m.REQUIRED),
        ("item_type", m.string, m.REQUIRED),
    ),
)
BILL: m.Model = (
    "Bill",
    (
        ("bill_id", m.string, m.REQUIRED),
        ("customer_id", m.string, m.REQUIRED),
        ("period_start", m.date, m.REQUIRED),
        ("period_end", m.date, m.REQUIRED),
        ("issue_date", m.date, m.REQUIRED),
        ("total_due", m.floating, m.REQUIRED),
        ("due_date", m.date, m.REQUIRED),
        ("line_items", m.list_of(m.record(LINE_ITEM)), list),
        ("status", m.enum(*BILL_STATUSES), "Draft"),
    ),
)
DEVICE: m.Model = (
    "Device",
    (
        ("device_id", m.string, m.REQUIRED),
        ("device_type", m.enum("phone", "router", "tablet", "watch", "other"), m.REQUIRED),
        ("model", m.string, m.REQUIRED),
        ("imei", m.optional(m.string), None),
        ("is_esim_capable", m.boolean, m.REQUIRED),
        ("activated", m.boolean, False),
        ("activation_date", m.optional(m.datetime), None),
        ("last_esim_transfer_date", m.optional(m.datetime), None),
    ),
)
TELECOM_DB: m.Model = (
    "TelecomDB",
    (
        ("plans", m.list_of(m.record(PLAN)), list),
        ("customers", m.list_of(m.record(CUSTOMER)), list),
        ("lines", m.list_of(m.record(LINE)), list),
        ("bills", m.list_of(m.record(BILL)), list),
        ("devices", m.list_of(m.record(DEVICE)), list),
    ),
)


def normalize_db(raw: Any) -> dict[str, Any]:
    """The agent DB as tau2's ``TelecomDB.model_dump()`` (dates as text, see :mod:`.models`)."""
    return m.validate(TELECOM_DB, raw)
