"""Shared pieces of the ``banking_knowledge`` domain: its tables, the fixed clock, ids and the table query.

Behaviour follows tau2-bench 1.0.1 (``src/tau2/domains/banking_knowledge/{data_model,db_query,utils}.py``):

* The DB has 23 tables, each ``{"data": {record_id: record}, "notes": str}``. Our DB state keeps one collection
  per table whose two keys are ``data`` and ``notes``, so tau2's hash (sorted-key JSON of the whole dump) comes out
  byte for byte; a tool that writes copies that table once per environment.
* The clock is fixed: today is ``11/14/2025``, now is ``2025-11-14 03:40:00``.
* Ids are the first bytes of a sha256 of a seed string, as lowercase hex.
* Read tools format table queries as tau2's ``query_database_tool`` does (Python ``str()`` of every value).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import operator
from collections.abc import Callable
from typing import Any

from ....engine.state import DBState
from ....engine.toolkit import clone_json

TABLES: tuple[str, ...] = (
    "users",
    "accounts",
    "referrals",
    "credit_card_applications",
    "user_discoverable_tools",
    "user_discoverable_tool_calls",
    "agent_discoverable_tools",
    "task_config",
    "verification_history",
    "credit_card_transaction_history",
    "cash_back_disputes",
    "bank_account_transaction_history",
    "credit_card_accounts",
    "human_transfer_requests",
    "transaction_disputes",
    "credit_card_orders",
    "credit_card_closure_reasons",
    "credit_card_account_flags",
    "debit_cards",
    "debit_card_orders",
    "debit_card_disputes",
    "credit_limit_increase_requests",
    "payment_history",
)
"""The tables in the order tau2's query helper lists them (its ``Available:`` error text)."""

TODAY = "11/14/2025"
NOW = _dt.datetime(2025, 11, 14, 3, 40, 0)


def normalize_db(raw: Any) -> dict[str, Any]:
    """db.json (or a merged dump) -> ``{table: {"data": {...}, "notes": str}}`` for all 23 tables.

    Mirrors tau2's pydantic ``TransactionalDB``: unknown tables are refused, missing ones default to empty,
    records must be objects and notes a string.
    """
    if not isinstance(raw, dict):
        raise ValueError("the banking_knowledge DB must be a JSON object")
    unknown = [k for k in raw if k not in TABLES]
    if unknown:
        raise ValueError(f"unknown tables {unknown}")
    out: dict[str, Any] = {}
    for name in TABLES:
        table = raw.get(name)
        if table is None:
            table = {}
        if not isinstance(table, dict):
            raise ValueError(f"table {name!r} must be an object")
        data = table.get("data", {})
        notes = table.get("notes", "")
        extra = [k for k in table if k not in ("data", "notes")]
        if extra or not isinstance(data, dict) or not isinstance(notes, str):
            raise ValueError(f"table {name!r} must be {{'data': {{id: record}}, 'notes': str}}")
        for rid, rec in data.items():
            if not isinstance(rec, dict):
                raise ValueError(f"record {rid!r} of table {name!r} must be an object")
        out[name] = {"data": data, "notes": notes}
    return out


class Tables:
    """Access to the banking tables of one DB state: :meth:`r` reads (never mutate what it returns); writes go
    through :meth:`rec` (one record), :meth:`put` and :meth:`add`.

    Copy-on-write at two levels: the first write to a table copies the table's dict (not its records) into the
    state's overlay, and the first write to a record copies that record, so a write costs O(table size) pointer
    copies once per environment and table, never a deep copy of the table.
    """

    def __init__(self, db: DBState):
        self._db = db

    def r(self, name: str) -> dict[str, Any]:
        return self._db.get(name, "data")

    def _owned(self, name: str) -> tuple[dict[str, Any], set[str]]:
        registry = self._db.__dict__.setdefault("_bank_owned_tables", {})
        current = self._db.get(name, "data")
        entry = registry.get(name)
        if entry is None or entry[0] is not current:
            copy = dict(current)
            self._db.insert(name, "data", copy)
            entry = (copy, set())
            registry[name] = entry
        return entry

    def rec(self, name: str, record_id: str) -> dict[str, Any]:
        """A writable record (KeyError if absent)."""
        table, mine = self._owned(name)
        if record_id not in mine:
            table[record_id] = clone_json(table[record_id])
            mine.add(record_id)
        return table[record_id]

    def put(self, name: str, record_id: str, record: dict[str, Any]) -> None:
        """Add or replace a record."""
        table, mine = self._owned(name)
        table[record_id] = record
        mine.add(record_id)

    def add(self, name: str, record_id: str, record: dict[str, Any]) -> bool:
        """tau2 ``add_to_db``: False (and no change) when the id exists."""
        if record_id in self.r(name):
            return False
        self.put(name, record_id, record)
        return True

    def update(self, name: str, record_id: str, updates: dict[str, Any]) -> bool:
        """tau2 ``update_record_in_db``: False when the record does not exist."""
        if record_id not in self.r(name):
            return False
        self.rec(name, record_id).update(updates)
        return True

    def query(self, name: str, constraints: str = "{}") -> str:
        """tau2 ``query_database_tool`` text."""
        return query_text(name, self.r(name) if name in TABLES else None, constraints)


