"""tau2 domain specs, the domain registry, and environments built from toolkits (execute, freeze)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from verl_rewards.engine.environment import Environment
from verl_rewards.engine.state import BaseDB, DBState
from verl_rewards.tau2 import DomainSpec, available_domains, domain_spec, load_domain, register
from verl_rewards.tau2.domains import airline, mock, retail, telecom
from verl_rewards.tau2.errors import UnknownDomainError

from tau2_support import call, require_data, require_domain, tool

AFTER_CREATE_HASH = "3b82583d5c026d816c5a32430fb3ab8d42b72ec2b91cd5cafaab817e0e05b00c"


# ------------------------------------------------------------------------------------------------ registry
def test_registry_holds_each_built_in_domain_module_spec():
    assert {"airline", "mock", "retail", "telecom"} <= set(available_domains())
    assert available_domains() == sorted(available_domains())
    for module in (mock, airline, retail, telecom):
        assert domain_spec(module.SPEC.name) is module.SPEC


def test_a_built_in_domain_and_a_command_import_only_what_they_use():
    """The registry imports a domain's modules on its first lookup, the command line only the command it runs (a
    fresh interpreter: start-up is what a run pays before its first request)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from verl_rewards.cli import build_parser\n"
        "from verl_rewards.tau2 import available_domains, domain_spec\n"
        "build_parser('simulate')\n"
        "assert 'banking_knowledge' in available_domains()\n"
        "domain_spec('mock')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('numpy', 'verl_rewards.tau2.domains.', "
        "'verl_rewards.commands.prepare', 'verl_rewards.cpu', 'verl_rewards.check', 'verl_rewards.smoke'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['verl_rewards.tau2.domains.mock',", "'verl_rewards.tau2.domains.validation']"]


@pytest.mark.parametrize("name", ["nope", "common", "", None, ["mock"]])
def test_unknown_names_are_refused_with_the_known_ones_listed(name):
    with pytest.raises(UnknownDomainError, match=r"available: \['airline', 'banking_knowledge', 'mock', "):
        domain_spec(name)


def test_a_second_spec_under_a_registered_name_is_refused():
    clone = dataclasses.replace(mock.SPEC)
    with pytest.raises(ValueError, match="'mock' is already registered"):
        register(clone)
    assert register(mock.SPEC) is mock.SPEC  # the same spec again is a no-op
    assert domain_spec("mock") is mock.SPEC


def test_a_registered_spec_loads_like_a_built_in_domain():
    root = require_data("mock")
    spec = DomainSpec(
        name="tracker",
        files={"db": "db.json", "user_db": "user_db.json", "policy": "policy.md", "tasks": "tasks.json"},
        terminate_tools=("transfer_to_human_agents",),
        normalize_db=mock.normalize_db,
        agent_toolkit=mock.AgentTools,
        user_toolkit=mock.UserTools,
        normalize_user_db=mock.normalize_user_db,
    )
    assert register(spec, replace=True) is spec
    domain = load_domain("tracker", root / "mock")
    assert domain.spec is spec and "tracker" in available_domains()
    assert domain.split("base") == list(domain.tasks)  # no split file named: every task is in "base"
    env = domain.make_env("create_task_1")
    env.step("create_task", {"user_id": "user_1", "title": "Important Meeting"})
    assert domain.gold_hash("create_task_1") == AFTER_CREATE_HASH


# ----------------------------------------------------------------------------------------------- the spec
def _spec(**changes):
    return dataclasses.replace(mock.SPEC, **changes)


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"name": "Mock"}, "name must match"),
        ({"files": {"db": "db.json", "tasks": "tasks.json", "user_db": "user_db.json"}}, r"files lacks \['policy'\]"),
        ({"terminate_tools": ("hang_up",)}, r"terminate_tools \['hang_up'\] are not tools of AgentTools"),
        ({"agent_toolkit": dict}, "agent_toolkit must be a Toolkit subclass"),
        ({"normalize_user_db": None}, "a user_toolkit needs normalize_user_db"),
        ({"user_toolkit": None}, r"\['normalize_user_db', \"files\['user_db'\]\"\] given without a user_toolkit"),
        ({"policy_types": ("manual",)}, "policy_types need a policy_text"),
        ({"tool_schemas": ""}, "tool_schemas must be a file name or path"),
        ({"sync_neutral": {"dismiss_notification"}}, "sync_neutral needs sync_tools"),
        (
            {"sync_neutral": {"dismiss_notification", "no_such", "_private"}, "sync_tools": lambda a, u: None},
            r"sync_neutral \['_private', 'no_such'\] are not public methods of UserTools",
        ),
        (
            {"shared_setup": {"dismiss_notification"}, "prepare_env": lambda env, task: None},
            "shared_setup needs a user_toolkit and no prepare_env",
        ),
        ({"shared_setup": {"no_such"}}, r"shared_setup \['no_such'\] are not public methods of UserTools"),
        ({"row_options": {"top_k"}}, r"row_options \['top_k'\] are not load_options"),
        ({"load_options": {"top_k"}}, "load_options need a configure"),
        ({"load_options": {"top_k"}, "configure": lambda d, o: None, "check_options": 3}, "check_options must be"),
    ],
)
def test_an_inconsistent_spec_fails_when_built_naming_the_field(changes, message):
    with pytest.raises(ValueError, match=message):
        _spec(**changes)


