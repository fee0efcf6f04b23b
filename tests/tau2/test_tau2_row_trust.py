"""Rows are data, configs are code: a dataset row never chooses an endpoint, a credential, a cache folder or a data
folder. Each case runs the real reader of the row (verl's ``AgentLoopWorker`` running ``tau2_agent``, our verl tools
driven as ``ToolAgentLoop`` drives them) against an embeddings server on 127.0.0.1 that the test starts."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.data import prepare_tau2, task_row, write_tool_config
from verl_rewards.tau2.row_options import REFUSED_KEY, split_row_options

from agent_loop_support import _agent_data, _turn, hermes, make_worker, run_row
from data_support import installed_data_home
from embeddings_server import EmbeddingsServer
from tau2_support import require_data

SECRET_ENV = "MY_SECRET_TOKEN"


@pytest.fixture(scope="module")
def root() -> Path:
    return require_data("banking_knowledge")


@pytest.fixture(scope="module")
def prepared(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return prepare_tau2(root, "banking_knowledge", tmp_path_factory.mktemp("trust"), ["all"], retrieval="bm25")


def _row(report: Any, task_id: str = "task_001") -> dict[str, Any]:
    rows = pq.read_table(report.files["all"]).to_pylist()
    return next(r for r in rows if r["extra_info"]["task_id"] == task_id)


def _asks(server: EmbeddingsServer, cache: Path) -> dict[str, Any]:
    """The issue's row: dense retrieval against its own endpoint, with a secret's variable and its own cache."""
    return {
        "retrieval": "openai_embeddings",
        "embeddings_base_url": server.base_url,
        "embeddings_model": "row-model",
        "embeddings_api_key_env": SECRET_ENV,
        "embeddings_cache_dir": str(cache),
    }


REFUSED = ["embeddings_api_key_env", "embeddings_base_url", "embeddings_cache_dir", "embeddings_model"]


def _rollout(worker: Any, row: dict[str, Any], uid: str, agent: list) -> Any:
    worker.llm_client.queue.append([hermes(t, c) for t, c in agent])
    return asyncio.run(run_row(worker, row, uid))


def _scripts(tmp_path: Path) -> str:
    path = tmp_path / "scripts.json"
    path.write_text(json.dumps({"task_001": ["I want a Gold Rewards Card.", "Thanks. ###STOP###"]}))
    return str(path)


def test_split_keeps_what_a_row_may_choose_and_refuses_the_rest() -> None:
    asks = {"retrieval": "bm25", "top_k": 3, "embeddings_base_url": "http://x", "embeddings_cache_dir": "/tmp/x"}
    assert split_row_options("banking_knowledge", asks) == (
        {"retrieval": "bm25", "top_k": 3},
        ["embeddings_base_url", "embeddings_cache_dir"],
    )
    assert split_row_options("banking_knowledge", {"retrieval": "bm25", "query_instruction": None}) == (
        {"retrieval": "bm25"},
        [],
    )  # parquet gives every row the keys of the others, as None
    assert split_row_options("airline", {"retrieval": "bm25"}) == ({}, ["retrieval"])  # airline takes none
    assert split_row_options("banking_knowledge", "bm25") == ({}, ["domain_options"])


def test_the_normal_loop_sends_nothing_and_writes_nothing_where_a_row_asks(
    root: Path,
    prepared: Any,
    tmp_path: Path,
    monkeypatch: Any,
    caplog: Any,
    small_tokenizer: Any,
    small_tokenizer_dir: str,
) -> None:
    """The issue's case through ``tau2_agent``: the row names an endpoint, a secret's variable and a cache folder.
    None is used: the row's retrieval preset alone is, and without an endpoint in the configuration the episode
    cannot start (a visible error, scored 0), with the refusal flagged and logged once."""
    monkeypatch.setenv(SECRET_ENV, "s3cret")
    cache = tmp_path / "row_cache"
    with EmbeddingsServer() as server:
        row = _row(prepared)
        row["extra_info"] = {**row["extra_info"], "domain_options": _asks(server, cache)}
        worker = make_worker(prepared.tool_config, small_tokenizer, small_tokenizer_dir, {"backend": "scripted"})
        with caplog.at_level(logging.WARNING, logger="verl_rewards.tau2.row_options"):
            outs = [_rollout(worker, row, f"trust-{i}", [("Hello.", [])]) for i in range(2)]
        assert server.requests == []  # the knowledge base went nowhere
    assert not cache.exists()  # and nothing was written where the row asked
    for out in outs:
        ef = out.extra_fields
        assert ef[REFUSED_KEY] == REFUSED
        assert ef["termination"] == "infrastructure_error"
        assert "needs embeddings_base_url" in ef["tau2_end_cause"]  # the configuration names no endpoint
    warnings = [r.getMessage() for r in caplog.records if r.name == "verl_rewards.tau2.row_options"]
    assert len(warnings) == 1 and "refused (rows are data" in warnings[0] and "embeddings_base_url" in warnings[0]


def test_the_configured_endpoint_serves_and_the_row_cannot_redirect_it(
    root: Path, prepared: Any, tmp_path: Path, monkeypatch: Any, small_tokenizer: Any, small_tokenizer_dir: str
) -> None:
    """The configuration chooses dense retrieval (``custom.tau2.domain_options``); a row asking for another endpoint,
    secret and cache gets the configured ones, and the reward reports the refusal."""
    from verl_rewards.tau2.verl_scorer import Tau2Options, score_tau2

    monkeypatch.setenv(SECRET_ENV, "s3cret")
    row_cache, config_cache = tmp_path / "row_cache", tmp_path / "config_cache"
    with EmbeddingsServer() as configured, EmbeddingsServer() as elsewhere:
        options = {
            "retrieval": "openai_embeddings",
            "embeddings_base_url": configured.base_url,
            "embeddings_model": "config-model",
            "embeddings_cache_dir": str(config_cache),
        }
        row = _row(prepared)
        row["extra_info"] = {**row["extra_info"], "domain_options": _asks(elsewhere, row_cache)}
        worker = make_worker(
            prepared.tool_config,
            small_tokenizer,
            small_tokenizer_dir,
            {"backend": "scripted", "scripts": _scripts(tmp_path)},
            **{f"domain_options.{k}": v for k, v in options.items()},
        )
        agent = [("", [("KB_search", {"query": "apply for a credit card"})]), ("Please apply in your app.", [])]
        out = _rollout(worker, row, "trust-dense", agent)
        assert elsewhere.requests == [] and configured.requests
        assert {r["model"] for r in configured.requests} == {"config-model"}
    assert not row_cache.exists() and any(config_cache.rglob("*.npz"))
    ef = out.extra_fields
    assert ef[REFUSED_KEY] == REFUSED
    search = next(m for m in ef["messages"] if m["role"] == "tool")
    assert search["content"].startswith("1. ") and "   Score: " in search["content"]
    options = Tau2Options(data_dir=str(root))
    truth = row["reward_model"]["ground_truth"]
    scored = score_tau2(ef["messages"], row["data_source"], truth, {**row["extra_info"], **ef}, options)
    assert scored[REFUSED_KEY] == 1.0  # the reward's flag (reward_extra/row_options_refused in training)
    assert score_tau2(ef["messages"], row["data_source"], truth, row["extra_info"], options)[REFUSED_KEY] == 0.0


def test_the_verl_tools_send_nothing_and_write_nothing_where_a_row_asks(
    root: Path, prepared: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """The same row through the tools, called as verl's ``ToolAgentLoop`` calls them: only the row's preset is used,
    the episode cannot start without a configured endpoint, and nothing left the worker."""
    from verl.tools.tool_registry import initialize_tools_from_config

    from agent_loop_support import configured

    monkeypatch.setenv(SECRET_ENV, "s3cret")
    cache = tmp_path / "row_cache"
    tools = {t.name: t for t in initialize_tools_from_config(configured(prepared.tool_config, root=str(root))[0])}
    with EmbeddingsServer() as server:
        row = _row(prepared)
        for entry in row["extra_info"]["tools_kwargs"].values():
            entry["create_kwargs"]["domain_options"] = _asks(server, cache)
        data = _agent_data(row, "trust-tool")
        answers = asyncio.run(_turn(tools, data, [("KB_search", {"query": "card"})]))
        assert server.requests == []
    assert not cache.exists()
    assert answers[0].startswith("Error: cannot start the tau2 episode") and "needs embeddings_base_url" in answers[0]
    assert data.extra_fields[REFUSED_KEY] == REFUSED


def test_a_row_s_data_dir_never_chooses_the_data_folder(tmp_path: Path, monkeypatch: Any) -> None:
    """A row naming its own data folder (here a copy whose task list is empty): with no folder configured the tool
    refuses, naming the row's folder and what to set; configured, the configured folder is used."""
    from verl.tools.tool_registry import initialize_tools_from_config

    real = require_data("mock")
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    installed_data_home(tmp_path / "home", monkeypatch)  # no installed folder either: nothing is configured
    mock = load_domain("mock", real)
    copy = tmp_path / "elsewhere"
    shutil.copytree(real / "mock", copy / "mock")
    (copy / "mock" / "tasks.json").write_text("[]")
    tool_config = write_tool_config(mock, tmp_path / "tools.yaml")
    task_id = next(iter(mock.tasks))
    row = task_row(mock, mock.task(task_id), 0, "x", str(copy))
    tools = {t.name: t for t in initialize_tools_from_config(str(tool_config))}
    answer = asyncio.run(_turn(tools, _agent_data(row, "dir-1"), [("get_users", {})]))[0]
    assert answer.startswith(
        "Error: cannot start the tau2 episode: no tau2 data folder configured: set the tool config"
    )
    assert f"the row records data_dir {str(copy)!r}" in answer
    monkeypatch.setenv("TAU2_DATA_DIR", str(real))
    answer = asyncio.run(_turn(tools, _agent_data(row, "dir-2"), [("get_users", {})]))[0]
    assert not answer.startswith("Error")  # the configured folder's task ran, not the row's empty copy
