"""tau2 evaluator: every component and its edge cases (reward_semantics §3), mock behaviours, real domains."""

from __future__ import annotations

import json
from enum import Enum

import pytest

from verl_rewards.tau2 import evaluate_trajectory
from verl_rewards.tau2.errors import (
    EnvAssertionError,
    NLJudgeRequiredError,
    ReplayMismatchError,
    TrajectoryError,
)
from verl_rewards.tau2.scripted import gold_calls, gold_trajectory, scripted_trajectory

from repo_paths import REPO
from tau2_support import call, exchange, mock_task, require_domain, say, synthetic_mock, tool

CREATE = {"user_id": "user_1", "title": "Important Meeting"}
UPDATE_1 = {"task_id": "task_1", "status": "completed"}
UPDATE_2 = {"task_id": "task_2", "status": "completed"}


@pytest.fixture(scope="module")
def mock():
    return require_domain("mock")


def ev(domain, task_id, messages, **kw):
    kw.setdefault("nl_policy", "skip")
    return evaluate_trajectory(domain, task_id, messages, **kw)


# ------------------------------------------------------------------------------- gold trajectories (mock)
@pytest.mark.parametrize(
    "task_id,expected",
    [
        ("create_task_1", 1.0),
        ("create_task_1_with_env_assertions", 1.0),
        ("create_task_1_nl_eval", 1.0),
        ("update_task_1", 1.0),
        ("update_task_with_message_history", 1.0),
        ("update_task_with_initialization_data", 1.0),  # final message states the two sentences verbatim
        ("update_task_with_initialization_actions", 1.0),
        ("update_task_with_history_and_env_assertions", 0.0),  # no gold actions: gold play never completes task_2
        ("update_task_with_user_tools", 0.0),  # unsatisfiable at HEAD (E12/E13)
        ("impossible_task_1", 1.0),
    ],
)
def test_mock_gold_trajectories(mock, task_id, expected):
    messages = gold_trajectory(mock, task_id)
    result = ev(mock, task_id, messages, strict_replay=True)
    assert result.reward == expected
    assert result.db_match is True
    assert result.replay is None or result.replay["mismatches"] == []
    json.dumps(result.to_dict())


def test_history_and_env_assertions_needs_the_update(mock):
    tid = "update_task_with_history_and_env_assertions"
    good = scripted_trajectory(mock, tid, [("update_task_status", UPDATE_2)])
    r = ev(mock, tid, good)
    assert r.reward == 1.0 and r.breakdown == {"ENV_ASSERTION": 1.0}
    assert r.db_match is False  # reported, but DB is not in this task's basis


def test_full_trajectory_with_history_prefix_scores_the_same(mock):
    tid = "update_task_with_message_history"
    task = mock.task(tid)
    body = scripted_trajectory(mock, tid, [("update_task_status", UPDATE_2)])
    history = task.raw["initial_state"]["message_history"]
    full = [{"role": "system", "content": "policy"}] + history + body
    for messages in (body, full):
        r = ev(mock, tid, messages, strict_replay=True)
        assert r.reward == 1.0 and r.db_match
        assert r.predicted_env.agent_db.size("tasks") == 2  # history replayed once, not twice


# ------------------------------------------------------------------------------------ mock E8/E12/E13/E14
def test_e8_nl_eval_task_always_scores_one(mock):
    for messages in ([], [say("nothing")], exchange("update_task_status", UPDATE_1)):
        r = evaluate_trajectory(mock, "create_task_1_nl_eval", messages)  # no judge needed: NL not in basis
        assert r.reward == 1.0 and r.db_match is True


def test_e12_user_dismisses_then_db_fails(mock):
    tid = "update_task_with_user_tools"
    messages = scripted_trajectory(
        mock, tid, [("dismiss_notification", {"notification_id": "notif_1"}, "user"), ("update_task_status", UPDATE_1)]
    )
    r = ev(mock, tid, messages)
    assert r.reward == 0.0
    assert r.breakdown == {"DB": 0.0, "ACTION": 1.0, "ENV_ASSERTION": 1.0}
    assert r.agent_db_match is True and r.user_db_match is False