def test_a_policy_text_replaces_the_policy_file():
    spec = _spec(files={k: v for k, v in mock.SPEC.files.items() if k != "policy"}, policy_text=lambda d, **_: "P")
    assert spec.policy_text is not None and "policy" not in spec.files


def test_spec_lists_agent_and_user_tools():
    assert list(mock.SPEC.agent_tool_specs()) == [
        "create_task",
        "get_users",
        "update_task_status",
        "transfer_to_human_agents",
    ]
    assert list(mock.SPEC.user_tool_specs()) == ["check_notifications", "dismiss_notification"]
    assert airline.SPEC.user_tool_specs() == {}


def test_tool_schemas_come_from_the_schema_file_else_from_the_toolkit(tmp_path):
    generated = _spec(tool_schemas=None)  # a domain registered without a schema file
    assert [s["function"]["name"] for s in generated.agent_tool_schemas()] == list(mock.SPEC.agent_tool_specs())
    assert generated.agent_tool_schemas()[0]["function"]["parameters"]["required"] == ["user_id", "title"]
    served = mock.SPEC.agent_tool_schemas()
    served[0]["function"]["name"] = "changed"  # callers get copies
    assert mock.SPEC.agent_tool_schemas()[0]["function"]["name"] == "create_task"
    short = tmp_path / "short.json"
    short.write_text(json.dumps({"agent": served[1:3], "user": mock.SPEC.user_tool_schemas()}))
    with pytest.raises(ValueError, match=r"the agent schemas name \['get_users', 'update_task_status'\], but"):
        _spec(tool_schemas=str(short)).agent_tool_schemas()
    with pytest.raises(ValueError, match="cannot read it"):
        _spec(tool_schemas=str(tmp_path / "missing.json")).user_tool_schemas()


# ------------------------------------------------------------------------------------------ environments
def test_environment_is_built_from_its_toolkits_and_runs_the_sync_hook():
    root = require_data("mock")
    raw = load_domain("mock", root)
    synced: list[tuple[str, str]] = []
    env = Environment(
        mock.AgentTools(DBState(raw.base_db)),
        mock.UserTools(DBState(raw.user_base_db)),
        terminate_tools=("transfer_to_human_agents",),
        sync_tools=lambda agent, user: synced.append((type(agent).__name__, type(user).__name__)),
    )
    assert '"user_1"' in env.step("get_users", {})
    assert env.step("dismiss_notification", {"notification_id": "notif_1"}, requestor="user").startswith(
        "Notification notif_1"
    )
    assert synced == [("AgentTools", "UserTools"), ("AgentTools", "UserTools")]
    assert env.step("nope", {}) == "Error: Tool 'nope' not found."
    assert len(synced) == 2  # a failed call does not sync
    assert not env.done
    env.step("transfer_to_human_agents", {"summary": "s"})
    assert env.done and [a["name"] for a in env.actions][-1] == "transfer_to_human_agents"


def test_execute_takes_parsed_arguments_and_reports_errors():
    env = require_domain("mock").make_env()
    observation, error = env.execute("create_task", {"user_id": "user_1", "title": "Important Meeting"})
    assert not error and '"task_id": "task_2"' in observation
    assert env.execute("create_task", {"user_id": "ghost", "title": "x"}) == ("Error: User ghost not found", True)
    assert [a["error"] for a in env.actions] == [False, True]


def test_a_frozen_environment_refuses_every_entry_point_that_could_change_it():
    domain = require_domain("mock")
    gold, _ = domain.gold_env("create_task_1")
    assert gold.frozen
    actions = list(gold.actions)
    for attempt in (
        lambda: gold.step("get_users", {}),
        lambda: gold.step("not a tool name!", {}),
        lambda: gold.execute("get_users", {}),
        lambda: gold.run_env_function(
            "assistant", "assert_number_of_tasks", {"user_id": "user_1", "expected_number": 1}
        ),
        lambda: gold.replay([call("create_task", {"user_id": "user_1", "title": "t"}), tool()]),
    ):
        with pytest.raises(RuntimeError, match="frozen"):
            attempt()
    assert gold.actions == actions and gold.get_data_hash() == AFTER_CREATE_HASH


def test_freezing_a_fresh_environment_keeps_its_reads():
    env = Environment(mock.AgentTools(DBState(BaseDB({"tasks": {}, "users": {}}))))
    assert not env.frozen
    env.freeze()
    assert env.frozen and env.get_data_hash() == env.agent_db.full_hash() and env.get_user_data_hash() is None
