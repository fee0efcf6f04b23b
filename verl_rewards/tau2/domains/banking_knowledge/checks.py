"""Argument checks and small texts shared by the banking tools (tau2-bench 1.0.1's inline checks, written once)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .catalog import SEQUENTIAL_PINS
from .common import NOW


def digits(text: str, size: int) -> bool:
    """``text`` is exactly ``size`` decimal digits (a PIN, CVV or last-4 check)."""
    return text.isdigit() and len(text) == size


def is_active(account: dict[str, Any]) -> bool:
    """Whether an account may take money in or out: tau2 accepts either spelling of an open status."""
    return account.get("status") in ("ACTIVE", "OPEN")


def pin_problem(pin: str) -> str | None:
    if not pin or not digits(pin, 4):
        return "PIN must be exactly 4 digits."
    if pin in SEQUENTIAL_PINS:
        return "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."
    if len(set(pin)) == 1:
        return "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."
    return None


def missing_args(*required: Any, numbers: tuple[Any, ...] = ()) -> bool:
    """The banking tools' "missing required parameters" test: an empty (falsy) argument, or a None number.

    Numbers are tested against None only, so 0 passes here and reaches the tool's own "must be positive" check.
    """
    return not all(required) or any(n is None for n in numbers)


def one_of(arg: str, values: list[str]) -> str:
    return f"Error: Invalid {arg}. Must be one of: {values}"


def args_json(args: dict[str, Any]) -> str:
    return json.dumps(args, indent=2)


def days_since(date_text: Any) -> int:
    """Days from ``MM/DD/YYYY`` to the fixed now; 0 when it does not parse."""
    try:
        return (NOW - datetime.strptime(date_text, "%m/%d/%Y")).days
    except ValueError:
        return 0


def invalid(*checks: tuple[str, Any, Sequence[str]]) -> str | None:
    """The first failing ``(argument, value, allowed values)`` check as tau2 words it (``Error: Invalid <argument>.
    Must be one of: [...]``), or None when every value is allowed."""
    for arg, value, allowed in checks:
        if value not in allowed:
            return one_of(arg, list(allowed))
    return None


def dollars_or_zero(value: Any) -> float:
    """A ``$1,234.50``-style amount as tau2 reads a card's balance or limit: 0.0 when it does not parse."""
    try:
        return float(str(value).replace("$", "").replace(",", ""))
    except (ValueError, TypeError):
        return 0.0


def executed(name: str, args: dict[str, Any] | None = None) -> str:
    """The ``Executed: <tool>`` / ``Arguments: <JSON>`` lines tau2 puts in a discoverable tool's output."""
    return f"Executed: {name}\nArguments: {args_json(args) if args is not None else '(no arguments)'}"
