"""What a model is shown equals what tau-bench (v1) shows it, byte for byte once JSON-encoded: ``Env.tools_info``
(as the domain serves it, in the tool config ``prepare`` writes as verl loads and dumps it, in ``simulate``'s
requests), the wiki (the agent's whole system prompt) and the ``llm`` user's system prompt.

The reference is ``tests/data/reference/tau_bench_reference.json``, written by tau-bench's own code
(``dump_reference.py`` there; how it was run: ``README.md`` there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.tau_bench.data import tool_config_text
from verl_rewards.tau_bench.user import user_system_prompt

from chat_server import ChatServer
from repo_paths import DATA
from tau_bench_support import require_domain

REFERENCE: dict[str, Any] = json.loads((DATA / "reference" / "tau_bench_reference.json").read_text(encoding="utf-8"))
DOMAINS = ("retail", "airline")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("name", DOMAINS)
def test_tools_and_prompts_equal_tau_benchs(name: str) -> None:
    domain = require_domain(name)
    ref = REFERENCE[name]
    assert dumps(domain.tools_info) == dumps(ref["tools_info"])
    assert domain.policy == ref["wiki"]
    for task_id, prompt in ref["user_system_prompts"].items():
        assert user_system_prompt(domain.task(task_id).instruction) == prompt


@pytest.mark.parametrize("name", DOMAINS)
def test_prepared_tool_config_as_verl_loads_it_shows_tau_benchs_tools(name: str, tmp_path: Path) -> None:
    from verl.tools.tool_registry import initialize_tools_from_config

    domain = require_domain(name)
    path = tmp_path / "tool_config.yaml"
    path.write_text(tool_config_text(domain), encoding="utf-8")
    tools = initialize_tools_from_config(str(path))
    shown = [t.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for t in tools]  # ToolAgentLoop
    assert dumps(shown) == dumps(REFERENCE[name]["tools_info"])


def test_simulate_sends_tau_benchs_tools_and_prompts(tmp_path: Path) -> None:
    from verl_rewards.cli import main

    domain = require_domain("retail")
    user_turns = iter(["Hi, I want to return something.", "Thanks! ###STOP###"])

    def respond(body: dict[str, Any], n: int) -> dict[str, Any]:
        return {"content": "Sure." if body["model"] == "agent" else next(user_turns)}

    with ChatServer(respond) as server:
        argv = ["simulate", "--domain", "tau_bench/retail", "--data-dir", str(domain.data_dir.parent)]
        argv += ["--task-ids", "test/0", "--agent-base-url", server.base_url, "--agent-model", "agent"]
        argv += ["--user-base-url", server.base_url, "--user-model", "user", "--timeout-s", "5", "--retries", "0"]
        assert main([*argv, "--out", str(tmp_path / "tb.json")]) == 0
    agent = next(r for r in server.requests if r["model"] == "agent")
    assert dumps(agent["tools"]) == dumps(REFERENCE["retail"]["tools_info"])
    assert agent["messages"][0] == {"role": "system", "content": REFERENCE["retail"]["wiki"]}
    user = next(r for r in server.requests if r["model"] == "user")
    assert user["messages"][0]["content"] == REFERENCE["retail"]["user_system_prompts"]["test/0"]
