"""The manifest shipped with the package: pinned to the upstream commits, written canonically, and matching the
benchmark data folders the package's rule finds, file for file."""

from __future__ import annotations

import pytest

from verl_rewards.benchmark_data.install import status
from verl_rewards.benchmark_data.make_manifest import TAU2_COMMIT, TAU_BENCH_COMMIT
from verl_rewards.benchmark_data.manifest import MANIFEST_FILE, load_manifest, manifest_text, parse_manifest
from verl_rewards.engine.data_dir import BENCHMARKS

from data_support import require_root


def test_the_manifest_pins_the_upstream_commits_and_reads_back_as_written():
    manifest = load_manifest()
    assert {n: (b.repo, b.commit) for n, b in manifest.benchmarks.items()} == {
        "tau2": ("sierra-research/tau2-bench", "a2c024725189473d2d7cea3a5cfdbcc67478e41f"),
        "tau_bench": ("sierra-research/tau-bench", "59a200c6d575d595120f1cb70fea53cef0632f6b"),
    }
    assert (TAU2_COMMIT, TAU_BENCH_COMMIT) == (
        manifest.benchmarks["tau2"].commit,
        manifest.benchmarks["tau_bench"].commit,
    )
    assert manifest_text(manifest) == MANIFEST_FILE.read_text(encoding="utf-8")
    assert set(manifest.benchmarks) == set(BENCHMARKS)


def test_the_manifest_lists_what_the_loaders_read():
    tau2 = {f.path for f in load_manifest().benchmarks["tau2"].files}
    for domain, names in {
        "mock": ["db.json", "user_db.json", "policy.md", "policy_solo.md", "tasks.json", "split_tasks.json"],
        "airline": ["db.json", "policy.md", "tasks.json", "split_tasks.json"],
        "retail": ["db.json", "policy.md", "tasks.json", "split_tasks.json"],
        "telecom": ["db.toml", "user_db.toml", "main_policy.md", "tasks.json", "split_tasks.json"],
        "banking_knowledge": ["db.json", "tasks/task_001.json", "documents", "prompts/components"],
        "user_simulator": ["simulation_guidelines.md", "simulation_guidelines_tools.md"],
    }.items():
        for name in names:
            assert any(p == f"{domain}/{name}" or p.startswith(f"{domain}/{name}/") for p in tau2), (domain, name)
    tau_bench = load_manifest().benchmarks["tau_bench"]
    converted = {f.path: (f.convert, [s.path for s in f.sources]) for f in tau_bench.files if f.convert}
    assert converted["retail/tasks_train.json"] == ("tasks:TASKS_TRAIN", ["tau_bench/envs/retail/tasks_train.py"])
    assert converted["airline/tasks_test.json"] == ("tasks:TASKS", ["tau_bench/envs/airline/tasks_test.py"])
    assert converted["airline/tools_info.json"][1][0] == "tau_bench/envs/airline/tools/__init__.py"
    assert len(converted["airline/tools_info.json"][1]) == 15  # __init__.py and the 14 tool modules


@pytest.mark.parametrize("name", ["tau2", "tau_bench"])
def test_every_file_of_the_manifest_matches_the_data_folder(name):
    found = status(load_manifest().benchmarks[name], require_root(BENCHMARKS[name]))
    assert (found.missing, found.differ) == ([], [])


def test_a_malformed_manifest_is_refused_naming_the_problem():
    with pytest.raises(ValueError, match="format 2"):
        parse_manifest('{"format": 2, "benchmarks": {}}')
    bad = '{"format": 1, "benchmarks": {"x": {"repo": "o/r", "commit": "c", "files": [%s]}}}'
    with pytest.raises(ValueError, match="not a plain relative path"):
        parse_manifest(bad % '{"path": "../evil", "size": 1, "sha256": "00", "from": "a"}')
    with pytest.raises(ValueError, match="no usable 'from'"):
        parse_manifest(bad % '{"path": "a", "size": 1, "sha256": "00"}')