def test_e13_without_dismiss_env_assertion_fails(mock):
    tid = "update_task_with_user_tools"
    r = ev(mock, tid, scripted_trajectory(mock, tid, [("update_task_status", UPDATE_1)]))
    assert r.reward == 0.0 and r.breakdown == {"DB": 1.0, "ACTION": 1.0, "ENV_ASSERTION": 0.0}


def test_e14_communicate_sentences_need_verbatim_text(mock):
    tid = "update_task_with_initialization_data"
    calls = [("update_task_status", UPDATE_2)]
    paraphrase = scripted_trajectory(mock, tid, calls, final_text="I have marked task_2 as completed for you.")
    r = ev(mock, tid, paraphrase)
    assert r.reward == 0.0 and r.breakdown == {"DB": 1.0, "COMMUNICATE": 0.0}
    verbatim = scripted_trajectory(
        mock,
        tid,
        calls,
        final_text="The agent acknowledged the previous context. "
        "THE AGENT CONFIRMED THE TASK STATUS WAS UPDATED SUCCESSFULLY",
    )
    assert ev(mock, tid, verbatim).reward == 1.0


def test_impossible_task_transfer_matches_on_name_only(mock):
    tid = "impossible_task_1"
    assert ev(mock, tid, exchange("transfer_to_human_agents", {"summary": "anything"})).reward == 1.0
    assert ev(mock, tid, exchange("transfer_to_human_agents", {})).reward == 1.0
    r = ev(mock, tid, [say("I cannot do that")])
    assert r.reward == 0.0 and r.breakdown == {"DB": 1.0, "ACTION": 0.0}


# ----------------------------------------------------------------------------------------- termination
@pytest.mark.parametrize(
    "reason",
    [
        "max_steps",
        "too_many_errors",
        "timeout",
        "agent_error",
        "user_error",
        "infrastructure_error",
        "context_window_exceeded",
        "unexpected_error",
        "something_new",
    ],
)
def test_premature_termination_scores_zero(mock, reason):
    r = ev(mock, "create_task_1", gold_trajectory(mock, "create_task_1"), termination=reason)
    assert r.reward == 0.0 and r.reward_basis is None and r.db_match is None and r.breakdown == {}
    assert "prematurely" in r.note


class Reason(Enum):
    USER_STOP = "user_stop"


@pytest.mark.parametrize("reason", ["agent_stop", "user_stop", "AGENT_STOP", Reason.USER_STOP])
def test_scored_terminations(mock, reason):
    assert ev(mock, "create_task_1", gold_trajectory(mock, "create_task_1"), termination=reason).reward == 1.0


def test_bad_termination_value(mock):
    with pytest.raises(ValueError):
        ev(mock, "create_task_1", [], termination=None)


# ------------------------------------------------------------------------------------------------ DB
def test_db_component(mock):
    tid = "create_task_1"
    assert ev(mock, tid, exchange("create_task", CREATE)).breakdown["DB"] == 1.0
    wrong_title = ev(mock, tid, exchange("create_task", {"user_id": "user_1", "title": "important meeting"}))
    assert wrong_title.reward == 0.0 and wrong_title.db_match is False
    twice = exchange("create_task", CREATE, "a") + exchange("create_task", CREATE, "b")
    assert ev(mock, tid, twice).db_match is False
    # reads never matter; failed writes change nothing; unknown tools are skipped
    noise = (
        exchange("get_users", {}, "r")
        + exchange("create_task", {"user_id": "nobody", "title": "x"}, "f")
        + exchange("delete_everything", {}, "u")
        + exchange("create_task", CREATE, "ok")
    )
    r = ev(mock, tid, noise)
    assert r.reward == 1.0
    assert r.replay["skipped_read_only"] == 1 and r.replay["skipped_unknown"] == 1 and r.replay["errors"] == 1


