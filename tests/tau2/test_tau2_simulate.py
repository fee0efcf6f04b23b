"""``verl-rewards simulate`` with the agent and the user served by a chat-completions server on 127.0.0.1, and the
``openai`` NL-assertion judge against the same kind of server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.cli import main
from verl_rewards.engine.conversation import trial_seeds
from verl_rewards.engine.rules import GREETING
from verl_rewards.evaluation.readers import read_tau2_results

from chat_server import ChatServer, scripted, simulate_argv
from tau2_runs import RUNS
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
    return simulate_argv(server, out, "airline", root, "19", "--retry-delay", "0", *extra, timeout_s="5")


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
    assert source["pass_k"] == {"1": 1.0, "2": 1.0} and source["pass_at_k"] == {"1": 1.0, "2": 1.0}
    assert source["num_tasks"] == 1 and source["num_trials"] == 2


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
    # tau2's runner: the user model's call raised, so the simulation failed (after --max-retries more attempts)
    assert sim["termination_reason"] == "infrastructure_error" and sim["reward_info"] is None
    assert "HTTP 500" in sim["info"]["error"] and sim["info"]["failed_after_attempts"] == 4


def test_an_env_assertion_that_raises_fails_the_simulation_as_tau2s_runner_records_it(tmp_path):
    """mock ``create_task_1_with_env_assertions`` asserts on task_2, which an agent that only talks never creates:
    tau2's ``assert_task_status`` raises, the error escapes its evaluator and its runner records (``tau2 run
    --domain mock --task-ids create_task_1_with_env_assertions --max-retries 1``, tau2-bench 1.0.1):
    ``infrastructure_error``, no reward_info, ``info.error`` "Task task_2 not found", ``error_type`` "ValueError"."""

    def respond(body: dict[str, Any], n: int) -> Any:
        if body["model"] == "user-model":
            stop = any(m["role"] == "assistant" for m in body["messages"])
            return {"content": "Thanks. ###STOP###" if stop else "Hi, please create my task."}
        return {"content": "Sure."}

    root = require_domain("mock").data_dir.parent
    out = tmp_path / "run.json"
    with ChatServer(respond) as server:
        argv = [
            *("simulate", "--domain", "mock", "--data-dir", str(root)),
            *("--task-ids", "create_task_1", "create_task_1_with_env_assertions", "--max-retries", "1"),
            *("--retry-delay", "0", "--agent-base-url", server.base_url, "--agent-model", "agent-model"),
            *("--user-base-url", server.base_url, "--user-model", "user-model", "--out", str(out)),
        ]
        assert main(argv) == 0
    sims = {s["task_id"]: s for s in json.loads(out.read_text())["simulations"]}
    assert sims["create_task_1"]["termination_reason"] == "user_stop"
    assert sims["create_task_1"]["reward_info"]["reward"] == 0.0
    failed = sims["create_task_1_with_env_assertions"]
    assert failed["termination_reason"] == "infrastructure_error" and failed["reward_info"] is None
    assert failed["messages"] == []
    info = failed["info"]
    assert (info["error"], info["error_type"], info["failed_after_attempts"]) == (
        "Task task_2 not found",
        "ValueError",
        2,
    )


# ------------------------------------------------------------------------------------------------ NL judge
RETAIL_TASK = "59"


def _grades(met: list[bool], assertions: list[str]) -> dict[str, Any]:
    results = [
        {"expectedOutcome": a, "reasoning": "r", "metExpectation": m} for a, m in zip(assertions, met, strict=True)
    ]
    return {"content": json.dumps({"results": results})}


def test_openai_judge_grades_nl_assertions_and_flags_malformed_replies():
    from verl_rewards.engine.client import Endpoint
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


# ------------------------------------------------------------------------------ what tau2 records (issue 22)
def test_simulate_records_results_as_tau2_writes_them(tmp_path):
    """Costs 0.0 (never null), per-message usage from the endpoint's ``usage``, per-message timestamps, ``[]`` for
    an empty assertion list, component notes in ``info``, action dumps with ``requestor`` / ``compare_args``, the
    model as configured (provider prefix kept; the endpoint is sent the bare name), ``git_commit`` "unknown",
    ``simulation_index`` null. tau2's own ``compute_metrics`` was run on such a file by hand (README, Benchmarks)."""
    usage = {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333}
    agent = {k: [dict(turn, usage=usage) for turn in v] for k, v in AGENT.items()}
    out = tmp_path / "run.json"
    with ChatServer(both_sides(agent)) as server:
        argv = args(server, out)
        argv[argv.index("agent-model")] = "openai/agent-model"
        assert main(argv) == 0
        assert {r["model"] for r in server.requests} == {"agent-model", "user-model"}
    results = json.loads(out.read_text())
    assert results["info"]["git_commit"] == "unknown" and results["simulation_index"] is None
    assert results["info"]["agent_info"]["llm"] == "openai/agent-model"
    (sim,) = results["simulations"]
    assert sim["agent_cost"] == 0.0 and sim["user_cost"] == 0.0
    messages = sim["messages"]
    agent_msgs = [m for m in messages if m["role"] == "assistant"]
    assert [m["usage"] for m in agent_msgs] == [None] + [{"prompt_tokens": 321, "completion_tokens": 12}] * 4
    assert all(m["cost"] == 0.0 for m in messages if m["role"] != "tool")
    # the user endpoint sent no usage: litellm (and so tau2) records 0 tokens
    assert all(m["usage"] == {"completion_tokens": 0, "prompt_tokens": 0} for m in messages if m["role"] == "user")
    assert [m["raw_data"]["usage"]["total_tokens"] for m in agent_msgs[1:]] == [333] * 4
    stamps = [m["timestamp"] for m in messages]
    assert all(isinstance(t, str) and t for t in stamps) and stamps == sorted(stamps)
    assert sim["info"] is None  # tau2 keeps nothing else per simulation
    info = sim["reward_info"]
    assert info["env_assertions"] == [] and info["nl_assertions"] is None and info["communicate_checks"] is None
    assert info["action_checks"] == [
        {
            "action": {
                "action_id": "19_0",
                "requestor": "assistant",
                "name": "cancel_reservation",
                "arguments": {"reservation_id": "Z7GOZK"},
                "info": None,
                "compare_args": None,
            },
            "action_match": True,
            "action_reward": 1.0,
            "tool_type": "write",
        }
    ]
    assert info["reward_breakdown"] == {"DB": 1.0, "COMMUNICATE": 1.0}
    assert info["info"] == {
        "env": None,
        "nl": None,
        "communicate": {"note": "No communicate_info to evaluate"},
        "action": None,
    }


