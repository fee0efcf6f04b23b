"""`verl-rewards prepare tau2` on broken data: one-line errors (exit code 2) naming the file, split names that
cannot leave the output folder, and the parquet splits + tool config replaced as one set or not at all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from verl_rewards.cli import main

from tau2_support import require_data


@pytest.fixture
def mock_copy(tmp_path: Path) -> Path:
    """A private copy of the mock domain's data (``<tmp>/data/mock``), free to corrupt."""
    root = require_data("mock")
    dst = tmp_path / "data" / "mock"
    shutil.copytree(root / "mock", dst)
    return dst


def _prepare(data: Path, out: Path, split: str = "base") -> int:
    return main(["prepare", "tau2", "--data-dir", str(data), "--domain", "mock", "--out", str(out), "--split", split])


def _one_line_error(capsys) -> str:
    """The error line on stderr: the last line, the only one saying "error" (progress bars may precede it)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith("verl-rewards prepare tau2: error: ") and err.count("error") == 1, err
    return last


def _corrupt(path: Path, kind: str) -> None:
    good = path.read_bytes()
    path.write_bytes(
        {
            "truncated": good[: len(good) // 2],
            "empty": b"",
            "not-utf8": b"\xff\xfe" + good,
            "deep": b"[" * 100_000 + b"]" * 100_000,
        }[kind]
    )


WRONG_SCHEMA = {"db.json": "[1, 2]", "tasks.json": '{"id": "x"}', "split_tasks.json": '["base"]'}


@pytest.mark.parametrize("kind", ["truncated", "empty", "not-utf8", "deep", "wrong-schema"])
@pytest.mark.parametrize("name", ["db.json", "tasks.json", "split_tasks.json"])
def test_broken_data_file_is_a_one_line_error_naming_it(mock_copy, tmp_path, capsys, name, kind):
    if kind == "wrong-schema":
        (mock_copy / name).write_text(WRONG_SCHEMA[name], encoding="utf-8")
    else:
        _corrupt(mock_copy / name, kind)
    out = tmp_path / "out"
    assert _prepare(mock_copy.parent, out) == 2
    err = _one_line_error(capsys)
    assert name in err
    assert not out.exists()


def test_split_name_cannot_escape_the_output_folder(mock_copy, tmp_path, capsys):
    splits = json.loads((mock_copy / "split_tasks.json").read_text())
    splits["../escaped"] = splits["base"][:2]
    (mock_copy / "split_tasks.json").write_text(json.dumps(splits))
    out = tmp_path / "out"
    assert _prepare(mock_copy.parent, out, "../escaped") == 2
    assert "split name '../escaped'" in _one_line_error(capsys)
    assert not (tmp_path / "escaped.parquet").exists() and not out.exists()


def _add_split(data: Path, name: str, n: int) -> None:
    splits = json.loads((data / "split_tasks.json").read_text())
    splits[name] = splits["base"][:n]
    (data / "split_tasks.json").write_text(json.dumps(splits))


def test_splits_and_tool_config_are_replaced_as_one_set(mock_copy, tmp_path, monkeypatch, capsys):
    _add_split(mock_copy, "small", 3)
    out = tmp_path / "out"
    assert _prepare(mock_copy.parent, out, "base,small") == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == ["base.parquet", "small.parquet", "tool_config.yaml"]

    other = tmp_path / "other" / "mock"  # same tasks from another folder: every row records a new data_dir
    shutil.copytree(mock_copy, other)
    real_write = pq.write_table
    calls = []

    def second_write_dies(table, where, **kw):
        calls.append(where)
        real_write(table, where, **kw)
        if len(calls) == 2:
            raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", second_write_dies)
    assert _prepare(other.parent, out, "base,small") == 2
    assert "disk full" in _one_line_error(capsys)
    assert len(calls) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing replaced, no temporary file left

    monkeypatch.setattr(pq, "write_table", real_write)
    assert _prepare(other.parent, out, "base,small") == 0
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(after) == sorted(before)
    assert after["base.parquet"] != before["base.parquet"] and after["small.parquet"] != before["small.parquet"]
    assert str(other.parent.resolve()) in after["base.parquet"].decode("latin-1")


def test_empty_split_writes_nothing(mock_copy, tmp_path, capsys):
    _add_split(mock_copy, "none", 0)
    out = tmp_path / "out"
    assert _prepare(mock_copy.parent, out, "base,none") == 2
    assert "split(s) ['none']" in _one_line_error(capsys)
    assert not out.exists()


def test_an_unknown_split_names_the_splits_file_only_when_there_is_one_and_holdout_only_where_taken(tmp_path):
    """export-sft gold (no --holdout) on a domain without split_tasks.json: the error points at neither."""
    from verl_rewards.tau2 import load_domain
    from verl_rewards.tau2.data import Tau2PrepareError, split_ids

    from tau2_support import mock_dir, mock_task

    data = mock_dir(tmp_path, [mock_task("t1", None)])
    with pytest.raises(Tau2PrepareError) as with_file:
        split_ids(load_domain("mock", data), "train", holdout_flag=True)
    assert "split_tasks.json" in str(with_file.value) and "--holdout" in str(with_file.value)
    (data / "mock" / "split_tasks.json").unlink()
    with pytest.raises(Tau2PrepareError) as without:
        split_ids(load_domain("mock", data), "train")
    assert "split_tasks.json" not in str(without.value) and "--holdout" not in str(without.value)
    assert "mock has no splits file" in str(without.value)