def test_unparseable_and_unanswered_calls_are_noops(mock):
    tid = "update_task_1"
    bad_json = [call("update_task_status", '{"task_id": "task_1", "status": "completed"', "x"), tool("x", "Error")]
    r = ev(mock, tid, bad_json)
    assert r.db_match is False and r.replay["skipped_invalid"] == 1
    unanswered = [call("update_task_status", UPDATE_1, "y")]
    r = ev(mock, tid, unanswered)
    assert r.db_match is False and r.replay["unanswered_calls"] == ["update_task_status"]
    # ACTION never matches an invalid call
    r = ev(mock, tid, bad_json, reward_basis=["ACTION"])
    assert r.reward == 0.0


def test_replay_mismatch_lenient_and_strict(mock):
    messages = [call("create_task", CREATE, "c"), tool("c", '{"task_id": "task_99"}')]
    r = ev(mock, "create_task_1", messages)
    assert r.reward == 1.0 and r.replay["mismatches"][0]["name"] == "create_task"
    with pytest.raises(ReplayMismatchError):
        ev(mock, "create_task_1", messages, strict_replay=True)
    # recorded output compared as parsed JSON: formatting differences do not count
    compact = [
        call("create_task", CREATE, "c"),
        tool("c", json.dumps(json.loads(gold_trajectory(mock, "create_task_1")[2]["content"]), separators=(",", ":"))),
    ]
    assert ev(mock, "create_task_1", compact, strict_replay=True).reward == 1.0


def test_trajectory_errors_surface(mock):
    with pytest.raises(TrajectoryError):
        ev(mock, "create_task_1", "hello")
    with pytest.raises(KeyError):
        ev(mock, "no_such_task", [])


def test_domain_by_name(monkeypatch, mock):
    monkeypatch.setenv("TAU2_DATA_DIR", str(mock.data_dir.parent))
    assert evaluate_trajectory("mock", "create_task_1", gold_trajectory(mock, "create_task_1")).reward == 1.0


# ------------------------------------------------------------------------------- synthetic edge tasks
def _actions(*items):
    return [{"action_id": str(i), "name": n, "arguments": a, **kw} for i, (n, a, kw) in enumerate(items)]


@pytest.fixture(scope="module")
def edge(tmp_path_factory):
    tasks = [
        mock_task("no_criteria", None),
        mock_task("no_actions_or_asserts", {"communicate_info": []}),
        mock_task("empty_actions", {"actions": []}),
        mock_task(
            "action_create",
            {"actions": _actions(("create_task", {"user_id": "user_1", "title": "Meet", "description": "d"}, {}))},
        ),
        mock_task("action_twice", {"actions": _actions(("get_users", {}, {}), ("get_users", {}, {}))}),
        mock_task(
            "action_compare",
            {"actions": _actions(("create_task", {"user_id": "user_1", "title": "Meet"}, {"compare_args": ["title"]}))},
        ),
        mock_task(
            "action_user",
            {"actions": _actions(("dismiss_notification", {"notification_id": "notif_1"}, {"requestor": "user"}))},
        ),
        mock_task(
            "action_number", {"actions": _actions(("update_task_status", {"task_id": "task_1", "status": 2}, {}))}
        ),
        mock_task(
            "action_list",
            {"actions": _actions(("update_task_status", {"task_id": "task_1", "status": ["a", "b"]}, {}))},
        ),
        mock_task(
            "assert_raises",
            {
                "env_assertions": [
                    {
                        "env_type": "assistant",
                        "func_name": "assert_task_status",
                        "arguments": {"task_id": "task_2", "expected_status": "pending"},
                    }
                ],
                "reward_basis": ["ENV_ASSERTION"],
            },
        ),
        mock_task(
            "assert_not_bool",
            {
                "env_assertions": [{"env_type": "assistant", "func_name": "get_users", "arguments": {}}],
                "reward_basis": ["ENV_ASSERTION"],
            },
        ),
        mock_task(
            "assert_false_expected",
            {
                "actions": [],
                "env_assertions": [
                    {
                        "env_type": "assistant",
                        "func_name": "assert_task_status",
                        "arguments": {"task_id": "task_1", "expected_status": "completed"},
                        "assert_value": False,
                    }
                ],
                "reward_basis": ["DB", "ENV_ASSERTION"],
            },
        ),
        mock_task("comm", {"communicate_info": ["1234.56", "MasterCard"], "reward_basis": ["COMMUNICATE"]}),
        mock_task("comm_comma", {"communicate_info": ["1,234"], "reward_basis": ["COMMUNICATE"]}),
        mock_task("comm_decimal", {"communicate_info": ["625.6"], "reward_basis": ["COMMUNICATE"]}),
        mock_task(
            "nl",
            {"nl_assertions": ["greets", "helps"], "actions": [], "reward_basis": ["DB", "NL_ASSERTION"]},
        ),
        mock_task("nl_empty", {"nl_assertions": [], "reward_basis": ["NL_ASSERTION"]}),
    ]
    return synthetic_mock(tmp_path_factory.mktemp("edge"), tasks)


