"""Shared fixtures: locally built tokenizers, verl configs composed from verl's own YAML, a local Ray cluster."""

from __future__ import annotations

import os

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


# -- what the data-less run left out ----------------------------------------------------------------------------
#: the variables naming the benchmarks' data, as every skip message for missing data names them
DATA_VARIABLES = {
    "TAU2_DATA_DIR": "to tau2-bench's data/tau2/domains, next to its user_simulator/",
    "TAU_BENCH_DATA_DIR": "to the folder holding tau-bench's retail/ and airline/ data",
}


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


def missing_data_summary(skipped: list) -> str | None:
    """One line: how many tests skipped and test files were not collected for missing benchmark data, and the
    variables that enable them; None when nothing was left out."""
    tests = files = 0
    needed: set[str] = set()
    for report in skipped:
        reason = _skip_reason(report)
        names = {name for name in DATA_VARIABLES if name in reason}
        if not names:
            continue
        needed |= names
        if isinstance(report, pytest.CollectReport):
            files += 1
        else:
            tests += 1
    if not needed:
        return None
    how = " and ".join(f"{name} ({DATA_VARIABLES[name]})" for name in sorted(needed))
    return (
        f"missing benchmark data: {tests} test(s) skipped and {files} test file(s) not collected; "
        f"to run them, set {how} (README: The two commands)"
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    line = missing_data_summary(terminalreporter.stats.get("skipped", []))
    if line:
        terminalreporter.write_line(line, yellow=True)
