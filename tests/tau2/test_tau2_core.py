"""tau2 core: hashing, DB overlays, init merge, task loading and validation, trajectory parsing, Environment.step."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import shutil

import pytest

from verl_rewards.engine.state import BaseDB, DBState, dict_hash
from verl_rewards.engine.trajectory import (
    MAX_ARGUMENTS_CHARS,
    pair_tool_calls,
    parse_arguments,
    parse_messages,
    strip_history,
)
from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.data import prepare_tau2
from verl_rewards.tau2.domain import Domain, deep_merge
from verl_rewards.tau2.errors import (
    DataNotFoundError,
    TaskValidationError,
    TrajectoryError,
    UnknownDomainError,
)
from verl_rewards.tau2.tasks import parse_splits, parse_tasks

from data_support import installed_data_home
from tau2_support import call, mock_dir, mock_task, require_data, require_domain, say, synthetic_mock, tool

MOCK_AGENT_HASH = "107f83a70b7bf4f616e283b0b0b8451346fe7681173398d4498a1ec15c5fdfc6"
MOCK_USER_HASH = "4cf3d22eed6962ba202c8738421d8a2286d2b5a0cad1372922c928be09ccbfac"
AFTER_CREATE_HASH = "3b82583d5c026d816c5a32430fb3ab8d42b72ec2b91cd5cafaab817e0e05b00c"


@pytest.fixture(scope="module")
def mock():
    return require_domain("mock")


# ----------------------------------------------------------------------------------------------- hashing
@pytest.mark.parametrize(
    "value,digest,suffix",
    [
        ({"b": 1, "a": [1, 2]}, "3813f9409eb0095bf9c8e1225c627acf867d89bd18b8856fc38588a0c8c490f3", "90f3"),
        ({"a": 1}, "f9d86028c6e0d64e225186f96acb69338b2c59764df79162107f5c4bb34d1310", "d1310"),
        ({"a": 1.0}, "742609b207f0900a8e2dff3ae83ac47941af5c29bb6ebfb297f4ca7dd63d8354", "8354"),
        ({"a": True}, "d2d7b967cd9d8bcb81a32005588f45b254aca48e26ff95a8749774df421680b9", "80b9"),
        # the digest of the empty DB is usually quoted as 44136fa3...af8a; the full digest of "{}" ends in ...caaff8a
        ({}, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", "ff8a"),
    ],
)
def test_hash_vectors(value, digest, suffix):
    h = dict_hash(value)
    assert h == digest and h.endswith(suffix)


def test_mock_hash_vectors(mock):
    env = mock.make_env()
    assert env.get_data_hash() == MOCK_AGENT_HASH
    assert env.get_user_data_hash() == MOCK_USER_HASH
    env.step("create_task", {"user_id": "user_1", "title": "Important Meeting"})
    assert env.get_data_hash() == AFTER_CREATE_HASH
    assert env.get_user_data_hash() == MOCK_USER_HASH
    assert mock.make_env().get_data_hash() == MOCK_AGENT_HASH  # the shared base is untouched


def test_airline_and_retail_have_no_user_db():
    for name in ("airline", "retail"):
        try:
            dom = require_domain(name)
        except pytest.skip.Exception:
            continue
        assert dom.make_env().get_user_data_hash() is None


# ------------------------------------------------------------------------------------------ DBState
def _base():
    return BaseDB(
        {
            "a": {"k1": {"x": 1, "l": [1, 2]}, "k2": {"x": 2.0}},
            "b": [{"v": 1}, {"v": 2}],
            "c": 5,
        }
    )


def test_overlay_full_hash_matches_plain_dump():
    base = _base()
    s = DBState(base)
    assert s.full_hash() == dict_hash(base.data)
    s.write("a", "k1")["l"].append(3)
    s.insert("a", "k0", {"x": None})
    s.append("b", {"v": 3})
    s.write("b", 0)["v"] = 10
    assert s.full_hash() == dict_hash(s.to_dict())
    assert base.data["a"]["k1"]["l"] == [1, 2] and base.data["b"][0]["v"] == 1  # base never mutated


def test_items_and_freeze_read_the_overlay():
    base = _base()
    s = DBState(base)
    assert list(s.items("a")) == list(base.data["a"].items()) and list(s.items("b")) == list(enumerate(base.data["b"]))
    s.write("a", "k2")["x"] = 3
    s.insert("a", "k0", {"x": None})
    s.append("b", {"v": 3})
    s.write("b", 1)["v"] = 20
    assert list(s.items("a")) == [("k1", {"x": 1, "l": [1, 2]}), ("k2", {"x": 3}), ("k0", {"x": None})]
    assert list(s.items("b")) == [(0, {"v": 1}), (1, {"v": 20}), (2, {"v": 3})]
    frozen = s.freeze()
    assert frozen.data == s.to_dict() and list(frozen.data) == list(base.data)
    assert frozen.full_hash() == s.full_hash()
    t = DBState(frozen)
    t.write("b", 0)["v"] = 5
    assert frozen.data["b"][0] == {"v": 1} and s.get("b", 0) == {"v": 1}  # a frozen state is never written


def test_to_dict_is_what_keys_and_get_give():
    base = _base()
    s = DBState(base)
    s.write("a", "k2")["x"] = 3
    s.insert("a", "k0", {"x": None})
    s.insert("a", "k1", {"x": 9})
    s.append("b", {"v": 3})
    s.write("b", 0)["v"] = 10
    expected = {
        "a": {k: s.get("a", k) for k in s.keys("a")},
        "b": [s.get("b", i) for i in s.keys("b")],
        "c": 5,
    }
    got = s.to_dict()
    assert (
        got
        == expected
        == {"a": {"k1": {"x": 9}, "k2": {"x": 3}, "k0": {"x": None}}, "b": [{"v": 10}, {"v": 2}, {"v": 3}], "c": 5}
    )
    assert list(got["a"]) == ["k1", "k2", "k0"]  # DB order: the base's keys, then the added ones
    assert DBState(base).to_dict() == base.data and list(DBState(base).to_dict()["a"]) == list(base.data["a"])


def _dataclass_objects(value):
    """Every dataclass instance inside ``value`` (a task), depth first."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in dataclasses.fields(value):
            if f.name != "raw":
                yield from _dataclass_objects(getattr(value, f.name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _dataclass_objects(item)


@pytest.mark.parametrize("name", ["mock", "airline", "retail", "telecom", "banking_knowledge"])
def test_every_parsed_task_equals_its_dataclasses_own_construction(name):
    """Task validation builds its frozen dataclasses without their ``__init__`` (speed); each object must hold
    exactly the fields ``__init__`` would set, with the same values, equality and repr."""
    domain = load_domain(name, require_data(name))
    seen = set()
    for tid in domain.tasks:
        for obj in _dataclass_objects(domain.task(tid)):
            rebuilt = dataclasses.replace(obj)  # through __init__, every field from obj
            assert vars(rebuilt) == vars(obj) and rebuilt == obj and repr(rebuilt) == repr(obj), (tid, obj)
            seen.add(type(obj).__name__)
    assert {"Task", "EvaluationCriteria", "Action"} <= seen
    if name in ("mock", "telecom"):
        assert {"InitialState", "EnvFunctionCall", "EnvAssertion"} <= seen


@pytest.mark.parametrize("name", ["mock", "banking_knowledge"])
def test_initialisation_data_gives_the_deep_copy_constructions_bases_on_every_task(name):
    """The DBs a task's ``initialization_data`` patches are copied with ``clone_data`` before the normaliser runs;
    on every task that patches a DB, the bases equal (canonical dump, object sharing inside one DB) those of
    ``copy.deepcopy``."""
    domain = load_domain(name, require_data(name))
    spec, patched = domain.spec, 0
    for tid in domain.tasks:
        state = domain.task(tid).initial_state
        data = None if state is None else state.initialization_data
        if data is None or (data.agent_data is None and data.user_data is None):
            continue
        patched += 1
        agent, user, _ = domain._bases_for(domain.task(tid))
        if data.agent_data is not None:
            expected = spec.normalize_db(copy.deepcopy(deep_merge(domain.base_db.data, data.agent_data)))
            assert json.dumps(agent.data, sort_keys=True, default=str) == json.dumps(
                expected, sort_keys=True, default=str
            ), tid
            assert _shared_ids(agent.data) == _shared_ids(expected), tid
        if data.user_data is not None and data.agent_data is None and not spec.shared_user_db:
            expected = spec.normalize_user_db(copy.deepcopy(deep_merge(domain.user_base_db.data, data.user_data)))
            assert json.dumps(user.data, sort_keys=True, default=str) == json.dumps(
                expected, sort_keys=True, default=str
            ), tid
    assert patched >= 1


def _shared_ids(value, seen=None, path="$"):
    """Paths of containers reached twice inside ``value`` (copy.deepcopy keeps such sharing; nothing here has it)."""
    seen = {} if seen is None else seen
    out = []
    if isinstance(value, dict | list):
        if id(value) in seen:
            return [(seen[id(value)], path)]
        seen[id(value)] = path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            out += _shared_ids(v, seen, f"{path}.{k}")
    return out


def test_same_as_equals_hash_equality():
    base = _base()
    a, b = DBState(base), DBState(base)
    assert a.same_as(b)
    a.write("a", "k1")["x"] = 1  # written but equal
    assert a.same_as(b) and a.full_hash() == b.full_hash()
    a.write("a", "k2")["x"] = 2  # 2 vs 2.0: JSON text differs, so does the hash
    assert not a.same_as(b) and a.full_hash() != b.full_hash()
    # insertion order of new keys is not part of the sorted-key dump
    c, d = DBState(base), DBState(base)
    c.insert("a", "n1", {"x": 1})
    c.insert("a", "n2", {"x": 2})
    d.insert("a", "n2", {"x": 2})
    d.insert("a", "n1", {"x": 1})
    assert c.full_hash() == d.full_hash()
    assert c.same_as(d)
    # different bases fall back to full hashes
    e = DBState(BaseDB(copy.deepcopy(base.data)))
    assert e.same_as(DBState(base))


def test_deep_merge_addict_semantics():
    base = {"t": {"a": {"x": 1, "y": [1, 2]}, "b": 1}, "u": [1]}
    patch = {"t": {"a": {"y": [3]}, "c": {"z": 1}}, "u": {"now": "dict"}}
    out = deep_merge(base, patch)
    assert out == {"t": {"a": {"x": 1, "y": [3]}, "b": 1, "c": {"z": 1}}, "u": {"now": "dict"}}
    assert base == {"t": {"a": {"x": 1, "y": [1, 2]}, "b": 1}, "u": [1]}
    out["t"]["c"]["z"] = 2
    assert patch["t"]["c"]["z"] == 1


# ------------------------------------------------------------------------------------- loading domains
def test_load_domain_cache_and_data_dir_resolution(monkeypatch, tmp_path):
    root = require_data("mock")
    a = load_domain("mock", root)
    assert load_domain("mock", str(root)) is a
    assert load_domain("mock", root / "mock") is a  # a folder holding the files directly
    monkeypatch.setenv("TAU2_DATA_DIR", str(root))
    assert load_domain("mock") is a
    monkeypatch.delenv("TAU2_DATA_DIR")
    home = installed_data_home(tmp_path, monkeypatch)
    with pytest.raises(DataNotFoundError, match="verl-rewards data get tau2.*TAU2_DATA_DIR"):
        load_domain("mock")  # nothing installed
    shutil.copytree(root / "mock", home / "tau2" / "mock")
    assert load_domain("mock").data_dir == home / "tau2" / "mock"  # the installed folder, last
    with pytest.raises(DataNotFoundError):
        load_domain("mock", root / "does-not-exist")


@pytest.mark.parametrize("name", ["nope", "common", "../mock", "", "Mock"])
def test_unknown_domain(name):
    with pytest.raises(UnknownDomainError):
        load_domain(name, os.devnull)


def test_domain_attributes(mock):
    assert isinstance(mock, Domain)
    assert len(mock.tasks) == 10 and "create_task_1" in mock.tasks
    assert mock.split("base") == list(mock.tasks)
    with pytest.raises(KeyError, match="available"):
        mock.split("train")
    assert "task" in mock.policy.lower()
    kinds = {s["name"]: s["kind"] for s in mock.tool_specs()}
    assert kinds == {
        "create_task": "write",
        "get_users": "read",
        "update_task_status": "write",
        "transfer_to_human_agents": "generic",
    }
    spec = next(s for s in mock.tool_specs() if s["name"] == "create_task")
    assert spec["parameters"]["required"] == ["user_id", "title"]
    assert {s["name"] for s in mock.user_tool_specs()} == {"check_notifications", "dismiss_notification"}
    with pytest.raises(KeyError, match="unknown task id"):
        mock.make_env("no_such_task")


@pytest.mark.parametrize("name,sizes", [("airline", (30, 20, 50)), ("retail", (74, 40, 114))])
def test_real_splits(name, sizes):
    dom = require_domain(name)
    train, test, base = (dom.split(s) for s in ("train", "test", "base"))
    assert (len(train), len(test), len(base)) == sizes
    assert set(train) | set(test) == set(base) and not set(train) & set(test)
    assert len(dom.tasks) == sizes[2]


# ---------------------------------------------------------------------------------------- task schema
GOOD_CRITERIA = {"actions": [{"action_id": "a", "name": "get_users", "arguments": {}}]}


@pytest.mark.parametrize(
    "task,task_id,field",
    [
        ({"id": 5}, "#0", "id"),
        ({"id": "t", "evaluation_criteria": []}, "t", "evaluation_criteria"),
        ({"id": "t", "evaluation_criteria": {"actions": {}}}, "t", "evaluation_criteria.actions"),
        (
            {"id": "t", "evaluation_criteria": {"actions": [{"action_id": "a", "arguments": {}}]}},
            "t",
            "evaluation_criteria.actions[0].name",
        ),
        (
            {"id": "t", "evaluation_criteria": {"actions": [{"action_id": "a", "name": "x", "arguments": []}]}},
            "t",
            "evaluation_criteria.actions[0].arguments",
        ),
        (
            {
                "id": "t",
                "evaluation_criteria": {
                    "actions": [{"action_id": "a", "name": "x", "arguments": {}, "requestor": "bot"}]
                },
            },
            "t",
            "evaluation_criteria.actions[0].requestor",
        ),
        (
            {
                "id": "t",
                "evaluation_criteria": {
                    "actions": [{"action_id": "a", "name": "x", "arguments": {}, "compare_args": "title"}]
                },
            },
            "t",
            "evaluation_criteria.actions[0].compare_args",
        ),
        (
            {"id": "t", "evaluation_criteria": {"reward_basis": ["DB", "VIBES"]}},
            "t",
            "evaluation_criteria.reward_basis[1]",
        ),
        (
            {"id": "t", "evaluation_criteria": {"env_assertions": [{"env_type": "assistant", "arguments": {}}]}},
            "t",
            "evaluation_criteria.env_assertions[0].func_name",
        ),
        (
            {"id": "t", "evaluation_criteria": {"env_assertions": [{"func_name": "f", "assert_value": "yes"}]}},
            "t",
            "evaluation_criteria.env_assertions[0].env_type",
        ),
        ({"id": "t", "evaluation_criteria": {"communicate_info": [1]}}, "t", "evaluation_criteria.communicate_info[0]"),
        (
            {"id": "t", "initial_state": {"message_history": [{"role": "robot"}]}},
            "t",
            "initial_state.message_history",
        ),
        (
            {"id": "t", "initial_state": {"initialization_actions": [{"env_type": "user"}]}},
            "t",
            "initial_state.initialization_actions[0].func_name",
        ),
        ({"id": "t", "initial_state": {"initialization_data": {"agent_data": []}}}, "t", None),
    ],
)
def test_malformed_task_names_id_and_field(task, task_id, field):
    with pytest.raises(TaskValidationError) as info:
        parse_tasks([task])
    err = info.value
    assert err.task_id == task_id
    if field is not None:
        assert err.field == field
        assert field in str(err)
    assert repr(task_id) in str(err)


def test_task_defaults_and_duplicates():
    tasks = parse_tasks([{"id": "t", "evaluation_criteria": GOOD_CRITERIA}, {"id": "u"}])
    t = tasks["t"]
    assert t.evaluation_criteria.reward_basis == ("DB", "COMMUNICATE")
    assert t.evaluation_criteria.actions[0].requestor == "assistant"
    assert t.evaluation_criteria.actions[0].compare_args is None
    assert tasks["u"].evaluation_criteria is None and tasks["u"].history == ()
    with pytest.raises(TaskValidationError, match="duplicate"):
        parse_tasks([{"id": "t"}, {"id": "t"}])
    with pytest.raises(TaskValidationError):
        parse_tasks({"id": "t"})


def test_split_validation():
    assert parse_splits({"base": ["t"]}, ["t"]) == {"base": ["t"]}
    with pytest.raises(TaskValidationError) as info:
        parse_splits({"train": ["t", "ghost"]}, ["t"])
    assert info.value.task_id == "ghost" and info.value.field == "splits.train[1]"


def test_a_bad_task_fails_on_first_use_naming_it_and_before_prepare_writes(tmp_path):
    """Loading checks ids only; each task is validated on its first use (the error names task, field and file, every
    time), and ``prepare`` uses every task of its splits before writing anything."""
    require_data("mock")
    root = mock_dir(tmp_path, [mock_task("ok", None), {"id": "bad", "evaluation_criteria": {"actions": 3}}])
    domain = load_domain("mock", root)
    assert list(domain.tasks) == ["ok", "bad"] and domain.task("ok").id == "ok"
    for _ in range(2):
        with pytest.raises(TaskValidationError, match="'bad'.*evaluation_criteria.actions.*tasks.json"):
            domain.task("bad")
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="'bad'.*evaluation_criteria.actions"):
        prepare_tau2(root, "mock", out, ["base"], mode="solo", progress=False)
    assert not out.exists() or not any(out.iterdir())


def test_loading_validates_no_task_and_each_once_on_first_use(tmp_path, monkeypatch):
    require_data("mock")
    from verl_rewards.tau2 import tasks as tasks_module

    calls: list[str] = []
    original = tasks_module.parse_task
    monkeypatch.setattr(tasks_module, "parse_task", lambda raw, i=None: calls.append(raw["id"]) or original(raw, i))
    root = mock_dir(tmp_path, [mock_task("a", None), mock_task("b", None)])
    domain = load_domain("mock", root)
    assert calls == [] and len(domain.tasks) == 2 and "b" in domain.tasks and "c" not in domain.tasks
    assert domain.task("b") is domain.task("b") and calls == ["b"]
    with pytest.raises(TaskValidationError, match="duplicate task id"):
        load_domain("mock", mock_dir(tmp_path / "dup", [mock_task("a", None), mock_task("a", None)]))


def test_all_real_tasks_load():
    for name in ("mock", "airline", "retail"):
        root = require_data(name)
        from verl_rewards.tau2.tasks import load_tasks

        tasks = load_tasks(root / name / "tasks.json")
        assert tasks and all(t.id for t in tasks.values())


# ------------------------------------------------------------------------------------ trajectory parsing
@pytest.mark.parametrize(
    "raw,expected",
    [
        (None, {}),
        ("", {}),
        ("  ", {}),
        ({"a": 1}, {"a": 1}),
        ('{"a": [1, 2]}', {"a": [1, 2]}),
        ("{bad", None),
        ("[1, 2]", None),
        ('"text"', None),
        ("null", None),
        (5, None),
        (["a"], None),
        ("[" * 100_000 + "]" * 100_000, None),  # too long
        ("[" * 20_000 + "]" * 20_000, None),  # too deep
        ('{"a": "' + "x" * MAX_ARGUMENTS_CHARS + '"}', None),
        ({"a": "x" * MAX_ARGUMENTS_CHARS}, None),
    ],
)
def test_parse_arguments(raw, expected):
    args, error = parse_arguments(raw)
    assert args == expected
    assert (error is None) == (expected is not None)


def test_parse_messages_formats():
    msgs = parse_messages(
        [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]},
            call("create_task", {"user_id": "u"}, "a"),
            call("create_task", {"user_id": "u"}, "b", flat=True),
            {"role": "tool", "id": "b", "content": "x"},
            call("dismiss_notification", '{"notification_id": "n"}', "c", role="user"),
            {"role": "assistant", "content": "ok", "tool_calls": None},
        ]
    )
    assert msgs[1].content == "hi\nthere"
    assert msgs[2].tool_calls[0].arguments == {"user_id": "u"} and msgs[2].tool_calls[0].requestor == "assistant"
    assert msgs[3].tool_calls[0].name == "create_task" and msgs[3].tool_calls[0].id == "b"
    assert msgs[4].tool_call_id == "b"
    assert msgs[5].tool_calls[0].requestor == "user"
    assert msgs[6].tool_calls == () and msgs[6].has_text()


