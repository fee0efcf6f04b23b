"""The recorded ``tau2 run`` runs of ``tests/data/reference/tau2_runs.json`` (``dump_reference.py runs``), with their
shared parts put back: ``RUNS[name]`` holds the run's ``command``, its server's ``base_url``, the ``exchanges``
(``request`` body as litellm sent it, the server's ``response``) and tau2's ``results`` file."""

from __future__ import annotations

import json
from typing import Any

from repo_paths import DATA

RAW: dict[str, Any] = json.loads((DATA / "reference" / "tau2_runs.json").read_text(encoding="utf-8"))


def expand(value: Any) -> Any:
    """``value`` with every ``{"$ref": sha256}`` replaced by the shared value it names."""
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            return expand(RAW["shared"][value["$ref"]])
        return {k: expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v) for v in value]
    return value


RUNS: dict[str, Any] = {name: expand(run) for name, run in RAW["runs"].items()}


def flag(command: list[str], name: str) -> list[str]:
    """The values given to ``name`` in a recorded ``tau2 run`` command line."""
    values = []
    for arg in command[command.index(name) + 1 :]:
        if arg.startswith("--"):
            break
        values.append(arg)
    return values