def test_reward_info_keeps_justifications_and_notes():
    """Communicate checks say where the string was found, in tau2's words; NL checks keep the judge's reasoning;
    a premature stop and a task without actions get tau2's notes."""
    from verl_rewards.tau2 import evaluate_trajectory
    from verl_rewards.tau2.normal.simulate import reward_info
    from verl_rewards.tau2.scripted import gold_trajectory

    retail = require_domain("retail")
    task = retail.task(RETAIL_TASK)
    assertions = list(task.evaluation_criteria.nl_assertions)
    trajectory = gold_trajectory(retail, RETAIL_TASK)
    result = evaluate_trajectory(retail, RETAIL_TASK, trajectory, "user_stop", judge=lambda m, a: [True] * len(a))
    reasons = [f"because {i}" for i in range(len(assertions))]
    info = reward_info(task, result, trajectory, reasons)
    assert info["nl_assertions"] == [
        {"nl_assertion": a, "met": True, "justification": r} for a, r in zip(assertions, reasons, strict=True)
    ]
    assert info["reward_breakdown"] == {"DB": 1.0, "NL_ASSERTION": 1.0} and info["reward"] == 1.0
    early = evaluate_trajectory(retail, RETAIL_TASK, trajectory, "max_steps")
    assert reward_info(task, early, trajectory) == {
        "reward": 0.0,
        "db_check": None,
        "env_assertions": None,
        "action_checks": None,
        "nl_assertions": None,
        "communicate_checks": None,
        "reward_basis": None,
        "reward_breakdown": None,
        "info": {"note": "Simulation terminated prematurely. Termination reason: max_steps"},
    }
    said = [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": "What are the two t-shirts made of?"},
        {"role": "assistant", "content": "One is Polyester, the other cotton."},
    ]
    shirts = retail.task("24")  # no gold actions; communicate_info ["polyester", "cotton"]
    checks = reward_info(shirts, evaluate_trajectory(retail, "24", said, "user_stop", nl_policy="skip"), said)
    assert checks["communicate_checks"] == [
        {
            "info": word,
            "met": True,
            "justification": f"Information '{word}' communicated in the message:\n '{said[2]['content']}'",
        }
        for word in ("polyester", "cotton")
    ]
    assert checks["action_checks"] is None and checks["info"]["action"] == {"note": "No actions to evaluate"}
    assert checks["info"]["nl"] == {"note": "Not graded: no NL-assertion judge (simulate --skip-nl-assertions)"}
    missing = reward_info(shirts, evaluate_trajectory(retail, "24", said[:2], "user_stop", nl_policy="skip"), said[:2])
    assert [c["justification"] for c in missing["communicate_checks"]] == [
        "Information 'polyester' not communicated.",
        "Information 'cotton' not communicated.",
    ]