@pytest.mark.parametrize(
    "bad",
    [
        "not a list",
        {"role": "user"},
        [1],
        [{"role": "function", "content": "x"}],
        [{"role": "user", "content": 5}],
        [{"role": "assistant", "tool_calls": {"id": 1}}],
        [{"role": "user", "content": "x"}] * 10_001,
    ],
)
def test_parse_messages_rejects_caller_bugs(bad):
    with pytest.raises(TrajectoryError):
        parse_messages(bad)


def test_model_controlled_garbage_never_raises():
    msgs = parse_messages(
        [
            {"role": "assistant", "tool_calls": ["junk", {"function": {"name": 5}}, {"name": "x" * 1000}]},
            {"role": "assistant", "tool_calls": [{"id": 3, "function": {"name": "get_users", "arguments": "{"}}]},
        ]
    )
    calls = [c for m in msgs for c in m.tool_calls]
    assert all(not c.valid for c in calls)
    assert calls[3].id == "3" and "not valid JSON" in calls[3].error


def test_pairing_by_id_fifo_unanswered_and_orphans():
    msgs = parse_messages(
        [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "a", "name": "f", "arguments": {}},
                    {"id": "b", "name": "g", "arguments": {}},
                    {"id": "c", "name": "h", "arguments": {}},
                ],
            },
            tool("b"),
            {"role": "tool", "content": "no id"},  # oldest unanswered: a
            tool("zzz"),  # answers nothing
        ]
    )
    p = pair_tool_calls(msgs)
    assert [(c.name, m.index) for c, m in p.pairs] == [("g", 1), ("f", 2)]
    assert [c.name for c in p.unanswered] == ["h"]
    assert [m.index for m in p.orphan_tool_messages] == [3]
    # calls without ids pair in order
    msgs = parse_messages([{"role": "assistant", "tool_calls": [{"name": "f"}, {"name": "g"}]}, tool("x"), tool("y")])
    assert [c.name for c, _ in pair_tool_calls(msgs).pairs] == ["f", "g"]


