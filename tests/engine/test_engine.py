"""The engine tau2 and tau-bench share: one data-dir rule, named rule sets, the termination reasons."""

from __future__ import annotations

import asyncio
import json

import pytest

from verl_rewards.engine import conversation as engine_conversation
from verl_rewards.engine.conversation import Conversation, Reply
from verl_rewards.engine.data_dir import BenchmarkData, choose_data_dir, resolve_data_dir, row_data_dir
from verl_rewards.engine.errors import DataNotFoundError, EngineError
from verl_rewards.engine.rules import GREETING, STOP_TOKEN, STOP_TOKENS, TAU2, TAU_BENCH, RuleSet
from verl_rewards.engine.termination import SCORED_STOPS, TAU2_REASONS, TerminationReason
from verl_rewards.engine.users import ScriptedUser

from data_support import installed_data_home

# ---------------------------------------------------------------------------------------------- data dirs


X = BenchmarkData("x", "X_DATA_DIR", "x")


def test_data_dir_precedence_is_explicit_then_environment_then_installed_and_never_the_row_s(tmp_path, monkeypatch):
    home = installed_data_home(tmp_path / "home", monkeypatch)
    env = tmp_path / "env"
    env.mkdir()
    monkeypatch.setenv("X_DATA_DIR", str(env))
    assert choose_data_dir("/explicit", X, "/row") == "/explicit"
    assert choose_data_dir(None, X, "/row") == str(env)
    assert choose_data_dir("", X, "/row") == str(env)
    monkeypatch.delenv("X_DATA_DIR")
    with pytest.raises(
        DataNotFoundError, match=r"set the tool's data_dir or X_DATA_DIR, or run .*\(the row records data_dir '/row'"
    ):
        choose_data_dir(None, X, "/row", where="the tool's data_dir")  # rows are data, configs are code
    assert choose_data_dir(None, X) is None  # nothing installed yet
    (home / "x").mkdir(parents=True)
    assert X.installed() == home / "x"
    assert choose_data_dir(None, X) == str(home / "x")
    assert choose_data_dir(None, X, "/row") == str(home / "x")


def test_a_variable_naming_a_missing_folder_is_an_error_not_a_fallback(tmp_path, monkeypatch):
    home = installed_data_home(tmp_path / "home", monkeypatch)
    (home / "x" / "retail").mkdir(parents=True)
    (home / "x" / "retail" / "db.json").write_text("{}")
    monkeypatch.setenv("X_DATA_DIR", str(tmp_path / "typo"))
    with pytest.raises(DataNotFoundError, match=r"X_DATA_DIR='.*typo' is not a folder.*`verl-rewards data get x`"):
        choose_data_dir(None, X, "/row")
    with pytest.raises(DataNotFoundError, match="is not a folder"):
        resolve_data_dir("retail", None, {"db": "db.json"}, data=X)
    assert choose_data_dir("/explicit", X) == "/explicit"  # an explicit folder wins before the variable is read


def test_a_rows_data_dir_is_its_own_then_any_tools_create_kwargs():
    tools = {"a": {"create_kwargs": {"task_id": "1"}}, "b": {"create_kwargs": {"data_dir": "/tools"}}}
    assert row_data_dir({"data_dir": "/extra", "tools_kwargs": tools}) == "/extra"
    assert row_data_dir({"tools_kwargs": tools}) == "/tools"
    assert row_data_dir({}, None, {"tools_kwargs": tools}) == "/tools"
    assert row_data_dir({"tools_kwargs": {"a": "not a mapping"}}, "not a mapping") is None


def test_resolve_data_dir_takes_a_root_or_the_domain_folder_then_the_installed_one(tmp_path, monkeypatch):
    home = installed_data_home(tmp_path / "home", monkeypatch)
    (tmp_path / "retail").mkdir()
    (tmp_path / "retail" / "db.json").write_text("{}")
    files = {"db": "db.json"}
    assert resolve_data_dir("retail", tmp_path, files, data=X) == (tmp_path / "retail")
    assert resolve_data_dir("other", tmp_path / "retail", files, data=X) == (tmp_path / "retail")
    monkeypatch.setenv("X_DATA_DIR", str(tmp_path))
    assert resolve_data_dir("retail", None, files, data=X) == tmp_path / "retail"
    monkeypatch.delenv("X_DATA_DIR")
    with pytest.raises(DataNotFoundError, match="run `verl-rewards data get x`.*pass data_dir= or set X_DATA_DIR"):
        resolve_data_dir("retail", None, files, data=X)
    with pytest.raises(EngineError, match="x data for domain 'nope' not found"):
        resolve_data_dir("nope", tmp_path, files, data=X)
    (home / "x" / "retail").mkdir(parents=True)
    (home / "x" / "retail" / "db.json").write_text("{}")
    assert resolve_data_dir("retail", None, files, data=X) == home / "x" / "retail"
    with pytest.raises(EngineError, match="not found in the installed data folder .*: run `verl-rewards data get x`"):
        resolve_data_dir("airline", None, files, data=X)


