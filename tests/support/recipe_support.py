"""Running the shell recipes as a user would (``bash <script> --cfg job``) and reading the composed config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
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


def smoke_config(out: Path, *extra: str, **changes: Any) -> dict[str, Any]:
    """The config ToolRL's recipe composes with a smoke run's CPU overrides (a two-step run of two prompts times
    two rollouts, scripted, into ``out``; ``changes``: other ``cpu_overrides`` arguments), then ``extra``."""
    from verl_rewards.smoke.recipe import cpu_overrides

    settings: dict[str, Any] = dict(model="/m", out=out, steps=2, batch=2, n=2, prompt_len=512, response_len=256,
                                    policy="script", loops_yaml=None, wandb=False)  # fmt: skip
    overrides = cpu_overrides(**{**settings, **changes})
    return compose_script(
        "recipes/toolrl_grpo/run_toolrl_grpo.sh", {"MODEL_PATH": "/m", "N_GPUS": "1"}, *overrides, *extra
    )
