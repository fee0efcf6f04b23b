"""banking_knowledge's ``grep``: tau2's answers byte for byte (``tests/data/reference/tau2_grep.json``, written by
tau2-bench's own grep tool: ``dump_reference.py grep``), and a pattern that backtracks without bound is an error
observation within a second instead of a call that runs for minutes and stalls every conversation.

Catastrophic patterns run in a subprocess of the test (a broken build then fails the test at the outer bound
instead of hanging the suite: Python's ``re`` holds the GIL while it backtracks); the outer bounds are generous and
never timing assertions."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.domains.banking_knowledge import grep

from chat_server import ChatServer
from repo_paths import DATA, REPO
from tau2_support import require_data

REFERENCE = json.loads((DATA / "reference" / "tau2_grep.json").read_text(encoding="utf-8"))
CATASTROPHIC = r"(\w+\s?)*#"
WAIT_S = 120


@pytest.fixture(scope="module")
def root() -> Path:
    return require_data("banking_knowledge")


@pytest.fixture(scope="module")
def env_of(root: Path) -> Any:
    domain = load_domain("banking_knowledge", root, retrieval="grep_only", document_order="id")  # as recorded
    return domain.make_env


def test_grep_answers_equal_tau2_on_every_recorded_call(env_of):
    env = env_of()
    for case in REFERENCE["cases"]:
        out, error = env.execute("grep", case["arguments"])
        assert (hashlib.sha256(out.encode()).hexdigest(), len(out), error) == (
            case["sha256"],
            case["chars"],
            case["error"],
        ), case["arguments"]
        if case["error"]:
            assert out == case["content"]  # tau2's own error text


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT_S, cwd=REPO, env=_env()
    )


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}


def test_a_catastrophic_pattern_is_an_error_observation_and_the_next_call_is_answered(root):
    code = f"""
import json
from verl_rewards.tau2 import load_domain
env = load_domain("banking_knowledge", {str(root)!r}, retrieval="grep_only", document_order="id").make_env()
first = env.execute("grep", {{"pattern": {CATASTROPHIC!r}}})
second = env.execute("grep", {{"pattern": "debit card"}})
print(json.dumps([first, second]))
"""
    done = _run(code)
    assert done.returncode == 0, done.stderr
    (first, first_error), (second, second_error) = json.loads(done.stdout.splitlines()[-1])
    assert first_error and first == "Error: " + grep.TIMEOUT_MESSAGE.format(
        pattern=CATASTROPHIC, seconds=grep.GREP_TIMEOUT_S
    )
    expected = next(c for c in REFERENCE["cases"] if c["arguments"] == {"pattern": "debit card"})
    assert not second_error and hashlib.sha256(second.encode()).hexdigest() == expected["sha256"]


def test_the_grep_children_are_bounded_and_reused(root):
    env = load_domain("banking_knowledge", root, retrieval="grep_only").make_env()
    workers = grep.grep_workers(env.tools._grep.kb)
    for pattern in ("fee", "card", "debit"):
        env.step("grep", {"pattern": pattern})
    assert len(workers._idle) == 1 and workers._running == 0  # one child, kept for the next call


# ---------------------------------------------------------------------------------------- simulate
TASKS = ("task_001", "task_002")


def _responder() -> Any:
    """The user of each simulation asks once and stops; the first user to speak tags its question, and the agent
    answering a tagged question greps the catastrophic pattern first."""
    tagged = threading.Lock()

    def respond(body: dict[str, Any], n: int) -> Any:
        messages = body["messages"]
        if body["model"] == "user-model":
            if len(messages) > 2:
                return {"content": "###STOP###"}
            return {"content": ("[grep] " if tagged.acquire(blocking=False) else "") + "What are your fees?"}
        asked = [m for m in messages if m["role"] == "user" and str(m["content"]).startswith("[grep]")]
        if messages[-1]["role"] == "tool" or not asked:
            return {"content": "Here is what I found."}
        return {"content": None, "tool_calls": [{"name": "grep", "arguments": {"pattern": CATASTROPHIC}}]}

    return respond


@pytest.mark.slow
def test_simulate_with_a_catastrophic_grep_finishes_every_simulation(root, tmp_path):
    """``simulate --concurrency 2`` on grep_only: the catastrophic call ends as an error observation and both
    simulations finish (the run is a real process, bounded from outside)."""
    out = tmp_path / "run.json"
    with ChatServer(_responder()) as server:
        argv = [
            *("simulate", "--domain", "banking_knowledge", "--retrieval", "grep_only", "--data-dir", str(root)),
            *("--task-ids", *TASKS, "--concurrency", "2", "--out", str(out), "--retries", "0"),
            *("--agent-base-url", server.base_url, "--agent-model", "agent-model"),
            *("--user-base-url", server.base_url, "--user-model", "user-model"),
        ]
        done = subprocess.run(
            [sys.executable, "-m", "verl_rewards.cli", *argv],
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            cwd=REPO,
            env=_env(),
        )
    assert done.returncode == 0, done.stderr
    sims = json.loads(out.read_text())["simulations"]
    assert sorted(s["task_id"] for s in sims) == list(TASKS)
    assert all(s["termination_reason"] == "user_stop" for s in sims)
    (tool,) = [m for s in sims for m in s["messages"] if m["role"] == "tool"]  # the one tagged simulation's grep
    assert tool["error"] and tool["content"].startswith("Error: the pattern ")
