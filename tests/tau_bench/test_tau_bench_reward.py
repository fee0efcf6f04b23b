"""tau-bench reward on tau2 tasks (reward_semantics §2.3 and the §2.7 edge cases)."""

from __future__ import annotations

import pytest

from verl_rewards.tau2 import tau2_tau_bench_reward
from verl_rewards.tau2.scripted import gold_trajectory, scripted_trajectory

from tau2_support import call, exchange, mock_task, require_domain, say, synthetic_mock, tool

CREATE = {"user_id": "user_1", "title": "Important Meeting"}
AFTER_CREATE_HASH = "3b82583d5c026d816c5a32430fb3ab8d42b72ec2b91cd5cafaab817e0e05b00c"


@pytest.fixture(scope="module")
def mock():
    return require_domain("mock")


@pytest.fixture(scope="module")
def tb(tmp_path_factory):
    def act(name, args):
        return [{"action_id": "a", "name": name, "arguments": args}]

    tasks = [
        mock_task("outputs", {"actions": act("create_task", CREATE), "communicate_info": ["1234.56", "MasterCard"]}),
        mock_task("decimal", {"actions": [], "communicate_info": ["625.60"]}),
        mock_task("typed", {"actions": act("update_task_status", {"task_id": "task_1", "status": 250})}),
        mock_task(
            "ordered",
            {
                "actions": [
                    {"action_id": "1", "name": "create_task", "arguments": {"user_id": "user_1", "title": "A"}},
                    {"action_id": "2", "name": "create_task", "arguments": {"user_id": "user_1", "title": "B"}},
                ]
            },
        ),
        mock_task(
            "transfer_then_write",
            {
                "actions": [
                    {"action_id": "1", "name": "update_task_status", "arguments": {"task_id": "task_1", "status": "x"}},
                    {"action_id": "2", "name": "transfer_to_human_agents", "arguments": {"summary": "s"}},
                ]
            },
        ),
    ]
    return synthetic_mock(tmp_path_factory.mktemp("tb"), tasks)


@pytest.mark.parametrize(
    "task_id",
    [
        "create_task_1",
        "create_task_1_with_env_assertions",
        "create_task_1_nl_eval",
        "update_task_1",
        "update_task_with_message_history",
        "update_task_with_initialization_data",
        "update_task_with_initialization_actions",
        "update_task_with_history_and_env_assertions",
        "update_task_with_user_tools",
        "impossible_task_1",
    ],
)
def test_gold_trajectories_score_one(mock, task_id):
    r = tau2_tau_bench_reward(mock, task_id, gold_trajectory(mock, task_id))
    assert r.reward == 1.0 and r.info["r_actions"] == 1.0


def test_db_and_info(mock):
    r = tau2_tau_bench_reward(mock, "create_task_1", exchange("create_task", CREATE))
    assert r.reward == 1.0 and r.info["gt_data_hash"] == AFTER_CREATE_HASH
    assert r.actions == [{"name": "create_task", "kwargs": CREATE}]
    assert "r_outputs" not in r.info
    r = tau2_tau_bench_reward(mock, "create_task_1", exchange("create_task", {"user_id": "user_1", "title": "x"}))
    assert r.reward == 0.0 and r.info["r_actions"] == 0.0


def test_tb15_db_failure_with_outputs_present(tb):
    r = tau2_tau_bench_reward(tb, "outputs", [say("1234.56 via mastercard")])
    assert r.reward == 0.0 and r.info["r_outputs"] == 1.0 and r.info["r_actions"] == 0.0


@pytest.mark.parametrize(
    "text,found",
    [
        ("Refund of 1,234.56 to your MasterCard", [True, True]),
        ("refund of 1234.56 to your mastercard", [True, True]),
        ("refund of 1234.56", [True, False]),
        ("refund of 1234.5 to mastercard", [False, True]),
    ],
)
def test_outputs(tb, text, found):
    messages = exchange("create_task", CREATE) + [say(text)]
    r = tau2_tau_bench_reward(tb, "outputs", messages)
    assert list(r.info["outputs"].values()) == found
    assert r.reward == (1.0 if all(found) else 0.0) and r.info["r_outputs"] == r.reward


