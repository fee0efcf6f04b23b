"""tau2 ``banking_knowledge``: tools, discoverable tools, DB hashes, rewards and retrieval against tau2's own code.

The facts in ``tests/data/tau2_banking_knowledge_reference.json`` were produced by tau2-bench 1.0.1's own code on all
97 tasks (how: ``tests/data/tau2_banking_knowledge_reference.md``): the DB hash of every task's initial state and
after every gold action, every gold action's output (sha256) and error flag, tau2's evaluator on seven trajectories
per task, scripted tool calls with their exact outputs, BM25 / grep results and the assembled policies.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from verl_rewards.tau2 import evaluate_trajectory, load_domain
from verl_rewards.tau2.domains.banking_knowledge import read_log_allowlist, retrieval
from verl_rewards.tau2.domains.banking_knowledge.retrieval import RetrievalConfigError

from repo_paths import DATA
from tau2_support import require_data

REFERENCE = json.loads((DATA / "tau2_banking_knowledge_reference.json").read_text(encoding="utf-8"))
TASK_IDS = sorted(REFERENCE["tasks"])
#: the reference was recorded with tau2's documents re-sorted by id (its README): search results, grep and the
#: full_kb prompt are compared in that order, not tau2's default folder order, which differs between copies
AS_RECORDED = "id"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def root() -> Path:
    return require_data("banking_knowledge")


@pytest.fixture(scope="module")
def dom(root: Path) -> Any:
    return load_domain("banking_knowledge", root)


# ------------------------------------------------------------------------------------------- scenarios
WRONG_WRITE = (
    "assistant",
    "log_verification",
    {
        "name": "Wrong Person",
        "user_id": "wrong_user",
        "address": "1 Nowhere",
        "email": "wrong@example.com",
        "phone_number": "000",
        "date_of_birth": "01/01/1970",
        "time_verified": "2025-11-14 03:40:00 EST",
    },
)
EXTRA_UNLOCK = ("assistant", "unlock_discoverable_agent_tool", {"agent_tool_name": "freeze_debit_card_3892"})


def scenarios(dom: Any, task_id: str) -> dict[str, list[tuple[str, str, dict[str, Any]]]]:
    """The trajectories tau2's evaluator scored, as (requestor, tool, arguments) lists (same rules as the script)."""
    task = dom.task(task_id)
    gold = [(a.requestor, a.name, dict(a.arguments)) for a in task.evaluation_criteria.actions]
    env = dom.make_env(task_id)
    out = {"gold": gold}
    writes = [i for i, (_, name, _) in enumerate(gold) if env.is_mutating_tool(name)]
    if writes:
        out["minus_last_write"] = gold[: writes[-1]] + gold[writes[-1] + 1 :]
    out["extra_wrong_write"] = [*gold, WRONG_WRITE]
    out["no_actions"] = []
    out["extra_unlock"] = [*gold, EXTRA_UNLOCK]
    called = [a[2].get("agent_tool_name") for a in gold if a[1] == "call_discoverable_agent_tool"]
    if called:
        last = called[-1]
        out["unlocked_not_called"] = [
            a for a in gold if not (a[1] == "call_discoverable_agent_tool" and a[2].get("agent_tool_name") == last)
        ]
        out["called_without_unlock"] = [
            a for a in gold if not (a[1] == "unlock_discoverable_agent_tool" and a[2].get("agent_tool_name") == last)
        ]
    return out


