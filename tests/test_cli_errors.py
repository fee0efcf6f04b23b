"""Inputs that used to end a command with a traceback (exit code 1) instead of one line and exit code 2, and
options that were accepted but not honoured. Each case runs the real command on real files."""

from __future__ import annotations

import json
import shutil

import pytest

from verl_rewards.cli import main

from tau_bench_support import require_domain


def _one_line_error(capsys, command: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"verl-rewards {command}: error: ") and err.count("\n") == 1, err[-2000:]
    return err


@pytest.mark.parametrize(
    ("file", "content", "message"),
    [
        ("tasks_dev.json", None, "tasks_dev.json"),  # truncated: the first 1,000 bytes
        ("orders.json", "", "orders.json"),  # empty
        ("orders.json", "[]", "orders.json"),  # valid JSON, wrong shape
        ("tasks_dev.json", "[" * 100_000 + "]" * 100_000, "tasks_dev.json"),  # nested deeper than the parser goes
        ("users.json", b"\xff\xfe\x00garbage", "users.json"),  # not UTF-8
    ],
    ids=["truncated-tasks", "empty-orders", "orders-a-list", "deeply-nested-tasks", "binary-users"],
)
def test_prepare_tau_bench_on_a_broken_data_file_is_a_one_line_error(tmp_path, capsys, file, content, message):
    source = require_domain("retail").data_dir
    root = tmp_path / "data"
    shutil.copytree(source, root / "retail")
    path = root / "retail" / file
    if content is None:
        path.write_bytes(path.read_bytes()[:1000])
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    out = tmp_path / "out"
    code = main(
        ["prepare", "tau_bench", "--data-dir", str(root), "--domain", "retail", "--split", "dev", "--out", str(out)]
    )
    assert code == 2
    assert message in _one_line_error(capsys, "prepare tau_bench")
    assert not out.exists()


def _tau2_results_with_huge_reward() -> bytes:
    """A tau2 Results file whose one reward is an integer no float holds (``1`` and 400 zeros)."""
    sim = {"task_id": "1", "trial": 0, "termination_reason": "user_stop", "reward_info": {"reward": "HUGE"}}
    doc = {"info": {"environment_info": {"domain_name": "airline"}, "num_trials": 1}, "tasks": [{"id": "1"}]}
    doc["simulations"] = [sim]
    return json.dumps(doc).replace('"HUGE"', "1" + "0" * 400).encode()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("garbage.json", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe binary"),
        ("garbage.jsonl", b"\x00\xff\xfe\x01\x02"),
        ("nested.json", b"[" * 100_000 + b"]" * 100_000),
        ("nested.jsonl", b'{"score": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"),
        ("huge.json", _tau2_results_with_huge_reward()),
        ("huge.jsonl", b'{"input": "q", "output": "a", "gts": "a", "score": 1' + b"0" * 400 + b', "step": 1}\n'),
    ],
    ids=["binary-json", "binary-jsonl", "nested-json", "nested-jsonl", "huge-int-tau2", "huge-int-dump"],
)
def test_eval_on_malformed_input_is_a_one_line_error(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["eval", str(path)]) == 2
    assert name in _one_line_error(capsys, "eval")


def test_eval_plot_with_an_unknown_image_format_is_refused_before_anything_is_written(tmp_path, capsys):
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"input": "q", "output": "a", "gts": "a", "score": 1.0, "step": 1}) + "\n")
    plot = tmp_path / "x.nope"
    assert main(["eval", str(run), "--data-source", "rlla", "--plot", str(plot)]) == 2
    assert ".nope" in _one_line_error(capsys, "eval")
    assert not plot.exists()
