"""Names that moved between tau2 domain modules still import from their old paths, with a DeprecationWarning."""

from __future__ import annotations

import importlib

import pytest

MOVED = [
    ("telecom.device", "TelecomUserTools", "telecom.user_tools"),
    ("telecom.device", "normalize_user_db", "telecom.phone"),
    ("telecom.device", "USER_DB", "telecom.phone"),
    ("telecom.device", "SIGNALS", "telecom.phone"),
    ("telecom.device", "SPEED_ADVICE", "telecom.user_tools"),
    ("telecom.agent", "normalize_db", "telecom.data_model"),
    ("telecom.agent", "TELECOM_DB", "telecom.data_model"),
    ("telecom.models", "validate", "validation"),
    ("telecom.models", "record", "validation"),
    ("airline.validation", "lax_int", "validation"),
]
RENAMED = [
    ("telecom.models", "ModelError", "validation", "ValidationError"),
    ("telecom.models", "integer", "validation", "lax_int"),
    ("telecom.models", "floating", "validation", "lax_float"),
    ("airline.validation", "LaxError", "validation", "FieldError"),
]
PREFIX = "verl_rewards.tau2.domains."


@pytest.mark.parametrize(("old", "name", "new"), MOVED)
def test_a_moved_name_warns_and_is_the_same_object(old: str, name: str, new: str) -> None:
    old_module = importlib.import_module(PREFIX + old)
    with pytest.warns(DeprecationWarning, match=f"{PREFIX}{new}.{name}"):
        value = getattr(old_module, name)
    assert value is getattr(importlib.import_module(PREFIX + new), name)


@pytest.mark.parametrize(("old", "name", "new", "new_name"), RENAMED)
def test_a_renamed_name_warns_with_its_new_name(old: str, name: str, new: str, new_name: str) -> None:
    old_module = importlib.import_module(PREFIX + old)
    with pytest.warns(DeprecationWarning, match=f"{PREFIX}{new}.{new_name}"):
        value = getattr(old_module, name)
    assert value is getattr(importlib.import_module(PREFIX + new), new_name)


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        importlib.import_module(PREFIX + "telecom.device").nothing  # noqa: B018
