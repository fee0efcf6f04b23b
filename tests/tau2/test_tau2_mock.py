"""The mock domain: tool behaviour and error strings, quirks, helpers, and every task's initial state."""

from __future__ import annotations

import copy
import json

import pytest

from verl_rewards.engine.state import dict_hash
from verl_rewards.tau2.domains import mock as mock_module

from tau2_support import require_data, require_domain

PROJECT_REVIEW = {
    "task_id": "task_2",
    "title": "Project Review",
    "description": "Review Q4 project status",
    "status": "pending",
}


@pytest.fixture(scope="module")
def mock():
    return require_domain("mock")


@pytest.fixture(scope="module")
def raw_dbs():
    root = require_data("mock") / "mock"
    return json.loads((root / "db.json").read_text()), json.loads((root / "user_db.json").read_text())


# (calls before, tool, arguments, requestor, expected observation)
CASES = [
    (
        [],
        "create_task",
        {"user_id": "user_1", "title": "Important Meeting"},
        "assistant",
        '{"task_id": "task_2", "title": "Important Meeting", "description": null, "status": "pending"}',
    ),
    (
        [],
        "create_task",
        {"user_id": "user_1", "title": "T", "description": "D"},
        "assistant",
        '{"task_id": "task_2", "title": "T", "description": "D", "status": "pending"}',
    ),
    ([], "create_task", {"user_id": "user_9", "title": "T"}, "assistant", "Error: User user_9 not found"),
    ([], "get_users", {}, "assistant", '[{"user_id": "user_1", "name": "Test User", "tasks": ["task_1"]}]'),
    (
        [],
        "update_task_status",
        {"task_id": "task_1", "status": "completed"},
        "assistant",
        '{"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}',
    ),
    (
        [],
        "update_task_status",
        {"task_id": "task_1", "status": "archived"},  # quirk: not validated
        "assistant",
        '{"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "archived"}',
    ),
    (
        [],
        "update_task_status",
        {"task_id": "task_9", "status": "completed"},
        "assistant",
        "Error: Task task_9 not found",
    ),
    ([], "transfer_to_human_agents", {"summary": "help"}, "assistant", "Transfer successful"),
    (
        [],
        "check_notifications",
        {},
        "user",
        '[{"notification_id": "notif_1", "message": "Task \'Test task\' has been assigned to you.", '
        '"status": "unread", "task_id": "task_1"}]',
    ),
    ([], "dismiss_notification", {"notification_id": "notif_1"}, "user", "Notification notif_1 dismissed"),
    ([], "dismiss_notification", {"notification_id": "notif_9"}, "user", "Error: Notification notif_9 not found"),
    (
        [],
        "dismiss_notification",
        {"notification_id": "notif_1"},
        "assistant",
        "Error: Tool 'dismiss_notification' not found.",
    ),
    ([], "get_users", {}, "user", "Error: Tool 'get_users' not found."),
    (
        [],
        "add_notification",
        {"notification_id": "n", "message": "m"},
        "user",
        "Error: Tool 'add_notification' not found.",
    ),
    (
        [("create_task", {"user_id": "user_1", "title": "A"})],
        "create_task",
        {"user_id": "user_1", "title": "B"},
        "assistant",
        '{"task_id": "task_3", "title": "B", "description": null, "status": "pending"}',
    ),
]


@pytest.mark.parametrize("before,name,args,requestor,expected", CASES)
def test_tool_behaviour(mock, before, name, args, requestor, expected):
    env = mock.make_env()
    for n, a in before:
        env.step(n, a)
    assert env.step(name, args, requestor=requestor) == expected


def test_writes_and_hashes(mock, raw_dbs):
    agent, user = copy.deepcopy(raw_dbs[0]), copy.deepcopy(raw_dbs[1])
    env = mock.make_env()
    env.step("update_task_status", {"task_id": "task_1", "status": "completed"})
    agent["tasks"]["task_1"]["status"] = "completed"
    assert env.get_data_hash() == dict_hash(agent)
    env.step("dismiss_notification", {"notification_id": "notif_1"}, requestor="user")
    user["notifications"]["notif_1"]["status"] = "read"
    assert env.get_user_data_hash() == dict_hash(user)
    assert env.get_data_hash() == dict_hash(agent)


def test_create_task_sparse_id_overwrites(mock):
    """Quirk: the new id is task_<count+1>, which can collide with an existing id."""
    env = mock.make_env()
    env.tools.db.insert("tasks", "task_3", dict(PROJECT_REVIEW, task_id="task_3"))
    out = json.loads(env.step("create_task", {"user_id": "user_1", "title": "New"}))
    assert out["task_id"] == "task_3"
    assert env.agent_db.get("tasks", "task_3")["title"] == "New"
    assert env.agent_db.size("tasks") == 2
    assert env.agent_db.get("users", "user_1")["tasks"] == ["task_1", "task_3"]


