"""The ``tau2_agent`` loop builds its token stream as verl's own ``ToolAgentLoop`` does, where the two should agree.

``tau2_agent`` is a subclass of verl's public ``AgentLoopBase`` (``verl_rewards/rollout/verl_loop.py``), not of
``ToolAgentLoop``. While the agent only calls tools, the two loops play the same turns: the agent's generations
(mask 1), the tool results (mask 0, cut to ``max_tool_response_length``), verl's budgets (``response_length``,
``max_assistant_turns``, ``max_parallel_calls``). Both run here through verl's real ``AgentLoopWorker`` on the same
scripted generations, ``ToolAgentLoop`` with the domain's verl tools and a prompt that already holds the user's
opening (which ``tau2_agent`` asks the simulated user for), and must produce the same prompt ids, response ids,
response mask and turn count. (They differ on purpose in one place: a call of an unknown tool is answered with
tau2's error text, not verl's.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.tau2.data import task_row, write_tool_config

from agent_loop_support import hermes, make_worker, run_row
from tau2_support import require_domain

OPENING = "I want to cancel reservation Z7GOZK."
AGENT = [
    ("Let me look.", [("get_reservation_details", {"reservation_id": "Z7GOZK"})]),
    (
        "",
        [
            ("get_user_details", {"user_id": "olivia_gonzalez_2305"}),
            ("get_reservation_details", {"reservation_id": "NOPE00"}),
        ],
    ),
    ("Checking once more.", [("get_reservation_details", {"reservation_id": "Z7GOZK"})]),
    ("Z7GOZK can be cancelled. Do you confirm (yes/no)?", []),
]
#: verl rollout settings (``actor_rollout_ref.rollout.*``) under which the two loops are compared
BUDGETS: dict[str, dict[str, Any]] = {
    "no_budget": {},
    "response_length_in_a_generation": {"response_length": 50},
    "response_length_in_tool_results": {"response_length": 250},
    "response_length_later": {"response_length": 700},
    "tool_results_cut_left": {
        "multi_turn.max_tool_response_length": 40,
        "multi_turn.tool_response_truncate_side": "left",
    },
    "tool_results_cut_right": {
        "multi_turn.max_tool_response_length": 40,
        "multi_turn.tool_response_truncate_side": "right",
    },
    "tool_results_cut_middle": {
        "multi_turn.max_tool_response_length": 41,
        "multi_turn.tool_response_truncate_side": "middle",
    },
    "two_assistant_turns": {"multi_turn.max_assistant_turns": 2},
    "one_user_turn": {"multi_turn.max_user_turns": 1},
    "two_calls_per_turn": {"multi_turn.max_parallel_calls": 2},  # verl's default plays only the first call
}


@pytest.fixture(scope="module")
def airline():
    return require_domain("airline")


@pytest.fixture(scope="module")
def tool_config(airline, tmp_path_factory) -> str:
    return str(write_tool_config(airline, tmp_path_factory.mktemp("tokens") / "airline.yaml", mode="normal"))


def _worker(tool_config: str, tokenizer, tokenizer_dir: str, scripts: Path, budget: dict[str, Any]):
    from omegaconf import OmegaConf

    worker = make_worker(tool_config, tokenizer, tokenizer_dir, {"backend": "scripted", "scripts": str(scripts)})
    for key, value in budget.items():
        OmegaConf.update(worker.config, f"actor_rollout_ref.rollout.{key}", value, force_add=True)
    worker.llm_client.queue.append([hermes(t, c) for t, c in AGENT])
    return worker


@pytest.fixture(scope="module")
def both_loops(airline, tool_config, small_tokenizer, small_tokenizer_dir, tmp_path_factory):
    scripts = tmp_path_factory.mktemp("tokens_scripts") / "scripts.json"
    scripts.write_text(json.dumps({"19": [OPENING, "Yes. ###STOP###"]}))
    row = task_row(airline, airline.task("19"), 0, "test", str(airline.data_dir.parent), mode="normal")
    solo = dict(row, agent_name="tool_agent", prompt=[*row["prompt"], {"role": "user", "content": OPENING}])

    async def go():
        out = {}
        for name, budget in BUDGETS.items():
            ours = _worker(tool_config, small_tokenizer, small_tokenizer_dir, scripts, budget)
            verls = _worker(tool_config, small_tokenizer, small_tokenizer_dir, scripts, budget)
            out[name] = (await run_row(ours, row, f"ours-{name}"), await run_row(verls, solo, f"verl-{name}"))
        return out

    return asyncio.run(go())


def _stream(out) -> dict[str, Any]:
    prompt = out.prompt_ids[0][out.attention_mask[0][: out.prompt_ids.shape[1]] == 1].tolist()
    width = out.response_ids.shape[1]
    real = out.attention_mask[0][-width:] == 1
    return {
        "prompt_ids": prompt,
        "response_ids": out.response_ids[0][real].tolist(),
        "response_mask": out.response_mask[0][real].tolist(),
        "num_turns": int(out.num_turns),
    }


@pytest.mark.parametrize("budget", list(BUDGETS))
def test_tau2_agent_builds_the_token_stream_of_verls_tool_agent_loop(both_loops, budget):
    ours, verls = both_loops[budget]
    assert _stream(ours) == _stream(verls)


def test_the_comparison_covers_the_cases_it_names(both_loops, small_tokenizer):
    streams = {name: _stream(ours) for name, (ours, _) in both_loops.items()}
    full = streams["no_budget"]
    assert full["num_turns"] == 2 * len(AGENT) and sum(full["response_mask"]) > 0  # every turn played
    assert 0 in full["response_mask"] and full["response_mask"][0] == 1  # the agent first, then tool results
    text = small_tokenizer.decode(full["response_ids"])
    both_calls = small_tokenizer.decode(streams["two_calls_per_turn"]["response_ids"])
    assert "NOPE00 not found" in both_calls and "NOPE00 not found" not in text  # a failing call answers too
    assert len(streams["response_length_in_a_generation"]["response_ids"]) == 50
    assert streams["response_length_in_tool_results"]["num_turns"] < streams["response_length_later"]["num_turns"]
    assert streams["response_length_later"]["num_turns"] < full["num_turns"]
    for side in ("left", "right", "middle"):
        cut = small_tokenizer.decode(streams[f"tool_results_cut_{side}"]["response_ids"])
        assert "(truncated)" in cut and len(cut) < len(text)
    assert streams["two_assistant_turns"]["num_turns"] == 4 and streams["one_user_turn"]["num_turns"] == 4
    ours, _ = both_loops["response_length_later"]
    assert ours.extra_fields["termination"] == "max_steps"  # a verl budget ends the conversation as max_steps
