"""``verl-rewards export-sft results``: rejection sampling from real ``verl-rewards simulate`` outputs (tau2 Results,
tau-bench results) played by a local server whose agent model is the gold policy and whose user model is the
default scripted user; keep successes, at most N per task, identical conversations once, never a held-out task
without ``--allow-split-mix``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from verl_rewards.cli import main
from verl_rewards.gold import gold_assistant_turns

import tau2_support
import tau_bench_support
from chat_server import ChatServer


def _turn(message: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for c in message.get("tool_calls") or ()
    ]
    return {"content": message.get("content") or None, "tool_calls": calls}


def _gold_server(agent: dict[str, list[dict]], user: dict[str, list[str]], skip_assistant: int):
    """Agent requests: the gold turns of the task whose opening line is in the view; user requests: the task's
    script, found by its key in the system prompt. The turn is the number of assistant messages so far."""

    def respond(body: dict[str, Any], n: int) -> Any:
        messages = body["messages"]
        done = sum(1 for m in messages if m.get("role") == "assistant")
        if body["model"] == "agent-model":
            head = json.dumps(messages[:3])
            turns = next(v for k, v in agent.items() if json.dumps(k)[1:-1] in head)
            turn = done - skip_assistant
        else:
            system = messages[0]["content"]
            turns = next([{"content": t} for t in v] for k, v in user.items() if k in system)
            turn = done
        return turns[turn] if turn < len(turns) else {"content": "###STOP###"}

    return respond


def _simulate(server: ChatServer, domain: str, data_dir: str, out: Path, *task_args: str) -> None:
    assert main(["simulate", "--domain", domain, "--data-dir", data_dir, *task_args, "--num-trials", "2",
                 "--agent-base-url", server.base_url, "--agent-model", "agent-model", "--user-base-url",
                 server.base_url, "--user-model", "user-model", "--timeout-s", "10", "--retries", "0",
                 "--out", str(out)]) == 0  # fmt: skip


@pytest.fixture(scope="module")
def tau2_results(tmp_path_factory) -> Path:
    """tau2 airline, 3 train tasks and 1 test task, 2 trials each, all played by the gold policy."""
    from verl_rewards.tau2.data import task_row
    from verl_rewards.tau2.normal.prompts import user_scenario_text
    from verl_rewards.tau2.normal.users import default_script

    domain = tau2_support.require_domain("airline")
    root = str(domain.data_dir.parent)
    tasks = [*domain.split("train")[:3], domain.split("test")[0]]
    agent, user = {}, {}
    for i, task_id in enumerate(tasks):
        task = domain.task(task_id)
        script = [turn.content for turn in default_script(domain, task)]
        agent[script[0]] = [
            _turn(t) for t in gold_assistant_turns(task_row(domain, task, i, "x", root, None, "normal"), root)
        ]
        user[user_scenario_text(task)] = script
    out = tmp_path_factory.mktemp("tau2_run") / "run.json"
    with ChatServer(_gold_server(agent, user, skip_assistant=1)) as server:
        _simulate(server, "airline", root, out, "--task-ids", *tasks)
    return out


@pytest.fixture(scope="module")
def tau_bench_results(tmp_path_factory) -> Path:
    from verl_rewards.tau_bench.data import task_row
    from verl_rewards.tau_bench.normal import default_script

    domain = tau_bench_support.require_domain("airline")
    root = str(domain.data_dir.parent)
    agent, user = {}, {}
    for i, task_id in enumerate(domain.split("test")[:2]):
        task = domain.task(task_id)
        agent[task.instruction] = [
            _turn(t) for t in gold_assistant_turns(task_row(domain, task, i, root, "normal"), root)
        ]
        user[task.instruction] = [turn.content for turn in default_script(task)]
    out = tmp_path_factory.mktemp("tb_run") / "tb.json"
    with ChatServer(_gold_server(agent, user, skip_assistant=0)) as server:
        _simulate(server, "tau_bench/airline", root, out, "--split", "test", "--task-ids", "0", "1")
    return out


def _export(*args: str) -> int:
    return main(["export-sft", "results", *args])


def _error(capsys) -> str:
    """The error line (the last line of stderr, after any progress bar)."""
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("verl-rewards export-sft: error: ")
    return err


def test_gold_runs_score_1_in_simulate(tau2_results):
    sims = json.loads(tau2_results.read_text())["simulations"]
    assert len(sims) == 8 and {s["reward_info"]["reward"] for s in sims} == {1.0}


def test_successes_are_deduplicated_and_a_held_out_task_is_refused(tmp_path, tau2_results, capsys):
    root = str(tau2_support.require_data("airline"))
    out = tmp_path / "sft"
    assert _export(str(tau2_results), "--data-dir", root, "--out", str(out)) == 2
    assert "held-out split" in _error(capsys) and not out.exists()
    assert _export(str(tau2_results), "--data-dir", root, "--allow-split-mix", "--out", str(out)) == 0
    frame = pd.read_parquet(out / "train.parquet")
    assert len(frame) == 4  # 8 simulations, each task's 2 trials identical: one conversation per task
    assert sorted(frame["split"]) == ["test", "train", "train", "train"]
    messages = json.loads(frame["messages_json"][0])
    assert [m["role"] for m in messages[:3]] == ["system", "assistant", "user"]  # prompt, greeting, opening
    assert messages[-1]["role"] == "assistant"


def test_per_task_and_min_reward(tmp_path, tau2_results, capsys):
    root = str(tau2_support.require_data("airline"))
    assert _export(str(tau2_results), "--data-dir", root, "--allow-split-mix", "--min-reward", "1.5", "--out",
                   str(tmp_path / "a")) == 2  # fmt: skip
    assert "no trajectory reached --min-reward 1.5" in _error(capsys)
    assert _export(str(tau2_results), str(tau2_results), "--data-dir", root, "--allow-split-mix", "--per-task", "1",
                   "--out", str(tmp_path / "b")) == 0  # fmt: skip
    assert len(pd.read_parquet(tmp_path / "b" / "train.parquet")) == 4


def test_tau_bench_results_export_with_tau_bench_tools(tmp_path, tau_bench_results, capsys):
    domain = tau_bench_support.require_domain("airline")
    root = str(domain.data_dir.parent)
    assert _export(str(tau_bench_results), "--data-dir", root, "--out", str(tmp_path)) == 2
    assert "test/0 (test)" in _error(capsys)  # tau-bench's airline has a test split only
    assert _export(str(tau_bench_results), "--data-dir", root, "--allow-split-mix", "--out", str(tmp_path)) == 0
    frame = pd.read_parquet(tmp_path / "train.parquet")
    assert len(frame) == 2 and json.loads(frame["tools_json"][0]) == domain.tools_info
    assert json.loads(frame["messages_json"][0])[0] == {"role": "system", "content": domain.policy}


def test_two_benchmarks_and_dumps_without_conversations_are_refused(tmp_path, tau2_results, tau_bench_results, capsys):
    assert _export(str(tau2_results), str(tau_bench_results), "--allow-split-mix", "--out", str(tmp_path / "x")) == 2
    assert "holds tau_bench/airline results, but this export is tau2/airline" in _error(capsys)
    assert _export(str(tau2_results), "--benchmark", "tau_bench", "--out", str(tmp_path / "y")) == 2
    assert "this export is tau_bench" in _error(capsys)
    dump = tmp_path / "0.jsonl"
    dump.write_text(json.dumps({"input": "hi", "output": "hello", "gts": "", "score": 1.0, "step": 0}) + "\n")
    assert _export(str(dump), "--out", str(tmp_path / "z")) == 2
    assert "verl dump" in _error(capsys)
    assert not any((tmp_path / d).exists() for d in ("x", "y", "z"))


def test_gold_export_with_a_user_model_endpoint(tmp_path, capsys):
    """Normal mode with an OpenAI-compatible user: conversations it plays along score gold; a user that hangs up at
    once derails every one, so nothing scores gold and nothing is written."""
    from verl_rewards.tau_bench.normal import default_script

    domain = tau_bench_support.require_domain("airline")
    root = str(domain.data_dir.parent)
    user = {t.instruction: [turn.content for turn in default_script(t)] for t in map(domain.task, domain.split("test"))}
    args = ["export-sft", "gold", "tau_bench", "--domain", "airline", "--split", "test", "--data-dir", root,
            "--user-model", "user-model"]  # fmt: skip
    with ChatServer(_gold_server({}, user, skip_assistant=0)) as server:
        assert main([*args, "--user-base-url", server.base_url, "--out", str(tmp_path / "a")]) == 0
    assert "wrote 50 conversation(s)" in capsys.readouterr().out
    with ChatServer(lambda body, n: {"content": "Bye. ###STOP###"}) as server:
        assert main([*args, "--user-base-url", server.base_url, "--out", str(tmp_path / "b")]) == 2
    error = _error(capsys)
    assert "no tau_bench/airline task of split 'test' gave a conversation that scores the gold reward" in error
    assert "(50 dropped, e.g. test/" in error
    assert not (tmp_path / "b").exists()
