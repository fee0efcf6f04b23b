"""What a model is shown equals what tau2-bench shows it, byte for byte once JSON-encoded: the tool schemas (as the
package serves them, in the tool config ``prepare`` writes as verl loads and dumps it, in the chat template's
prompt of a real agent-loop run, in ``simulate``'s requests), the agent and user system prompts, the NL judge's
prompts.

The reference is ``tests/data/reference/tau2_*.json``, written by tau2-bench's own code (``dump_reference.py``
there; how it was run: ``README.md`` there)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from verl_rewards.tau2 import domain_spec
from verl_rewards.tau2.data import done_schema, prepare_tau2, tool_config_text, tool_schemas
from verl_rewards.tau2.normal.judge import judge_messages
from verl_rewards.tau2.normal.prompts import (
    agent_system_prompt,
    render_user_scenario,
    user_system_prompt,
    user_tool_schemas,
)

from agent_loop_support import ScriptedServer, _worker, run_row
from chat_server import ChatServer
from repo_paths import DATA
from tau2_support import require_domain

REFERENCE = DATA / "reference"
TOOLS: dict[str, Any] = json.loads((REFERENCE / "tau2_tools.json").read_text(encoding="utf-8"))
PROMPTS: dict[str, Any] = json.loads((REFERENCE / "tau2_prompts.json").read_text(encoding="utf-8"))
DOMAINS = ("mock", "airline", "retail", "telecom")
MODES = [(d, m) for d in DOMAINS for m in ("normal", "solo")]


def require_guidelines(name: str) -> Any:
    """The domain, or skip when tau2's user-simulator guidelines are not next to its data."""
    domain = require_domain(name)
    if not (domain.data_dir.parent / "user_simulator").is_dir():
        pytest.skip("tau2's data/tau2/user_simulator/ is not next to the domains folder")
    return domain


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def reference_tools(name: str, mode: str) -> list[dict[str, Any]]:
    """What tau2 gives the agent: its tools (normal mode); in solo mode its tools, the user's, then ``done``
    (airline and retail have no solo mode in tau2: their tools, then tau2's ``done``)."""
    ref = TOOLS[name]
    if mode == "normal":
        return ref["agent"]
    return ref.get("solo") or [*ref["agent"], TOOLS["mock"]["solo"][-1]]


def shown_by_verl(tool_config: Path) -> list[dict[str, Any]]:
    """The tool list verl's ToolAgentLoop hands the chat template (``ToolAgentLoop.__init__``)."""
    from verl.tools.tool_registry import initialize_tools_from_config

    tools = initialize_tools_from_config(str(tool_config))
    return [t.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for t in tools]


# ------------------------------------------------------------------------------------------------ tools
@pytest.mark.parametrize("name", DOMAINS)
def test_served_tool_schemas_equal_tau2s(name: str) -> None:
    spec = domain_spec(name)
    assert dumps(spec.agent_tool_schemas()) == dumps(TOOLS[name]["agent"])
    assert dumps(spec.user_tool_schemas()) == dumps(TOOLS[name].get("user", []))


def test_done_is_tau2s_solo_stop_tool() -> None:
    assert dumps(done_schema()) == dumps(TOOLS["mock"]["solo"][-1]) == dumps(TOOLS["telecom"]["solo"][-1])


@pytest.mark.parametrize(("name", "mode"), MODES)
def test_prepared_tool_config_as_verl_loads_it_shows_tau2s_tools(name: str, mode: str, tmp_path: Path) -> None:
    domain = require_domain(name)
    assert dumps(tool_schemas(domain, mode)) == dumps(reference_tools(name, mode))
    path = tmp_path / "tool_config.yaml"
    path.write_text(tool_config_text(domain, mode=mode), encoding="utf-8")
    assert dumps(shown_by_verl(path)) == dumps(reference_tools(name, mode))


def test_fields_verl_would_drop_survive_into_the_prompt() -> None:
    """The fields verl's typed schema model drops are in the reference and reach the model."""
    mock = {s["function"]["name"]: s for s in TOOLS["mock"]["agent"]}
    description = mock["create_task"]["function"]["parameters"]["properties"]["description"]
    assert description == {
        "default": None,
        "description": "Optional description of the task",
        "title": "Description",
        "type": "string",
    }
    airline = {s["function"]["name"]: s for s in TOOLS["airline"]["agent"]}
    book = airline["book_reservation"]["function"]["parameters"]
    assert {"$defs", "title"} <= set(book) and book["properties"]["flights"]["items"]