def run_live(dom: Any, task_id: str, actions: list[tuple[str, str, dict[str, Any]]]) -> tuple[Any, list, list]:
    """Run the calls on a fresh environment; the trajectory (OpenAI-style messages) and each step's facts."""
    env = dom.make_env(task_id)
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": "Hello, how can I help?"}]
    steps = []
    for i, (requestor, name, args) in enumerate(actions):
        observation, error = env.execute(name, args, requestor)
        call = {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        messages.append({"role": requestor, "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": observation, "requestor": requestor})
        steps.append([sha(observation), error, env.get_data_hash()])
    messages.append({"role": "assistant", "content": "Goodbye."})
    return env, messages, steps


# --------------------------------------------------------------------------------------------- hashes
def test_all_97_tasks_load_in_file_order(dom: Any) -> None:
    assert list(dom.tasks) == TASK_IDS and len(TASK_IDS) == 97
    assert len(retrieval.knowledge_base(dom.data_dir)) == 698


def test_initial_hash_and_allowlist_equal_tau2_on_every_task(dom: Any) -> None:
    for tid in TASK_IDS:
        ref = REFERENCE["tasks"][tid]
        env = dom.make_env(tid)
        assert env.get_data_hash() == ref["initial_hash"], tid
        assert sorted(env.tools.read_log_allowlist) == ref["allowlist"], tid
        assert sorted(read_log_allowlist(dom.task(tid))) == ref["allowlist"]


def test_every_gold_action_output_error_and_hash_equal_tau2(dom: Any) -> None:
    checked = 0
    for tid in TASK_IDS:
        _, _, steps = run_live(dom, tid, scenarios(dom, tid)["gold"])
        assert steps == REFERENCE["tasks"][tid]["steps"], tid
        checked += len(steps)
    assert checked == sum(len(t["steps"]) for t in REFERENCE["tasks"].values()) > 900


def test_gold_state_hash_equals_tau2_after_replay(dom: Any) -> None:
    for tid in TASK_IDS:
        steps = REFERENCE["tasks"][tid]["steps"]
        final = steps[-1][2] if steps else REFERENCE["tasks"][tid]["initial_hash"]
        assert dom.gold_hash(tid) == final, tid
        _, messages, _ = run_live(dom, tid, scenarios(dom, tid)["gold"])
        fresh = dom.make_env(tid)
        fresh.replay(_parsed(messages), strict=True)
        assert fresh.get_data_hash() == final, tid


def _parsed(messages: list[dict[str, Any]]) -> Any:
    from verl_rewards.engine.trajectory import parse_messages

    return parse_messages(messages)


# -------------------------------------------------------------------------------------------- rewards
def test_rewards_equal_tau2_evaluator_on_seven_trajectory_kinds(dom: Any) -> None:
    compared = 0
    for tid in TASK_IDS:
        ref = REFERENCE["tasks"][tid]["rewards"]
        built = scenarios(dom, tid)
        assert sorted(built) == sorted(ref), tid
        for kind, actions in built.items():
            _, messages, _ = run_live(dom, tid, actions)
            result = evaluate_trajectory(dom, tid, messages, nl_policy="skip")
            reward, breakdown = ref[kind]
            ours = {k: v for k, v in result.breakdown.items()}
            assert (result.reward, ours) == (reward, breakdown), (tid, kind, result)
            compared += 1
    assert compared >= 97 * 5


def test_reward_rules_on_discoverable_tools(dom: Any) -> None:
    tid = next(
        t
        for t in TASK_IDS
        if "unlocked_not_called" in REFERENCE["tasks"][t]["rewards"]
        and "DB" in REFERENCE["tasks"][t]["rewards"]["gold"][1]
    )
    ref = REFERENCE["tasks"][tid]["rewards"]
    assert ref["gold"][0] == 1.0 and ref["extra_unlock"][0] == 1.0  # an unlock alone leaves no trace in the DB
    assert ref["called_without_unlock"][0] == 0.0  # the call fails, nothing is logged


# ------------------------------------------------------------------------------------------- probes
def test_scripted_calls_match_tau2_string_for_string(root: Path) -> None:
    probes = REFERENCE["probes"]
    dom = load_domain("banking_knowledge", root, retrieval=probes["retrieval"], document_order=AS_RECORDED)
    env = dom.make_env(probes["task"])
    env.tools.read_log_allowlist = frozenset()
    for i, (requestor, name, args, content, error, digest) in enumerate(probes["steps"]):
        observation, err = env.execute(name, args, requestor)
        assert retrieval.TIMING_RE.sub("", observation) == content, (i, name)
        assert err == error and env.get_data_hash() == digest, (i, name)


def test_numeric_arguments_are_normalised_to_floats(dom: Any) -> None:
    ids = []
    for amount in ("2500", "2500.0"):
        env = dom.make_env()
        env.step("unlock_discoverable_agent_tool", {"agent_tool_name": "submit_credit_limit_increase_request_7392"})
        args = (
            '{"credit_card_account_id": "cc_lj82d4f1a9_silver", "user_id": "lj82d4f1a9", '
            f'"requested_increase_amount": {amount}}}'
        )
        env.step(
            "call_discoverable_agent_tool",
            {"agent_tool_name": "submit_credit_limit_increase_request_7392", "arguments": args},
        )
        ids.append(env.get_data_hash())
    assert ids[0] == ids[1]


def test_read_tools_are_logged_only_when_allowlisted(dom: Any) -> None:
    hashes = []
    for allow in (frozenset(), frozenset({"get_user_dispute_history_7291"})):
        env = dom.make_env()
        env.tools.read_log_allowlist = allow
        before = env.get_data_hash()
        env.step("unlock_discoverable_agent_tool", {"agent_tool_name": "get_user_dispute_history_7291"})
        env.step(
            "call_discoverable_agent_tool",
            {"agent_tool_name": "get_user_dispute_history_7291", "arguments": '{"user_id": "123"}'},
        )
        hashes.append((before, env.get_data_hash()))
    assert hashes[0][0] == hashes[0][1] and hashes[1][0] != hashes[1][1]


def test_discoverable_tools_are_not_offered_but_run_by_their_own_names_unlogged(dom: Any) -> None:
    """As in tau2: not in the tool list, but a call by the tool's own name runs it without an unlock and without
    ``call_discoverable_agent_tool``'s log record (tau2_trajectories.json pins the texts and hashes)."""
    env = dom.make_env()
    assert "freeze_debit_card_3892" not in dom.spec.agent_tool_specs()
    before = env.get_data_hash()
    out = env.step("freeze_debit_card_3892", {"card_id": "dbc_538bfb9cba"})
    assert out.startswith("Debit Card Frozen Successfully\nCard ID: dbc_538bfb9cba\nStatus: FROZEN")
    assert env.get_data_hash() != before and env.is_mutating_tool("freeze_debit_card_3892")
    assert "No records found" in env.step("list_discoverable_agent_tools", {})
    assert env.step("freeze_debit_card_3892", {"card_id": "x"}, requestor="user") == (
        "Error: Tool 'freeze_debit_card_3892' not found."
    )


def test_solo_mode_is_refused(dom: Any) -> None:
    with pytest.raises(ValueError, match="does not support solo mode"):
        dom.make_env("task_001", solo_mode=True)


# ----------------------------------------------------------------------------------------- retrieval
def test_bm25_and_grep_results_equal_tau2(root: Path) -> None:
    kb = retrieval.knowledge_base(root / "banking_knowledge", AS_RECORDED)
    index = retrieval.bm25_index(kb)
    for query, ref in REFERENCE["search"]["bm25"].items():
        assert [[d, s] for d, s in index.search(query)] == ref, query
    grep = retrieval.GrepIndex(kb)
    for pattern, ref in REFERENCE["search"]["grep"].items():
        assert [[d, s] for d, s in grep.search(pattern)] == ref, pattern


def test_the_bm25_index_is_built_on_the_first_search(root: Path, dom: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from verl_rewards.tau2.domain import Domain
    from verl_rewards.tau2.domains.banking_knowledge import knowledge

    expected = retrieval.TIMING_RE.sub("", dom.make_env("task_001").step("KB_search", {"query": "close a debit card"}))
    monkeypatch.setattr(knowledge, "_shared", {})  # a process that has built nothing yet
    built: list[Any] = []

    class Counting(retrieval.BM25Index):
        def __init__(self, kb: Any) -> None:
            built.append(kb.folder)
            super().__init__(kb)

    monkeypatch.setattr(retrieval, "BM25Index", Counting)
    fresh = Domain("banking_knowledge", root, retrieval="bm25")
    env = fresh.make_env("task_001")
    assert built == []  # loading the domain and making an environment build no index
    assert retrieval.TIMING_RE.sub("", env.step("KB_search", {"query": "close a debit card"})) == expected
    fresh.make_env("task_002").step("KB_search", {"query": "dispute a transaction"})
    assert len(built) == 1  # then shared


def test_bm25_scores_equal_the_library_bit_for_bit(root: Path) -> None:
    index = retrieval.bm25_index(retrieval.knowledge_base(root / "banking_knowledge"))
    for query in [*REFERENCE["search"]["bm25"], "card card card fee.", "Debit CARD pin"]:
        assert np.array_equal(index.scores(query), index.model.get_scores(query.lower().split())), query


def test_kb_search_and_grep_outputs_equal_tau2(root: Path) -> None:
    env = load_domain("banking_knowledge", root, retrieval="bm25_grep", document_order=AS_RECORDED).make_env()
    for query, digest in REFERENCE["search"]["kb_search_sha256"].items():
        out = env.step("KB_search", {"query": query})
        assert retrieval.TIMING_RE.search(out), query
        assert sha(retrieval.TIMING_RE.sub("", out)) == digest, query
    for pattern, digest in REFERENCE["search"]["grep_output_sha256"].items():
        assert sha(env.step("grep", {"pattern": pattern})) == digest, pattern


def test_index_is_built_once_and_shared(root: Path) -> None:
    a = load_domain("banking_knowledge", root, retrieval="bm25")
    b = load_domain("banking_knowledge", root, retrieval="bm25_grep")
    assert a.spec.agent_toolkit._kb_search.index() is b.spec.agent_toolkit._kb_search.index()


def test_tool_lists_and_policies_per_configuration(root: Path) -> None:
    tools = {
        "no_knowledge": [],
        "full_kb": [],
        "golden_retrieval": [],
        "bm25": ["KB_search"],
        "bm25_grep": ["KB_search", "grep"],
        "grep_only": ["grep"],
    }
    for name, ref in REFERENCE["policies"].items():
        dom = load_domain("banking_knowledge", root, retrieval=name, document_order=AS_RECORDED)
        names = list(dom.spec.agent_tool_specs())
        assert names[: len(tools[name])] == tools[name] and len(names) == 14 + len(tools[name])
        assert sha(dom.policy_for(task_id="task_001")) == ref["sha256"], name


def test_unknown_and_unsupported_configurations_fail_clearly(root: Path) -> None:
    with pytest.raises(RetrievalConfigError, match="unknown retrieval 'nope'"):
        load_domain("banking_knowledge", root, retrieval="nope")
    with pytest.raises(RetrievalConfigError, match="sandboxed shell"):
        load_domain("banking_knowledge", root, retrieval="terminal_use")
    with pytest.raises(RetrievalConfigError, match="needs embeddings_base_url"):
        load_domain("banking_knowledge", root, retrieval="openai_embeddings")
    with pytest.raises(ValueError, match="takes no load options"):
        load_domain("mock", require_data("mock"), retrieval="bm25")


def test_package_ships_no_banking_data() -> None:
    import verl_rewards

    pkg = Path(verl_rewards.__file__).parent
    assert not list(pkg.rglob("db.json")) and not list(pkg.rglob("task_0*.json"))


def test_tool_schemas_are_tau2_s_own_per_configuration(root: Path) -> None:
    """The schemas a model is shown equal tau2's rendering (``Tool.openai_schema``) in tau2's order."""
    defs = json.loads((DATA / "reference" / "tau2_banking_tool_defs.json").read_text(encoding="utf-8"))
    for config in retrieval.CONFIGS:
        if config not in defs["agent_tools_by_config"]:
            continue
        spec = load_domain("banking_knowledge", root, retrieval=config).spec
        names = defs["agent_tools_by_config"][config]
        assert spec.agent_tool_schemas() == [defs["openai_schemas"][f"assistant:{n}"] for n in names], config
        assert spec.user_tool_schemas() == [defs["openai_schemas"][f"user:{n}"] for n in defs["user_tools_order"]]
    unlock = {t["name"]: t["formatted_for_agent"] for t in defs["agent_discoverable_tools"]}
    env = load_domain("banking_knowledge", root).make_env()
    for name, text in unlock.items():
        assert f"\n\n{text}\n\n" in env.step("unlock_discoverable_agent_tool", {"agent_tool_name": name}), name
