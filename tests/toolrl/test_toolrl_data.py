"""prepare_toolrl: input formats, verl parquet output, per-row error reports, strict mode."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from verl_rewards.toolrl import compute_score
from verl_rewards.toolrl.data import (
    SAMPLE_PATH,
    SCHEMA,
    NothingConvertedError,
    PrepareReport,
    ToolRLDataError,
    ground_truth_kind,
    prepare_toolrl,
)

from repo_paths import REPO

SAMPLE = REPO / "verl_rewards" / "toolrl" / "sample_data" / "toolrl_sample.jsonl"

SYSTEM = "You are a tool-using assistant. Tools: get_stock_quote(symbol). Reply with <think> then <tool_call>."
USER = "**Dialogue Records History**\n<user> Price of NVDA? </user>"
CALL_GT = (
    '<think> Quote. </think>\n<tool_call>\n{"name": "get_stock_quote", "parameters": {"symbol": "NVDA"}}\n</tool_call>'
)
RESPONSE_GT = "<think> Ask. </think>\n<response> Which company? </response>"
BOTH_GT = CALL_GT + "\n<response> Fetching. </response>"


def good(output: str = CALL_GT, **extra) -> dict:
    return {"instruction": SYSTEM, "input": USER, "output": output, **extra}


def write_jsonl(path: Path, rows: list) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(path: Path, out: Path, **kw) -> tuple[PrepareReport, str]:
    buf = io.StringIO()
    report = prepare_toolrl(path, out, show_progress=False, report_to=buf, **kw)
    return report, buf.getvalue()


BAD_ROWS = [
    ("[1, 2, 3]", "must be a JSON object"),
    ('{"instruction": "x", "input": ', "invalid JSON"),
    ({"input": USER, "output": CALL_GT}, "missing field 'instruction'"),
    ({"instruction": SYSTEM, "output": CALL_GT}, "missing field 'input'"),
    ({"instruction": SYSTEM, "input": USER}, "missing field 'output'"),
    ({"instruction": SYSTEM, "input": 42, "output": CALL_GT}, "'input' must be a string, got int"),
    ({"instruction": "   ", "input": USER, "output": CALL_GT}, "'instruction' is empty"),
    (good("<think> nothing </think>"), "neither a <tool_call> nor a <response>"),
    (good(CALL_GT + "\n" + CALL_GT), "exactly one <tool_call>"),
    (good("<think> x </think>\n</tool_call>\n{}\n<tool_call>"), "before opening"),
    (good("<think> x </think>\n<response> a </response>\n<response> b </response>"), "exactly one <response>"),
    (good('<think> x </think>\n<tool_call>\n{"name": "f", "parameters": {}\n</tool_call>'), "line 1 is not one JSON"),
    (good('<think> x </think>\n<tool_call>\n["f"]\n</tool_call>'), "line 1 is a JSON list"),
    (good('<think> x </think>\n<tool_call>\n{"parameters": {}}\n</tool_call>'), "lacks a non-empty string 'name'"),
    (good('<think> x </think>\n<tool_call>\n{"name": "f", "parameters": [1]}\n</tool_call>'), "object 'parameters'"),
    (
        good(
            '<think> x </think>\n<tool_call>\n{"name": "f", "parameters": {}}\n\n'
            '{"name": "g", "parameters": {}}\n</tool_call>'
        ),
        "line 2 is not one JSON",
    ),
    (good("<think> x </think>\n<tool_call>\n\n</tool_call>"), "block is empty"),
    ({"instruction": SYSTEM, "input": USER, "output": None}, "missing field 'output'"),
]


# --------------------------------------------------------------------------------------- good rows


def test_sample_dataset_converts_completely(tmp_path):
    assert SAMPLE_PATH == SAMPLE.resolve()
    report, text = run(SAMPLE, tmp_path)
    assert report.total == report.written == 24
    assert report.bad == 0 and report.errors == []
    assert report.kinds == {"tool_call": 18, "response": 5, "both": 1}
    assert "24 rows read, 24 written" in text
    df = pd.read_parquet(report.output_path)
    assert len(df) == 24
    multi = [gt for gt in (rm["ground_truth"] for rm in df["reward_model"]) if gt.count('"name"') > 1]
    assert len(multi) >= 4


def test_output_columns_and_types(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [good(), good(RESPONSE_GT), good(BOTH_GT)])
    report, _ = run(path, tmp_path / "out", split="test")
    assert report.output_path == str(tmp_path / "out" / "test.parquet")
    assert pq.read_schema(report.output_path).equals(SCHEMA)
    df = pd.read_parquet(report.output_path)
    assert list(df.columns) == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    row = df.iloc[1]
    assert row["data_source"] == "rlla"
    assert row["ability"] == "tool_use"
    assert [dict(m) for m in row["prompt"]] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER},
    ]
    assert row["reward_model"] == {"style": "rule", "ground_truth": RESPONSE_GT}
    info = row["extra_info"]
    assert info["index"] == 1 and info["split"] == "test" and info["source_row"] == 2
    assert info["instruction"] == SYSTEM and info["input"] == USER and info["output"] == RESPONSE_GT
    assert df["extra_info"].map(lambda e: e["index"]).tolist() == [0, 1, 2]


def test_ground_truths_in_output_score_max(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [good(), good(RESPONSE_GT), good(BOTH_GT)])
    report, _ = run(path, tmp_path)
    for rm in pd.read_parquet(report.output_path)["reward_model"]:
        got = compute_score(rm["ground_truth"], rm["ground_truth"])
        assert got["format"] == 1.0 and got["correctness"] in (0.0, 3.0)


def test_json_list_input_and_aliases(tmp_path):
    rows = [good(), {"system": SYSTEM, "user": USER, "ground_truth": RESPONSE_GT}]
    path = tmp_path / "in.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    report, _ = run(path, tmp_path)
    assert report.written == 2 and report.kinds["response"] == 1


def test_canonical_name_wins_over_alias(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [good(system="ignored")])
    report, _ = run(path, tmp_path)
    assert pd.read_parquet(report.output_path).iloc[0]["prompt"][0]["content"] == SYSTEM


def test_json_file_holding_jsonl_is_read_as_jsonl(tmp_path):
    path = write_jsonl(tmp_path / "in.json", [good(), good(RESPONSE_GT)])
    report, _ = run(path, tmp_path)
    assert report.written == 2


def test_parquet_input(tmp_path):
    src = tmp_path / "raw.parquet"
    pd.DataFrame([good(), good(RESPONSE_GT), {"instruction": SYSTEM, "input": None, "output": CALL_GT}]).to_parquet(src)
    report, _ = run(src, tmp_path / "out")
    assert report.written == 2
    assert report.errors == [(3, "missing field 'input' (or 'user')")]


def test_blank_jsonl_lines_are_skipped_but_counted_in_line_numbers(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(good()) + "\n\n   \n" + "not json\n", encoding="utf-8")
    report, _ = run(path, tmp_path)
    assert report.total == 2 and report.written == 1
    assert report.errors[0][0] == 4


# ---------------------------------------------------------------------------------------- bad rows


def test_every_kind_of_bad_row_is_reported_with_its_row_number(tmp_path):
    rows = [good()]
    for bad, _ in BAD_ROWS:
        rows.append(bad)
        rows.append(good(RESPONSE_GT))
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    report, text = run(path, tmp_path)
    assert report.total == len(rows)
    assert report.written == 1 + len(BAD_ROWS)
    assert report.bad == len(BAD_ROWS)
    assert [number for number, _ in report.errors] == [2 + 2 * i for i in range(len(BAD_ROWS))]
    for (number, reason), (_, fragment) in zip(report.errors, BAD_ROWS, strict=True):
        assert fragment in reason, (number, reason)
        assert f"row {number}: {reason}" in text
    assert len(pd.read_parquet(report.output_path)) == report.written


def test_invalid_utf8_line(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(json.dumps(good()).encode() + b"\n" + b'{"instruction": "\xff"}\n')
    report, _ = run(path, tmp_path)
    assert report.errors and report.errors[0][0] == 2 and "UTF-8" in report.errors[0][1]


def test_json_list_row_numbers_are_positions(tmp_path):
    path = tmp_path / "in.json"
    path.write_text(json.dumps([good(), "oops", good(), {"instruction": SYSTEM}]), encoding="utf-8")
    report, _ = run(path, tmp_path)
    assert [n for n, _ in report.errors] == [2, 4]


def _existing_output(out: Path) -> bytes:
    """A good train.parquet already in ``out`` (from two rows); returns its bytes."""
    src = write_jsonl(out.parent / "first.jsonl", [good(), good(RESPONSE_GT)])
    run(src, out)
    return (out / "train.parquet").read_bytes()


@pytest.mark.parametrize("rows", [["[]", "{}"], []], ids=["all-bad", "empty"])
def test_input_without_a_good_row_writes_nothing_and_keeps_the_old_file(tmp_path, rows):
    out = tmp_path / "out"
    before = _existing_output(out)
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    with pytest.raises(NothingConvertedError, match="no row converted.*nothing written"):
        run(path, out)
    assert (out / "train.parquet").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["train.parquet"]


def test_input_without_a_good_row_creates_no_file(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", ["{}"])
    with pytest.raises(NothingConvertedError):
        run(path, tmp_path / "out")
    assert not (tmp_path / "out" / "train.parquet").exists()


def test_writer_failing_midway_leaves_the_old_file_intact(tmp_path, monkeypatch):
    import verl_rewards.toolrl.data as data

    out = tmp_path / "out"
    before = _existing_output(out)
    real_write = pq.write_table

    def write_then_die(table, where, **kw):
        real_write(table.slice(0, 1), where, **kw)  # part of the output is on disk when the write fails
        raise OSError("disk full")

    monkeypatch.setattr(data.pq, "write_table", write_then_die)
    with pytest.raises(OSError, match="disk full"):
        run(SAMPLE, out)
    assert (out / "train.parquet").read_bytes() == before
    assert len(pd.read_parquet(out / "train.parquet")) == 2
    assert sorted(p.name for p in out.iterdir()) == ["train.parquet"]  # no temporary file left


def test_report_is_truncated_after_50_rows(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", ["{}"] * 60 + [good()])
    report, text = run(path, tmp_path)
    assert report.bad == 60 and report.written == 1
    assert "... and 10 more bad rows" in text


def test_strict_raises_on_first_bad_row_and_writes_nothing(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [good(), good(), {"instruction": SYSTEM, "input": USER}, "[]"])
    with pytest.raises(ToolRLDataError) as info:
        run(path, tmp_path / "out", strict=True)
    assert info.value.row == 3
    assert "missing field 'output'" in info.value.reason
    assert str(info.value).startswith("row 3:")
    assert isinstance(info.value, ValueError)
    assert not (tmp_path / "out" / "train.parquet").exists()


def test_strict_passes_on_clean_input(tmp_path):
    report, _ = run(SAMPLE, tmp_path, strict=True)
    assert report.written == 24


# ------------------------------------------------------------------------------------- whole file


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        run(tmp_path / "nope.jsonl", tmp_path)


def test_unsupported_extension(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unsupported"):
        run(path, tmp_path)


def test_json_top_level_must_be_a_list(tmp_path):
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"rows": [good()]}), encoding="utf-8")
    with pytest.raises(ValueError, match="list of rows"):
        run(path, tmp_path)


def test_truncated_json_list_is_an_error(tmp_path):
    path = tmp_path / "in.json"
    path.write_text(json.dumps([good(), good()])[:-10], encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        run(path, tmp_path)


def test_unreadable_parquet(tmp_path):
    path = tmp_path / "in.parquet"
    path.write_bytes(b"definitely not parquet")
    with pytest.raises(ValueError, match="parquet"):
        run(path, tmp_path)


@pytest.mark.parametrize("split", ["", "a/b", None])
def test_bad_split_name(tmp_path, split):
    with pytest.raises(ValueError, match="split"):
        run(SAMPLE, tmp_path, split=split)


# ------------------------------------------------------------------------------------------- misc


def test_progress_bar_and_default_report_go_to_the_terminal(tmp_path, capsys):
    path = write_jsonl(tmp_path / "in.jsonl", [good(), "{}"])
    report = prepare_toolrl(path, tmp_path)
    captured = capsys.readouterr()
    assert "toolrl train" in captured.err  # tqdm
    assert "2 rows read, 1 written" in captured.out and "row 2:" in captured.out
    assert report.as_dict()["errors"] == [[2, "missing field 'instruction' (or 'system')"]]


def test_custom_data_source_and_ability(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [good()])
    report, _ = run(path, tmp_path, data_source="rlla_custom", ability="tools")
    row = pd.read_parquet(report.output_path).iloc[0]
    assert row["data_source"] == "rlla_custom" and row["ability"] == "tools"


def test_ground_truth_kind():
    assert ground_truth_kind(CALL_GT) == "tool_call"
    assert ground_truth_kind(RESPONSE_GT) == "response"
    assert ground_truth_kind(BOTH_GT) == "both"


def test_parquet_table_types_are_plain_arrow(tmp_path):
    report, _ = run(SAMPLE, tmp_path)
    table = pq.read_table(report.output_path)
    assert table.schema.field("prompt").type == pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    assert table.schema.field("extra_info").type.field("index").type == pa.int64()
