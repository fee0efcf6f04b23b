"""tau2 ``banking_knowledge`` in the training path: ``prepare`` (retrieval, hold-out), verl tool adapters with the
retrieval configuration, the user's tools per task, the reward on the recorded trajectory, the GRPO recipe."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.data import Tau2PrepareError, prepare_tau2

from recipe_support import compose_script
from repo_paths import REPO
from tau2_support import require_data


@pytest.fixture(scope="module")
def root() -> Path:
    return require_data("banking_knowledge")


@pytest.fixture(scope="module")
def prepared(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("bank") / "grep"
    return prepare_tau2(root, "banking_knowledge", out, ["train", "test"], retrieval="grep_only", holdout=0.2)


def _rows(report: Any, split: str) -> list[dict[str, Any]]:
    return pq.read_table(report.files[split]).to_pylist()


def test_prepare_holds_out_a_seeded_fraction_in_normal_mode(root: Path, prepared: Any, tmp_path: Path) -> None:
    assert prepared.mode == "normal" and prepared.rows == {"train": 78, "test": 19}
    train, test = _rows(prepared, "train"), _rows(prepared, "test")
    ids = [r["extra_info"]["task_id"] for r in train + test]
    assert sorted(ids) == sorted(load_domain("banking_knowledge", root).tasks)
    again = prepare_tau2(root, "banking_knowledge", tmp_path / "again", ["test"], retrieval="grep_only", holdout=0.2)
    assert [r["extra_info"]["task_id"] for r in _rows(again, "test")] == [r["extra_info"]["task_id"] for r in test]
    other = prepare_tau2(root, "banking_knowledge", tmp_path / "seed", ["test"], holdout=0.2, seed=7)
    assert [r["extra_info"]["task_id"] for r in _rows(other, "test")] != [r["extra_info"]["task_id"] for r in test]
    row = test[0]
    assert row["agent_name"] == "tau2_agent" and row["extra_info"]["domain_options"] == {"retrieval": "grep_only"}
    create = next(iter(row["extra_info"]["tools_kwargs"].values()))["create_kwargs"]
    assert create["domain_options"] == {"retrieval": "grep_only"}
    assert "`grep` tool" in row["prompt"][0]["content"]


def test_prepare_refuses_solo_unknown_retrieval_and_missing_split(root: Path, tmp_path: Path) -> None:
    with pytest.raises(Tau2PrepareError, match="normal mode only"):
        prepare_tau2(root, "banking_knowledge", tmp_path / "a", ["all"], mode="solo")
    with pytest.raises(Tau2PrepareError, match="unknown retrieval 'bm26'"):
        prepare_tau2(root, "banking_knowledge", tmp_path / "b", ["all"], retrieval="bm26")
    with pytest.raises(Tau2PrepareError, match="--holdout draws train/test instead"):
        prepare_tau2(root, "banking_knowledge", tmp_path / "c", ["train"])
    with pytest.raises(Tau2PrepareError, match="between 0 and 1"):
        prepare_tau2(root, "banking_knowledge", tmp_path / "d", ["train"], holdout=1.5)
    assert not any((tmp_path / n).exists() for n in "abcd")


def test_golden_retrieval_rows_carry_each_task_s_documents(root: Path, tmp_path: Path) -> None:
    report = prepare_tau2(root, "banking_knowledge", tmp_path / "g", ["all"], retrieval="golden_retrieval")
    rows = _rows(report, "all")
    dom = load_domain("banking_knowledge", root, retrieval="golden_retrieval")
    for row in rows[:5]:
        tid = row["extra_info"]["task_id"]
        assert dom.policy_for(task_id=tid) in row["prompt"][0]["content"]
    assert len({r["prompt"][0]["content"] for r in rows}) > 50


def test_user_tools_follow_the_task(root: Path) -> None:
    from verl_rewards.tau2.normal.prompts import user_tool_schemas

    dom = load_domain("banking_knowledge", root)
    none = next(t for t in dom.tasks.values() if t.user_tools == ())
    assert user_tool_schemas(dom, none) is None
    some = next(t for t in dom.tasks.values() if t.user_tools)
    names = [s["function"]["name"] for s in user_tool_schemas(dom, some)]
    assert names == [n for n in dom.spec.user_tool_specs() if n in some.user_tools]


def test_tool_config_loads_into_verl_with_the_configuration_s_tools(prepared: Any) -> None:
    from verl.tools.tool_registry import initialize_tools_from_config

    tools = [t.name for t in initialize_tools_from_config(prepared.tool_config)]
    assert tools[0] == "grep" and "KB_search" not in tools and len(tools) == 15


@pytest.mark.parametrize(("applies", "reward"), [(True, 1.0), (False, 0.0)])
def test_normal_mode_rollout_with_retrieval_and_a_user_tool_scores_like_tau2(
    root: Path, tmp_path: Path, small_tokenizer: Any, small_tokenizer_dir: str, applies: bool, reward: float
) -> None:
    """task_001: the customer applies for a card with their own tool; the agent searches the KB with BM25."""
    from verl_rewards.tau2.verl_scorer import Tau2Options, score_tau2

    from agent_loop_support import hermes, make_worker, run_row

    report = prepare_tau2(root, "banking_knowledge", tmp_path / "bm25", ["all"], retrieval="bm25")
    row = next(r for r in _rows(report, "all") if r["extra_info"]["task_id"] == "task_001")
    gold = dict(load_domain("banking_knowledge", root).task("task_001").evaluation_criteria.actions[0].arguments)
    apply = {
        "tool_calls": [
            {"name": "apply_for_credit_card", "arguments": gold if applies else {**gold, "annual_income": 1}}
        ]
    }
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps({"task_001": ["I want a Gold Rewards Card.", apply, "Done, thanks. ###STOP###"]}))
    worker = make_worker(
        report.tool_config, small_tokenizer, small_tokenizer_dir, {"backend": "scripted", "scripts": str(scripts)}
    )
    agent = [("", [("KB_search", {"query": "apply for a credit card"})]), ("Please apply in your app.", [])]
    worker.llm_client.queue.append([hermes(t, c) for t, c in agent])
    out = asyncio.run(run_row(worker, row, f"bank-{applies}"))
    ef = out.extra_fields
    assert ef["termination"] == "user_stop"
    search = next(m for m in ef["messages"] if m["role"] == "tool")
    assert search["content"].startswith("1. ") and "[Timing: retrieval=" in search["content"]
    user_call = next(m for m in ef["messages"] if m["role"] == "user" and m.get("tool_calls"))
    assert user_call["tool_calls"][0]["function"]["name"] == "apply_for_credit_card"
    extra = {**row["extra_info"], **ef}
    got = score_tau2(
        ef["messages"], row["data_source"], row["reward_model"]["ground_truth"], extra, Tau2Options(data_dir=str(root))
    )
    assert got["reward"] == reward and got["tau2_db"] == reward


@pytest.mark.slow
def test_recipe_accepts_banking_knowledge() -> None:
    cfg = compose_script(
        "recipes/tau2_grpo/run_tau2_grpo.sh",
        {
            "DOMAIN": "banking_knowledge",
            "DATA_DIR": "/data/bk",
            "TAU2_DATA_DIR": "/data/tau2",
            "USER_BACKEND": "policy",
        },
    )
    assert cfg["data"]["train_files"] == "/data/bk/train.parquet"
    assert cfg["data"]["val_files"] == "/data/bk/test.parquet"
    assert cfg["data"]["max_prompt_length"] == 8192
    bad = subprocess.run(
        ["bash", str(REPO / "recipes/tau2_grpo/run_tau2_grpo.sh"), "--cfg", "job"],
        env={**os.environ, "DOMAIN": "banking_knowledge", "MODE": "solo"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "normal mode only" in bad.stderr
    assert json.dumps(cfg)  # composed


def test_simulate_with_retrieval_then_eval(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``simulate --retrieval grep_only`` on task_001 (the customer applies with their own tool), then ``eval``."""
    from verl_rewards.cli import main

    from chat_server import ChatServer, scripted

    gold = dict(load_domain("banking_knowledge", root).task("task_001").evaluation_criteria.actions[0].arguments)
    agent = {
        "Gold Rewards Card": [
            {"content": None, "tool_calls": [{"name": "grep", "arguments": {"pattern": "Gold Rewards"}}]},
            {"content": "You can apply in your app."},
        ]
    }
    user = {
        "Sarah": [
            {"content": "I want a Gold Rewards Card."},
            {"content": None, "tool_calls": [{"name": "apply_for_credit_card", "arguments": gold}]},
            {"content": "Done. ###STOP###"},
        ]
    }
    play_agent, play_user = scripted(agent, skip_assistant=1), scripted(user)
    out = tmp_path / "run.json"
    with ChatServer(lambda body, n: (play_agent if body["model"] == "agent-model" else play_user)(body, n)) as server:
        argv = ["simulate", "--domain", "banking_knowledge", "--data-dir", str(root), "--retrieval", "grep_only"]
        argv += ["--task-ids", "task_001", "--agent-base-url", server.base_url, "--agent-model", "agent-model"]
        argv += ["--user-base-url", server.base_url, "--user-model", "user-model", "--timeout-s", "5"]
        argv += ["--retries", "0", "--out", str(out)]
        assert main(argv) == 0
        agent_tools = {t["function"]["name"] for t in server.requests[1]["tools"]} | {
            t["function"]["name"] for r in server.requests if r["model"] == "agent-model" for t in r["tools"]
        }
        user_tools = [
            [t["function"]["name"] for t in r.get("tools", [])] for r in server.requests if r["model"] == "user-model"
        ]
    assert "grep" in agent_tools and "KB_search" not in agent_tools
    assert all(names == ["apply_for_credit_card"] for names in user_tools)  # task_001's user_tools
    sim = json.loads(out.read_text())["simulations"][0]
    assert sim["termination_reason"] == "user_stop" and sim["reward_info"]["reward"] == 1.0
    grep_answer = next(m for m in sim["messages"] if m["role"] == "tool")
    assert grep_answer["content"].startswith("1. ")
    capsys.readouterr()
    assert main(["eval", str(out), "--json"]) == 0
    source = json.loads(capsys.readouterr().out)["inputs"][0]["sources"]["tau2/banking_knowledge"]
    assert source["pass_k"] == {"1": 1.0} and source["num_tasks"] == 1


def test_a_task_without_user_tools_gets_the_plain_user_guidelines(root: Path) -> None:
    from verl_rewards.tau2.normal.prompts import guidelines_path, user_system_prompt, user_tool_schemas

    dom = load_domain("banking_knowledge", root)
    none = next(t for t in dom.tasks.values() if t.user_tools == ())
    plain = guidelines_path(dom, False).read_text(encoding="utf-8").strip()
    with_tools = guidelines_path(dom, True).read_text(encoding="utf-8").strip()
    assert plain != with_tools
    prompt = user_system_prompt(dom, "scenario", user_tool_schemas(dom, none) is not None)
    assert prompt.startswith(plain) and not prompt.startswith(with_tools)
