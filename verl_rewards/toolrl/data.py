"""Convert ToolRL-format rows into verl's RL parquet layout.

Input schema (one row = one training prompt), as in ToolRL's raw data (``rlla_4k_raw``), which uses the
instruction/input/output triple:

==================  =======================================  ===========================================
field (alias)       meaning                                   rules
==================  =======================================  ===========================================
``instruction``     system prompt: the task, the available    non-empty string
(``system``)        tools, the output format
``input``           the user turn, usually the dialogue       non-empty string
(``user``)          history (``**Dialogue Records History**
                    <user> ... </user>``)
``output``          ToolRL ground-truth string: ``<think>``    non-empty string with a ``<tool_call>`` block,
(``ground_truth``)  block, then ``<tool_call>`` JSON lines     a ``<response>`` block, or both; each block
                    and/or a ``<response>`` block             exactly once, opened before it is closed;
                                                              every line of the tool-call block one JSON
                                                              object with a non-empty string ``"name"`` and
                                                              an object ``"parameters"``
==================  =======================================  ===========================================

The canonical name wins when a row has both it and its alias; other fields are ignored. Accepted files:
``.json`` (a JSON list of rows; a file that is really one object per line is read as JSONL), ``.jsonl`` /
``.ndjson`` (one JSON object per line, blank lines skipped) and ``.parquet``. Row numbers in reports are
1-based: the physical line number for JSONL, the position in the list or table otherwise.

Output row (``<out_dir>/<split>.parquet``)::

    data_source  "rlla"  (ToolRL picks its scorer when "rlla" is in data_source)
    prompt       [{"role": "system", "content": instruction}, {"role": "user", "content": input}]
    ability      "tool_use"
    reward_model {"style": "rule", "ground_truth": output}
    extra_info   {"index": position in this file (0-based), "split": split, "source_row": input row number,
                  "instruction": ..., "input": ..., "output": ...}

Bad rows are skipped and reported as (row number, reason); ``strict=True`` raises on the first one instead
(and writes nothing). An input without a single good row raises :class:`NothingConvertedError` and writes
nothing. The parquet file is written to a temporary file beside it and renamed into place only once complete,
so a failed or interrupted run leaves an existing ``<split>.parquet`` as it was.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from ..files import atomic_path, check_output_path

FIELDS: dict[str, tuple[str, ...]] = {
    "instruction": ("instruction", "system"),
    "input": ("input", "user"),
    "output": ("output", "ground_truth"),
}

PROMPT_TYPE = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
SCHEMA = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", PROMPT_TYPE),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        (
            "extra_info",
            pa.struct(
                [
                    ("index", pa.int64()),
                    ("split", pa.string()),
                    ("source_row", pa.int64()),
                    ("instruction", pa.string()),
                    ("input", pa.string()),
                    ("output", pa.string()),
                ]
            ),
        ),
    ]
)

_MAX_REPORTED = 50

#: The small hand-written sample dataset shipped with the package (24 rows: 18 tool-call, 5 response, 1 both).
SAMPLE_PATH = Path(__file__).resolve().parent / "sample_data" / "toolrl_sample.jsonl"


class ToolRLDataError(ValueError):
    """A malformed input row (raised only with ``strict=True``); ``row`` is 1-based."""

    def __init__(self, row: int, reason: str):
        super().__init__(f"row {row}: {reason}")
        self.row = row
        self.reason = reason


class NothingConvertedError(ValueError):
    """The input held no convertible row: nothing is written and an existing output file is left as it was."""


@dataclass
class PrepareReport:
    """What :func:`prepare_toolrl` did: rows read, written, rejected (with reasons), kinds of ground truth."""

    total: int
    written: int
    bad: int
    errors: list[tuple[int, str]]
    output_path: str
    kinds: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict form (for JSON logs)."""
        return {
            "total": self.total,
            "written": self.written,
            "bad": self.bad,
            "errors": [list(e) for e in self.errors],
            "output_path": self.output_path,
            "kinds": dict(self.kinds),
        }


# --------------------------------------------------------------------------------------------- reading


