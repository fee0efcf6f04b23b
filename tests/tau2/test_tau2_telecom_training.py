"""Training on tau2 telecom (solo mode): dataset rows and tool config, the BaseTool adapters acting on the
customer's phone, verl's ToolAgentLoop with a scripted policy, the reward on the recorded trajectory, recipe."""

from __future__ import annotations

import asyncio
import os
import subprocess
from typing import Any

import pyarrow.parquet as pq
import pytest

from verl_rewards.contribution import compute_contribution
from verl_rewards.tau2 import domain_spec
from verl_rewards.tau2.data import DONE_TOOL, prepare_tau2, tool_names
from verl_rewards.tau2.scripted import gold_calls

from agent_loop_support import _agent_data, _turn, _worker, configured, run_row
from recipe_support import compose_script
from repo_paths import REPO
from tau2_support import require_domain

MMS_TASK = "[mms_issue]break_apn_mms_setting[PERSONA:Hard]"  # fix: reset APN, reboot (both on the phone)


@pytest.fixture(scope="module")
def telecom():
    return require_domain("telecom")


@pytest.fixture(scope="module")
def prepared(telecom, tmp_path_factory):
    out = tmp_path_factory.mktemp("tau2_telecom")
    return prepare_tau2(
        telecom.data_dir.parent, "telecom", out, ["small", "train", "test", "full"], mode="solo", progress=False
    )


def _row(report, split: str, task_id: str) -> dict[str, Any]:
    rows = pq.read_table(report.files[split]).to_pylist()
    return next(r for r in rows if r["extra_info"]["task_id"] == task_id)


def test_prepare_writes_solo_rows_with_agent_and_user_tools(telecom, prepared) -> None:
    from verl.tools.tool_registry import initialize_tools_from_config

    from verl_rewards.tau2.verl_tools import Tau2DoneTool, Tau2Tool

    assert prepared.rows == {"small": 20, "train": 74, "test": 40, "full": 2285}
    rows = pq.read_table(prepared.files["full"]).to_pylist()
    assert [r["extra_info"]["task_id"] for r in rows] == telecom.split("full")
    row = rows[0]
    task = telecom.task(row["extra_info"]["task_id"])
    system, user = row["prompt"]
    assert user == {"role": "user", "content": task.ticket.strip()}
    solo_main = (telecom.data_dir / "main_policy_solo.md").read_text(encoding="utf-8")
    assert solo_main.strip()[:300] in system["content"] and "<tech_support_policy>" in system["content"]
    assert "`done`" in system["content"] and "`toggle_airplane_mode`" in system["content"]  # the customer's tools
    assert row["extra_info"]["solo_mode"] is True
    agent = [s["name"] for s in telecom.tool_specs()]
    user_tools = [s["name"] for s in telecom.user_tool_specs()]
    assert sorted(row["extra_info"]["tools_kwargs"]) == sorted([*agent, *user_tools, DONE_TOOL])

    tools = initialize_tools_from_config(configured(prepared.tool_config, root=prepared.data_dir)[0])
    assert [t.name for t in tools] == tool_names(telecom, "solo") and len(tools) == 44
    assert all(type(t) is (Tau2DoneTool if t.name == DONE_TOOL else Tau2Tool) for t in tools)
    schemas = {t.name: t.tool_schema.function for t in tools}
    mode = schemas["set_network_mode_preference"].parameters  # tau2's schema: the enum sits in $defs
    assert mode.model_dump()["$defs"]["NetworkModePreference"]["enum"] == [
        "4g_5g_preferred",
        "4g_only",
        "3g_only",
        "2g_only",
    ]
    grant = schemas["grant_app_permission"].parameters  # readable as verl's model (tool parsers read it)
    assert set(grant.required) == {"app_name", "permission"} and grant.properties["permission"].description


def test_user_tool_schema_without_config_schema() -> None:
    from verl_rewards.tau2.verl_tools import Tau2Tool

    tool = Tau2Tool({"name": "toggle_airplane_mode", "domain": "telecom"})
    assert tool.name == "toggle_airplane_mode"
    schema = tool.tool_schema.model_dump(exclude_unset=True, exclude_none=True)
    assert schema == next(s for s in domain_spec("telecom").user_tool_schemas() if s["function"]["name"] == tool.name)
    with pytest.raises(ValueError, match="has no tool 'fly'"):
        Tau2Tool({"name": "fly", "domain": "telecom"})


