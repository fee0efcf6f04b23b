"""Tool calls played on our environments give what tau2-bench's own environments gave, call for call (tool message,
error flag, agent and user DB hashes), and our ``reward_info`` of the whole trajectory equals tau2's
``evaluate_simulation(..., EvaluationType.ALL)`` field for field; tool types equal tau2's.

The reference, ``tests/data/reference/tau2_trajectories.json``, was written by tau2's own code
(``dump_reference.py trajectories``; how: ``README.md`` there): mock gold trajectories, telecom gold and
gold-minus-last-action trajectories (``db_match`` as tau2's gold replay computes it), banking_knowledge gold
trajectories, the same with every discoverable tool called by its own name (with and without unlocking it), and
hand-written edge cases (wrong arguments, the other side's tools, helpers that are not tools)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.evaluator import evaluate_trajectory
from verl_rewards.tau2.normal.simulate import reward_info

from repo_paths import DATA
from tau2_support import require_data

REFERENCE = json.loads((DATA / "reference" / "tau2_trajectories.json").read_text(encoding="utf-8"))
SCENARIOS: list[dict[str, Any]] = REFERENCE["scenarios"]
GREETING = {"role": "assistant", "content": "Hi! How can I help you today?"}
STOP = {"role": "user", "content": "Thanks, that's all. ###STOP###"}


def _domain(scenario: dict[str, Any]) -> Any:
    return load_domain(scenario["domain"], require_data(scenario["domain"]), **scenario["options"])


def _content_matches(step: dict[str, Any], content: str) -> bool:
    if "content" in step:
        return bool(step["content"] == content)
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
    return bool(content.startswith(step["content_start"]) and digest == step["content_sha256"])


def play(scenario: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Our trajectory of the scenario's calls (played live, the sync after every step) and every difference from
    tau2's tool messages and hashes."""
    domain = _domain(scenario)
    env = domain.make_env(scenario["task_id"])
    history = list(domain.task(scenario["task_id"]).history)
    messages: list[dict[str, Any]] = [] if history else [dict(GREETING)]
    diffs = []
    for i, ((requestor, name, arguments), want) in enumerate(zip(scenario["calls"], scenario["steps"], strict=True)):
        content, error = env.execute(name, arguments, requestor)
        env.sync()
        got_hashes = (env.get_data_hash(), env.get_user_data_hash())
        if not _content_matches(want, content) or error != want["error"]:
            diffs.append(f"call {i} {name}: ours {error} {content[:200]!r}; tau2 {want}")
        if got_hashes != (want["db_hash"], want["user_db_hash"]):
            diffs.append(f"call {i} {name}: DB hashes differ")
        call = {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        messages.append({"role": requestor, "content": None, "tool_calls": [call]})
        messages.append(
            {"role": "tool", "tool_call_id": f"call_{i}", "content": content, "requestor": requestor, "error": error}
        )
    messages.append(dict(STOP))
    return messages, diffs


def ours_reward_info(scenario: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    domain = _domain(scenario)
    result = evaluate_trajectory(domain, scenario["task_id"], messages, termination="user_stop", nl_policy="skip")
    return reward_info(domain.task(scenario["task_id"]), result, messages)


def _id(scenario: dict[str, Any]) -> str:
    return f"{scenario['domain']}:{scenario['task_id']}:{scenario['variant']}"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=_id)
def test_calls_and_reward_info_equal_tau2s(scenario: dict[str, Any]) -> None:
    messages, diffs = play(scenario)
    assert diffs == []
    assert ours_reward_info(scenario, messages) == scenario["reward_info"]


@pytest.mark.parametrize("name", sorted(REFERENCE["tool_types"]))
def test_tool_types_equal_tau2s(name: str) -> None:
    """``action_checks[].tool_type`` reads the evaluator's table (tau2's ``get_tool_types`` of both toolkits, the
    user's winning a shared name); a replay re-runs exactly the tools tau2 marks ``mutates_state``."""
    options = {"retrieval": "bm25"} if name == "banking_knowledge" else {}
    domain = load_domain(name, require_data(name), **options)
    want = REFERENCE["tool_types"][name]
    assert domain.tool_kinds() == want["evaluator"]
    env = domain.make_env()
    for side, kit in (("assistant", env.tools), ("user", env.user_tools)):
        for tool, facts in want["tools"].get(side, {}).items():
            assert kit is not None and kit.has_tool(tool), (side, tool)
            assert env.is_mutating_tool(tool) == facts["mutates_state"], (side, tool)
