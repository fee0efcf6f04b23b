"""``verl-rewards simulate``: what stops it at start (model names every endpoint must serve, a malformed ``--out``)
and what fails it at the end (no simulation got past an endpoint), and how a malformed *user* reply is classified.
Real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from verl_rewards.cli import main

from chat_server import ChatServer, simulate_argv
from tau2_runs import RUNS, flag
from tau2_support import require_domain

AGENT_SAYS_HI = {"content": "Hello, how can I help?"}


def sim_args(server: ChatServer, out, *extra: str, agent_model: str = "agent-model", user_model: str = "user-model"):
    root = require_domain("airline").data_dir.parent
    return simulate_argv(
        server,
        out,
        "airline",
        root,
        "19",
        "--retry-delay",
        "0",
        *extra,
        timeout_s="5",
        agent_model=agent_model,
        user_model=user_model,
    )


@pytest.mark.parametrize(
    "raw",
    [
        b'{"choices": [{"message": {"content": "hi"}, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}",
        json.dumps({"choices": [{"message": {"content": "hi", "tool_calls": 5}}]}).encode(),
        json.dumps({"choices": [{"message": {"content": "hi", "tool_calls": [5]}}]}).encode(),
    ],
    ids=["deeply-nested-json", "tool_calls-a-number", "tool_call-a-number"],
)
def test_a_malformed_user_reply_fails_the_attempt_and_the_simulation_as_tau2s_runner_records_it(tmp_path, raw):
    """tau2: the user model's call raises, its runner plays the simulation again (--max-retries), then records it as
    infrastructure_error with no messages and the error in ``info`` (tau2_runs.json ``retail_no_judge``)."""
    users = []

    def respond(body: dict[str, Any], n: int) -> Any:
        if body["model"] == "user-model":
            users.append(n)
            return ("raw", raw)
        return AGENT_SAYS_HI

    out = tmp_path / "run.json"
    with ChatServer(respond) as server:
        main(sim_args(server, out, "--max-retries", "1", "--retry-delay", "0"))
    (sim,) = json.loads(out.read_text())["simulations"]
    assert len(users) == 2  # one attempt, one retry
    assert sim["termination_reason"] == "infrastructure_error"
    assert sim["messages"] == [] and sim["reward_info"] is None
    info = sim["info"]
    assert info["failed_after_attempts"] == 2 and info["error"].startswith("user: ")
    assert "malformed reply" in info["error"] or "not JSON" in info["error"]
    theirs = RUNS["retail_no_judge"]["results"]["simulations"][0]
    assert theirs["termination_reason"] == "infrastructure_error" and theirs["messages"] == []
    assert sorted(info) == sorted(theirs["info"])


@pytest.mark.parametrize(
    ("flag", "typo"),
    [("agent_model", "my-agnet"), ("user_model", "my-usr")],
)
def test_a_model_name_the_endpoint_does_not_serve_fails_at_start_with_the_endpoints_message(
    tmp_path, capsys, flag, typo
):
    out = tmp_path / "run.json"
    with ChatServer(lambda body, n: AGENT_SAYS_HI, models={"agent-model", "user-model"}) as server:
        code = main(sim_args(server, out, **{flag: typo}))
        played = list(server.requests)
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and f"The model `{typo}` does not exist." in err and "HTTP 404" in err
    assert ("agent" if flag == "agent_model" else "user") in err
    assert played == [] and not out.exists()  # nothing ran, nothing written


def test_a_judge_model_typo_fails_at_start(tmp_path, capsys):
    out = tmp_path / "run.json"
    with ChatServer(lambda body, n: AGENT_SAYS_HI, models={"agent-model", "user-model"}) as server:
        code = main(sim_args(server, out, "--judge-model", "judgee"))
    err = capsys.readouterr().err
    assert code == 2 and "judge" in err and "The model `judgee` does not exist." in err


def test_one_cheap_probe_per_endpoint_and_model(tmp_path):
    out = tmp_path / "run.json"
    with ChatServer(lambda body, n: {"content": "###STOP###"}) as server:
        assert main(sim_args(server, out, "--judge-model", "judge-model")) in (0, 1)
        probes = list(server.probes)
    assert sorted(p["model"] for p in probes) == ["agent-model", "judge-model", "user-model"]
    assert all(p["max_tokens"] == 1 for p in probes)


def test_the_probe_names_the_model_as_the_conversation_and_litellm_do(tmp_path, capsys):
    """``--agent-model openai/agent-model`` (tau2's spelling): litellm sends ``agent-model`` (recorded in
    tau2_runs.json), the conversation does, and so must the probe (it sent the prefix: a 404 and exit 2)."""
    run = RUNS["mock"]
    assert flag(run["command"], "--agent-llm") == ["openai/agent-model"]
    assert flag(run["command"], "--user-llm") == ["openai/user-model"]
    litellm_models = {ex["request"]["model"] for ex in run["exchanges"]}
    assert litellm_models == {"agent-model", "user-model"}
    out = tmp_path / "run.json"
    with ChatServer(lambda body, n: {"content": "###STOP###"}, models=litellm_models) as server:
        code = main(sim_args(server, out, agent_model="openai/agent-model", user_model="hosted_vllm/user-model"))
        probes, requests = list(server.probes), list(server.requests)
    assert code in (0, 1), capsys.readouterr().err
    assert sorted(p["model"] for p in probes) == ["agent-model", "user-model"]
    assert {r["model"] for r in requests} <= litellm_models


@pytest.mark.parametrize(
    ("probe", "said"),
    [
        (("redirect", "https://example.invalid/login"), "HTTP 302 to https://example.invalid/login"),
        (("html", b"<!DOCTYPE html><html><body>Welcome to nginx!</body></html>"), "Welcome to nginx!"),
        (("raw", b'{"object": "list", "data": []}'), "not a chat completion"),
    ],
    ids=["302", "html-200", "json-200-not-a-completion"],
)
def test_a_probe_answered_by_something_else_than_a_chat_completion_fails_at_start(tmp_path, capsys, probe, said):
    out = tmp_path / "run.json"
    with ChatServer(lambda body, n: AGENT_SAYS_HI, probe=probe) as server:
        code = main(sim_args(server, out))
        played = list(server.requests)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "the agent endpoint" in err and said in err and "base URL" in err
    assert played == [] and not out.exists()


def test_a_run_where_every_simulation_failed_at_an_endpoint_exits_non_zero_with_the_first_cause(tmp_path, capsys):
    def respond(body: dict[str, Any], n: int) -> Any:
        return ("status", 400) if body["model"] == "user-model" else AGENT_SAYS_HI

    out = tmp_path / "run.json"
    with ChatServer(respond) as server:
        code = main(sim_args(server, out, "--num-trials", "2"))
    err = capsys.readouterr().err
    assert code == 1
    assert "every simulation (2) ended in user_error / infrastructure_error" in err and "HTTP 400" in err
    assert len(json.loads(out.read_text())["simulations"]) == 2  # the results are still written


@pytest.mark.parametrize(
    "bad",
    [
        {"task_id": "19", "trial": "zero", "termination_reason": "user_stop", "reward_info": {"reward": 1.0}},
        {"task_id": "19", "trial": 0, "reward_info": {"reward": 1.0}},
        {"task_id": "19", "trial": 0, "termination_reason": "user_stop", "reward_info": 7},
        {"task_id": ["19"], "trial": 0, "termination_reason": "user_stop", "reward_info": {"reward": 1.0}},
        5,
    ],
    ids=["trial-text", "no-termination", "reward_info-number", "task_id-list", "not-an-object"],
)
def test_resuming_from_a_parseable_but_malformed_out_is_a_one_line_error_before_anything_runs(tmp_path, capsys, bad):
    out = tmp_path / "run.json"
    with ChatServer(lambda body, n: {"content": "###STOP###"}) as server:
        assert main(sim_args(server, out)) == 0
        first = len(server.requests)
        results = json.loads(out.read_text())
        results["simulations"].append(bad)
        out.write_text(json.dumps(results))
        before = out.read_text()
        capsys.readouterr()
        code = main(sim_args(server, out))
        played = len(server.requests) - first
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--out" in err and "simulations[1]" in err
    assert out.read_text() == before  # left as it was
    assert played == 0


def test_tau_bench_resume_from_a_malformed_out_is_a_one_line_error_before_anything_runs(tmp_path, capsys):
    from tau_bench_support import require_domain as require_tau_bench

    retail = require_tau_bench("retail")
    out = tmp_path / "tb.json"
    with ChatServer(lambda body, n: {"content": "###STOP###"}) as server:
        argv = sim_args(server, out)
        argv[argv.index("airline")] = "tau_bench/retail"
        argv[argv.index("--data-dir") + 1] = str(retail.data_dir.parent)
        argv[argv.index("19")] = "test/5"
        assert main(argv) == 0
        first = len(server.requests)
        results = json.loads(out.read_text())
        results[0]["trial"] = "zero"
        out.write_text(json.dumps(results))
        capsys.readouterr()
        assert main(argv) == 2
        played = len(server.requests) - first
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "entry [0] has trial 'zero'" in err
    assert played == 0
