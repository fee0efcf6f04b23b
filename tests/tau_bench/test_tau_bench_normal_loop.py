"""The ``tau_bench_agent`` loop (tau-bench v1 normal mode) through verl's real ``AgentLoopWorker._run_agent_loop`` →
our ``ToolAgentLoop`` subclass: the policy played by a scripted LLM server, the user by the ``scripted`` backend or
the ``openai`` backend against a chat-completions server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from verl_rewards.tau_bench.data import task_row, tool_config_text
from verl_rewards.tau_bench.user import GREETING, user_history
from verl_rewards.tau_bench.verl_scorer import TauBenchOptions, score_tau_bench

from agent_loop_support import hermes, make_worker, run_row, segments
from chat_server import ChatServer, scripted
from tau_bench_support import require_domain

GOOD_RETURN = {"order_id": "#W6390527", "item_ids": ["8538875209"], "payment_method_id": "paypal_7644869"}
WRONG_RETURN = {"order_id": "#W6390527", "item_ids": ["8538875209"], "payment_method_id": "credit_card_0000"}
AGENT_GOOD = [
    ("Please confirm the return (yes/no).", []),
    ("", [("return_delivered_order_items", GOOD_RETURN)]),
    ("The return is requested.", []),
]
AGENT_WRONG = [("", [("return_delivered_order_items", WRONG_RETURN)]), ("Done.", [])]
USER = ["I want to return my water bottle.", "Yes.", "Thanks! ###STOP###"]


@pytest.fixture(scope="module")
def retail():
    return require_domain("retail")


@pytest.fixture(scope="module")
def tool_config(retail, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("tb_normal") / "tool_config.yaml"
    path.write_text(tool_config_text(retail))
    return str(path)


def normal_row(domain, task_id: str) -> dict[str, Any]:
    """The normal-mode dataset row of a task, as ``prepare tau_bench --mode normal`` writes it."""
    return task_row(domain, domain.task(task_id), 0, str(domain.data_dir.parent), "normal")


async def rollout(worker, domain, task_id: str, agent, uid: str):
    worker.llm_client.queue.append([hermes(t, c) for t, c in agent])
    return await run_row(worker, normal_row(domain, task_id), uid)


def reward_of(out, domain, task_id: str) -> dict[str, Any]:
    """The reward as the manager computes it (the loop's extra_fields merged into extra_info)."""
    extra = {**normal_row(domain, task_id)["extra_info"], **out.extra_fields}
    return score_tau_bench(
        out.extra_fields["messages"],
        "tau_bench/retail",
        None,
        extra,
        TauBenchOptions(data_dir=str(domain.data_dir.parent)),
    )


def test_prepare_normal_rows_select_the_loop_and_carry_only_the_system_prompt(retail):
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    row = normal_row(retail, "test/5")
    name = row["agent_name"]
    assert name == "tau_bench_agent" and _agent_loop_registry[name] == {
        "_target_": "verl_rewards.tau_bench.agent_loop.TauBenchAgentLoop"
    }
    assert row["prompt"] == [{"role": "system", "content": retail.policy}]
    assert row["extra_info"]["mode"] == "normal"


@pytest.fixture(scope="module")
def scripted_rollouts(retail, tool_config, small_tokenizer, small_tokenizer_dir, tmp_path_factory):
    scripts = tmp_path_factory.mktemp("tb_scripts") / "scripts.json"
    scripts.write_text(json.dumps({"test/5": USER}))

    async def go():
        worker = make_worker(
            tool_config,
            small_tokenizer,
            small_tokenizer_dir,
            {"backend": "scripted", "scripts": str(scripts)},
            section="tau_bench",
        )
        good = await rollout(worker, retail, "test/5", AGENT_GOOD, "good")
        wrong = await rollout(worker, retail, "test/5", AGENT_WRONG, "wrong")
        return good, wrong

    return asyncio.run(go())


def test_confirmed_completion_scores_one_and_a_wrong_write_zero(scripted_rollouts, retail):
    good, wrong = scripted_rollouts
    assert good.extra_fields["termination"] == "user_stop"
    got = reward_of(good, retail, "test/5")
    assert got["reward"] == 1.0 and got["tb_done"] == 1.0 and got["termination"] == "user_stop"
    messages = good.extra_fields["messages"]
    assert messages[0] == {"role": "user", "content": USER[0]} and GREETING not in json.dumps(messages)
    assert messages[-1] == {"role": "user", "content": USER[-1]}
    got = reward_of(wrong, retail, "test/5")
    assert got["reward"] == 0.0 and got["tb_r_actions"] == 0.0 and got["tb_done"] == 1.0


def test_agent_tokens_trained_user_and_tool_tokens_not(scripted_rollouts, small_tokenizer):
    good, _ = scripted_rollouts
    trained, untrained = segments(good, small_tokenizer)
    assert trained == [hermes(t, c) for t, c in AGENT_GOOD]
    assert "Yes." in "".join(untrained)
    prompt = small_tokenizer.decode(good.prompt_ids[0][good.attention_mask[0][: good.prompt_ids.shape[1]] == 1])
    assert USER[0] in prompt and GREETING not in prompt


def test_openai_user_gets_tau_bench_prompt_and_a_failing_one_ends_as_user_error(
    retail, tool_config, small_tokenizer, small_tokenizer_dir
):
    users = {"mei_kovacs_8020": [{"content": u} for u in USER]}
    instruction = retail.task("test/5").instruction

    async def go(url: str, uid: str, **user: Any):
        worker = make_worker(
            tool_config,
            small_tokenizer,
            small_tokenizer_dir,
            {"backend": "openai", "base_url": url, "model": "user-m", **user},
            section="tau_bench",
        )
        return await rollout(worker, retail, "test/5", AGENT_GOOD, uid)

    with ChatServer(scripted(users)) as server:
        out = asyncio.run(go(server.base_url, "openai", timeout_s=5))
    assert out.extra_fields["termination"] == "user_stop" and reward_of(out, retail, "test/5")["reward"] == 1.0
    texts = [t for t, c in AGENT_GOOD if not c]
    assert [r["messages"] for r in server.requests] == [
        user_history(instruction, texts[:i], USER[:i]) for i in range(3)
    ]
    assert all("tools" not in r for r in server.requests)
    with ChatServer(lambda body, n: ("status", 503)) as down:
        out = asyncio.run(go(down.base_url, "down", timeout_s=0.5, retries=1, backoff_s=0.05))
    assert out.extra_fields["termination"] == "user_error" and out.extra_fields["user_error"] == 1.0
    got = reward_of(out, retail, "test/5")
    assert got["reward"] == 0.0 and got["user_error"] == 1.0 and got["termination"] == "user_error"


def test_bad_settings_are_clear_errors():
    from verl_rewards.tau_bench.normal import TauBenchNormalSettings

    with pytest.raises(ValueError, match=r"custom\.tau_bench\.user\.backend"):
        TauBenchNormalSettings.from_mapping(None)
    with pytest.raises(ValueError, match="unknown key"):
        TauBenchNormalSettings.from_mapping({"user": {"backend": "scripted"}, "max_steps": 3})
    assert TauBenchNormalSettings.from_mapping({"user": {"backend": "scripted"}}).max_num_steps == 30
