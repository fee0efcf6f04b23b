"""The ``tau2_agent`` loop through verl's real ``AgentLoopWorker._run_agent_loop`` → our ``ToolAgentLoop`` subclass,
with the policy played by a scripted LLM server and the user played by the ``scripted`` backend, the ``openai``
backend against a chat-completions server on 127.0.0.1 (real HTTP, real client), and the ``policy`` backend."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.engine.conversation import trial_seeds
from verl_rewards.engine.rules import GREETING
from verl_rewards.tau2.data import task_row, write_tool_config
from verl_rewards.tau2.normal.history import prompt_for_template

from agent_loop_support import hermes, make_worker, run_row, segments
from chat_server import ChatServer, scripted
from recipe_support import run_script
from sft_support import tool_tokenizer_dir
from tau2_support import require_domain

TELECOM_TASK = "[service_issue]airplane_mode_on[PERSONA:None]"
WRONG_ADDRESS = {
    "user_id": "ivan_khan_7475",
    "address1": "2 Wrong Way",
    "address2": "",
    "city": "Nowhere",
    "state": "NV",
    "country": "USA",
    "zip": "00001",
}
AgentTurn = tuple[str, list[tuple[str, dict[str, Any]]]]

# (domain, task) -> (the agent's turns, the user's turns, expected termination, expected reward)
CASES: dict[str, tuple[str, str, list[AgentTurn], list[Any], str, float]] = {
    "airline_confirm": (
        "airline",
        "19",
        [
            ("", [("get_reservation_details", {"reservation_id": "Z7GOZK"})]),
            ("Z7GOZK can be cancelled. Do you confirm (yes/no)?", []),
            ("", [("cancel_reservation", {"reservation_id": "Z7GOZK"})]),
            ("Your reservation Z7GOZK is cancelled.", []),
        ],
        ["I want to cancel reservation Z7GOZK.", "Yes, go ahead.", "Thanks! ###STOP###"],
        "user_stop",
        1.0,
    ),
    "retail_wrong_write": (
        "retail",
        "72",
        [("", [("modify_user_address", WRONG_ADDRESS)]), ("Your address is updated.", [])],
        ["Please change my address.", "Thanks ###STOP###"],
        "user_stop",
        0.0,
    ),
    "telecom_toggles": (
        "telecom",
        TELECOM_TASK,
        [("Please turn off airplane mode and tell me when done.", [])],
        [
            "My phone has no service.",
            {"tool_calls": [{"name": "toggle_airplane_mode", "arguments": {}}]},
            "Done, it works. ###STOP###",
        ],
        "user_stop",
        1.0,
    ),
    "telecom_never_toggles": (
        "telecom",
        TELECOM_TASK,
        [("Please turn off airplane mode and tell me when done.", [])],
        ["My phone has no service.", "I would rather not. ###STOP###"],
        "user_stop",
        0.0,
    ),
}


@pytest.fixture(scope="module")
def tau2_root() -> Path:
    return require_domain("airline").data_dir.parent


@pytest.fixture(scope="module")
def tool_configs(tau2_root, tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("normal_tools")
    paths = {}
    for name in ("airline", "retail", "telecom"):
        paths[name] = str(write_tool_config(require_domain(name), out / f"{name}.yaml", mode="normal"))
    return paths


def normal_row(domain_name: str, task_id: str, root: Path) -> dict[str, Any]:
    """The normal-mode dataset row of a task, as ``prepare tau2 --mode normal`` writes it."""
    domain = require_domain(domain_name)
    return task_row(domain, domain.task(task_id), 0, "test", str(root), mode="normal")


async def rollout(worker, domain_name: str, task_id: str, root: Path, agent: list[AgentTurn], uid: str = ""):
    worker.llm_client.queue.append([hermes(t, c) for t, c in agent])
    return await run_row(worker, normal_row(domain_name, task_id, root), uid or f"{domain_name}-{task_id}")


def reward_of(out, domain_name: str, task_id: str, root: Path) -> dict[str, Any]:
    """The tau2 reward as the manager computes it (tool_extra_fields merged into extra_info)."""
    from verl_rewards.tau2.verl_scorer import Tau2Options, score_tau2

    extra = {**normal_row(domain_name, task_id, root)["extra_info"], **out.extra_fields}
    return score_tau2(
        out.extra_fields["messages"],
        f"tau2/{domain_name}",
        {"task_id": task_id},
        extra,
        Tau2Options(data_dir=str(root)),
    )


# ------------------------------------------------------------------------------------------------ registry
def test_plugin_registers_the_tau2_agent_loop():
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    assert _agent_loop_registry["tau2_agent"] == {"_target_": "verl_rewards.tau2.normal.agent_loop.Tau2AgentLoop"}


# ------------------------------------------------------------------------------------------ scripted user
@pytest.fixture(scope="module")
def scripted_rollouts(tool_configs, small_tokenizer, small_tokenizer_dir, tau2_root, tmp_path_factory):
    scripts = {CASES[c][1]: CASES[c][3] for c in ("airline_confirm", "retail_wrong_write")}
    results = {}

    async def go():
        for case, (domain_name, task_id, agent, user, _, _) in CASES.items():
            path = tmp_path_factory.mktemp("scripts") / "scripts.json"
            path.write_text(json.dumps({**scripts, task_id: user}))
            worker = make_worker(
                tool_configs[domain_name],
                small_tokenizer,
                small_tokenizer_dir,
                {"backend": "scripted", "scripts": str(path)},
            )
            results[case] = await rollout(worker, domain_name, task_id, tau2_root, agent)

    asyncio.run(go())
    return results


@pytest.mark.parametrize("case", list(CASES))
def test_scripted_user_rollouts_terminate_and_score(scripted_rollouts, case, tau2_root):
    domain_name, task_id, agent, user, termination, reward = CASES[case]
    out = scripted_rollouts[case]
    ef = out.extra_fields
    assert ef["termination"] == termination and ef["user_error"] == 0.0
    got = reward_of(out, domain_name, task_id, tau2_root)
    assert got["reward"] == reward and got["termination"] == termination and got["user_error"] == 0.0
    messages = ef["messages"]
    assert messages[0] == {"role": "assistant", "content": GREETING}
    assert ef["tau2_steps"] == len(messages) - 1 - sum(  # a batch of tool results is one step
        1 for i, m in enumerate(messages) if m["role"] == "tool" and messages[i - 1]["role"] == "tool"
    )
    if case == "telecom_toggles":
        user_call = next(m for m in messages if m["role"] == "user" and m.get("tool_calls"))
        assert user_call["tool_calls"][0]["function"]["name"] == "toggle_airplane_mode"
        assert messages[messages.index(user_call) + 1]["requestor"] == "user"
    if case == "retail_wrong_write":
        assert got["tau2_db"] == 0.0 and got["db_match"] == 0.0


def test_mask_is_one_on_agent_tokens_and_zero_on_user_and_tool_tokens(scripted_rollouts, small_tokenizer):
    for case in ("airline_confirm", "telecom_toggles"):
        out = scripted_rollouts[case]
        _, _, agent, user, _, _ = CASES[case]
        trained, untrained = segments(out, small_tokenizer)
        assert trained == [hermes(t, c) for t, c in agent]  # exactly the agent's generations, in order
        untrained_text = "".join(untrained)
        for message in out.extra_fields["messages"][2:]:  # after the greeting and the opening (prompt side)
            if message["role"] == "tool" and message["requestor"] == "assistant":
                assert message["content"] in untrained_text
            if message["role"] == "user" and not message.get("tool_calls") and "###" not in message["content"]:
                assert message["content"] in untrained_text
        assert "toggle_airplane_mode" not in untrained_text  # the user's own tool call never reaches the agent
        prompt = small_tokenizer.decode(out.prompt_ids[0][out.attention_mask[0][: out.prompt_ids.shape[1]] == 1])
        assert prompt.index(GREETING) < prompt.index(user[0])  # greeting, then the user's opening, in the prompt


# ------------------------------------------------------------------------------------------ openai user
def test_openai_user_over_loopback_http(tool_configs, small_tokenizer, small_tokenizer_dir, tau2_root):
    users = {
        "olivia_gonzalez_2305": [
            {"content": "I want to cancel reservation Z7GOZK."},
            {"content": "Yes, go ahead."},
            {"content": "Thanks! ###STOP###"},
        ],
        "555-123-2002": [
            {"content": "My phone has no service."},
            {"content": None, "tool_calls": [{"name": "toggle_airplane_mode", "arguments": {}}]},
            {"content": "Done, it works. ###STOP###"},
        ],
    }

    async def go(server):
        user = {"backend": "openai", "base_url": server.base_url, "model": "user-model", "timeout_s": 5}
        outs = {}
        for case in ("airline_confirm", "telecom_toggles"):
            domain_name, task_id, agent, _, _, _ = CASES[case]
            worker = make_worker(tool_configs[domain_name], small_tokenizer, small_tokenizer_dir, user)
            outs[case] = await rollout(worker, domain_name, task_id, tau2_root, agent, uid=f"openai-{case}")
        return outs

    with ChatServer(scripted(users)) as server:
        outs = asyncio.run(go(server))
    for case, out in outs.items():
        domain_name, task_id = CASES[case][:2]
        assert out.extra_fields["termination"] == "user_stop", out.extra_fields["tau2_end_cause"]
        assert reward_of(out, domain_name, task_id, tau2_root)["reward"] == 1.0
    airline = [r for r in server.requests if "olivia_gonzalez_2305" in json.dumps(r["messages"][:3])]
    first = airline[0]
    assert first["model"] == "user-model" and first["temperature"] == 0.0
    assert first["seed"] == trial_seeds(300, 1)[0]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][1] == {"role": "user", "content": GREETING}
    assert "<scenario>" in first["messages"][0]["content"] and "tools" not in first and "tool_choice" not in first
    last = airline[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert last[3]["content"] == "Z7GOZK can be cancelled. Do you confirm (yes/no)?"
    assert "get_reservation_details" not in json.dumps(last) and "cancel_reservation" not in json.dumps(last)
    telecom = [r for r in server.requests if "555-123-2002" in json.dumps(r["messages"][:3])]
    assert all(
        r["tool_choice"] == "auto" and {t["function"]["name"] for t in r["tools"]} >= {"toggle_airplane_mode"}
        for r in telecom
    )
    after_call = telecom[2]["messages"]
    assert after_call[-2]["role"] == "assistant" and after_call[-2]["tool_calls"][0]["function"]["name"] == (
        "toggle_airplane_mode"
    )
    call_id = after_call[-2]["tool_calls"][0]["id"]
    assert call_id.startswith("srv_") and after_call[-1] == {  # the endpoint's own call id, the phone's answer
        "role": "tool",
        "tool_call_id": call_id,
        "content": after_call[-1]["content"],
    }


@pytest.mark.parametrize("failure", ["http_500", "timeout", "dies_mid_batch"])
def test_user_endpoint_failures_end_as_user_error_within_the_timeout(
    failure, tool_configs, small_tokenizer, small_tokenizer_dir, tau2_root
):
    # timeout_s bounds a whole attempt (connect, send, answer): it is generous so that under load every attempt
    # reaches the server before it times out; the count below is then the client's attempts, exactly
    timeout_s, retries, backoff_s, batch = 2.0, 2, 0.05, 4
    state = {"server": None}

    def respond(body: dict[str, Any], n: int) -> Any:
        if failure == "http_500":
            return ("status", 500)
        if failure == "timeout":
            return ("sleep", 5 * timeout_s, {"content": "too late"})
        if n < batch:  # every trajectory gets its opening line, then the endpoint goes away
            return {"content": "I want to cancel reservation Z7GOZK."}
        state["server"].httpd.shutdown()
        return "drop"

    async def go(server):
        user = {
            "backend": "openai",
            "base_url": server.base_url,
            "model": "m",
            "timeout_s": timeout_s,
            "retries": retries,
            "backoff_s": backoff_s,
        }
        worker = make_worker(tool_configs["airline"], small_tokenizer, small_tokenizer_dir, user)
        agent = CASES["airline_confirm"][2]
        return await asyncio.gather(
            *(rollout(worker, "airline", "19", tau2_root, agent, uid=f"u{i}") for i in range(batch))
        )

    server = ChatServer(respond).start()
    state["server"] = server
    try:
        # a safety net against a hang only (the bound below is what the test pins): far above the ~2 s it takes
        outs = asyncio.run(asyncio.wait_for(go(server), timeout=300))
        # the server's handler threads may record an attempt after the client gave up on it: wait for them (woken
        # per request, never a clock comparison; the bound is a safety net) before the listening socket closes
        if failure != "dies_mid_batch":
            server.wait_for_requests(batch * (retries + 1), timeout=60)
    finally:
        server.httpd.server_close()
    attempts = len(server.requests)
    if failure == "dies_mid_batch":  # every opening line, then at most every retry of every second call
        assert batch < attempts <= batch + batch * (retries + 1), attempts
    else:  # each trajectory's first user call: exactly the configured attempts, then it ends
        assert attempts == batch * (retries + 1), attempts
    for out in outs:
        ef = out.extra_fields
        assert ef["termination"] == "user_error" and ef["user_error"] == 1.0
        assert ef["tau2_end_cause"].startswith("user:")
        got = reward_of(out, "airline", "19", tau2_root)
        assert got["reward"] == 0.0 and got["user_error"] == 1.0
    if failure == "dies_mid_batch":
        assert all(out.extra_fields["messages"][1]["content"].startswith("I want to cancel") for out in outs)


# ------------------------------------------------------------------------------------------ policy user
def test_policy_user_turns_come_from_the_rollout_server_and_are_never_trained(
    tool_configs, small_tokenizer, small_tokenizer_dir, tau2_root
):
    domain_name, task_id, agent, user, _, _ = CASES["airline_confirm"]

    async def go():
        worker = make_worker(
            tool_configs[domain_name], small_tokenizer, small_tokenizer_dir, {"backend": "policy", "max_tokens": 64}
        )
        worker.llm_client.queue.append([hermes(t, []) for t in user])  # the user's request id comes first
        out = await rollout(worker, domain_name, task_id, tau2_root, agent)
        return worker, out

    worker, out = asyncio.run(go())
    assert out.extra_fields["termination"] == "user_stop"
    assert reward_of(out, domain_name, task_id, tau2_root)["reward"] == 1.0
    user_request = next(iter(worker.llm_client.prompts))
    user_prompt = small_tokenizer.decode(worker.llm_client.prompts[user_request][0])
    assert "<scenario>" in user_prompt and user_prompt.rstrip().endswith("assistant")
    trained, untrained = segments(out, small_tokenizer)
    assert trained == [hermes(t, c) for t, c in agent]
    assert "Yes, go ahead." in "".join(untrained) and all("Yes, go ahead." not in t for t in trained)


def test_missing_or_bad_user_config_is_a_clear_error(tool_configs, small_tokenizer, small_tokenizer_dir, tau2_root):
    from verl_rewards.tau2.normal.agent_loop import NormalSettings

    with pytest.raises(ValueError, match=r"custom\.tau2\.user\.backend"):
        NormalSettings.from_mapping(None)
    with pytest.raises(ValueError, match="base_url is required"):
        NormalSettings.from_mapping({"user": {"backend": "openai", "model": "m"}})
    with pytest.raises(ValueError, match="unknown key"):
        NormalSettings.from_mapping({"user": {"backend": "scripted"}, "max_step": 3})
    from hydra.errors import InstantiationException

    worker = make_worker(tool_configs["airline"], small_tokenizer, small_tokenizer_dir, {"backend": "nope"})
    with pytest.raises(InstantiationException, match="backend must be one of"):  # hydra names the loop class
        asyncio.run(rollout(worker, "airline", "19", tau2_root, CASES["airline_confirm"][2]))


# ------------------------------------------------------------------------------------------------ recipe
@pytest.mark.slow
def test_recipe_normal_mode_by_default_with_a_user_endpoint(tmp_path):
    import yaml

    from verl_rewards.tau2.normal.agent_loop import NormalSettings

    proc = run_script(
        "recipes/tau2_grpo/run_tau2_grpo.sh",
        {
            "DOMAIN": "airline",
            "TAU2_DATA_DIR": str(tmp_path),
            "USER_BASE_URL": "http://10.0.0.7:8000/v1",
            "USER_MODEL": "Qwen/Qwen2.5-72B-Instruct",
        },
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cfg = yaml.safe_load(proc.stdout)
    rollout = cfg["actor_rollout_ref"]["rollout"]
    assert rollout["agent"]["default_agent_loop"] == "tau2_agent"
    assert cfg["data"]["train_files"].endswith("/data/tau2_airline_normal/train.parquet")
    settings = NormalSettings.from_mapping(rollout["custom"]["tau2"])
    assert settings.user.backend == "openai" and settings.max_steps == 200 and settings.max_errors == 10
    assert settings.user.endpoint.base_url == "http://10.0.0.7:8000/v1"
    assert settings.user.endpoint.model == "Qwen/Qwen2.5-72B-Instruct" and settings.data_dir == str(tmp_path)
    policy = run_script(
        "recipes/tau2_grpo/run_tau2_grpo.sh", {"DOMAIN": "retail", "USER_BACKEND": "policy", "MAX_STEPS": "80"}
    )
    assert policy.returncode == 0, policy.stderr[-3000:]
    custom = yaml.safe_load(policy.stdout)["actor_rollout_ref"]["rollout"]["custom"]["tau2"]
    assert NormalSettings.from_mapping(custom).user.backend == "policy" and custom["max_steps"] == 80
    missing = run_script("recipes/tau2_grpo/run_tau2_grpo.sh", {"DOMAIN": "airline"})
    assert missing.returncode == 2 and "needs USER_BASE_URL" in missing.stderr
    bad = run_script("recipes/tau2_grpo/run_tau2_grpo.sh", {"DOMAIN": "airline", "MODE": "duo"})
    assert bad.returncode == 2 and "MODE must be normal or solo" in bad.stderr


# ------------------------------------------------------------------------------------------------- data
def test_prepare_writes_normal_rows_by_default_and_agent_tools_only(tau2_root, tmp_path, capsys):
    import pyarrow.parquet as pq
    import yaml

    from verl_rewards.cli import main
    from verl_rewards.tau2.normal.prompts import agent_system_prompt, user_scenario_text

    out = tmp_path / "airline"
    assert (
        main(
            [
                "prepare",
                "tau2",
                "--data-dir",
                str(tau2_root),
                "--domain",
                "airline",
                "--out",
                str(out),
                "--split",
                "test",
            ]
        )
        == 0
    )
    domain = require_domain("airline")
    rows = pq.read_table(out / "test.parquet").to_pylist()
    assert [r["extra_info"]["task_id"] for r in rows] == domain.split("test")
    row = rows[0]
    task = domain.task(row["extra_info"]["task_id"])
    assert row["agent_name"] == "tau2_agent"
    assert row["prompt"] == [
        {"role": "system", "content": agent_system_prompt(domain)},
        {"role": "assistant", "content": GREETING},
    ]
    extra = row["extra_info"]
    assert extra["mode"] == "normal" and extra["solo_mode"] is False
    assert extra["user_scenario"] == user_scenario_text(task) and extra["data_dir"] == str(tau2_root)
    config = yaml.safe_load((out / "tool_config.yaml").read_text())["tools"]
    tools = [t["config"]["openai_schema"]["function"]["name"] for t in config]
    assert tools == [s["function"]["name"] for s in domain.spec.agent_tool_schemas()] and "done" not in tools
    telecom = tmp_path / "telecom"
    assert (
        main(
            [
                "prepare",
                "tau2",
                "--data-dir",
                str(tau2_root),
                "--domain",
                "telecom",
                "--out",
                str(telecom),
                "--split",
                "small",
            ]
        )
        == 0
    )
    config = yaml.safe_load((telecom / "tool_config.yaml").read_text())["tools"]
    assert len(config) == len(require_domain("telecom").spec.agent_tool_specs())  # no phone tools
    capsys.readouterr()
    assert (
        main(
            [
                "prepare",
                "tau2",
                "--data-dir",
                str(tau2_root),
                "--domain",
                "mock",
                "--out",
                str(tmp_path / "m"),
                "--mode",
                "normal",
                "--split",
                "base",
            ]
        )
        == 0
    )
    # a task that starts from a message history: the agent's prompt holds what it sees of the history (tau2's
    # orchestrator), arguments as JSON text in the parquet row
    rows = {r["extra_info"]["task_id"]: r for r in pq.read_table(tmp_path / "m" / "base.parquet").to_pylist()}
    prompt = [{k: v for k, v in m.items() if v is not None} for m in rows["update_task_with_message_history"]["prompt"]]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {
            "name": "create_task",
            "arguments": json.dumps(
                {"user_id": "user_1", "title": "Project Review", "description": "Review Q4 project status"}
            ),
        },
    }
    assert [m["role"] for m in prompt] == ["system", "user", "assistant", "tool", "assistant"]
    assert prompt[1:4] == [
        {"role": "user", "content": "I need to create a task for the project review meeting."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {
            "role": "tool",
            "content": '{"task_id":"task_2","title":"Project Review","description":"Review Q4 project status",'
            '"status":"pending"}',
            "tool_call_id": "call_1",
        },
    ]
    assert prompt_for_template(prompt)[2]["tool_calls"][0]["function"]["arguments"] == {
        "user_id": "user_1",
        "title": "Project Review",
        "description": "Review Q4 project status",
    }
    assert (
        main(
            [
                "prepare",
                "tau2",
                "--data-dir",
                str(tau2_root),
                "--domain",
                "mock",
                "--out",
                str(tmp_path / "m"),
                "--split",
                "base",
            ]
        )
        == 0
    )  # mock: solo by default
    assert pq.read_table(tmp_path / "m" / "base.parquet").to_pylist()[0]["agent_name"] == "tool_agent"


def test_a_task_starting_from_a_message_history_continues_from_it(qwen_tokenizer_dir, tmp_path):
    """tau2's orchestrator on mock's ``update_task_with_message_history``: no greeting; the agent's prompt holds the
    history (its tool call with the arguments as an object, as verl renders assistant messages); the history's last
    message (the agent's text) goes to the user, whose answer the agent gets; the trajectory (the reward's input)
    opens with the history, which costs no step."""
    mock = require_domain("mock")
    task_id = "update_task_with_message_history"
    tools = str(write_tool_config(mock, tmp_path / "mock.yaml", mode="normal"))
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps({task_id: ["Now mark task_2 as completed, please.", "Thanks ###STOP###"]}))
    from transformers import AutoTokenizer

    tokenizer_dir = tool_tokenizer_dir(qwen_tokenizer_dir, tmp_path / "tokenizer")  # renders tool calls
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    worker = make_worker(tools, tokenizer, tokenizer_dir, {"backend": "scripted", "scripts": str(scripts)})
    agent = [
        ("", [("update_task_status", {"task_id": "task_2", "status": "completed"})]),
        ("Done: task_2 (Project Review) is completed.", []),
    ]
    worker.llm_client.queue.append([hermes(t, c) for t, c in agent])
    row = task_row(mock, mock.task(task_id), 0, "test", str(mock.data_dir.parent), mode="normal")
    out = asyncio.run(run_row(worker, row, "mock-history"))
    ef = out.extra_fields
    messages = ef["messages"]
    history = mock.task(task_id).history
    assert [m["role"] for m in messages[: len(history)]] == [m.role for m in history]
    assert messages[len(history)] == {"role": "user", "content": "Now mark task_2 as completed, please."}
    assert ef["termination"] == "user_stop" and ef["tau2_steps"] == len(messages) - len(history)
    ids = out.prompt_ids[0].tolist() if out.prompt_ids.dim() == 2 else out.prompt_ids.tolist()
    prompt = tokenizer.decode(ids)
    assert "I've created a task titled 'Project Review'" in prompt and GREETING not in prompt
    assert '"title": "Project Review"' in prompt  # the history's call rendered with object arguments
    assert prompt.index("Project Review") < prompt.index("Now mark task_2 as completed")
    assert reward_of_mock(out, row, mock.data_dir.parent)["reward"] == 1.0


def reward_of_mock(out, row: dict[str, Any], root: Path) -> dict[str, Any]:
    from verl_rewards.tau2.verl_scorer import Tau2Options, score_tau2

    extra = {**row["extra_info"], **out.extra_fields}
    return score_tau2(
        out.extra_fields["messages"],
        "tau2/mock",
        {"task_id": row["extra_info"]["task_id"]},
        extra,
        Tau2Options(data_dir=str(root)),
    )
