"""The validation shared by the tau2 domains builds what tau2's pydantic models build from a tool's arguments, and
fails with their message byte for byte: the text the model is shown.

The reference is ``tests/data/reference/tau2_validation.json``, written by tau2-bench's own models
(``dump_reference.py validation``; see ``README.md`` there).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.domains import validation as v
from verl_rewards.tau2.domains.airline.validation import MODELS as AIRLINE_MODELS
from verl_rewards.tau2.domains.mock import NOTIFICATION, TASK
from verl_rewards.tau2.domains.retail.tools import USER_ADDRESS
from verl_rewards.tau2.domains.telecom.phone import APN_SETTINGS

from repo_paths import DATA
from tau2_support import require_data

CASES: list[dict[str, Any]] = json.loads((DATA / "reference" / "tau2_validation.json").read_text("utf-8"))["cases"]
OURS = {
    "APNSettings": APN_SETTINGS,
    "UserAddress": USER_ADDRESS,
    "Task": TASK,
    "Notification": NOTIFICATION,
    **AIRLINE_MODELS,
}


@pytest.mark.parametrize("case", CASES, ids=[f"{c['model']}-{i}" for i, c in enumerate(CASES)])
def test_a_model_is_built_or_refused_as_tau2_does(case: dict[str, Any]) -> None:
    model = OURS[case["model"]]
    if "error" in case:
        with pytest.raises(v.ValidationError) as caught:
            v.validate(model, case["args"])
        assert str(caught.value) == case["error"]
    else:
        assert v.validate(model, case["args"]) == case["dump"]


def test_the_reference_covers_every_error_kind_we_raise() -> None:
    kinds = {kind for c in CASES for kind in re.findall(r"\[type=(\w+),", c.get("error", ""))}
    assert kinds >= {
        "missing",
        "model_type",
        "extra_forbidden",
        "enum",
        "literal_error",
        "string_type",
        "bool_parsing",
        "int_type",
        "int_parsing",
        "int_from_float",
        "int_parsing_size",
        "float_parsing",
    }


def test_extra_keys_are_dropped_unless_the_model_forbids_them() -> None:
    loose = v.Model("Loose", (("n", v.lax_float, v.REQUIRED),))
    assert v.validate(loose, {"n": "2", "unknown": 1}) == {"n": 2.0}
    with pytest.raises(v.ValidationError, match="Extra inputs are not permitted"):
        v.validate(v.no_extra("Strict", loose.fields), {"n": "2", "unknown": 1})


def test_the_model_sees_the_message_after_error() -> None:
    env = load_domain("telecom", require_data("telecom")).make_env(None)
    case = CASES[2]
    assert case["model"] == "APNSettings"
    observation = env.step("set_apn_settings", {"apn_settings": case["args"]}, "user")
    assert observation == f"Error: {case['error']}"