class _BadRow:
    """A row that could not even be decoded (carries the reason)."""

    def __init__(self, reason: str):
        self.reason = reason


def _iter_jsonl(raw: bytes) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            yield number, _BadRow(f"line is not valid UTF-8: {exc.reason} at byte {exc.start}")
        except (ValueError, RecursionError) as exc:
            yield number, _BadRow(f"invalid JSON: {exc}")


def _read_rows(path: Path) -> list[tuple[int, Any]]:
    """(row number, row) pairs of an input file; raises for a file that cannot be read at all."""
    if not path.is_file():
        raise FileNotFoundError(f"ToolRL input file not found: {path}")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return list(_iter_jsonl(path.read_bytes()))
    if suffix == ".json":
        raw = path.read_bytes()
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path} is not valid UTF-8: {exc}") from None
        except json.JSONDecodeError as exc:
            if exc.msg.startswith("Extra data"):  # one object per line in a .json file
                return list(_iter_jsonl(raw))
            raise ValueError(f"{path} is not valid JSON: {exc}") from None
        except RecursionError:
            raise ValueError(f"{path} is not usable JSON: nested too deeply") from None
        if not isinstance(data, list):
            raise ValueError(f"{path}: top-level JSON must be a list of rows, got {type(data).__name__}")
        return list(enumerate(data, start=1))
    if suffix == ".parquet":
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            raise ValueError(f"{path} is not a readable parquet file: {exc}") from None
        return list(enumerate(table.to_pylist(), start=1))
    raise ValueError(f"unsupported ToolRL input {path}: expected .json, .jsonl, .ndjson or .parquet")


# ------------------------------------------------------------------------------------------ validation


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _field(row: dict[str, Any], name: str) -> str:
    """The string value of a field (or its alias); raises ValueError with the reason otherwise."""
    names = FIELDS[name]
    for key in names:
        if key in row and not _missing(row[key]):
            value = row[key]
            if not isinstance(value, str):
                raise ValueError(f"field {key!r} must be a string, got {type(value).__name__}")
            if not value.strip():
                raise ValueError(f"field {key!r} is empty")
            return value
    alias = f" (or {', '.join(repr(n) for n in names[1:])})" if len(names) > 1 else ""
    raise ValueError(f"missing field {name!r}{alias}")


def _check_block(text: str, open_tag: str, close_tag: str) -> None:
    opens, closes = text.count(open_tag), text.count(close_tag)
    if opens != 1 or closes != 1:
        raise ValueError(
            f"ground truth must contain exactly one {open_tag}...{close_tag} block "
            f"(found {opens} {open_tag} and {closes} {close_tag})"
        )
    if text.find(close_tag) < text.find(open_tag):
        raise ValueError(f"ground truth closes {close_tag} before opening {open_tag}")


def ground_truth_kind(output: str) -> str:
    """Validate a ToolRL ground-truth string; returns "tool_call", "response" or "both" (ValueError if bad)."""
    has_call = "<tool_call>" in output or "</tool_call>" in output
    has_response = "<response>" in output or "</response>" in output
    if not has_call and not has_response:
        raise ValueError("ground truth has neither a <tool_call> nor a <response> block")
    if has_response:
        _check_block(output, "<response>", "</response>")
    if not has_call:
        return "response"
    _check_block(output, "<tool_call>", "</tool_call>")
    block = output.split("<tool_call>", 1)[1].split("</tool_call>", 1)[0].strip()
    if not block:
        raise ValueError("ground truth <tool_call> block is empty")
    for number, line in enumerate(block.split("\n"), start=1):
        try:
            call = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"ground truth tool-call line {number} is not one JSON object per line: {exc}") from None
        if not isinstance(call, dict):
            raise ValueError(f"ground truth tool-call line {number} is a JSON {type(call).__name__}, not an object")
        if not isinstance(call.get("name"), str) or not call["name"]:
            raise ValueError(f"ground truth tool-call line {number} lacks a non-empty string 'name'")
        if not isinstance(call.get("parameters"), dict):
            raise ValueError(f"ground truth tool-call line {number} lacks an object 'parameters'")
    return "both" if has_response else "tool_call"


