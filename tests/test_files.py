"""Atomic output files: a target appears complete or not at all, a set of files is replaced together."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from verl_rewards.files import OutputPathError, atomic_path, check_output_path, replace_together, write_text_atomic


def test_atomic_path_replaces_only_after_a_clean_exit(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    write_text_atomic(target, "old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("writer died")
    assert target.read_text() == "old"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]
    with atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp.name.startswith(".out.txt.")
        tmp.write_text("new")
        assert target.read_text() == "old"  # not visible before the writer finished
    assert target.read_text() == "new"


def test_written_file_gets_the_umask_mode_not_the_temp_files(tmp_path):
    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "f", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "f").stat().st_mode & 0o777 == 0o644


def test_replace_together_changes_no_target_when_one_writer_fails(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    replace_together({a: lambda p: p.write_text("a1"), b: lambda p: p.write_text("b1")})

    def fail(path: Path) -> None:
        path.write_text("partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_together({a: lambda p: p.write_text("a2"), b: fail})
    assert (a.read_text(), b.read_text()) == ("a1", "b1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


@pytest.mark.parametrize(
    ("make", "target", "message"),
    [
        (None, ".", "is a directory"),
        ("file", "file/out.txt", "is not a directory"),
        ("dir", "dir", "is a directory"),
    ],
)
def test_check_output_path_refuses_what_cannot_be_a_file(tmp_path, monkeypatch, make, target, message):
    monkeypatch.chdir(tmp_path)
    if make == "file":
        Path("file").write_text("")
    elif make == "dir":
        Path("dir").mkdir()
    with pytest.raises(OutputPathError, match=message):
        check_output_path(target, "--out")


def test_check_output_path_accepts_new_folders_and_existing_files(tmp_path):
    assert check_output_path(tmp_path / "new" / "deeper" / "x.jsonl") == tmp_path / "new" / "deeper" / "x.jsonl"
    (tmp_path / "x.jsonl").write_text("")
    assert check_output_path(tmp_path / "x.jsonl") == tmp_path / "x.jsonl"
    assert not (tmp_path / "new").exists()  # checking creates nothing


_SIGTERM_CHILD = """
import sys, time
from pathlib import Path
from verl_rewards.files import atomic_path, replace_together
target = Path(sys.argv[1])
def stall(tmp):
    tmp.write_text("half")
    print("writing", flush=True)
    time.sleep(600)
if sys.argv[2] == "atomic_path":
    with atomic_path(target) as tmp:
        stall(tmp)
else:
    replace_together({target: lambda tmp: tmp.write_text("new"), target.with_name("b.txt"): stall})
"""


@pytest.mark.parametrize("writer", ["atomic_path", "replace_together"])
def test_sigterm_during_a_write_leaves_no_temporary_file_and_the_target_intact(tmp_path, writer):
    """SIGTERM (a scheduler's or a user's kill) mid-write: the target keeps its old content, no hidden
    ``.<name>.*.tmp`` is left behind, and the process still dies of SIGTERM."""
    import signal
    import subprocess
    import sys

    target = tmp_path / "out.txt"
    write_text_atomic(target, "old")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _SIGTERM_CHILD, str(target), writer], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"  # the temp file exists now
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=60) == -signal.SIGTERM
    finally:
        child.kill()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    assert target.read_text() == "old"
