"""A run's ``domain_options`` serve every domain of the run: each domain takes the options its spec names, a key no
domain takes is refused at start-up naming it, and each domain's values are checked there by the domain's own check
(telecom's ``vpn_details``, banking_knowledge's retrieval settings)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.data import task_row, write_tool_config
from verl_rewards.tau2.normal.agent_loop import NormalSettings
from verl_rewards.tau2.row_options import check_configured_options, domain_load_options, row_load_options

from agent_loop_support import _agent_data, _turn
from tau2_support import require_data

MIXED = {"vpn_details": "episode", "retrieval": "grep_only"}  # one configuration for telecom and banking rows
USER = {"backend": "scripted"}


def test_each_domain_takes_the_options_it_names() -> None:
    assert domain_load_options("telecom", MIXED) == {"vpn_details": "episode"}
    assert domain_load_options("banking_knowledge", MIXED) == {"retrieval": "grep_only"}
    assert domain_load_options("airline", MIXED) == {}
    # a row's own choice still wins over the configuration for what its domain lets a row choose
    assert row_load_options("banking_knowledge", MIXED, {"retrieval": "bm25"}, "test") == ({"retrieval": "bm25"}, [])
    options, refused = row_load_options("airline", MIXED, None, "test")
    assert (options, refused) == ({}, [])
    airline = load_domain("airline", require_data("airline"), **options)
    assert airline.options == {}
    telecom = load_domain("telecom", require_data("telecom"), **row_load_options("telecom", MIXED, None, "t")[0])
    assert telecom.options == {"vpn_details": "episode"}
    assert telecom.spec.user_toolkit is not None and telecom.spec.user_toolkit.vpn_details == "episode"


def test_a_tool_config_with_another_domain_s_option_still_runs_its_domain(tmp_path: Path) -> None:
    """One tool configuration for a dataset mixing domains: a mock row runs with telecom's option configured."""
    from verl.tools.tool_registry import initialize_tools_from_config

    root = require_data("mock")
    mock = load_domain("mock", root)
    path = write_tool_config(mock, tmp_path / "tools.yaml", data_dir=str(root))
    config = yaml.safe_load(path.read_text())
    for tool in config["tools"]:
        tool["config"]["domain_options"] = dict(MIXED)
    path.write_text(yaml.safe_dump(config))
    tools = {t.name: t for t in initialize_tools_from_config(str(path))}
    task_id = next(iter(mock.tasks))
    data = _agent_data(task_row(mock, mock.task(task_id), 0, "x", str(root)), "options-1")
    answer = asyncio.run(_turn(tools, data, [("get_users", {})]))[0]
    assert answer == mock.make_env(task_id).step("get_users", {})
    assert '"user_1"' in answer


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"vpn_detail": "episode"}, r"custom\.tau2\.domain_options\.vpn_detail: no tau2 domain takes this load option"),
        (
            {"vpn_details": "worker"},
            r"custom\.tau2\.domain_options \(telecom\): telecom load option vpn_details must be one of "
            r"\['process', 'episode'\], got 'worker'",
        ),
        ({"retrieval": "nope"}, r"custom\.tau2\.domain_options \(banking_knowledge\): unknown retrieval 'nope'"),
        ("bm25", r"custom\.tau2\.domain_options must be a mapping of load options"),
    ],
)
def test_the_trainer_config_is_checked_when_built(options: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NormalSettings.from_mapping({"user": USER, "domain_options": options})


def test_accepted_options_are_kept_whole() -> None:
    settings = NormalSettings.from_mapping({"user": USER, "domain_options": MIXED})
    assert dict(settings.domain_options) == MIXED
    assert check_configured_options(None, "x") == {} and check_configured_options({}, "x") == {}


def test_a_tool_config_naming_an_option_no_domain_takes_is_refused_when_built(tmp_path: Path) -> None:
    from verl.tools.tool_registry import initialize_tools_from_config

    mock = load_domain("mock", require_data("mock"))
    path = write_tool_config(mock, tmp_path / "tools.yaml")
    config = yaml.safe_load(path.read_text())
    config["tools"][0]["config"]["domain_options"] = {"vpn": "episode"}
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ValueError, match=r"tau2 tool config: domain_options\.vpn: no tau2 domain takes"):
        initialize_tools_from_config(str(path))