@pytest.mark.parametrize(
    "bad_turn, cause",
    [
        (
            {"content": None, "tool_calls": [{"name": "get_reservation_details", "arguments": '{"reservation_id": '}]},
            "not a JSON object",
        ),
        (
            {"content": None, "tool_calls": [{"name": "get_reservation_details", "arguments": "[1, 2]"}]},
            "not a JSON object",
        ),
        ({"content": ""}, "empty message"),
    ],
)
def test_simulate_ends_on_agent_message_errors_as_tau2_does(tmp_path, capsys, bad_turn, cause):
    """Malformed tool-call JSON or an empty agent message: ``infrastructure_error`` (tau2's runner), no
    reward_info, left out of pass^k; the training rule (``agent_error``) scores it 0 instead."""
    agent = {"cancel reservation Z7GOZK": [bad_turn]}
    out = tmp_path / "run.json"
    with ChatServer(both_sides(agent)) as server:
        assert main(args(server, out)) == 1  # the only simulation ended in infrastructure_error: exit 1, file written
    assert "first cause (infrastructure_error)" in capsys.readouterr().err
    (sim,) = json.loads(out.read_text())["simulations"]
    assert sim["termination_reason"] == "infrastructure_error" and sim["reward_info"] is None
    assert cause in sim["info"]["error"] and sim["info"]["error_type"] == "InfrastructureError"
    assert sim["messages"] == []  # tau2's record of a simulation that failed
    capsys.readouterr()
    assert main(["eval", str(out), "--json"]) == 0
    source = json.loads(capsys.readouterr().out)["inputs"][0]["sources"]["tau2/airline"]
    assert source["num_trials"] == 0 and source["infra_errors"] == 1


def test_agent_message_error_rules_side_by_side():
    """The same malformed message under the two named rules of the conversation engine."""
    import asyncio

    from verl_rewards.engine.conversation import Conversation, Reply
    from verl_rewards.engine.users import ScriptedUser

    domain = require_domain("airline")
    bad = Reply(content=None, tool_calls=[{"name": "get_reservation_details", "arguments": "{oops"}])

    def play(rule: str) -> Conversation:
        conv = Conversation(
            domain.make_env("19"),
            ScriptedUser([Reply(content="Cancel Z7GOZK please.")]),
            user_system_prompt="u",
            agent_message_errors=rule,
        )

        async def go() -> None:
            await conv.start()
            await conv.agent_turn(bad)

        asyncio.run(go())
        return conv

    tau2 = play("infrastructure_error")
    assert tau2.termination == "infrastructure_error" and len(tau2.trajectory) == 2 and "{oops" in tau2.cause
    training = play("agent_error")
    assert (
        training.termination == "agent_error"
        and training.trajectory[-1]["tool_calls"][0]["function"]["arguments"] == "{oops"
    )
    assert len(training.message_info) == len(training.trajectory) == 3
    with pytest.raises(ValueError, match="agent_message_errors"):
        Conversation(domain.make_env("19"), ScriptedUser([]), user_system_prompt="u", agent_message_errors="zero")


