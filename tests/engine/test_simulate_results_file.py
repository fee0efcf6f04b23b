"""``verl-rewards simulate --out``: one writer per results file (a second run on the same file fails at start,
naming the run that holds it) and a resumed run must have the same settings (the differing ones are listed).

The runs talk to a chat-completions server on 127.0.0.1 started by the test; the two-process test waits on the
server seeing the first run's request (an event), never on a clock."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.cli import main
from verl_rewards.files import lock_path_of, writer_lock

from chat_server import ChatServer, simulate_argv
from repo_paths import REPO
from tau2_support import require_data

WAIT_S = 300  # a generous bound on waits for events that come within seconds (never a timing assertion)


def stop_at_once(body: dict[str, Any], n: int) -> dict[str, Any]:
    """The user stops in its first message; the agent (never asked) would say hello."""
    return {"content": "###STOP###"} if body["model"] == "user-model" else {"content": "hello"}


def argv(server: ChatServer, out: Path, *extra: str, domain: str = "mock", task: str = "create_task_1") -> list[str]:
    if domain.startswith("tau_bench/"):
        from tau_bench_support import require_domain

        data_dir = require_domain(domain.removeprefix("tau_bench/")).data_dir.parent
    else:
        data_dir = require_data(domain)
    return simulate_argv(server, out, domain, data_dir, task, *extra)


def cli(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "verl_rewards.cli", *args]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


# --------------------------------------------------------------------------------------------- one writer
@pytest.mark.slow
def test_a_second_run_on_the_same_out_fails_at_start_naming_the_first(tmp_path):
    """Two real ``simulate`` processes on one ``--out``: the second exits 2 naming the first (pid, host) while the
    first runs, and the file holds the first run's simulation."""
    out = tmp_path / "run.json"
    first_request, release = threading.Event(), threading.Event()

    def respond(body: dict[str, Any], n: int) -> Any:
        if n == 0:  # the first run's first conversation request: held until the second run has ended
            first_request.set()
            release.wait(WAIT_S)
        return stop_at_once(body, n)

    with ChatServer(respond) as server:
        first = subprocess.Popen(
            cli(argv(server, out)), env=child_env(), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            assert first_request.wait(WAIT_S), "the first run never reached the server"
            second = subprocess.run(
                cli(argv(server, out)), env=child_env(), cwd=REPO, capture_output=True, text=True, timeout=WAIT_S
            )
        finally:
            release.set()
            first_out, first_err = first.communicate(timeout=WAIT_S)
        requests = len(server.requests)
    assert second.returncode == 2, second.stderr
    message = second.stderr.strip()
    assert message.startswith("verl-rewards simulate: error: --out ") and "being written by another run" in message
    assert f"pid {first.pid} on host {socket.gethostname()} since " in message
    assert first.returncode == 0, first_err.decode()
    assert requests == 1  # the second run sent no conversation request
    (sim,) = json.loads(out.read_text())["simulations"]
    assert sim["task_id"] == "create_task_1" and sim["termination_reason"] == "user_stop"
    assert not lock_path_of(out).exists()  # released and removed when the first run ended


def test_a_held_results_file_is_refused_before_anything_is_read_or_run(tmp_path, capsys):
    out = tmp_path / "run.json"
    out.write_text("not json: the holder is writing it")
    with ChatServer(stop_at_once) as server, writer_lock(out, "--out"):
        assert main(argv(server, out)) == 2
        assert not server.requests and not server.probes
    err = capsys.readouterr().err
    assert f"is being written by another run (pid {os.getpid()} on host {socket.gethostname()} since " in err
    assert out.read_text() == "not json: the holder is writing it"


def test_tau_bench_runs_take_the_same_lock(tmp_path, capsys):
    out = tmp_path / "tb.json"
    with ChatServer(stop_at_once) as server, writer_lock(out, "--out"):
        args = argv(server, out, domain="tau_bench/retail", task="5")
        assert main(args) == 2
        assert not server.requests
    assert f"being written by another run (pid {os.getpid()} " in capsys.readouterr().err
    assert not out.exists()


# ------------------------------------------------------------------------------------------ same settings
def test_resuming_with_another_temperature_is_refused_listing_it(tmp_path, capsys):
    out = tmp_path / "run.json"
    with ChatServer(stop_at_once) as server:
        assert main(argv(server, out, "--num-trials", "2")) == 0
        kept = json.loads(out.read_text())
        kept["simulations"] = kept["simulations"][:1]  # as if interrupted after one simulation
        out.write_text(json.dumps(kept))
        capsys.readouterr()
        before = len(server.requests)
        assert main(argv(server, out, "--num-trials", "2", "--agent-temperature", "0.5", "--seed", "7")) == 2
        assert len(server.requests) == before
    err = capsys.readouterr().err
    assert "holds a run with other settings: " in err
    assert "agent_info.llm_args.temperature (file: 0.0, this run: 0.5)" in err
    assert "seed (file: 300, this run: 7)" in err
    assert json.loads(out.read_text()) == kept


def test_resuming_with_other_rules_is_refused_listing_them(tmp_path, capsys):
    """Settings tau2's ``info`` does not hold (the communication protocol, the agent-message rule, load options) are
    recorded as the run ``info``'s ``run`` when they differ from tau2's way (a run as tau2 makes it writes tau2's
    ``info``) and compared too."""
    out = tmp_path / "run.json"
    with ChatServer(stop_at_once) as server:
        assert main(argv(server, out)) == 0
        assert "run" not in json.loads(out.read_text())["info"]
        capsys.readouterr()
        assert main(argv(server, out, "--enforce-communication-protocol")) == 2
    err = capsys.readouterr().err
    assert "other settings: run.enforce_communication_protocol (file: not recorded, this run: true);" in err


def test_resuming_with_another_retrieval_is_refused_listing_it(tmp_path, capsys):
    out = tmp_path / "bank.json"
    with ChatServer(stop_at_once) as server:
        assert main(argv(server, out, "--retrieval", "bm25", domain="banking_knowledge", task="task_001")) == 0
        capsys.readouterr()
        assert main(argv(server, out, "--retrieval", "grep_only", domain="banking_knowledge", task="task_001")) == 2
    err = capsys.readouterr().err
    assert 'run.domain_options.retrieval (file: "bm25", this run: "grep_only")' in err
    assert "environment_info.policy (file: a text of " in err  # the policy follows the retrieval


def test_resuming_at_another_address_of_the_same_models_runs_the_missing_simulations(tmp_path):
    """Where a model is served is not a setting of the run: the same models behind another server resume."""
    out = tmp_path / "run.json"
    with ChatServer(stop_at_once) as server:
        assert main(argv(server, out, "--num-trials", "2")) == 0
    kept = json.loads(out.read_text())
    kept["simulations"] = kept["simulations"][:1]
    out.write_text(json.dumps(kept))
    with ChatServer(stop_at_once) as moved:
        assert main(argv(moved, out, "--num-trials", "2")) == 0
        assert len(moved.requests) == 1  # only the missing trial's user turn
    assert sorted(s["trial"] for s in json.loads(out.read_text())["simulations"]) == [0, 1]


def test_tau_bench_resume_lists_the_differing_settings(tmp_path, capsys):
    out = tmp_path / "tb.json"
    with ChatServer(stop_at_once) as server:
        args = argv(server, out, domain="tau_bench/retail", task="5")
        assert main(args) == 0
        capsys.readouterr()
        assert main([*args, "--user-temperature", "1.0", "--max-num-steps", "3"]) == 2
    err = capsys.readouterr().err
    assert "[0].info.run.user_args.temperature (file: 0.0, this run: 1.0)" in err
    assert "[0].info.run.max_num_steps (file: 30, this run: 3)" in err
