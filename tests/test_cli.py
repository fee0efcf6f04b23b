"""`verl-rewards doctor` sees the real entry point, and says so when verl is told not to load plugins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _doctor(env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    return subprocess.run(
        [sys.executable, "-m", "verl_rewards.cli", "doctor"], env=env, capture_output=True, text=True, timeout=180
    )


def test_doctor_reports_manager_and_both_metrics_hooks():
    proc = _doctor({})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "[ok] reward manager 'contribution'" in proc.stdout
    assert "[ok] metrics hook, legacy trainer" in proc.stdout
    assert "[ok] metrics hook, V1 trainer: PPOTrainer._compute_metrics wrapped (every trainer_mode)" in proc.stdout
    assert "[ok] metrics hook, validation" in proc.stdout


def test_doctor_fails_when_plugins_are_disabled():
    proc = _doctor({"VERL_USE_EXTERNAL_PLUGINS": "none"})
    assert proc.returncode == 1
    assert "[FAIL] VERL_USE_EXTERNAL_PLUGINS: none" in proc.stdout
    assert "[FAIL] plugin loaded by `import verl`" in proc.stdout


def test_prepare_toolrl_converts_sample_and_reports_bad_rows(tmp_path):
    import json

    import pandas as pd

    from verl_rewards.toolrl.data import SAMPLE_PATH

    ok = subprocess.run(
        [sys.executable, "-m", "verl_rewards.cli", "prepare", "toolrl", "--input", str(SAMPLE_PATH),
         "--out", str(tmp_path / "ok")],
        capture_output=True, text=True, timeout=120,
    )
    assert ok.returncode == 0, ok.stderr[-2000:]
    frame = pd.read_parquet(tmp_path / "ok" / "train.parquet")
    assert len(frame) == 24 and set(frame["data_source"]) == {"rlla"}
    bad_input = tmp_path / "bad.jsonl"
    good = json.loads(Path(SAMPLE_PATH).read_text().splitlines()[0])
    bad_input.write_text(json.dumps(good) + "\n" + json.dumps({"instruction": "x", "input": "y"}) + "\n")
    bad = subprocess.run(
        [sys.executable, "-m", "verl_rewards.cli", "prepare", "toolrl", "--input", str(bad_input),
         "--out", str(tmp_path / "bad")],
        capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 1
    assert "row 2" in (bad.stdout + bad.stderr)
