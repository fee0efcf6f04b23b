"""A non-object APN and a non-string network mode on telecom's phone, against tau2-bench's own code.

``tests/data/reference/tau2_telecom_stored.json`` (``dump_reference.py stored``): on fresh phones, tau2's
``set_apn_settings`` stores a non-object argument and ``set_network_mode_preference`` a non-string mode before
failing on it; every later tool's output, error flag and the user DB hash after it must be tau2's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from verl_rewards.tau2 import load_domain

from repo_paths import DATA
from tau2_support import require_data

SCENARIOS: dict[str, list[dict[str, Any]]] = json.loads(
    (DATA / "reference" / "tau2_telecom_stored.json").read_text("utf-8")
)["scenarios"]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_stored_value_then_every_tool_as_tau2(name: str) -> None:
    env = load_domain("telecom", require_data("telecom")).make_env()
    got, want = [], []
    for i, step in enumerate(SCENARIOS[name]):
        content = env.step(step["call"], step["arguments"], "user")
        got.append((i, step["call"], content, content.startswith("Error: "), env.get_user_data_hash()))
        want.append((i, step["call"], step["content"], step["error"], step["user_db_hash"]))
    assert got == want
