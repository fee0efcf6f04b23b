"""``verl-rewards data get`` / ``data status`` against a tiny synthetic mirror with its own manifest, served by a
local HTTP server on 127.0.0.1 (and as folders): converted files, corrupt files, interrupted downloads, resume, an
unreachable mirror."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from verl_rewards.benchmark_data import manifest as manifest_module
from verl_rewards.benchmark_data.manifest import Benchmark, DataFile, Manifest, Pinned, manifest_text
from verl_rewards.cli import main

from file_server import FileServer, closed_port

TAU2 = ("owner/tau2-bench", "c" * 40)
TAU_BENCH = ("owner/tau-bench", "d" * 40)
BIG = bytes(range(256)) * 1024  # 256 KiB: several reads, so a download can stop in the middle

TASKS_PY = b"""from tau_bench.types import Action, Task

TASKS_TEST = [
    Task(
        annotator="0",
        user_id="ann_1",
        instruction="Cancel order #W1.",
        actions=[Action(name="cancel_pending_order", kwargs={"order_id": "#W1", "reason": "no longer needed"})],
        outputs=[],
    ),
    Task(user_id="bob_2", instruction="Say the total.", actions=[], outputs=["10.5"], annotator="1"),
]
"""
TASKS_JSON = b"""[
  {
    "user_id": "ann_1",
    "actions": [
      {
        "name": "cancel_pending_order",
        "kwargs": {
          "order_id": "#W1",
          "reason": "no longer needed"
        }
      }
    ],
    "instruction": "Cancel order #W1.",
    "outputs": []
  },
  {
    "user_id": "bob_2",
    "actions": [],
    "instruction": "Say the total.",
    "outputs": [
      "10.5"
    ]
  }
]
"""
TOOLS_INIT = b"from .think import Think\n\nALL_TOOLS = [Think]\n"
THINK_PY = b"""from typing import Any, Dict


class Think:
    @staticmethod
    def invoke(data: Dict[str, Any], thought: str) -> str:
        return ""

    @staticmethod
    def get_info() -> Dict[str, Any]:
        return {"type": "function", "function": {"name": "think", "parameters": {"required": ["thought"]}}}