def test_agent_loop_prompt_renders_tau2s_tools(small_tokenizer, small_tokenizer_dir, tmp_path: Path) -> None:
    """A mock row through verl's real agent loop: the tools the chat template renders are tau2's."""
    root = require_domain("mock").data_dir.parent
    report = prepare_tau2(root, "mock", tmp_path / "data", ["base"], mode="solo", progress=False)
    row = pq.read_table(report.files["base"]).to_pylist()[0]
    tokenizer = _with_tools_template(small_tokenizer, tmp_path / "tok")
    worker = _worker("mock", report, tokenizer, small_tokenizer_dir)
    server = _RecordingServer(tokenizer)
    worker.llm_client = server
    server.queue.append([("Done.", [("done", {})])])
    asyncio.run(run_row(worker, row, "parity-0"))
    text = tokenizer.decode(server.prompts[0])
    shown = text.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0].split("\n")
    assert [dumps(json.loads(line)) for line in shown] == [dumps(s) for s in reference_tools("mock", "solo")]


class _RecordingServer(ScriptedServer):
    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.prompts: list[list[int]] = []

    async def generate(self, request_id: str, prompt_ids: list[int], sampling_params: dict, **kw: Any):
        self.prompts.append(list(prompt_ids))
        return await super().generate(request_id, prompt_ids, sampling_params, **kw)


def _with_tools_template(tokenizer: Any, out: Path) -> Any:
    """The small tokenizer with a ChatML template that renders ``tools`` one JSON object per line (as Qwen's
    template does with ``tojson``)."""
    from transformers import AutoTokenizer

    tokenizer.save_pretrained(str(out))
    tok = AutoTokenizer.from_pretrained(str(out))
    tok.chat_template = (
        "{% if tools %}<|im_start|>system\n<tools>\n{% for t in tools %}{{ t | tojson }}\n{% endfor %}</tools>"
        "<|im_end|>\n{% endif %}" + tokenizer.chat_template
    )
    return tok


def test_simulate_sends_tau2s_tools_and_prompts_to_both_sides(tmp_path: Path) -> None:
    """``simulate`` on mock: the agent gets tau2's agent tools and system prompt, the user tau2's user tools and
    system prompt."""
    from verl_rewards.cli import main

    domain = require_guidelines("mock")
    task = domain.task("create_task_1")
    user_turns = iter(["Please create a task for me.", "Thanks! ###STOP###"])

    def respond(body: dict[str, Any], n: int) -> dict[str, Any]:
        return {"content": "Sure." if body["model"] == "agent" else next(user_turns)}

    out = tmp_path / "run.json"
    with ChatServer(respond) as server:
        argv = ["simulate", "--domain", "mock", "--data-dir", str(domain.data_dir.parent), "--task-ids", task.id]
        argv += ["--agent-base-url", server.base_url, "--agent-model", "agent", "--user-base-url", server.base_url]
        argv += ["--user-model", "user", "--timeout-s", "5", "--retries", "0", "--out", str(out)]
        assert main(argv) == 0
    user = next(r for r in server.requests if r["model"] == "user")
    assert dumps(user["tools"]) == dumps(TOOLS["mock"]["user"])
    assert user["messages"][0]["content"] == PROMPTS["mock"]["user_system_prompts"][task.id]
    agent = next(r for r in server.requests if r["model"] == "agent")
    assert dumps(agent["tools"]) == dumps(TOOLS["mock"]["agent"])
    assert agent["messages"][0]["content"] == PROMPTS["mock"]["agent_system_prompt"]


# ---------------------------------------------------------------------------------------------- prompts
@pytest.mark.parametrize("name", DOMAINS)
def test_agent_system_prompt_equals_tau2s(name: str) -> None:
    domain = require_domain(name)
    assert agent_system_prompt(domain) == PROMPTS[name]["agent_system_prompt"]
    if name == "telecom":
        assert agent_system_prompt(domain, "workflow") == PROMPTS[name]["agent_system_prompt_workflow"]


@pytest.mark.parametrize("name", DOMAINS)
def test_user_system_prompt_equals_tau2s_for_every_task(name: str) -> None:
    domain = require_guidelines(name)
    expected = PROMPTS[name]["user_system_prompt_sha256"]
    ours = {}
    for task in domain.tasks.values():
        if task.id in expected:
            ours[task.id] = user_system_prompt(domain, render_user_scenario(task.user_scenario))
    assert set(ours) == set(expected)
    assert {tid: hashlib.sha256(p.encode()).hexdigest() for tid, p in ours.items()} == expected
    for tid, text in PROMPTS[name]["user_system_prompts"].items():
        assert ours[tid] == text
    assert (user_tool_schemas(domain) is None) == ("user" not in TOOLS[name])


def test_nl_judge_prompts_equal_tau2s() -> None:
    judge = PROMPTS["nl_judge"]
    messages = [_as_openai(m) for m in judge["input"]["messages"]]
    assert judge_messages(messages, judge["input"]["assertions"]) == judge["messages"]


def _as_openai(message: dict[str, Any]) -> dict[str, Any]:
    """A message of the judge sample in our (OpenAI) trajectory format."""
    if message["role"] == "tool":
        return {"role": "tool", "tool_call_id": message["id"], "content": message["content"]}
    out = {"role": message["role"], "content": message["content"]}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for c in message["tool_calls"]
        ]
    return out
