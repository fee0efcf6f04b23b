"""telecom's load option ``vpn_details`` against tau2-bench's own code.

``tests/data/reference/tau2_telecom_vpn.json`` (``dump_reference.py vpn``) plays phones one after another in one
tau2 process: tau2's ``connect_vpn`` stores the user-tools class's one ``default_vpn_details`` object and
``break_vpn`` degrades it in place, so a later phone (and one connected before) sees a poor VPN. ``process`` (the
default) must give tau2's outputs and hashes; ``episode`` keeps each phone's VPN its own.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from typing import Any

import pytest

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.domains.telecom.phone import reset_process_vpn

from repo_paths import DATA
from tau2_support import require_data

STEPS: list[dict[str, Any]] = json.loads((DATA / "reference" / "tau2_telecom_vpn.json").read_text("utf-8"))["steps"]
INIT = {"B": ["break_vpn"]}  # as dump_reference.VPN_STEPS


@pytest.fixture(autouse=True)
def _fresh_process_vpn() -> Iterator[None]:
    reset_process_vpn()
    yield
    reset_process_vpn()


def _play(**options: Any) -> list[dict[str, Any]]:
    domain = load_domain("telecom", require_data("telecom"), **options)
    envs: dict[str, Any] = {}
    out = []
    for step in STEPS:
        name = step["phone"]
        if name not in envs:
            envs[name] = domain.make_env()
            for func in INIT.get(name, []):
                envs[name].run_env_function("user", func, {})
        env = envs[name]
        content = env.step(step["call"], {}, "user")
        out.append({"phone": name, "call": step["call"], "content": content, "user_db_hash": env.get_user_data_hash()})
    return out


def test_process_scope_is_tau2s() -> None:
    got = _play()
    want = [{k: s[k] for k in ("phone", "call", "content", "user_db_hash")} for s in STEPS]
    assert [s["content"] for s in got] == [s["content"] for s in want]
    assert got == want


def test_episode_scope_keeps_each_phone_its_own_vpn() -> None:
    got = _play(vpn_details="episode")
    excellent = "'server_performance': <PerformanceLevel.EXCELLENT: 'excellent'>}"
    status = [s["content"] for s in got if s["call"] == "check_vpn_status"]
    # A before and after B's break, A reconnected, C: excellent; only B (broken itself) is poor
    assert [s.endswith(excellent) for s in status] == [True, False, True, True, True]
    assert [s["content"] for s in got if s["phone"] == "B"] == [s["content"] for s in STEPS if s["phone"] == "B"]


@pytest.mark.parametrize("scope", ["process", "episode"])
def test_an_environment_pickles_under_either_scope(scope: str) -> None:
    """A process-pool reward or a Ray worker receives environments by value: both toolkits must pickle, and the copy
    keeps the scope (under ``episode`` a reconnect after a break is excellent again)."""
    env = load_domain("telecom", require_data("telecom"), vpn_details=scope).make_env()
    env.run_env_function("user", "break_vpn", {})
    copy = pickle.loads(pickle.dumps(env))
    assert type(copy.user_tools) is type(env.user_tools) and copy.user_tools.vpn_details == scope
    for call in ("disconnect_vpn", "connect_vpn"):
        copy.step(call, {}, "user")
    status = copy.step("check_vpn_status", {}, "user")
    assert status.endswith("'server_performance': <PerformanceLevel.EXCELLENT: 'excellent'>}") == (scope == "episode")


def test_unknown_scope_is_refused_naming_the_option() -> None:
    with pytest.raises(ValueError, match="vpn_details must be one of \\['process', 'episode'\\]"):
        load_domain("telecom", require_data("telecom"), vpn_details="thread")
    with pytest.raises(ValueError, match="only the load option vpn_details"):
        load_domain("telecom", require_data("telecom"), vpn_detail="episode")


def test_trainer_config_checks_the_option_when_built() -> None:
    from verl_rewards.tau2.normal.agent_loop import NormalSettings

    user = {"backend": "scripted"}
    assert NormalSettings.from_mapping({"user": user, "domain_options": {"vpn_details": "episode"}}).domain_options
    with pytest.raises(ValueError, match=r"custom\.tau2\.domain_options \(telecom\): telecom load option vpn_details"):
        NormalSettings.from_mapping({"user": user, "domain_options": {"vpn_details": "worker"}})