def test_strip_history_prefix():
    hist = parse_messages([say("I need help", "user"), call("get_users", {}, "h1"), tool("h1", "[]")])
    body = parse_messages([say("more", "user")])
    full = parse_messages([{"role": "system", "content": "s"}] + [say("I need help", "user")])
    assert strip_history(list(hist) + list(body), hist) == body
    assert strip_history(body, hist) == body
    assert strip_history(full, hist) == full[1:]


# ---------------------------------------------------------------------------------------- Environment.step
BAD_CALLS = [
    (None, {}),
    (5, {}),
    ("", {}),
    ("x" * 10_000, {}),
    ("nope", {}),
    ("create_task", "{not json"),
    ("create_task", "[1]"),
    ("create_task", ["user_1"]),
    ("create_task", {"user_id": "user_1"}),  # missing parameter
    ("create_task", {"user_id": "user_1", "title": "t", "colour": "red"}),  # unknown parameter
    ("create_task", {"user_id": ["unhashable"], "title": "t"}),
    ("create_task", {"user_id": "user_1", "title": 5}),  # pydantic would reject
    ("create_task", {"user_id": "user_1", "title": "t", "description": {"x": 1}}),
    ("create_task", {1: "user_1"}),
    ("assert_task_status", {"task_id": "task_1", "expected_status": "pending"}),  # helper, not a tool
    ("_notifications", {}),
    ("db", {}),
    ("call", {"name": "create_task", "arguments": {}}),
    ("tool_specs", {}),
    ("check_notifications", {}),  # a user tool, called by the assistant
    ("update_task_status", {"task_id": {"a": 1}, "status": "x"}),
]