def deterministic_id(seed: str, length: int = 16) -> str:
    """tau2 ``_deterministic_id``: the first ``length // 2`` bytes of sha256(seed) as hex."""
    return hashlib.sha256(seed.encode()).digest()[: length // 2].hex()


def transaction_id(user_id: str, card_type: str, merchant: str, amount: float, category: str) -> str:
    return f"txn_{deterministic_id(f'transaction:{user_id}:{card_type}:{merchant}:{amount:.2f}:{category}', 12)}"


def prefixed_id(prefix: str, seed: str) -> str:
    """``<prefix>_`` + 12 hex characters of ``seed`` (disputes, orders, flags, requests...)."""
    return f"{prefix}_{deterministic_id(seed, 12)}"


def title_words(text: str) -> str:
    """``snake_case`` -> ``Snake Case`` as tau2's outputs write enumerated values."""
    return text.replace("_", " ").title()


def _contains(a: Any, b: Any) -> bool:
    return b in a if a is not None else False


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
    "contains": _contains,
    "startswith": lambda a, b: str(a).startswith(str(b)) if a is not None else False,
    "endswith": lambda a, b: str(a).endswith(str(b)) if a is not None else False,
    "in": lambda a, b: a in b,
    "nin": lambda a, b: a not in b,
}


def record_matches(record: dict[str, Any], constraints: dict[str, Any]) -> bool:
    """Every ``field`` / ``field__op`` constraint holds (a comparison that raises is no match)."""
    for key, expected in constraints.items():
        field, op = key.rsplit("__", 1) if "__" in key else (key, "eq")
        compare = _OPS.get(op, operator.eq)
        try:
            if not compare(record.get(field), expected):
                return False
        except (TypeError, ValueError):
            return False
    return True


def format_records(name: str, rows: list[tuple[str, dict[str, Any]]]) -> str:
    """``Found <n> record(s) in '<name>':`` and one block per record, as tau2 prints a query result."""
    lines = [f"Found {len(rows)} record(s) in '{name}':\n"]
    for i, (record_id, record) in enumerate(rows, 1):
        lines.append(f"{i}. Record ID: {record_id}")
        lines.extend(f"   {field}: {value}" for field, value in record.items())
        lines.append("")
    return "\n".join(lines)


def query_text(name: str, data: dict[str, Any] | None, constraints: str) -> str:
    """tau2 ``query_database_tool`` over one table's ``data`` (None: unknown table)."""
    try:
        if data is None:
            return f"Error: Database '{name}' not found. Available: {list(TABLES)}"
        try:
            wanted = json.loads(constraints) if constraints else {}
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON: {exc}"
        rows = [(rid, rec) for rid, rec in data.items() if record_matches(rec, wanted)]
        if not rows:
            return f"No records found in '{name}'."
        return format_records(name, rows)
    except Exception as exc:  # noqa: BLE001 - tau2 turns any failure of the query into this text
        return f"Error querying database: {exc}"


def by_field(field: str, value: Any) -> str:
    """The constraint text tau2's read tools build by interpolating the raw value: ``{"<field>": "<value>"}``."""
    return f'{{"{field}": "{value}"}}'


def found(result: str) -> bool:
    """tau2's test of a query text for "some records" (it looks for two phrases)."""
    return "No records found" not in result and "No results found" not in result


def parse_balance(value: Any) -> float:
    """A balance that may be a number or a string like ``$2,850.00``."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return float(value.replace("$", "").replace(",", ""))
    return 0.0


def account_balance(account: dict[str, Any]) -> float:
    return parse_balance(account.get("current_holdings", account.get("balance", 0)))


def format_discoverable(name: str, info: dict[str, Any]) -> str:
    """tau2 ``format_discoverable_tool_for_agent`` of a parsed definition."""
    params = [
        f"  - {p}: {d.get('type', 'string')}{' (required)' if d.get('required', True) else ' (optional)'}"
        f" - {d.get('description', '')}"
        for p, d in info.get("parameters", {}).items()
    ]
    section = "\n".join(params) if params else "  (no parameters)"
    return f"Tool: {name}\nDescription: {info['description']}\nParameters:\n{section}"