def convert_row(row: Any, *, index: int, source_row: int, split: str, data_source: str, ability: str) -> dict:
    """One verl row from one ToolRL row (ValueError with the reason when the row is malformed)."""
    if isinstance(row, _BadRow):
        raise ValueError(row.reason)
    if not isinstance(row, dict):
        raise ValueError(f"row must be a JSON object, got {type(row).__name__}")
    instruction = _field(row, "instruction")
    user = _field(row, "input")
    output = _field(row, "output")
    ground_truth_kind(output)
    return {
        "data_source": data_source,
        "prompt": [{"role": "system", "content": instruction}, {"role": "user", "content": user}],
        "ability": ability,
        "reward_model": {"style": "rule", "ground_truth": output},
        "extra_info": {
            "index": index,
            "split": split,
            "source_row": source_row,
            "instruction": instruction,
            "input": user,
            "output": output,
        },
    }


# -------------------------------------------------------------------------------------------- the job


def prepare_toolrl(
    input_path: str | Path,
    out_dir: str | Path,
    split: str = "train",
    *,
    strict: bool = False,
    data_source: str = "rlla",
    ability: str = "tool_use",
    show_progress: bool = True,
    report_to: TextIO | None = None,
) -> PrepareReport:
    """Convert a ToolRL dataset file into ``<out_dir>/<split>.parquet`` for verl; returns the counts.

    Good rows are written, bad rows are collected as (row number, reason) and listed in a report printed to
    ``report_to`` (stdout by default; pass ``io.StringIO()`` to silence it). With ``strict=True`` the first
    bad row raises :class:`ToolRLDataError` and nothing is written.
    """
    if not isinstance(split, str) or not split or "/" in split or "\\" in split:
        raise ValueError(f"split must be a non-empty file-name-safe string, got {split!r}")
    path = Path(input_path)
    out_path = check_output_path(Path(out_dir) / f"{split}.parquet")  # before any work (OutputPathError)
    rows = _read_rows(path)
    good: list[dict[str, Any]] = []
    errors: list[tuple[int, str]] = []
    kinds = {"tool_call": 0, "response": 0, "both": 0}
    for number, row in tqdm(rows, desc=f"toolrl {split}", unit="row", disable=not show_progress):
        try:
            converted = convert_row(
                row, index=len(good), source_row=number, split=split, data_source=data_source, ability=ability
            )
        except ValueError as exc:
            if strict:
                raise ToolRLDataError(number, str(exc)) from None
            errors.append((number, str(exc)))
            continue
        kinds[ground_truth_kind(converted["reward_model"]["ground_truth"])] += 1
        good.append(converted)
    report = PrepareReport(
        total=len(rows), written=len(good), bad=len(errors), errors=errors, output_path=str(out_path), kinds=kinds
    )
    if not good:
        _print_report(report, path, report_to if report_to is not None else sys.stdout)
        raise NothingConvertedError(
            f"{path}: no row converted ({len(rows)} read, {len(errors)} bad); nothing written, "
            f"{out_path} left as it was"
        )
    with atomic_path(out_path) as tmp:  # a failed or interrupted write leaves an existing file untouched
        pq.write_table(pa.Table.from_pylist(good, schema=SCHEMA), tmp)
    _print_report(report, path, report_to if report_to is not None else sys.stdout)
    return report


def _print_report(report: PrepareReport, source: Path, out: TextIO) -> None:
    kinds = ", ".join(f"{n} {k}" for k, n in report.kinds.items())
    print(
        f"prepare_toolrl: {source}: {report.total} rows read, {report.written} written to {report.output_path} "
        f"({kinds}), {report.bad} bad",
        file=out,
    )
    for number, reason in report.errors[:_MAX_REPORTED]:
        print(f"  row {number}: {reason}", file=out)
    if report.bad > _MAX_REPORTED:
        print(f"  ... and {report.bad - _MAX_REPORTED} more bad rows", file=out)
