"""The chat client imports httpx without httpx's command-line client (click, rich, pygments: ~100 modules that
``simulate`` never uses, 40-130 ms of every start-up), and leaves that command-line client importable."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI_MODULES = ("click", "rich", "pygments")


def _fresh(code: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=REPO)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in CLI_MODULES), reason="httpx's CLI extras are not installed here"
)
def test_simulate_imports_no_http_cli_and_leaves_it_importable():
    loaded = _fresh(
        "import json, sys; import verl_rewards.commands.simulate, verl_rewards.engine.simulate; "
        f"print(json.dumps([m for m in {CLI_MODULES!r} if m in sys.modules]))"
    )
    assert loaded == []
    after = _fresh(
        "import json, sys, verl_rewards.engine.client, httpx._main; "
        "print(json.dumps([httpx._main.__name__, 'click' in sys.modules]))"
    )
    assert after == ["httpx._main", True]


@pytest.mark.skipif(importlib.util.find_spec("trio") is None, reason="trio is not installed here")
def test_a_command_imports_httpcore_without_trio_and_trio_stays_importable():
    loaded = _fresh(
        "import json, sys; from verl_rewards.engine.client import asyncio_only_http; asyncio_only_http(); "
        "import httpx; before = ['httpcore' in sys.modules, 'trio' in sys.modules]; import trio; "
        "print(json.dumps(before + ['trio' in sys.modules]))"
    )
    assert loaded == [True, False, True]


def test_a_plain_http_client_reads_no_ca_bundle_and_trusts_no_one():
    from verl_rewards.engine.client import client_tls, tls_context

    plain = client_tls("http://127.0.0.1:8000/v1")
    assert plain.cert_store_stats()["x509_ca"] == 0
    assert plain.verify_mode.name == "CERT_REQUIRED" and plain.check_hostname  # a TLS connection would be refused
    assert client_tls("HTTPS://api.example.com/v1") is tls_context()
    assert tls_context().cert_store_stats()["x509_ca"] > 0


def test_the_console_script_exits_with_the_commands_code_and_its_heap_frozen(tmp_path):
    """``entry`` (the ``verl-rewards`` script) ends the process with ``main``'s exit code after ``gc.freeze``, so the
    interpreter's last collection skips what the command loaded; ``main`` alone leaves the collector alone."""
    code = (
        "import atexit, gc, json, sys\n"
        "atexit.register(lambda: print(json.dumps([gc.get_freeze_count() > 0])))\n"
        "from verl_rewards.cli import entry, main\n"
        f"sys.argv = ['verl-rewards', 'prepare', 'tau2', '--domain', 'nope', '--out', {str(tmp_path)!r}]\n"
        "entry()\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    assert done.returncode == 2 and "error" in done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [True]


def test_tau2_json_is_parsed_with_the_collector_paused_and_its_state_restored(tmp_path):
    import gc

    from verl_rewards.tau2.tasks import read_json

    seen: list[bool] = []
    path = tmp_path / "t.json"
    path.write_text('[{"id": "a"}]')
    original = json.loads
    try:
        json.loads = lambda text: seen.append(gc.isenabled()) or original(text)  # type: ignore[assignment]
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            assert read_json(path) == [{"id": "a"}] and gc.isenabled() is enabled
    finally:
        json.loads = original
        gc.enable()
    assert seen == [False, False]
