"""tau-bench v1 normal mode off verl: the conversation rules on tau-bench tasks, ``verl-rewards simulate --domain
tau_bench/retail`` against two chat-completions servers on 127.0.0.1 (real HTTP), and ``verl-rewards eval`` on its
output."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from verl_rewards.engine.conversation import Reply
from verl_rewards.engine.simulate import ScriptedAgent as Agent
from verl_rewards.engine.users import ScriptedUser
from verl_rewards.tau_bench.normal import open_conversation
from verl_rewards.tau_bench.user import GREETING, user_history, user_system_prompt
from verl_rewards.tau_bench.verl_scorer import TauBenchOptions, score_tau_bench

from chat_server import ChatServer, scripted
from tau_bench_support import require_domain

GOOD_RETURN = {"order_id": "#W6390527", "item_ids": ["8538875209"], "payment_method_id": "paypal_7644869"}
WRONG_ADDRESS = {
    "order_id": "#W8665881",
    "address1": "1 Wrong Way",
    "address2": "",
    "city": "Austin",
    "state": "TX",
    "country": "USA",
    "zip": "78712",
}
TRANSFER = {"summary": "The user wants refunds to the other order's payment method."}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


@pytest.fixture(scope="module")
def retail():
    return require_domain("retail")


def play(domain, task_id: str, agent: list[Reply], user: list[Any], **kwargs: Any):
    users = ScriptedUser(user)
    conv = open_conversation(domain, task_id, users, agent_system_prompt=True, **kwargs)
    player = Agent(agent)
    asyncio.run(conv.run(player))
    extra = {"task_id": task_id, "mode": "normal", **conv.extra_fields()}
    got = score_tau_bench(
        conv.trajectory, "tau_bench/retail", None, extra, TauBenchOptions(data_dir=str(domain.data_dir.parent))
    )
    return conv, player, users, got


# ----------------------------------------------------------------------------------------------- the rules
def test_confirmed_return_scores_one_and_user_sees_tau_bench_history(retail):
    agent = [
        Reply(content="Please confirm the return of item 8538875209 (yes/no)."),
        Reply(tool_calls=[call("return_delivered_order_items", GOOD_RETURN)]),
        Reply(content="The return is requested."),
    ]
    user = ["I want to return my water bottle.", "Yes.", "Thanks! ###STOP###"]
    conv, player, users, got = play(retail, "test/5", agent, user)
    assert conv.termination == "user_stop" and got["reward"] == 1.0 and got["tb_done"] == 1.0
    assert got["termination"] == "user_stop" and got["user_error"] == 0.0
    # the agent never sees the greeting: its view is wiki.md, then the user's first message
    assert player.views[0] == [{"role": "system", "content": retail.policy}, {"role": "user", "content": user[0]}]
    assert conv.trajectory[0] == {"role": "user", "content": user[0]}
    instruction = retail.task("test/5").instruction
    texts = [r.content for r in agent if r.content]
    for i, request in enumerate(users.requests):  # tau-bench's user history, call by call; no tools
        assert request.chat_messages() == user_history(instruction, texts[:i], user[:i])
        assert request.tools is None
    assert users.requests[0].chat_messages()[1] == {"role": "user", "content": GREETING}
    assert users.requests[0].system_prompt == user_system_prompt(instruction)


def test_wrong_write_scores_zero(retail):
    agent = [Reply(tool_calls=[call("modify_pending_order_address", WRONG_ADDRESS)]), Reply(content="Updated.")]
    conv, _, _, got = play(retail, "test/17", agent, ["Change my address please.", "###STOP###"])
    assert conv.termination == "user_stop" and got["tb_r_actions"] == 0.0 and got["reward"] == 0.0


def test_stop_ends_the_episode_and_never_reaches_the_agent(retail):
    agent = [Reply(content="Anything else?")] * 5
    conv, player, users, got = play(retail, "test/24", agent, ["Hi.", "No, bye. ###STOP###", "never asked"])
    assert conv.termination == "user_stop" and len(player.views) == 1 and len(users.requests) == 2
    assert conv.trajectory[-1] == {"role": "user", "content": "No, bye. ###STOP###"}
    assert got["tb_done"] == 1.0


def test_tau2_stop_tokens_do_not_stop_a_tau_bench_user(retail):
    conv, player, _, _ = play(
        retail, "test/24", [Reply(content="ok")] * 3, ["Hi. ###TRANSFER###", "###OUT-OF-SCOPE###", "###STOP###"]
    )
    assert conv.termination == "user_stop" and len(player.views) == 2


def test_only_the_first_tool_call_runs(retail):
    agent = [
        Reply(
            tool_calls=[
                call("find_user_id_by_email", {"email": "mia.garcia2723@example.com"}),
                call("transfer_to_human_agents", TRANSFER),
            ]
        ),
        Reply(content="Found you."),
    ]
    conv, player, _, _ = play(retail, "test/10", agent, ["Hi.", "###STOP###"])
    first = conv.trajectory[1]
    assert [c["function"]["name"] for c in first["tool_calls"]] == ["find_user_id_by_email"]
    assert conv.trajectory[2]["content"] == "mia_garcia_4516" and conv.termination == "user_stop"
    assert [m["role"] for m in player.views[1][-2:]] == ["assistant", "tool"]


def test_transfer_ends_the_episode_at_once_and_is_scored(retail):
    agent = [Reply(tool_calls=[call("transfer_to_human_agents", TRANSFER)]), Reply(content="never played")]
    conv, player, users, got = play(retail, "test/10", agent, ["I want refunds swapped.", "###STOP###"])
    assert conv.termination == "transfer" and len(player.views) == 1 and len(users.requests) == 1
    assert got["reward"] == 1.0 and got["tb_transfer"] == 1.0 and got["termination"] == "transfer"


def test_agent_turn_budget_ends_as_max_steps_and_scores_zero(retail):
    # the gold write happens, but the episode is not done within 3 agent turns: tau-bench computes no reward
    agent = [
        Reply(tool_calls=[call("return_delivered_order_items", GOOD_RETURN)]),
        Reply(content="Done."),
        Reply(content="Anything else?"),
        Reply(content="never played"),
    ]
    conv, player, _, got = play(retail, "test/5", agent, ["Return it.", "ok", "hmm", "###STOP###"], max_num_steps=3)
    assert conv.termination == "max_steps" and conv.agent_turns == 3 and len(player.views) == 3
    assert got["tb_r_actions"] == 1.0 and got["tb_done"] == 0.0 and got["reward"] == 0.0


# ------------------------------------------------------------------------------------- simulate + eval
AGENT_SCRIPTS = {
    "[good]": [
        {"content": "Please confirm (yes/no)."},
        {"content": None, "tool_calls": [call("return_delivered_order_items", GOOD_RETURN)]},
        {"content": "The return is requested."},
    ],
    "[wrong]": [
        {"content": None, "tool_calls": [call("modify_pending_order_address", WRONG_ADDRESS)]},
        {"content": "Your address is updated."},
    ],
    "[transfer]": [{"content": None, "tool_calls": [call("transfer_to_human_agents", TRANSFER)]}],
}
USER_SCRIPTS = {  # keyed by a phrase of each task's instruction (in the user's system prompt)
    "mei_kovacs_8020": [
        {"content": "[good] I want to return a water bottle."},
        {"content": "Yes."},
        {"content": "Thanks! ###STOP###"},
    ],
    "Fatima Johnson": [{"content": "[wrong] Change my delivery address."}, {"content": "###STOP###"}],
    "mia_garcia_4516": [{"content": "[transfer] Refund each order to the other one's card."}],
}


def test_simulate_writes_tau_bench_results_and_eval_reports_pass_k(retail, tmp_path, capsys):
    from verl_rewards.cli import main

    out = tmp_path / "tb.json"
    with ChatServer(scripted(AGENT_SCRIPTS)) as agent, ChatServer(scripted(USER_SCRIPTS)) as user:
        argv = [
            "simulate",
            "--domain",
            "tau_bench/retail",
            "--data-dir",
            str(retail.data_dir.parent),
            "--split",
            "test",
            "--task-ids",
            "5",
            "17",
            "test/10",
            "--num-trials",
            "2",
            "--agent-base-url",
            agent.base_url,
            "--agent-model",
            "agent-m",
            "--user-base-url",
            user.base_url,
            "--user-model",
            "user-m",
            "--out",
            str(out),
            "--timeout-s",
            "5",
        ]
        assert main(argv) == 0
        first_user = next(r for r in user.requests if "mei_kovacs_8020" in r["messages"][0]["content"])
        agent_requests = len(agent.requests)
        assert main(argv) == 0  # resumed: nothing left to run
        assert len(agent.requests) == agent_requests
    assert first_user["messages"] == user_history(retail.task("test/5").instruction, [], [])
    assert "tools" not in first_user and first_user["model"] == "user-m"
    assert all(r["tools"] == retail.tools_info for r in agent.requests)
    results = json.loads(out.read_text())
    assert len(results) == 6 and {r["trial"] for r in results} == {0, 1}
    by_id = {r["info"]["id"]: r for r in results if r["trial"] == 0}
    assert {k: (v["reward"], v["info"]["termination"]) for k, v in by_id.items()} == {
        "test/5": (1.0, "user_stop"),
        "test/17": (0.0, "user_stop"),
        "test/10": (1.0, "transfer"),
    }
    good = by_id["test/5"]
    assert good["task_id"] == 5 and good["info"]["reward_info"]["info"]["r_actions"] == 1.0
    assert good["info"]["reward_info"]["info"]["gt_data_hash"] == retail.gold_hash("test/5")
    assert good["traj"][0] == {"role": "system", "content": retail.policy}
    tool = next(m for m in good["traj"] if m["role"] == "tool")
    assert tool["name"] == "return_delivered_order_items"
    capsys.readouterr()
    assert main(["eval", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    text = json.dumps(report)
    assert "tau_bench/retail" in text
    summary = next(s for s in _summaries(report) if s["source"] == "tau_bench/retail")
    assert summary["num_tasks"] == 3 and summary["num_trials"] == 6
    assert summary["pass_k"] == {"1": pytest.approx(2 / 3), "2": pytest.approx(2 / 3)}


def _summaries(report: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = [report]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "pass_k" in item and "source" in item:
                found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def test_failing_user_endpoint_ends_as_user_error_within_the_timeout(retail, tmp_path):
    from verl_rewards.cli import main

    out = tmp_path / "fail.json"
    with ChatServer(scripted(AGENT_SCRIPTS)) as agent, ChatServer(lambda body, n: ("status", 500)) as user:
        assert (
            main(
                [
                    "simulate",
                    "--domain",
                    "tau_bench/retail",
                    "--data-dir",
                    str(retail.data_dir.parent),
                    "--task-ids",
                    "test/5",
                    "test/17",
                    "--agent-base-url",
                    agent.base_url,
                    "--agent-model",
                    "a",
                    "--user-base-url",
                    user.base_url,
                    "--user-model",
                    "u",
                    "--out",
                    str(out),
                    "--timeout-s",
                    "0.5",
                    "--retries",
                    "1",
                ]
            )
            == 1  # every simulation failed at an endpoint: exit 1 naming the cause, results written
        )
        attempts = len(user.requests)
    assert attempts == 2 * 2, attempts  # two tasks, each user call tried twice (--retries 1), then it ends
    results = json.loads(out.read_text())
    assert [(r["reward"], r["info"]["termination"]) for r in results] == [(0.0, "user_error")] * 2
    assert all(r["info"]["end_cause"].startswith("user:") for r in results) and not agent.requests


def test_simulate_rejects_tau2_only_options_for_tau_bench(retail, tmp_path, capsys):
    from verl_rewards.cli import main

    assert (
        main(
            [
                "simulate",
                "--domain",
                "tau_bench/retail",
                "--max-errors",
                "3",
                "--agent-base-url",
                "http://x/v1",
                "--agent-model",
                "a",
                "--user-base-url",
                "http://x/v1",
                "--user-model",
                "u",
                "--out",
                str(tmp_path / "x.json"),
            ]
        )
        == 2
    )
    assert "--max-errors: tau2 options" in capsys.readouterr().err


def test_eval_reads_verl_dumps_of_tau_bench_rows(retail, tmp_path, capsys):
    from verl_rewards.cli import main

    good = [Reply(tool_calls=[call("return_delivered_order_items", GOOD_RETURN)]), Reply(content="Done.")]
    wrong = [Reply(tool_calls=[call("modify_pending_order_address", WRONG_ADDRESS)]), Reply(content="Done.")]
    rows = []
    for task_id, agent, stop in (
        ("test/5", good, True),
        ("test/5", good, False),
        ("test/17", wrong, True),
        ("test/17", wrong, True),
    ):
        user = ["Hi.", "###STOP###"] if stop else ["Hi.", "ok", "ok"]
        _, _, _, got = play(retail, task_id, agent, user, max_num_steps=2)
        rows.append(
            {
                "input": task_id,
                "output": "",
                "gts": task_id,
                "step": 3,
                "base_score": got["reward"],
                "task_id": task_id,
                **got,
            }
        )
    rows.append({**rows[0], "termination": "infrastructure_error", "base_score": 0.0})  # left out
    dump = tmp_path / "3.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["eval", str(dump), "--data-source", "tau_bench/retail", "--json"]) == 0
    summary = next(s for s in _summaries(json.loads(capsys.readouterr().out)) if s["source"] == "tau_bench/retail")
    assert [r["reward"] for r in rows[:4]] == [1.0, 0.0, 0.0, 0.0]  # test/5 trial 2 ran out of agent turns
    assert summary["num_trials"] == 4 and summary["infra_errors"] == 1
    assert summary["pass_k"] == {"1": pytest.approx(0.25), "2": pytest.approx(0.0)}
    assert summary["termination"] == {"max_steps": 0.25, "user_stop": 0.75}
