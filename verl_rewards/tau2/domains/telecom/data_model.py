"""The telecom agent DB (``db.toml``): customers, lines, bills, plans and devices, as tau2's pydantic models.

tau2-bench ``src/tau2/domains/telecom/data_model.py``; :func:`normalize_db` gives ``TelecomDB.model_dump()``
(dates as text, see :mod:`..validation`).
"""

from __future__ import annotations

from typing import Any

from .. import validation as v

LINE_STATUSES = ("Active", "Suspended", "Pending Activation", "Closed")
BILL_STATUSES = ("Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed")

PLAN = v.no_extra(
    "Plan",
    (
        ("plan_id", v.string, v.REQUIRED),
        ("name", v.string, v.REQUIRED),
        ("data_limit_gb", v.lax_float, v.REQUIRED),
        ("price_per_month", v.lax_float, v.REQUIRED),
        ("data_refueling_price_per_gb", v.lax_float, v.REQUIRED),
    ),
)
ADDRESS = v.no_extra(
    "Address",
    (
        ("street", v.string, v.REQUIRED),
        ("city", v.string, v.REQUIRED),
        ("state", v.string, v.REQUIRED),
        ("zip_code", v.string, v.REQUIRED),
    ),
)
PAYMENT_METHOD = v.no_extra(
    "PaymentMethod",
    (
        ("method_type", v.enum("Credit Card", "Debit Card", "PayPal"), v.REQUIRED),
        ("account_number_last_4", v.string, v.REQUIRED),
        ("expiration_date", v.string, v.REQUIRED),
    ),
)
CUSTOMER = v.no_extra(
    "Customer",
    (
        ("customer_id", v.string, v.REQUIRED),
        ("full_name", v.string, v.REQUIRED),
        ("date_of_birth", v.string, v.REQUIRED),
        ("email", v.string, v.REQUIRED),
        ("phone_number", v.string, v.REQUIRED),
        ("address", v.record(ADDRESS), v.REQUIRED),
        ("account_status", v.enum("Active", "Suspended", "Pending Verification", "Closed"), "Pending Verification"),
        ("payment_methods", v.list_of(v.record(PAYMENT_METHOD)), list),
        ("line_ids", v.list_of(v.string), list),
        ("bill_ids", v.list_of(v.string), list),
        # tau2's default is a date object (not validated), which its hash prints as "2025-01-01"
        ("created_at", v.datetime, "2025-01-01"),
        ("last_extension_date", v.optional(v.date), None),
        ("goodwill_credit_used_this_year", v.lax_float, 0.0),
    ),
)
LINE = v.no_extra(
    "Line",
    (
        ("line_id", v.string, v.REQUIRED),
        ("phone_number", v.string, v.REQUIRED),
        ("status", v.enum(*LINE_STATUSES), "Pending Activation"),
        ("plan_id", v.string, v.REQUIRED),
        ("device_id", v.optional(v.string), None),
        ("data_used_gb", v.lax_float, 0.0),
        ("data_refueling_gb", v.lax_float, 0.0),
        ("roaming_enabled", v.boolean, False),
        ("contract_end_date", v.optional(v.date), None),
        ("last_plan_change_date", v.optional(v.date), None),
        ("last_sim_replacement_date", v.optional(v.date), None),
        ("suspension_start_date", v.optional(v.date), None),
    ),
)
LINE_ITEM = v.no_extra(
    "LineItem",
    (
        ("description", v.string, v.REQUIRED),
        ("amount", v.lax_float, v.REQUIRED),
        ("date", v.date, v.REQUIRED),
        ("item_type", v.string, v.REQUIRED),
    ),
)
BILL = v.no_extra(
    "Bill",
    (
        ("bill_id", v.string, v.REQUIRED),
        ("customer_id", v.string, v.REQUIRED),
        ("period_start", v.date, v.REQUIRED),
        ("period_end", v.date, v.REQUIRED),
        ("issue_date", v.date, v.REQUIRED),
        ("total_due", v.lax_float, v.REQUIRED),
        ("due_date", v.date, v.REQUIRED),
        ("line_items", v.list_of(v.record(LINE_ITEM)), list),
        ("status", v.enum(*BILL_STATUSES), "Draft"),
    ),
)
DEVICE = v.no_extra(
    "Device",
    (
        ("device_id", v.string, v.REQUIRED),
        ("device_type", v.enum("phone", "router", "tablet", "watch", "other"), v.REQUIRED),
        ("model", v.string, v.REQUIRED),
        ("imei", v.optional(v.string), None),
        ("is_esim_capable", v.boolean, v.REQUIRED),
        ("activated", v.boolean, False),
        ("activation_date", v.optional(v.datetime), None),
        ("last_esim_transfer_date", v.optional(v.datetime), None),
    ),
)
TELECOM_DB = v.no_extra(
    "TelecomDB",
    (
        ("plans", v.list_of(v.record(PLAN)), list),
        ("customers", v.list_of(v.record(CUSTOMER)), list),
        ("lines", v.list_of(v.record(LINE)), list),
        ("bills", v.list_of(v.record(BILL)), list),
        ("devices", v.list_of(v.record(DEVICE)), list),
    ),
)


def normalize_db(raw: Any) -> dict[str, Any]:
    """The agent DB as tau2's ``TelecomDB.model_dump()`` (dates as text, see :mod:`..validation`)."""
    return v.validate(TELECOM_DB, raw)