def test_outputs_only_in_assistant_text(tb):
    base = exchange("create_task", CREATE)
    assert tau2_tau_bench_reward(tb, "outputs", base + [say("1234.56 mastercard", role="user")]).reward == 0.0
    in_args = [
        call("transfer_to_human_agents", {"summary": "1234.56 mastercard"}, "t"),
        tool("t", "1234.56 mastercard"),
    ]
    assert tau2_tau_bench_reward(tb, "outputs", base + in_args).reward == 0.0
    assert tau2_tau_bench_reward(tb, "outputs", base + [say("1234.56"), say("MasterCard")]).reward == 1.0


def test_no_normalisation_beyond_case_and_commas(tb):
    assert tau2_tau_bench_reward(tb, "decimal", [say("It costs 625.6")]).reward == 0.0
    assert tau2_tau_bench_reward(tb, "decimal", [say("It costs 625.60")]).reward == 1.0


def test_transfer_only_task_passes_without_writes(mock):
    """TB11/TB12: the terminate tool is never replayed, so any trajectory without writes scores 1.0."""
    tid = "impossible_task_1"
    assert tau2_tau_bench_reward(mock, tid, [say("Sorry, I cannot delete tasks.")]).reward == 1.0
    assert tau2_tau_bench_reward(mock, tid, exchange("transfer_to_human_agents", {"summary": "x"})).reward == 1.0
    assert tau2_tau_bench_reward(mock, tid, exchange("create_task", CREATE)).reward == 0.0


def test_terminate_tools_are_skipped_in_gold_replay(tb):
    messages = exchange("update_task_status", {"task_id": "task_1", "status": "x"})
    assert tau2_tau_bench_reward(tb, "transfer_then_write", messages).reward == 1.0


def test_reads_and_failed_writes_do_not_matter(mock):
    noise = exchange("get_users", {}, "a") + exchange("create_task", {"user_id": "ghost", "title": "t"}, "b")
    assert tau2_tau_bench_reward(mock, "create_task_1", noise + exchange("create_task", CREATE, "c")).reward == 1.0


def test_types_are_part_of_the_hash(tb):
    """TB14: 250.0 instead of 250 fails the DB check (though tau2's ACTION would accept it)."""
    assert (
        tau2_tau_bench_reward(tb, "typed", exchange("update_task_status", {"task_id": "task_1", "status": 250})).reward
        == 1.0
    )
    r = tau2_tau_bench_reward(tb, "typed", exchange("update_task_status", {"task_id": "task_1", "status": 250.0}))
    assert r.reward == 0.0


def test_list_order_matters(tb):
    a = {"user_id": "user_1", "title": "A"}
    b = {"user_id": "user_1", "title": "B"}
    assert (
        tau2_tau_bench_reward(
            tb, "ordered", scripted_trajectory(tb, "ordered", [("create_task", a), ("create_task", b)])
        ).reward
        == 1.0
    )
    assert (
        tau2_tau_bench_reward(
            tb, "ordered", scripted_trajectory(tb, "ordered", [("create_task", b), ("create_task", a)])
        ).reward
        == 0.0
    )


def test_not_terminated_scores_zero(mock):
    r = tau2_tau_bench_reward(mock, "create_task_1", gold_trajectory(mock, "create_task_1"), terminated=False)
    assert r.reward == 0.0


@pytest.mark.parametrize("name", ["airline", "retail"])
def test_real_domain_gold_trajectories(name):
    dom = require_domain(name)
    bad = [tid for tid in dom.tasks if tau2_tau_bench_reward(dom, tid, gold_trajectory(dom, tid)).reward != 1.0]
    assert bad == []