def test_tool_adapters_act_on_the_phone_and_reward_the_trajectory(telecom, prepared) -> None:
    from verl.tools.tool_registry import initialize_tools_from_config

    from verl_rewards.engine.verl_tools import SESSIONS
    from verl_rewards.tau2 import evaluate_trajectory
    from verl_rewards.tau2.verl_scorer import Tau2Options, score_tau2

    tools = {
        t.name: t for t in initialize_tools_from_config(configured(prepared.tool_config, root=prepared.data_dir)[0])
    }
    row = _row(prepared, "full", MMS_TASK)
    gold = gold_calls(telecom, MMS_TASK)
    assert [(n, r) for n, _, r in gold] == [("reset_apn_settings", "user"), ("reboot_device", "user")]
    options = Tau2Options(data_dir=str(telecom.data_dir.parent), default_termination="max_steps")

    async def go() -> None:
        ad = _agent_data(row, "req-mms")
        first = await _turn(tools, ad, [("can_send_mms", {})])
        assert first == ["Your messaging app cannot send MMS messages."]
        ef = ad.extra_fields
        h0 = ef["cur_step_dict"][0]["bb_hash"]
        answers = await _turn(tools, ad, [("reset_apn_settings", {})])
        assert answers[0].startswith("APN settings will reset at reboot.\nStatus Bar: ")
        assert ef["cur_step_dict"][1]["bb_hash"] != h0  # a change on the phone is a change of state
        assert ef["db_hash"] == telecom.make_env(MMS_TASK).get_data_hash()  # the agent DB did not move
        assert ef["cur_step_dict"][1]["value_est"] == pytest.approx(0.5)
        await _turn(tools, ad, [("reboot_device", {})])
        assert (await _turn(tools, ad, [("can_send_mms", {})])) == ["Your messaging app can send MMS messages."]
        await _turn(tools, ad, [(DONE_TOOL, {})], "Fixed.")
        assert ef["termination"] == "agent_stop"
        assert compute_contribution("C1", ef["prev_step_dict"], ef["cur_step_dict"]) == pytest.approx(1.0)
        assert compute_contribution("C0", ef["prev_step_dict"], ef["cur_step_dict"]) == 2
        messages = ef["messages"]
        extra = {**row["extra_info"], **ef}
        got = score_tau2(messages, row["data_source"], row["reward_model"]["ground_truth"], extra, options)
        assert got["reward"] == 1.0 and got["tau2_env_assertion"] == 1.0 and got["db_match"] == 1.0
        # the same messages replayed outside solo mode: agent calls of phone tools do nothing
        assert evaluate_trajectory(telecom, MMS_TASK, messages).reward == 0.0
        live = SESSIONS.get(ad).env  # the reward's replay reaches the state the tools produced, phone included
        replayed = evaluate_trajectory(telecom, MMS_TASK, messages, solo_mode=True).predicted_env
        assert (replayed.get_data_hash(), replayed.get_user_data_hash()) == (
            live.get_data_hash(),
            live.get_user_data_hash(),
        )

    asyncio.run(go())


def test_tool_agent_loop_runs_a_telecom_episode(telecom, prepared, small_tokenizer, small_tokenizer_dir) -> None:
    from verl_rewards.tau2.verl_scorer import Tau2Options, score_tau2

    task_id = next(t for t in telecom.split("train") if any(n == "refuel_data" for n, _, _ in gold_calls(telecom, t)))
    calls = gold_calls(telecom, task_id)
    row = _row(prepared, "train", task_id)
    worker = _worker("telecom", prepared, small_tokenizer, small_tokenizer_dir)
    script = [("Working on it.", [(n, a)]) for n, a, _ in calls] + [("Fixed.", [(DONE_TOOL, {})]), ("Bye.", [])]
    worker.llm_client.queue.append(script)
    out = asyncio.run(run_row(worker, row, f"telecom-{task_id}"))
    ef = out.extra_fields
    assert ef["termination"] == "agent_stop" and len(ef["cur_step_dict"]) == len(calls) + 1
    assert [a["name"] for a in ef["action_log"]] == [n for n, _, _ in calls]
    assert not any(a["error"] for a in ef["action_log"])
    options = Tau2Options(data_dir=str(telecom.data_dir.parent), default_termination="max_steps")
    extra = {**row["extra_info"], **ef}
    got = score_tau2(ef["messages"], row["data_source"], row["reward_model"]["ground_truth"], extra, options)
    assert got["reward"] == 1.0 and got["tau2_env_assertion"] == 1.0


@pytest.mark.slow
def test_recipe_accepts_telecom_and_mock() -> None:
    cfg = compose_script(
        "recipes/tau2_grpo/run_tau2_grpo.sh",
        {
            "DOMAIN": "telecom",
            "MODE": "solo",
            "DATA_DIR": "/data/t2t",
            "TAU2_DATA_DIR": "/data/tau2",
            "TELECOM_SPLIT": "full",
        },
    )
    assert cfg["data"]["train_files"] == "/data/t2t/full.parquet"
    assert cfg["data"]["val_files"] == "/data/t2t/test.parquet"
    assert cfg["data"]["max_prompt_length"] == 16384
    assert cfg["actor_rollout_ref"]["rollout"]["multi_turn"]["tool_config_path"] == "/data/t2t/tool_config.yaml"
    cfg = compose_script(
        "recipes/tau2_grpo/run_tau2_grpo.sh", {"DOMAIN": "mock", "DATA_DIR": "/data/t2m", "TAU2_DATA_DIR": "/data/tau2"}
    )
    assert cfg["data"]["train_files"] == cfg["data"]["val_files"] == "/data/t2m/base.parquet"
    assert cfg["data"]["max_prompt_length"] == 6144
    bad = subprocess.run(
        ["bash", str(REPO / "recipes/tau2_grpo/run_tau2_grpo.sh"), "--cfg", "job"],
        env={**os.environ, "DOMAIN": "telecom", "TELECOM_SPLIT": "huge"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "TELECOM_SPLIT must be small, train, test, base or full" in bad.stderr
