"""Reading an offline wandb run's history from its ``run-<id>.wandb`` file.

The file is wandb's transaction log: a 7-byte header (``:W&B``, magic 0xBEE1, version 0), then LevelDB-log records
(32 KiB blocks; each chunk: 4-byte checksum, 2-byte length, 1-byte type FULL/FIRST/MIDDLE/LAST) whose payloads
are wandb's own ``wandb_internal_pb2.Record`` protobufs; ``history`` records hold the logged rows."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

BLOCK = 32768
HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def _payloads(raw: bytes) -> list[bytes]:
    if raw[:4] != b":W&B":
        raise ValueError("not a wandb transaction log")
    out: list[bytes] = []
    pos, pending = HEADER, b""
    while pos + 7 <= len(raw):
        left = BLOCK - pos % BLOCK
        if left < 7:
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", raw[pos : pos + 7])
        data = raw[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind == FULL:
            out.append(data)
        elif kind == FIRST:
            pending = data
        elif kind == MIDDLE:
            pending += data
        elif kind == LAST:
            out.append(pending + data)
            pending = b""
    return out


def history_rows(run_dir: Path) -> list[dict[str, Any]]:
    """The rows logged to an offline run (one dict per ``log`` call, keys as logged)."""
    from wandb.proto import wandb_internal_pb2 as pb

    files = sorted(Path(run_dir).glob("run-*.wandb"))
    if not files:
        raise FileNotFoundError(f"no run-*.wandb in {run_dir}")
    rows = []
    for payload in _payloads(files[0].read_bytes()):
        record = pb.Record()
        record.ParseFromString(payload)
        if record.WhichOneof("record_type") != "history":
            continue
        row = {}
        for item in record.history.item:
            key = item.key or "/".join(item.nested_key)
            row[key] = json.loads(item.value_json) if item.value_json else None
        rows.append(row)
    return rows
