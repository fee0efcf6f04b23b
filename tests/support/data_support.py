"""Where the tests find the benchmark data: the package's own rule (:mod:`verl_rewards.engine.data_dir`) with no
explicit folder, so ``$TAU2_DATA_DIR`` / ``$TAU_BENCH_DATA_DIR``, else the installed data folder that
``verl-rewards data get all`` fills. A variable naming a missing folder is an error (``conftest.py`` stops the run
before any test), never a reason to look elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from verl_rewards.engine.data_dir import BenchmarkData, choose_data_dir, installed_root

#: every skip for missing benchmark data says this, so the end-of-run summary can count them
GET_DATA = "verl-rewards data get"


def data_root(data: BenchmarkData) -> Path | None:
    """The benchmark's data folder by the package's rule, or None when there is none."""
    found = choose_data_dir(None, data)
    return Path(found) if found else None


def missing_reason(data: BenchmarkData, what: str = "") -> str:
    """The skip message for a test whose benchmark data (``what``: the part it needs) is not there."""
    part = f" ({what})" if what else ""
    return f"{data.label} data not found{part}: run `{GET_DATA} {data.name}` or set {data.env_var}"


def require_root(data: BenchmarkData, domain: str | None = None) -> Path:
    """The benchmark's data folder (holding ``domain``/ when given), or skip the test saying how to get it."""
    root = data_root(data)
    if root is None or (domain is not None and not (root / domain).is_dir()):
        pytest.skip(missing_reason(data, f"domain {domain}" if domain else ""))
    return root


def installed_data_home(path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make ``path`` the user data folder for this test (``XDG_DATA_HOME``, what platformdirs reads on Linux) and
    return the installed data folder under it; fails rather than touch the real one where that does not work."""
    monkeypatch.setenv("XDG_DATA_HOME", str(path))
    root = installed_root()
    assert root.is_relative_to(path), f"the user data folder {root} does not follow XDG_DATA_HOME on this platform"
    return root
