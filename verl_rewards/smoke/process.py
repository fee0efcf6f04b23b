"""How a smoke stage's process runs (``main_ppo``, the SFT trainer, the resumed run): its output in a log file with
the interesting lines echoed, a timeout, and a process group of its own, killed whole at the timeout (also a run
that prints nothing) and when the caller stops early."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path


def stream(cmd: list[str], env: Mapping[str, str], log_path: Path, timeout: float, cwd: Path) -> int | None:
    """Run ``cmd`` with its output in ``log_path`` (the interesting lines echoed); its exit code, or None when it was
    stopped after ``timeout`` seconds."""
    expired = threading.Event()
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            cmd,
            env=dict(env),
            cwd=str(cwd),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )

        def stop() -> None:
            expired.set()
            kill_group(proc)

        timer = threading.Timer(timeout, stop)
        timer.daemon = True
        timer.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                if os.environ.get("VERL_REWARDS_SMOKE_QUIET") != "1" and interesting(line):
                    sys.stdout.write(line)
                    sys.stdout.flush()
            code = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:  # interrupted (Ctrl-C): the run's group goes with us
                kill_group(proc)
        if expired.is_set():
            log.write(f"\nsmoke: stopped after {timeout:g} s\n")
            return None
        return code


def kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def ended(code: int | None, timeout: float) -> str:
    """How a stage ended: ``exited with 3`` or ``timed out after 60 s``."""
    return f"timed out after {timeout:g} s" if code is None else f"exited with {code}"


NOISE = re.compile(r"UserWarning|warnings\.warn|target_num_threads|FutureWarning|DeprecationWarning")


def interesting(line: str) -> bool:
    return bool(line.strip()) and not NOISE.search(line)
