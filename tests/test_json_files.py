"""The one reader of JSON and JSON-lines files (``verl_rewards.json_files``): what every command that reads them
(``eval``, ``export-sft``, ``score``) relies on."""

from __future__ import annotations

import json

import pytest

from verl_rewards.json_files import json_lines, load_json


class CommandError(ValueError):
    """Stands for a command's own error type."""


def test_lines_end_at_newline_only(tmp_path):
    path = tmp_path / "d.jsonl"
    texts = ["a\u2028b", "c\u2029d", "e\x85f", "g\x0bh\x0ci\x1cj\x1dk\x1el", "crlf"]
    body = "".join(json.dumps({"t": t}, ensure_ascii=False) + "\n" for t in texts[:-1])
    path.write_bytes("\ufeff".encode() + body.encode() + b"\n  \n" + json.dumps({"t": "crlf"}).encode() + b"\r\n")
    assert [(n, row["t"]) for n, row in json_lines(path)] == [(1, texts[0]), (2, texts[1]), (3, texts[2]),
                                                              (4, texts[3]), (7, "crlf")]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"a": 1}\n{"a": \n', "d.jsonl:2: not valid JSON (Expecting value at column 7; cut short"),
        (b'{"a": 1}\n{"a" 1}\n', "d.jsonl:2: not valid JSON (Expecting ':' delimiter at column 6)"),
        (b'{"a": 1}\n\n"text"\n', "d.jsonl:3: expected a JSON object, got str"),
        (b'{"a": "\xff"}\n', "d.jsonl:1: not valid UTF-8 (invalid start byte at byte 7 of the line)"),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "d.jsonl:1: not valid JSON (nested too deeply)"),
        (b'{"a": ' + b"1" * 5000 + b"}\n", "d.jsonl:1: not valid JSON (Exceeds the limit"),
        (b'{"a": "' + b"x" * 64 + b'"}\n', "d.jsonl:1: longer than the limit of 32 bytes"),
    ],
)
def test_every_error_names_file_and_line_in_the_callers_type(tmp_path, body, message):
    path = tmp_path / "d.jsonl"
    path.write_bytes(body)
    with pytest.raises(CommandError, match="^" + str(path).replace(".", r"\.") + ":") as info:
        list(json_lines(path, CommandError, max_bytes=32 if b"x" * 64 in body else None))
    assert message in str(info.value)


def test_a_whole_file_error_names_its_line(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{\n  "a": 1,\n  "b": \n}\n')
    with pytest.raises(CommandError, match=r"r\.json:4: not valid JSON \(Expecting value at column 1\)"):
        load_json(path, CommandError)
    path.write_text("")
    with pytest.raises(CommandError, match=r"r\.json: empty file"):
        load_json(path, CommandError)
    with pytest.raises(CommandError, match=r"missing\.json: cannot read \(No such file or directory\)"):
        load_json(tmp_path / "missing.json", CommandError)
