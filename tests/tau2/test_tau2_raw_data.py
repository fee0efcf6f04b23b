"""What tau2 keeps of a model's answer (``raw_data``: litellm's response object; ``usage``) for the answers of several
kinds of servers, as litellm 1.82.6 wrote them (``tau2_runs.json``, ``litellm_responses``)."""

from __future__ import annotations

from typing import Any

import pytest

from verl_rewards.tau2.normal.raw_data import raw_data, response_usage

from tau2_runs import RAW

CASES: dict[str, Any] = RAW["litellm_responses"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_raw_data_and_usage_equal_what_litellm_and_tau2_write(name: str) -> None:
    case = CASES[name]
    assert raw_data(case["answer"]) == case["raw_data"]
    assert response_usage(case["answer"]) == case["usage"]