def test_training_names_its_agent_message_rule():
    from verl_rewards.tau2.normal.agent_loop import NormalSettings

    user = {"backend": "scripted"}
    assert NormalSettings.from_mapping({"user": user}).agent_message_errors == "agent_error"
    tau2 = NormalSettings.from_mapping({"user": user, "agent_message_errors": "infrastructure_error"})
    assert tau2.agent_message_errors == "infrastructure_error"
    with pytest.raises(ValueError, match="agent_message_errors must be one of"):
        NormalSettings.from_mapping({"user": user, "agent_message_errors": "skip"})


# ------------------------------------------------------------------------------ no judge (issue 32 item 5)
def _retail_args(server: ChatServer, out: Path, *extra: str) -> list[str]:
    argv = args(server, out, *extra, root=require_domain("retail").data_dir.parent)
    argv[argv.index("airline")] = "retail"
    argv[argv.index("19")] = "36"
    return argv


def test_a_run_needing_nl_grades_without_a_judge_is_refused_at_start(tmp_path, capsys):
    """tau2 grades NL assertions with its default judge and, with none reachable, records the simulation as
    infrastructure_error (tau2_runs.json ``retail_no_judge``: task 36). A run of ours that cannot grade them refuses
    to start, naming the judge's flags and the explicit opt-out."""
    (theirs,) = RUNS["retail_no_judge"]["results"]["simulations"]
    assert theirs["task_id"] == "36" and theirs["termination_reason"] == "infrastructure_error"
    out = tmp_path / "run.json"
    with ChatServer(lambda body, n: {"content": "###STOP###"}) as server:
        assert main(_retail_args(server, out)) == 2
        played = list(server.requests)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "36" in err and "NL_ASSERTION" in err
    assert "--judge-model" in err and "--judge-base-url" in err and "--skip-nl-assertions" in err
    assert played == [] and not out.exists()


def test_skipping_nl_assertions_is_explicit_and_recorded(tmp_path, capsys):
    out = tmp_path / "run.json"
    with ChatServer(lambda body, n: {"content": "###STOP###"}) as server:
        assert main(_retail_args(server, out, "--skip-nl-assertions")) == 0
    printed = capsys.readouterr().out
    results = json.loads(out.read_text())
    assert results["info"]["nl_assertions"].startswith("skipped (--skip-nl-assertions)")
    assert "NL assertions skipped (--skip-nl-assertions)" in printed
    (sim,) = results["simulations"]
    reward = sim["reward_info"]
    assert reward["nl_assertions"] is None and "NL_ASSERTION" not in reward["reward_breakdown"]
    assert reward["info"]["nl"] == {"note": "Not graded: no NL-assertion judge (simulate --skip-nl-assertions)"}


@pytest.mark.parametrize(
    ("judge_says", "termination", "nl"),
    [({"results": []}, "user_stop", []), ("not json", "infrastructure_error", None)],
    ids=["no-results", "not-json"],
)
def test_simulate_reads_the_judges_reply_as_tau2_does(tmp_path, judge_says, termination, nl):
    """tau2 (``evaluate_nl_assertions``): the reply's results as given (none: NL scores 1.0); a reply it cannot
    read raises, which fails the attempt (retried, then infrastructure_error). The reward manager stays stricter
    (``test_openai_judge_grades_nl_assertions_and_flags_malformed_replies``)."""

    def respond(body: dict[str, Any], n: int) -> Any:
        if body["model"] == "judge-model":
            return {"content": judge_says if isinstance(judge_says, str) else json.dumps(judge_says)}
        return {"content": "###STOP###"}

    out = tmp_path / "run.json"
    with ChatServer(respond) as server:
        main(_retail_args(server, out, "--judge-model", "judge-model", "--max-retries", "0"))
    (sim,) = json.loads(out.read_text())["simulations"]
    assert sim["termination_reason"] == termination
    if nl is None:
        assert sim["info"]["error_type"] == "JudgeError" and "cannot be read" in sim["info"]["error"]
    else:
        assert (
            sim["reward_info"]["nl_assertions"] == nl and sim["reward_info"]["reward_breakdown"]["NL_ASSERTION"] == 1.0
        )
