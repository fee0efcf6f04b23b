"""`verl-rewards doctor` sees the real entry point, and says so when verl is told not to load plugins."""

from __future__ import annotations

import os
import subprocess
import sys


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
    assert "[ok] metrics hook, V1 trainer: trainer.v1.trainer_mode=sync_reward_extra" in proc.stdout


def test_doctor_fails_when_plugins_are_disabled():
    proc = _doctor({"VERL_USE_EXTERNAL_PLUGINS": "none"})
    assert proc.returncode == 1
    assert "[FAIL] VERL_USE_EXTERNAL_PLUGINS: none" in proc.stdout
    assert "[FAIL] plugin loaded by `import verl`" in proc.stdout