@pytest.mark.parametrize("name,args", BAD_CALLS)
def test_step_never_raises_and_leaves_state(mock, name, args):
    env = mock.make_env()
    obs = env.step(name, args)
    assert isinstance(obs, str) and obs.startswith("Error: ")
    assert len(obs) < 2_000
    assert env.get_data_hash() == MOCK_AGENT_HASH and env.get_user_data_hash() == MOCK_USER_HASH
    assert env.actions[-1]["error"] is True and env.actions[-1]["observation"] == obs


def test_step_error_strings(mock):
    env = mock.make_env()
    assert env.step("nope", {}) == "Error: Tool 'nope' not found."
    assert env.step("create_task", "{x").startswith("Error: Invalid tool arguments: not valid JSON")
    assert env.step("get_users", {}, requestor="bot") == "Error: Invalid requestor: bot"
    assert "unexpected keyword argument 'colour'" in env.step("get_users", {"colour": 1})


def test_action_log_and_terminate(mock):
    env = mock.make_env()
    assert env.actions == [] and not env.done
    env.step("get_users", "{}")
    env.step("transfer_to_human_agents", {"summary": "s"})
    assert env.done
    assert env.actions == [
        {
            "name": "get_users",
            "arguments": {},
            "requestor": "assistant",
            "observation": '[{"user_id": "user_1", "name": "Test User", "tasks": ["task_1"]}]',
            "error": False,
        },
        {
            "name": "transfer_to_human_agents",
            "arguments": {"summary": "s"},
            "requestor": "assistant",
            "observation": "Transfer successful",
            "error": False,
        },
    ]