"""
TOOLS_JSON = b"""[
  {
    "type": "function",
    "function": {
      "name": "think",
      "parameters": {
        "required": [
          "thought"
        ]
      }
    }
  }
]
"""

#: upstream path -> bytes, per benchmark
UPSTREAM = {
    "tau2": {
        "LICENSE": b"MIT, tiny\n",
        "data/tau2/domains/mock/db.json": b'{"users": {}}\n',
        "data/tau2/domains/mock/big.bin": BIG,
        "data/tau2/user_simulator/simulation_guidelines.md": b"Be a user.\n",
    },
    "tau_bench": {
        "LICENSE": b"MIT, tiny too\n",
        "tau_bench/envs/retail/data/users.json": b'{"ann_1": {}}\n',
        "tau_bench/envs/retail/tasks_test.py": TASKS_PY,
        "tau_bench/envs/retail/tools/__init__.py": TOOLS_INIT,
        "tau_bench/envs/retail/tools/think.py": THINK_PY,
    },
}
COPIES = {
    "tau2": {
        "LICENSE.tau2-bench": "LICENSE",
        "mock/db.json": "data/tau2/domains/mock/db.json",
        "mock/big.bin": "data/tau2/domains/mock/big.bin",
        "user_simulator/simulation_guidelines.md": "data/tau2/user_simulator/simulation_guidelines.md",
    },
    "tau_bench": {"LICENSE.tau-bench": "LICENSE", "retail/users.json": "tau_bench/envs/retail/data/users.json"},
}
#: the installed files, by benchmark
INSTALLED = {name: {dest: UPSTREAM[name][src] for dest, src in copies.items()} for name, copies in COPIES.items()} | {}
INSTALLED["tau_bench"] |= {"retail/tasks_test.json": TASKS_JSON, "retail/tools_info.json": TOOLS_JSON}


def _pin(path: str, data: bytes) -> Pinned:
    return Pinned(path, len(data), hashlib.sha256(data).hexdigest())


def _manifest() -> Manifest:
    def copy(name: str, dest: str) -> DataFile:
        src = COPIES[name][dest]
        pin = _pin(dest, UPSTREAM[name][src])
        return DataFile(pin.path, pin.size, pin.sha256, (_pin(src, UPSTREAM[name][src]),))

    def made(dest: str, kind: str, sources: list[str]) -> DataFile:
        pin = _pin(dest, INSTALLED["tau_bench"][dest])
        pins = tuple(_pin(s, UPSTREAM["tau_bench"][s]) for s in sources)
        return DataFile(pin.path, pin.size, pin.sha256, pins, kind)

    tools = ["tau_bench/envs/retail/tools/__init__.py", "tau_bench/envs/retail/tools/think.py"]
    tau_bench = [copy("tau_bench", d) for d in COPIES["tau_bench"]] + [
        made("retail/tasks_test.json", "tasks:TASKS_TEST", ["tau_bench/envs/retail/tasks_test.py"]),
        made("retail/tools_info.json", "tools_info", tools),
    ]
    return Manifest(
        {
            "tau2": Benchmark("tau2", *TAU2, tuple(copy("tau2", d) for d in COPIES["tau2"])),
            "tau_bench": Benchmark("tau_bench", *TAU_BENCH, tuple(tau_bench)),
        }
    )


def _url_files(upstream: dict[str, dict[str, bytes]] = UPSTREAM) -> dict[str, bytes]:
    pins = {"tau2": TAU2, "tau_bench": TAU_BENCH}
    return {f"{pins[n][0]}/{pins[n][1]}/{p}": data for n, files in upstream.items() for p, data in files.items()}


@pytest.fixture(autouse=True)
def tiny_manifest(tmp_path, monkeypatch):
    """The commands read this test's manifest instead of the package's."""
    path = tmp_path / "manifest.json"
    path.write_text(manifest_text(_manifest()), encoding="utf-8")
    real = manifest_module.load_manifest
    monkeypatch.setattr(manifest_module, "load_manifest", lambda p=path: real(p))
    return path


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["data", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _installed(root: Path) -> dict[str, dict[str, bytes]]:
    return {
        name: {p.relative_to(root / name).as_posix(): p.read_bytes() for p in (root / name).rglob("*") if p.is_file()}
        for name in ("tau2", "tau_bench")
        if (root / name).is_dir()
    }


def test_get_all_from_a_url_converts_tau_benchs_python_files_and_installs_every_file(tmp_path, capsys):
    root = tmp_path / "data"
    with FileServer(_url_files()) as server:
        code, out, err = _run(capsys, "get", "all", "--from", server.url, "--root", str(root), "--no-progress")
    assert (code, err) == (0, "")
    assert _installed(root) == INSTALLED
    assert "tau2: 4 files (0.3 MB) from http://127.0.0.1" in out and "all 4 verified" in out
    assert sorted(p for p in root.iterdir()) == [root / "tau2", root / "tau_bench"]  # nothing else left behind
    code, out, _ = _run(capsys, "status", "--root", str(root))
    assert code == 0
    assert "tau2       verified   4 files, 0.3 MB, owner/tau2-bench@ccccccc" in out
    assert "tau_bench  verified   4 files, 0.0 MB, owner/tau-bench@ddddddd" in out


def test_a_second_get_fetches_nothing(tmp_path, capsys):
    root = tmp_path / "data"
    with FileServer(_url_files()) as server:
        assert _run(capsys, "get", "tau2", "--from", server.url, "--root", str(root), "--no-progress")[0] == 0
        before = len(server.requests)
        code, out, _ = _run(capsys, "get", "tau2", "--from", server.url, "--root", str(root), "--no-progress")
        assert code == 0 and len(server.requests) == before
    assert out == f"tau2: 4 files present and verified in {root / 'tau2'}\n"


def test_a_corrupted_file_is_refused_and_nothing_is_installed(tmp_path, capsys):
    root = tmp_path / "data"
    files = _url_files()
    bad = f"{TAU2[0]}/{TAU2[1]}/data/tau2/domains/mock/db.json"
    files[bad] = b'{"users": []}\n'  # the same length, another sha256
    with FileServer(files) as server:
        code, _, err = _run(capsys, "get", "tau2", "--from", server.url, "--root", str(root), "--no-progress")
    assert code == 2
    assert err.count("\n") == 1 and f"{server.url}/{bad} refused: 14 bytes with sha256" in err
    assert "the manifest pins 14 bytes with sha256 " + hashlib.sha256(b'{"users": {}}\n').hexdigest()[:16] in err
    assert not (root / "tau2").exists()
    assert not list(root.rglob("db.json*"))  # the refused file is deleted, not kept half-trusted
    code, out, _ = _run(capsys, "status", "--root", str(root))
    assert code == 1 and "tau2       missing    (verl-rewards data get tau2); a partial download waits" in out


def test_a_converted_file_that_differs_from_the_manifest_is_refused(tmp_path, capsys):
    root = tmp_path / "data"
    upstream = {name: dict(files) for name, files in UPSTREAM.items()}
    upstream["tau_bench"]["tau_bench/envs/retail/tasks_test.py"] = TASKS_PY.replace(b"ann_1", b"eve_1")
    with FileServer(_url_files(upstream)) as server:
        code, _, err = _run(capsys, "get", "tau_bench", "--from", server.url, "--root", str(root), "--no-progress")
    assert code == 2 and "tasks_test.py refused" in err  # the Python source is pinned too: never parsed
    assert not (root / "tau_bench").exists()


def test_an_interrupted_download_leaves_no_folder_and_the_next_run_resumes_it(tmp_path, capsys):
    root = tmp_path / "data"
    big = f"{TAU2[0]}/{TAU2[1]}/data/tau2/domains/mock/big.bin"
    with FileServer(_url_files()) as server:
        server.cut[big] = 100_000
        code, _, err = _run(capsys, "get", "tau2", "--from", server.url, "--root", str(root), "--no-progress")
        assert code == 2 and err.count("\n") == 1
        assert f"the download of {server.url}/{big} was interrupted after 100,000 of 262,144 bytes" in err
        assert "run the command again to resume" in err
        assert not (root / "tau2").exists()  # no half-written folder
        part = root / ".incoming" / "tau2" / "mock" / "big.bin.part"
        assert part.stat().st_size == 100_000
        del server.cut[big]
        first = len(server.requests)
        code, out, err = _run(capsys, "get", "tau2", "--from", server.url, "--root", str(root), "--no-progress")
        assert (code, err) == (0, "")
        again = server.requests[first:]
    assert (big, "bytes=100000-") in again  # resumed where it stopped
    assert len(again) < 4  # the files that arrived before are kept, not fetched again
    assert _installed(root)["tau2"] == INSTALLED["tau2"]
    assert not (root / ".incoming").exists()


def test_a_server_without_ranges_restarts_the_file_cleanly(tmp_path, capsys):
    root = tmp_path / "data"
    big = f"{TAU2[0]}/{TAU2[1]}/data/tau2/domains/mock/big.bin"
    with FileServer(_url_files(), ranges=False) as server:
        server.cut[big] = 70_000
        assert _run(capsys, "get", "tau2", "--from", server.url, "--root", str(root), "--no-progress")[0] == 2
        del server.cut[big]
        assert _run(capsys, "get", "tau2", "--from", server.url, "--root", str(root), "--no-progress")[0] == 0
    assert _installed(root)["tau2"] == INSTALLED["tau2"]


def test_an_unreachable_mirror_gets_one_line_naming_the_url_and_from(tmp_path, capsys):
    url = f"http://127.0.0.1:{closed_port()}"
    code, out, err = _run(capsys, "get", "all", "--from", url, "--root", str(tmp_path / "data"), "--no-progress")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"verl-rewards data get: error: cannot reach {url}/{TAU2[0]}/{TAU2[1]}/LICENSE (")
    assert "pass --from DIR|URL (a local mirror" in lines[0]
    assert not (tmp_path / "data" / "tau2").exists()


def test_get_from_folders_in_either_layout(tmp_path, capsys):
    upstream = tmp_path / "upstream"
    for path, data in _url_files().items():
        (upstream / path).parent.mkdir(parents=True, exist_ok=True)
        (upstream / path).write_bytes(data)
    assert _run(capsys, "get", "--from", str(upstream), "--root", str(tmp_path / "a"), "--no-progress")[0] == 0
    assert _installed(tmp_path / "a") == INSTALLED
    # a copy of a data folder, read-only as a shared copy may be
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "a", copy)
    for path in copy.rglob("*"):
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        code, out, _ = _run(capsys, "get", "--from", str(copy), "--root", str(tmp_path / "b"), "--no-progress")
    finally:
        for path in copy.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert code == 0 and "(a data folder)" in out
    assert _installed(tmp_path / "b") == INSTALLED
    assert (tmp_path / "b" / "tau2" / "mock" / "db.json").stat().st_mode & 0o200  # the user may change their copy
    code, _, err = _run(capsys, "get", "--from", str(tmp_path), "--root", str(tmp_path / "c"))
    assert code == 2 and "holds neither tau2/ and tau_bench/ (a data folder) nor owner/tau2-bench/" in err


def test_a_damaged_installed_folder_is_repaired_and_its_own_files_kept(tmp_path, capsys):
    root = tmp_path / "data"
    with FileServer(_url_files()) as server:
        assert _run(capsys, "get", "tau2", "--from", server.url, "--root", str(root), "--no-progress")[0] == 0
        (root / "tau2" / "mock" / "db.json").write_text("{}")
        (root / "tau2" / "user_simulator" / "simulation_guidelines.md").unlink()
        (root / "tau2" / "mock" / "notes.txt").write_text("mine")
        code, out, _ = _run(capsys, "status", "--root", str(root))
        assert code == 1 and "tau2       incomplete 1 missing, 1 differ of 4 (verl-rewards data get tau2)" in out
        first = len(server.requests)
        code, out, _ = _run(capsys, "get", "tau2", "--from", server.url, "--root", str(root), "--no-progress")
        fetched = sorted(path.rsplit("/", 1)[1] for path in server.paths()[first:])
    assert code == 0 and "tau2: 2 files (0.0 MB)" in out and "2 kept" in out
    assert fetched == ["db.json", "simulation_guidelines.md"]  # the big file was kept, not fetched again
    got = _installed(root)["tau2"]
    assert got.pop("mock/notes.txt") == b"mine" and got == INSTALLED["tau2"]


def test_status_names_an_overriding_variable(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TAU_BENCH_DATA_DIR", str(tmp_path))
    code, out, _ = _run(capsys, "status", "--root", str(tmp_path / "none"))
    assert code == 1
    assert out.splitlines() == [
        f"data folder: {tmp_path / 'none'}",
        "  tau2       missing    (verl-rewards data get tau2)",
        "  tau_bench  missing    (verl-rewards data get tau_bench)",
        f"             $TAU_BENCH_DATA_DIR is set: commands read {tmp_path} instead",
    ]


def test_the_synthetic_manifest_reads_back(tiny_manifest):
    raw = json.loads(tiny_manifest.read_text())
    assert raw["benchmarks"]["tau_bench"]["files"][-1]["convert"] == "tools_info"
    assert manifest_module.load_manifest().benchmarks == _manifest().benchmarks
