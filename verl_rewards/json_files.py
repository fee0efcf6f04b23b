"""Reading JSON files and JSON-lines files, as every command reads them (``eval``, ``export-sft``, ``score``).

A JSON-lines file holds one JSON object per line. Lines end at ``\\n`` only: verl writes its dumps with
``json.dumps(..., ensure_ascii=False)``, so U+2028, U+2029 and U+0085 appear raw inside a line (``str.splitlines``
would cut the line there). Each line is read with a bounded buffer (a line longer than the cap is an error found
while it is read, with at most the cap plus one chunk in memory), decoded as UTF-8 on its own (a byte-order mark is
allowed on the first line) and parsed on its own, so every error names the file and the line. A blank line is
skipped. Errors are raised as the caller's error type, each command reporting its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: the default longest line (bytes, newline excluded)
MAX_LINE_BYTES = 64 * 1024 * 1024
READ_CHUNK = 64 * 1024

ErrorType = Callable[[str], Exception]


def json_lines(
    path: str | Path, error: ErrorType = ValueError, *, max_bytes: int | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of ``path`` (see the module doc); ``error(message)`` is
    raised for a file that cannot be read and for a line that is too long, not UTF-8, not JSON or not an object."""
    cap = MAX_LINE_BYTES if max_bytes is None else max_bytes
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; a generator holds it between lines
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    with handle:
        line_no = 0
        while True:
            line = bytearray()
            while True:
                piece = handle.readline(READ_CHUNK)
                line += piece
                if not piece or piece.endswith(b"\n"):
                    break
                if len(line) > cap:
                    raise error(f"{path}:{line_no + 1}: longer than the limit of {cap} bytes")
            if not line:
                return
            line_no += 1
            if len(line.rstrip(b"\r\n")) > cap:
                raise error(f"{path}:{line_no}: longer than the limit of {cap} bytes")
            if not line.strip():
                continue
            value = _parse_line(line, f"{path}:{line_no}", error, first=line_no == 1)
            if not isinstance(value, dict):
                raise error(f"{path}:{line_no}: expected a JSON object, got {type(value).__name__}")
            yield line_no, value


def _parse_line(line: bytes | bytearray, where: str, error: ErrorType = ValueError, *, first: bool = False) -> Any:
    """The JSON value of one line; ``error`` naming ``where`` (``file:line``) when it is not UTF-8 JSON."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not valid UTF-8 ({exc.reason} at byte {exc.start} of the line)") from None
    if first:
        text = text.removeprefix("\ufeff")
    return _loads(text.rstrip("\r\n"), lambda _: where, error)  # columns counted within the line


def load_json(path: str | Path, error: ErrorType = ValueError) -> Any:
    """The JSON document of a whole file; ``error`` naming the file (and the line of a syntax error)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise error(f"{path}: empty file")
    return _loads(text, lambda line: f"{path}:{line}" if line else str(path), error)


def _loads(text: str, where: Callable[[int | None], str], error: ErrorType) -> Any:
    """``json.loads`` with every failure as ``error``; ``where(line)`` names the place (line: of a syntax error)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        cut = "" if text.rstrip().endswith(("}", "]")) else "; cut short by an interrupted write?"
        raise error(f"{where(exc.lineno)}: not valid JSON ({exc.msg} at column {exc.colno}{cut})") from None
    except RecursionError:
        raise error(f"{where(None)}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise error(f"{where(None)}: not valid JSON ({exc})") from None