def test_deterministic_ids_across_envs(mock):
    outs = []
    for _ in range(2):
        env = mock.make_env()
        outs.append([env.step("create_task", {"user_id": "user_1", "title": t}) for t in ("a", "b")])
    assert outs[0] == outs[1]
    assert json.loads(outs[0][1])["task_id"] == "task_3"


def test_arguments_are_copied_not_aliased(mock):
    args = {"user_id": "user_1", "title": "t"}
    env = mock.make_env()
    env.step("create_task", args)
    env.step("update_task_status", {"task_id": "task_2", "status": "completed"})
    assert args == {"user_id": "user_1", "title": "t"}


def test_gold_env_is_read_only(mock):
    gold, errors = mock.gold_env("create_task_1")
    assert errors == []
    assert gold.get_data_hash() == AFTER_CREATE_HASH
    assert mock.gold_env("create_task_1")[0] is gold  # cached
    with pytest.raises(RuntimeError):
        gold.step("get_users", {})


def test_gold_replay_errors_are_recorded_and_ignored(tmp_path):
    dom = synthetic_mock(
        tmp_path,
        [
            mock_task(
                "t",
                {
                    "actions": [
                        {"action_id": "1", "name": "create_task", "arguments": {"user_id": "ghost", "title": "x"}},
                        {"action_id": "2", "name": "no_such_tool", "arguments": {}},
                        {"action_id": "3", "name": "create_task", "arguments": {"user_id": "user_1", "title": "y"}},
                    ]
                },
            )
        ],
    )
    gold, errors = dom.gold_env("t")
    assert [(e["action_id"], e["mutating"]) for e in errors] == [("1", True), ("2", False)]
    assert errors[0]["error"] == "Error: User ghost not found"
    assert gold.agent_db.get("tasks", "task_2")["title"] == "y"