def test_failed_calls_change_nothing(mock):
    env = mock.make_env()
    h = env.get_data_hash()
    for args in ({"user_id": "user_1", "title": None}, {"user_id": "user_1", "title": "t", "description": 3}):
        assert env.step("create_task", args).startswith("Error: 1 validation error for Task")
    assert env.get_data_hash() == h


def test_assertion_helpers(mock):
    env = mock.make_env()
    assert env.run_env_function("assistant", "assert_task_status", {"task_id": "task_1", "expected_status": "pending"})
    assert not env.run_env_function("assistant", "assert_number_of_tasks", {"user_id": "user_1", "expected_number": 2})
    assert env.run_env_function("assistant", "assert_number_of_tasks", {"user_id": "user_1", "expected_number": 1})
    assert env.run_env_function(
        "user", "assert_notification_status", {"notification_id": "notif_1", "expected_status": "unread"}
    )
    for kind, fn, args, msg in [
        (
            "assistant",
            "assert_task_status",
            {"task_id": "task_2", "expected_status": "pending"},
            "Task task_2 not found",
        ),
        ("assistant", "assert_number_of_tasks", {"user_id": "u", "expected_number": 0}, "User u not found"),
        ("user", "assert_notification_status", {"notification_id": "x", "expected_status": "read"}, "Notification x"),
    ]:
        with pytest.raises(Exception, match=msg):
            env.run_env_function(kind, fn, args)


def test_add_notification_helper(mock):
    env = mock.make_env()
    env.run_env_function("user", "add_notification", {"notification_id": "n2", "message": "hi"})
    assert env.user_db.get("notifications", "n2") == {
        "notification_id": "n2",
        "message": "hi",
        "status": "unread",
        "task_id": None,
    }


def test_normalize_db_fills_defaults_and_validates():
    db = mock_module.normalize_db(
        {"tasks": {"t": {"task_id": "t", "title": "x", "status": "pending"}}, "users": {}, "extra": 1}
    )
    assert db == {"tasks": {"t": {"task_id": "t", "title": "x", "description": None, "status": "pending"}}, "users": {}}
    with pytest.raises(ValueError):
        mock_module.normalize_db({"tasks": {"t": {"task_id": "t", "title": "x", "status": "done"}}, "users": {}})
    user = mock_module.normalize_user_db({"notifications": {"n": {"notification_id": "n", "message": "m"}}})
    assert user["notifications"]["n"]["status"] == "unread" and user["notifications"]["n"]["task_id"] is None


# ------------------------------------------------------------------------------------ task initial states
def _agent_with_project_review(raw_agent):
    agent = copy.deepcopy(raw_agent)
    agent["tasks"]["task_2"] = dict(PROJECT_REVIEW)
    agent["users"]["user_1"]["tasks"] = ["task_1", "task_2"]
    return agent


@pytest.mark.parametrize(
    "task_id,with_review,aliased",
    [
        ("create_task_1", False, False),
        ("create_task_1_with_env_assertions", False, False),
        ("create_task_1_nl_eval", False, False),
        ("update_task_1", False, False),
        ("update_task_with_message_history", True, False),
        ("update_task_with_initialization_data", True, True),
        ("update_task_with_initialization_actions", True, False),
        ("update_task_with_history_and_env_assertions", True, False),
        ("update_task_with_user_tools", False, False),
        ("impossible_task_1", False, False),
    ],
)
def test_every_mock_task_initial_state(mock, raw_dbs, task_id, with_review, aliased):
    env = mock.make_env(task_id)
    assert env.actions == [] and not env.done
    assert env.task_id == task_id
    agent = _agent_with_project_review(raw_dbs[0]) if with_review else raw_dbs[0]
    assert env.get_data_hash() == dict_hash(agent)
    if aliased:
        # tau2 quirk: after initialization_data the user toolkit is pointed at the agent DB
        assert env.user_db is env.agent_db
        assert env.get_user_data_hash() == env.get_data_hash()
        assert env.step("check_notifications", {}, "user") == "Error: 'MockDB' object has no attribute 'notifications'"
    else:
        assert env.get_user_data_hash() == dict_hash(raw_dbs[1])


def test_initial_states_are_fresh_each_time(mock):
    a = mock.make_env("update_task_with_initialization_actions")
    a.step("update_task_status", {"task_id": "task_2", "status": "completed"})
    b = mock.make_env("update_task_with_initialization_actions")
    assert b.agent_db.get("tasks", "task_2")["status"] == "pending"
    c = mock.make_env("update_task_with_initialization_data")
    c.step("update_task_status", {"task_id": "task_2", "status": "completed"})
    assert mock.make_env("update_task_with_initialization_data").agent_db.get("tasks", "task_2")["status"] == "pending"