def test_no_criteria_scores_one(edge):
    r = ev(edge, "no_criteria", exchange("create_task", CREATE))
    assert r.reward == 1.0 and r.reward_basis is None and r.note == "No evaluation criteria"


def test_no_actions_no_assertions_shortcut(edge):
    r = ev(edge, "no_actions_or_asserts", exchange("create_task", CREATE))
    assert r.reward == 1.0 and r.db_match is True and r.replay is None


def test_empty_actions_do_not_shortcut(edge):
    r = ev(edge, "empty_actions", exchange("create_task", CREATE))
    assert r.reward == 0.0 and r.db_match is False
    assert ev(edge, "empty_actions", exchange("get_users", {})).reward == 1.0


@pytest.mark.parametrize(
    "args,match",
    [
        ({"user_id": "user_1", "title": "Meet", "description": "d"}, True),  # exact
        ({"user_id": "user_1", "title": "Meet", "description": "d", "deadline": "x"}, False),  # A2 extra key
        ({"user_id": "user_1", "title": "Meet"}, True),  # A3 agreeing subset
        ({}, True),  # A4 empty arguments
        ({"title": "meet"}, False),  # case matters
        ({"user_id": "user_2"}, False),
    ],
)
def test_action_compare_predicted_keys(edge, args, match):
    r = ev(edge, "action_create", exchange("create_task", args), reward_basis=["ACTION"])
    assert r.reward == (1.0 if match else 0.0)
    assert r.action_checks[0]["match"] is match and r.action_checks[0]["tool_type"] == "write"


def test_action_compare_args(edge):
    tid = "action_compare"
    ok = ev(
        edge, tid, exchange("create_task", {"title": "Meet", "user_id": "someone", "x": 1}), reward_basis=["ACTION"]
    )
    assert ok.reward == 1.0
    assert ev(edge, tid, exchange("create_task", {"user_id": "user_1"}), reward_basis=["ACTION"]).reward == 0.0


def test_action_not_consumed_and_order_free(edge):
    r = ev(edge, "action_twice", exchange("get_users", {}), reward_basis=["ACTION"])  # A14
    assert r.reward == 1.0 and [c["match"] for c in r.action_checks] == [True, True]
    messages = exchange("create_task", {"user_id": "user_1"}, "a") + exchange("get_users", {}, "b")
    assert ev(edge, "action_create", messages, reward_basis=["ACTION"]).reward == 1.0


def test_action_requestor_ignored_and_user_calls_count(edge):
    by_agent = exchange("dismiss_notification", {"notification_id": "notif_1"})  # A12
    assert ev(edge, "action_user", by_agent, reward_basis=["ACTION"]).reward == 1.0
    by_user = exchange("dismiss_notification", {"notification_id": "notif_1"}, role="user")
    assert ev(edge, "action_user", by_user, reward_basis=["ACTION"]).reward == 1.0


