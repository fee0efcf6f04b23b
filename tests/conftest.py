"""Shared fixtures: locally built tokenizers, verl configs composed from verl's own YAML, a local Ray cluster."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# no downloads, no telemetry: everything the tests need is built locally
for _key, _value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}.items():
    os.environ.setdefault(_key, _value)


@pytest.fixture(scope="session")
def small_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from verl_rewards.local_tokenizer import build_small_tokenizer

    return build_small_tokenizer(tmp_path_factory.mktemp("tok_small"))


@pytest.fixture(scope="session")
def small_tokenizer(small_tokenizer_dir: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(small_tokenizer_dir)


@pytest.fixture(scope="session")
def qwen_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from verl_rewards.local_tokenizer import build_qwen_tokenizer

    return build_qwen_tokenizer(tmp_path_factory.mktemp("tok_qwen"))


@pytest.fixture(scope="session")
def qwen_tokenizer(qwen_tokenizer_dir: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(qwen_tokenizer_dir)


@pytest.fixture(scope="session")
def ray_cluster():
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


# -- the benchmark data ---------------------------------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    """Stop before any test when a data variable names a missing folder (the package's rule: an error, never a
    fallback to another folder)."""
    from verl_rewards.engine.data_dir import BENCHMARKS, env_data_dir
    from verl_rewards.engine.errors import DataNotFoundError

    for data in BENCHMARKS.values():
        try:
            env_data_dir(data)
        except DataNotFoundError as exc:
            raise pytest.UsageError(str(exc)) from None


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


def missing_data_summary(skipped: list) -> str | None:
    """One line: how many tests skipped and test files were not collected for missing benchmark data, and how to
    get it; None when nothing was left out."""
    from data_support import GET_DATA

    tests = files = 0
    for report in skipped:
        if GET_DATA not in _skip_reason(report):
            continue
        if isinstance(report, pytest.CollectReport):
            files += 1
        else:
            tests += 1
    if not tests and not files:
        return None
    return (
        f"missing benchmark data: {tests} test(s) skipped and {files} test file(s) not collected; "
        f"to run them: {GET_DATA} all (docs: Getting started, 'The benchmark data')"
    )


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI (``CI`` set) a test skipped for missing benchmark data fails the run: CI installs the data first."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if _in_ci() and reporter is not None and session.exitstatus == pytest.ExitCode.OK:
        if missing_data_summary(reporter.stats.get("skipped", [])):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    line = missing_data_summary(terminalreporter.stats.get("skipped", []))
    if line:
        terminalreporter.write_line(line + (" [CI: this fails the run]" if _in_ci() else ""), yellow=True)


@pytest.fixture(autouse=True)
def _fresh_telecom_process_vpn() -> Iterator[None]:
    """telecom's process-wide VPN details (load option ``vpn_details="process"``, tau2's) start fresh per test."""
    from verl_rewards.tau2.domains.telecom.phone import reset_process_vpn

    reset_process_vpn()
    yield
    reset_process_vpn()
