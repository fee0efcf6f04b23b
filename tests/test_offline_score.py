"""`verl-rewards score`: verl's rollout dump and the plain format, per-component table, PNG histogram,
scored JSONL, and clear errors for malformed input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LAYER = str(Path(__file__).with_name("reward_fns_layer.py"))


def _run(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "verl_rewards.cli", "score", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )


def test_scores_verl_dump_and_plain_rows(tmp_path):
    rollouts = tmp_path / "rollouts.jsonl"
    rows = [
        {"input": "user: q", "output": "42", "gts": "42", "score": 1.0, "step": 3},  # verl's dump format
        {"input": "user: q", "output": "41", "gts": "42", "score": 0.0, "step": 3},
        {"response": "42", "ground_truth": "42", "data_source": "qa", "step": 7, "raw_prompt": []},  # plain
        {"response": "x", "ground_truth": "42", "data_source": "qa"},
    ]
    rollouts.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    hist, out = tmp_path / "hist.png", tmp_path / "scored.jsonl"
    proc = _run(str(rollouts), "--reward", "t_fields", "--module", LAYER, "--hist", str(hist), "--out", str(out),
                cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = {line.split()[0]: line.split() for line in proc.stdout.splitlines() if line and line[0].isalpha()}
    assert lines["reward"][1:] == ["4", "0.5000", "0.0000", "1.0000"]
    assert lines["step_seen"][1:] == ["4", "3.2500", "0.0000", "7.0000"]
    assert "error rate 0.00% (0/4)" in proc.stdout
    assert hist.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["reward"] for r in scored] == [1.0, 0.0, 1.0, 0.0]
    assert scored[0]["output"] == "42" and scored[2]["step_seen"] == 7


def test_failures_are_counted_in_the_error_rate(tmp_path):
    rollouts = tmp_path / "r.jsonl"
    rollouts.write_text("\n".join(json.dumps({"response": str(i)}) for i in range(3)) + "\n")
    proc = _run(str(rollouts), "--reward", "t_raise", "--module", LAYER, "--hist", "", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "error rate 100.00% (3/3)" in proc.stdout


def test_malformed_line_is_reported_with_its_number(tmp_path):
    rollouts = tmp_path / "bad.jsonl"
    rollouts.write_text('{"response": "a"}\n{not json\n')
    proc = _run(str(rollouts), "--reward", "t_int", "--module", LAYER, cwd=str(tmp_path))
    assert proc.returncode == 2
    assert "line 2: invalid JSON" in proc.stderr