@pytest.mark.parametrize(
    "task_id,status,match",
    [
        ("action_number", 2.0, True),  # 2 == 2.0
        ("action_number", "2", False),
        ("action_list", ["a", "b"], True),
        ("action_list", ["b", "a"], False),  # list order matters
    ],
)
def test_action_value_equality(edge, task_id, status, match):
    r = ev(
        edge, task_id, exchange("update_task_status", {"task_id": "task_1", "status": status}), reward_basis=["ACTION"]
    )
    assert r.reward == (1.0 if match else 0.0)


def test_env_assertion_raising_surfaces_with_task_id(edge):
    with pytest.raises(EnvAssertionError) as info:
        ev(edge, "assert_raises", [])
    assert info.value.task_id == "assert_raises" and info.value.func_name == "assert_task_status"
    assert "Task task_2 not found" in str(info.value)
    r = ev(edge, "assert_raises", [], assertion_errors="zero")
    assert r.reward == 0.0 and "not found" in r.env_assertion_checks[0]["error"]
    assert ev(edge, "assert_raises", exchange("create_task", CREATE)).reward == 1.0


def test_env_assertion_must_return_bool(edge):
    with pytest.raises(EnvAssertionError, match="instead of bool"):
        ev(edge, "assert_not_bool", [])
    assert ev(edge, "assert_not_bool", [], assertion_errors="zero").reward == 0.0


def test_env_assertion_assert_value_false(edge):
    r = ev(edge, "assert_false_expected", [])
    assert r.reward == 1.0 and r.env_assertion_checks[0]["met"] is True
    r = ev(edge, "assert_false_expected", exchange("update_task_status", UPDATE_1))
    assert r.breakdown == {"DB": 0.0, "ENV_ASSERTION": 0.0}


@pytest.mark.parametrize(
    "messages,reward",
    [
        ([say("Total 1,234.56 on your MASTERCARD")], 1.0),  # commas removed from the message, case ignored
        ([say("Total 1234.56"), say("paid by mastercard")], 1.0),  # each info may sit in its own message
        ([say("Total 1234.56")], 0.0),
        ([say("Total 1234.56 mastercard", role="user")], 0.0),  # user text never counts
        ([say("1234.56"), call("x", {"note": "mastercard"}), tool("c1", "mastercard")], 0.0),  # tool args / output
        ([say("1234.")], 0.0),
    ],
)
def test_communicate(edge, messages, reward):
    assert ev(edge, "comm", messages).reward == reward


def test_communicate_rules(edge):
    assert ev(edge, "comm_comma", [say("It is 1,234")]).reward == 0.0  # an info containing a comma never matches
    assert ev(edge, "comm_decimal", [say("It is 625.60")]).reward == 1.0  # substring "625.6" of "625.60"
    assert ev(edge, "comm_decimal", [say("It is 625.5")]).reward == 0.0
    r = ev(edge, "comm", [say("   "), say("1234.56 MasterCard")])
    assert [c["met"] for c in r.communicate_checks] == [True, True]


def test_basis_override(edge, mock):
    wrong_db = exchange("create_task", {"user_id": "user_1", "title": "Meet"})
    r = ev(edge, "action_create", wrong_db)  # default basis DB, COMMUNICATE
    assert r.reward == 0.0 and r.breakdown == {"DB": 0.0, "COMMUNICATE": 1.0}
    r = ev(edge, "action_create", wrong_db, reward_basis=["action", "COMMUNICATE"])
    assert r.reward == 1.0 and r.breakdown == {"ACTION": 1.0, "COMMUNICATE": 1.0}
    assert r.reward_basis == ("ACTION", "COMMUNICATE")
    with pytest.raises(ValueError, match="unknown reward type"):
        ev(edge, "action_create", wrong_db, reward_basis=["VIBES"])


class Judge:
    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def __call__(self, messages, assertions):
        self.calls.append((messages, assertions))
        return self.answer