# ---------------------------------------------------------------------------------------------- reasons


def test_termination_reasons_are_their_strings():
    assert [str(r) for r in TerminationReason] == [
        "agent_stop",
        "user_stop",
        "max_steps",
        "too_many_errors",
        "agent_error",
        "user_error",
        "infrastructure_error",
        "transfer",
        "crash",
        "agent_reply",
    ]
    reason = TerminationReason.INFRASTRUCTURE_ERROR
    assert reason == "infrastructure_error" and type(str(reason)) is str and f"{reason}" == "infrastructure_error"
    assert json.dumps({"termination": reason}) == '{"termination": "infrastructure_error"}'
    assert TAU2_REASONS[:2] == SCORED_STOPS == ("agent_stop", "user_stop") and len(TAU2_REASONS) == 7


# ---------------------------------------------------------------------------------------------- rule sets


class _Env:
    """The engine needs only ``step``, ``sync``, ``actions`` and ``done`` of an environment."""

    done = False

    def __init__(self) -> None:
        self.actions: list[dict] = []

    def sync(self) -> None:
        pass


def _play(rules: RuleSet, user_turns: list[str], **kwargs):
    conv = Conversation(_Env(), ScriptedUser(user_turns), user_system_prompt="u", rules=rules, **kwargs)  # type: ignore[arg-type]
    asyncio.run(conv.start())
    return conv


def test_presets_name_each_benchmarks_rules():
    assert (TAU2.stop_tokens, TAU2.greeting_to_agent, TAU2.first_call_only, TAU2.terminate_termination) == (
        STOP_TOKENS,
        True,
        False,
        None,
    )
    assert (TAU2.max_steps, TAU2.max_errors, TAU2.max_agent_turns) == (200, 10, None)
    assert TAU_BENCH.stop_tokens == (STOP_TOKEN,) and not TAU_BENCH.greeting_to_agent and TAU_BENCH.first_call_only
    assert TAU_BENCH.terminate_termination == "transfer" and type(TAU_BENCH.terminate_termination) is str
    assert (TAU_BENCH.max_steps, TAU_BENCH.max_errors, TAU_BENCH.max_agent_turns) == (None, None, 30)
    with pytest.raises(ValueError, match="max_steps must be positive"):
        RuleSet(name="bad", max_steps=0)


def test_a_conversation_takes_its_limits_from_the_rule_set_unless_given():
    tau2 = _play(TAU2, ["hi"])
    assert (tau2.max_steps, tau2.max_errors, tau2.max_agent_turns) == (200, 10, None)
    assert tau2.trajectory[0] == {"role": "assistant", "content": GREETING}
    bench = _play(TAU_BENCH, ["hi"], max_agent_turns=5)
    assert (bench.max_steps, bench.max_errors, bench.max_agent_turns) == (None, None, 5)
    assert bench.trajectory[0]["role"] == "user" and bench.agent_view == [{"role": "user", "content": "hi"}]
    assert _play(TAU2, ["hi"], max_steps=None).max_steps is None


def test_a_conversation_plays_by_the_rule_set_it_is_given_and_takes_no_rule_keywords():
    rules = RuleSet(
        name="custom",
        stop_tokens=(STOP_TOKEN,),
        greeting_to_agent=False,
        first_call_only=True,
        terminate_termination="transfer",
    )
    conv = Conversation(_Env(), ScriptedUser(["a ###TRANSFER### b"]), user_system_prompt="u", rules=rules)  # type: ignore[arg-type]
    assert (conv.stop_tokens, conv.greeting_to_agent, conv.first_call_only) == ((STOP_TOKEN,), False, True)
    turn = asyncio.run(conv.start())
    assert not turn.done  # ###TRANSFER### is no stop token under these rules
    for keyword in ("stop_tokens", "greeting_to_agent", "first_call_only", "terminate_termination", "greting"):
        with pytest.raises(TypeError, match="unexpected keyword"):
            Conversation(_Env(), ScriptedUser([]), user_system_prompt="u", **{keyword: False})  # type: ignore[arg-type]


def test_an_agent_reply_under_tau_bench_rules_runs_only_its_first_call():
    class Env(_Env):
        def step(self, name, arguments, requestor="assistant"):
            self.actions.append({"name": name, "error": False})
            return f"ran {name}"

    conv = Conversation(Env(), ScriptedUser(["hi"]), user_system_prompt="u", rules=TAU_BENCH)  # type: ignore[arg-type]
    asyncio.run(conv.start())
    calls = [{"name": "a", "arguments": "{}"}, {"name": "b", "arguments": "{}"}]
    turn = asyncio.run(conv.agent_turn(Reply(tool_calls=calls)))
    assert [m["content"] for m in turn.messages] == ["ran a"]


def test_the_engine_conversation_module_has_no_tau2_rule_constants():
    assert not hasattr(engine_conversation, "USER_STOP") and not hasattr(engine_conversation, "GREETING")
