"""The test suite finds the benchmark data by the package's own rule: the variable, else the installed data folder;
a variable naming a missing folder stops the run, and no other folder (such as one beside the checkout) is used."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from verl_rewards.engine.data_dir import TAU2_DATA
from verl_rewards.engine.errors import DataNotFoundError

from data_support import installed_data_home, missing_reason
from repo_paths import REPO
from tau2_support import tau2_data_dir
from tau_bench_support import tau_bench_data_dir


def test_the_tests_read_the_variable_else_the_installed_folder_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    monkeypatch.delenv("TAU_BENCH_DATA_DIR", raising=False)
    home = installed_data_home(tmp_path / "home", monkeypatch)
    assert (tau2_data_dir(), tau_bench_data_dir()) == (None, None)  # nothing installed: no guess at another folder
    (home / "tau2").mkdir(parents=True)
    assert tau2_data_dir() == home / "tau2"
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path))
    assert tau2_data_dir() == tmp_path
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "typo"))
    with pytest.raises(DataNotFoundError, match="is not a folder"):
        tau2_data_dir()


@pytest.mark.slow  # a pytest subprocess
def test_the_suite_stops_before_any_test_when_a_data_variable_names_a_missing_folder(tmp_path):
    env = {**os.environ, "TAU_BENCH_DATA_DIR": str(tmp_path / "typo")}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/engine/test_engine.py", "-k", "rows"]
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert f"TAU_BENCH_DATA_DIR='{tmp_path / 'typo'}' is not a folder" in proc.stderr
    assert "passed" not in proc.stdout


def _conftest(config: pytest.Config):
    return next(
        p
        for p in config.pluginmanager.get_plugins()
        if str(getattr(p, "__file__", "")).endswith(os.path.join("tests", "conftest.py"))
    )


@pytest.mark.parametrize(("ci", "status"), [("true", pytest.ExitCode.TESTS_FAILED), ("", pytest.ExitCode.OK)])
def test_in_ci_a_test_skipped_for_missing_data_fails_the_run(request, monkeypatch, ci, status):
    conftest = _conftest(request.config)
    reason = missing_reason(TAU2_DATA, "domain airline")
    skipped = [pytest.CollectReport("tests/x.py", "skipped", ("x.py", 1, f"Skipped: {reason}"), [])]
    assert conftest.missing_data_summary(skipped).startswith("missing benchmark data: 0 test(s) skipped and 1 test")
    reporter = SimpleNamespace(stats={"skipped": skipped})
    session = SimpleNamespace(
        exitstatus=pytest.ExitCode.OK,
        config=SimpleNamespace(pluginmanager=SimpleNamespace(get_plugin=lambda name: reporter)),
    )
    monkeypatch.setenv("CI", ci)
    conftest.pytest_sessionfinish(session, 0)
    assert session.exitstatus == status
