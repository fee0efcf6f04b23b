"""``verl-rewards simulate`` with the agent and the user served by a chat-completions server on 127.0.0.1, and the
``openai`` NL-assertion judge against the same kind of server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.cli import main
from verl_rewards.evaluation.readers import read_tau2_results
from verl_rewards.tau2.normal.conversation import trial_seeds
from verl_rewards.tau2.normal.prompts import GREETING

from chat_server import ChatServer, scripted
from tau2_support import require_domain

USER = {  # keyed by a string of the task's scenario
    "olivia_gonzalez_2305": [
        {"content": "I want to cancel reservation Z7GOZK."},
        {"content": "Yes, go ahead."},
        {"content": "Thanks! ###STOP###"},
    ],
}
AGENT = {  # keyed by the user's opening line
    "cancel reservation Z7GOZK": [
        {
            "content": None,
            "tool_calls": [{"name": "get_reservation_details", "arguments": {"reservation_id": "Z7GOZK"}}],
        },
        {"content": "Z7GOZK can be cancelled. Do you confirm (yes/no)?"},
        {"content": None, "tool_calls": [{"name": "cancel_reservation", "arguments": {"reservation_id": "Z7GOZK"}}]},
        {"content": "Your reservation Z7GOZK is cancelled."},
    ],
}


def both_sides(agent: dict[str, list[Any]] = AGENT, user: dict[str, list[Any]] = USER):
    play_agent, play_user = scripted(agent, skip_assistant=1), scripted(user)
    return lambda body, n: (play_agent if body["model"] == "agent-model" else play_user)(body, n)


def args(server: ChatServer, out: Path, *extra: str, root: Path | None = None) -> list[str]:
    root = root or require_domain("airline").data_dir.parent
    return [
        "simulate",
        "--domain",
        "airline",
        "--data-dir",
        str(root),
        "--task-ids",
        "19",
        "--agent-base-url",
        server.base_url,
        "--agent-model",
        "agent-model",
        "--user-base-url",
        server.base_url,
        "--user-model",
        "user-model",
        "--timeout-s",
        "5",
        "--retries",
        "0",
        "--out",
        str(out),
        *extra,
    ]


def test_simulate_writes_tau2_results_that_eval_reads(tmp_path, capsys):
    out = tmp_path / "run.json"
    with ChatServer(both_sides()) as server:
        assert main(args(server, out, "--num-trials", "2")) == 0
    assert "2 simulations, mean reward 1.000" in capsys.readouterr().out
    results = json.loads(out.read_text())
    assert set(results) >= {"info", "tasks", "simulations"}
    info = results["info"]
    assert info["num_trials"] == 2 and info["seed"] == 300 and info["max_steps"] == 200 and info["max_errors"] == 10
    assert info["agent_info"]["llm"] == "agent-model" and info["user_info"]["llm"] == "user-model"
    assert info["environment_info"]["domain_name"] == "airline"
    assert [t["id"] for t in results["tasks"]] == ["19"]
    sims = results["simulations"]
    assert sorted((s["task_id"], s["trial"], s["seed"]) for s in sims) == [
        ("19", k, seed) for k, seed in enumerate(trial_seeds(300, 2))
    ]
    for sim in sims:
        assert sim["termination_reason"] == "user_stop" and sim["reward_info"]["reward"] == 1.0
        assert sim["reward_info"]["reward_basis"] == ["DB", "COMMUNICATE"]
        assert sim["reward_info"]["db_check"] == {"db_match": True, "db_reward": 1.0}
        messages = sim["messages"]
        assert messages[0]["role"] == "assistant" and messages[0]["content"] == GREETING
        assert [m["turn_idx"] for m in messages] == list(range(len(messages)))
        call = messages[2]["tool_calls"][0]
        assert call["name"] == "get_reservation_details" and call["arguments"] == {"reservation_id": "Z7GOZK"}
        assert call["requestor"] == "assistant" and messages[3]["id"] == call["id"]
        assert messages[3]["role"] == "tool" and messages[3]["requestor"] == "assistant" and not messages[3]["error"]
    # what each endpoint received: the agent its system prompt, the greeting as assistant, its tools, the seed
    agent_requests = [r for r in server.requests if r["model"] == "agent-model"]
    first = agent_requests[0]
    assert [m["role"] for m in first["messages"]] == ["system", "assistant", "user"]
    assert first["messages"][0]["content"].startswith("<instructions>") and first["tool_choice"] == "auto"
    assert {t["function"]["name"] for t in first["tools"]} >= {"cancel_reservation"}
    assert {r["seed"] for r in agent_requests} == set(trial_seeds(300, 2))
    user_requests = [r for r in server.requests if r["model"] == "user-model"]
    assert all("tools" not in r for r in user_requests)
    # our eval reads it as a tau2 run: one task, two trials, pass^1 = pass^2 = 1
    evalset = read_tau2_results(out)
    runs = evalset.runs["tau2/airline"]
    assert len(runs) == 2 and all(r.reward == 1.0 and r.termination == "user_stop" for r in runs)
    assert main(["eval", str(out), "--json"]) == 0
    source = json.loads(capsys.readouterr().out)["inputs"][0]["sources"]["tau2/airline"]
    assert source["pass_k"] == {"1": 1.0, "2": 1.0} and source["num_tasks"] == 1 and source["num_trials"] == 2


def test_simulate_resumes_an_interrupted_run(tmp_path):
    out = tmp_path / "run.json"
    with ChatServer(both_sides()) as server:
        assert main(args(server, out, "--num-trials", "2")) == 0
        results = json.loads(out.read_text())
        kept = next(s for s in results["simulations"] if s["trial"] == 0)
        results["simulations"] = [kept]  # as if the run stopped after one simulation
        out.write_text(json.dumps(results))
        before = len(server.requests)
        assert main(args(server, out, "--num-trials", "2")) == 0
        played = server.requests[before:]
    resumed = json.loads(out.read_text())["simulations"]
    assert sorted(s["trial"] for s in resumed) == [0, 1] and kept in resumed
    assert {r["seed"] for r in played} == {trial_seeds(300, 2)[1]}  # only the missing trial ran


def test_simulate_configuration_errors_exit_2(tmp_path, capsys):
    out = tmp_path / "run.json"
    with ChatServer(both_sides()) as server:
        assert main(args(server, out, "--task-ids", "no-such-task")) == 2
        assert "unknown task id" in capsys.readouterr().err
        bad_domain = args(server, out)
        bad_domain[bad_domain.index("airline")] = "nope"
        assert main(bad_domain) == 2 and "unknown tau2 domain" in capsys.readouterr().err
        out.write_text(json.dumps({"info": {"num_trials": 5}, "tasks": [], "simulations": []}))
        assert main(args(server, out)) == 2 and "other settings" in capsys.readouterr().err
        port = server.httpd.server_address[1]
    closed = args(server, tmp_path / "other.json")
    closed[closed.index("--agent-base-url") + 1] = f"http://127.0.0.1:{port}/v1"
    assert main(closed) == 2 and "unreachable" in capsys.readouterr().err
    assert not (tmp_path / "other.json").exists()


def test_simulate_records_endpoint_failures_per_simulation(tmp_path):
    def respond(body: dict[str, Any], n: int) -> Any:
        return ("status", 500) if body["model"] == "user-model" else {"content": "hi"}

    out = tmp_path / "run.json"
    with ChatServer(respond) as server:
        assert main(args(server, out)) == 1  # every simulation failed at an endpoint: exit 1, results still written
    (sim,) = json.loads(out.read_text())["simulations"]
    assert sim["termination_reason"] == "user_error" and sim["reward_info"]["reward"] == 0.0
    assert "HTTP 500" in sim["info"]["end_cause"]


# ------------------------------------------------------------------------------------------------ NL judge
RETAIL_TASK = "59"


def _grades(met: list[bool], assertions: list[str]) -> dict[str, Any]:
    results = [
        {"expectedOutcome": a, "reasoning": "r", "metExpectation": m} for a, m in zip(assertions, met, strict=True)
    ]
    return {"content": json.dumps({"results": results})}


def test_openai_judge_grades_nl_assertions_and_flags_malformed_replies():
    from verl_rewards.tau2.normal.client import Endpoint
    from verl_rewards.tau2.normal.judge import JudgeError, OpenAIJudge, judge_messages

    assertions = ["The agent cancels the order.", "The agent refunds to the gift card."]
    replies = iter(
        [
            _grades([True, True], assertions),
            _grades([True, False], assertions),
            {"content": "I think it was fine."},
            {"content": json.dumps({"results": []})},
        ]
    )
    with ChatServer(lambda body, n: next(replies)) as server:
        judge = OpenAIJudge(Endpoint(base_url=server.base_url, model="judge", timeout_s=5, retries=0))
        convo = [{"role": "user", "content": "cancel please"}, {"role": "assistant", "content": "done"}]
        assert judge(convo, assertions) == [True, True]
        assert judge(convo, assertions) == [True, False]
        with pytest.raises(JudgeError, match="not JSON"):
            judge(convo, assertions)
        with pytest.raises(JudgeError, match="graded 0 outcome"):  # upstream would score this 1.0
            judge(convo, assertions)
    request = server.requests[0]
    assert request["model"] == "judge" and request["temperature"] == 0.0
    assert request["messages"] == judge_messages(convo, assertions)
    assert "user: cancel please\nassistant: done" in request["messages"][1]["content"]
    assert str(assertions) in request["messages"][1]["content"]


def test_tau2_reward_with_the_openai_judge(tmp_path):
    from verl_rewards.tau2.normal.judge import JudgeError
    from verl_rewards.tau2.scripted import gold_trajectory
    from verl_rewards.tau2.verl_scorer import Tau2Options, score_tau2

    domain = require_domain("retail")
    task = domain.task(RETAIL_TASK)
    assertions = list(task.evaluation_criteria.nl_assertions)
    trajectory = gold_trajectory(domain, RETAIL_TASK)
    replies = iter(
        [
            _grades([True] * len(assertions), assertions),
            _grades([False] * len(assertions), assertions),
            {"content": "not json"},
        ]
    )
    with ChatServer(lambda body, n: next(replies)) as server:
        options = Tau2Options.from_config(
            {
                "data_dir": str(domain.data_dir.parent),
                "judge": {
                    "backend": "openai",
                    "base_url": server.base_url,
                    "model": "judge",
                    "timeout_s": 5,
                    "retries": 0,
                },
            }
        )
        extra = {"task_id": RETAIL_TASK, "termination": "user_stop"}
        good = score_tau2(trajectory, "tau2/retail", RETAIL_TASK, extra, options)
        assert good["reward"] == 1.0 and good["tau2_nl_assertion"] == 1.0 and "NL_ASSERTION" in good["tau2_basis"]
        bad = score_tau2(trajectory, "tau2/retail", RETAIL_TASK, extra, options)
        assert bad["reward"] == 0.0 and bad["tau2_nl_assertion"] == 0.0 and bad["tau2_db"] == 1.0
        with pytest.raises(JudgeError):  # the reward layer turns this into reward_error=1 and the fallback
            score_tau2(trajectory, "tau2/retail", RETAIL_TASK, extra, options)