def test_nl_judge(edge):
    msgs = [say("hi", "user"), say("hello!")]
    with pytest.raises(NLJudgeRequiredError):
        evaluate_trajectory(edge, "nl", msgs)
    r = evaluate_trajectory(edge, "nl", msgs, nl_policy="skip")
    assert r.reward == 1.0 and r.skipped == ("NL_ASSERTION",) and r.breakdown == {"DB": 1.0}
    judge = Judge([True, True])
    r = evaluate_trajectory(edge, "nl", msgs, judge=judge)
    assert r.reward == 1.0 and r.breakdown == {"DB": 1.0, "NL_ASSERTION": 1.0}
    assert judge.calls == [
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello!"}], ["greets", "helps"])
    ]
    assert evaluate_trajectory(edge, "nl", msgs, judge=Judge([True, False])).reward == 0.0
    assert evaluate_trajectory(edge, "nl", msgs, judge=Judge([])).reward == 1.0  # tau2: all([]) is True
    with pytest.raises(ValueError, match="list of bools"):
        evaluate_trajectory(edge, "nl", msgs, judge=Judge("yes"))
    with pytest.raises(ValueError, match="nl_policy"):
        evaluate_trajectory(edge, "nl", msgs, nl_policy="maybe")


def test_nl_not_needed(edge, mock):
    assert evaluate_trajectory(edge, "nl_empty", []).reward == 1.0  # empty list: no judge needed
    judge = Judge([False])
    assert evaluate_trajectory(mock, "create_task_1", gold_trajectory(mock, "create_task_1"), judge=judge).reward == 1.0
    assert judge.calls == []  # NL not in the basis: the judge is not called


def test_result_hashes(mock):
    r = ev(mock, "create_task_1", gold_trajectory(mock, "create_task_1"))
    h = r.hashes()
    assert (
        h["predicted_db_hash"]
        == h["gold_db_hash"]
        == "3b82583d5c026d816c5a32430fb3ab8d42b72ec2b91cd5cafaab817e0e05b00c"
    )
    assert h["predicted_user_db_hash"] == h["gold_user_db_hash"]


# ------------------------------------------------------------------------------------ real domains
def _changes_state(dom, name, args):
    env = dom.make_env()
    obs = env.step(name, args)
    return not obs.startswith("Error") and not env.agent_db.same_as(dom.make_env().agent_db)


def _wrong_calls(dom, task_id, cache={}):  # noqa: B006 - per-domain memo of a state-changing call
    calls = gold_calls(dom, task_id)
    _, errors = dom.gold_env(task_id)
    failed = {e["action_id"] for e in errors}
    actions = dom.task(task_id).evaluation_criteria.actions or ()
    good_writes = [
        i for i, a in enumerate(actions) if a.action_id not in failed and dom.make_env().is_mutating_tool(a.name)
    ]
    if good_writes:
        return calls[: good_writes[-1]] + calls[good_writes[-1] + 1 :]
    if dom.name not in cache:
        cache[dom.name] = next(
            (n, a, r)
            for tid in dom.tasks
            for n, a, r in gold_calls(dom, tid)
            if dom.make_env().is_mutating_tool(n) and _changes_state(dom, n, a)
        )
    return calls + [cache[dom.name]]


@pytest.mark.parametrize("name", ["airline", "retail"])
def test_real_domain_gold_and_wrong_trajectories(name):
    dom = require_domain(name)
    failures = []
    for tid in dom.tasks:
        gold = ev(dom, tid, gold_trajectory(dom, tid), strict_replay=True)
        wrong = ev(dom, tid, scripted_trajectory(dom, tid, _wrong_calls(dom, tid)))
        if gold.db_match is not True or gold.breakdown.get("COMMUNICATE", 1.0) != 1.0 or wrong.db_match is not False:
            failures.append((tid, gold.db_match, wrong.db_match))
    assert failures == []


def test_benchmark_runs_on_mock(capsys):
    import importlib.util

    root = require_domain("mock").data_dir.parent
    path = REPO / "benchmarks" / "bench_tau2_reward.py"
    spec = importlib.util.spec_from_file_location("bench_tau2_reward", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert (
        bench.main(
            ["--domains", "mock,not_a_domain", "--data-dir", str(root), "--group", "2", "--baseline-samples", "2"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "mock" in out and "samples/s" in out and "baseline agrees 2/2" in out
    assert "not_a_domain SKIPPED" in out.replace("  ", " ")