def test_pairing_is_linear_on_pathological_input():
    import time

    n = 9_000  # near the trajectory limit; the bound guards against a blow-up only, it is no speed claim
    calls = [{"role": "assistant", "tool_calls": [{"id": f"i{k}", "name": "f"} for k in range(n)]}]
    answers = [tool(f"other{k}") for k in range(n)]
    t0 = time.perf_counter()
    p = pair_tool_calls(parse_messages(calls + answers))
    assert time.perf_counter() - t0 < 60.0
    assert len(p.unanswered) == n and len(p.orphan_tool_messages) == n


def test_pickling_domain_and_result(mock):
    import pickle

    from verl_rewards.tau2 import evaluate_trajectory

    assert pickle.loads(pickle.dumps(mock)) is mock
    result = evaluate_trajectory(mock, "create_task_1", [say("hi")])
    blob = pickle.dumps(result)
    assert len(blob) < 20_000
    back = pickle.loads(blob)
    assert back.reward == result.reward == 0.0 and back.predicted_env is None


@pytest.mark.parametrize("name", ["airline", "retail", "mock", "telecom", "banking_knowledge"])
def test_gold_replay_without_reads_reaches_the_full_replays_state_on_every_task(name):
    """The cached gold state skips read-only gold actions (the first reward call of a task pays no reads): on
    every task of every domain it equals the state of a replay that runs every action, on both DBs."""
    domain = require_domain(name)
    skipped = 0
    for task_id in domain.tasks:
        fast, _ = domain.replay_gold(task_id)
        full, _ = domain.replay_gold(task_id, run_reads=True)
        assert fast.same_db_as(full) == (True, True), task_id
        skipped += len(full.actions) - len(fast.actions)
    assert skipped > 0
