"""Running the shell recipes as a user would (``bash <script> --cfg job``) and reading the composed config."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import yaml

from repo_paths import REPO

#: variables of the caller's shell that would change what a recipe composes
_DROPPED = ("CONTRIBUTION", "CONTRIB_TYPE", "BETA", "MODE")


def run_script(script: str, env: dict[str, str], *extra: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """``bash <REPO>/<script> <extra> --cfg job`` with ``env`` over a clean copy of this process's environment."""
    full = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    full.update(env)
    full["PATH"] = os.path.dirname(sys.executable) + os.pathsep + full.get("PATH", "")
    return subprocess.run(
        ["bash", str(REPO / script), *extra, "--cfg", "job"],
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(REPO),
    )


def compose_script(script: str, env: dict[str, str], *extra: str) -> dict[str, Any]:
    """The config ``script`` composes (it must succeed)."""
    proc = run_script(script, env, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return yaml.safe_load(proc.stdout)
