"""`verl-rewards doctor` sees the real entry point, and says so when verl is told not to load plugins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _doctor(env_extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    return subprocess.run(
        [sys.executable, "-m", "verl_rewards.cli", "doctor"], env=env, capture_output=True, text=True, timeout=180
    )


@pytest.mark.slow
def test_doctor_reports_manager_and_both_metrics_hooks():
    proc = _doctor({})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "[ok] reward manager 'contribution'" in proc.stdout
    assert "[ok] metrics hook, legacy trainer" in proc.stdout
    assert "[ok] metrics hook, V1 trainer: PPOTrainer._compute_metrics wrapped (every trainer_mode)" in proc.stdout
    assert "[ok] metrics hook, validation" in proc.stdout


@pytest.mark.slow
def test_doctor_fails_when_plugins_are_disabled():
    proc = _doctor({"VERL_USE_EXTERNAL_PLUGINS": "none"})
    assert proc.returncode == 1
    assert "[FAIL] VERL_USE_EXTERNAL_PLUGINS: none" in proc.stdout
    assert "[FAIL] plugin loaded by `import verl`" in proc.stdout
    # the fix is printed, not "see logs" (there is nothing in the logs: verl never tried)
    assert "(see logs)" not in proc.stdout
    assert "unset VERL_USE_EXTERNAL_PLUGINS" in proc.stdout
    # what doctor itself registered is not what a run would have: nothing may be listed as [ok] that
    # needs the plugin loaded by verl
    for needs_plugin in ("reward manager 'contribution'", "agent loop 'tau2_agent'", "metrics hook, V1 trainer"):
        assert f"[FAIL] {needs_plugin}" in proc.stdout, proc.stdout
    assert "[ok] reward manager" not in proc.stdout


@pytest.mark.slow
def test_doctor_reads_the_plugin_list_as_verl_does():
    proc = _doctor({"VERL_USE_EXTERNAL_PLUGINS": " Verl_Rewards , other"})  # verl strips and lower-cases
    assert "[ok] VERL_USE_EXTERNAL_PLUGINS" in proc.stdout, proc.stdout


@pytest.mark.slow
def test_prepare_toolrl_converts_sample_and_reports_bad_rows(tmp_path):
    import json

    import pandas as pd

    from verl_rewards.toolrl.data import SAMPLE_PATH

    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "verl_rewards.cli",
            "prepare",
            "toolrl",
            "--input",
            str(SAMPLE_PATH),
            "--out",
            str(tmp_path / "ok"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr[-2000:]
    frame = pd.read_parquet(tmp_path / "ok" / "train.parquet")
    assert len(frame) == 24 and set(frame["data_source"]) == {"rlla"}
    bad_input = tmp_path / "bad.jsonl"
    good = json.loads(Path(SAMPLE_PATH).read_text().splitlines()[0])
    bad_input.write_text(json.dumps(good) + "\n" + json.dumps({"instruction": "x", "input": "y"}) + "\n")
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "verl_rewards.cli",
            "prepare",
            "toolrl",
            "--input",
            str(bad_input),
            "--out",
            str(tmp_path / "bad"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1
    assert "row 2" in (bad.stdout + bad.stderr)


def test_prepare_toolrl_with_nothing_to_convert_keeps_the_old_parquet(tmp_path, capsys):
    from verl_rewards.cli import main
    from verl_rewards.toolrl.data import SAMPLE_PATH

    out = tmp_path / "out"
    assert main(["prepare", "toolrl", "--input", str(SAMPLE_PATH), "--out", str(out)]) == 0
    before = (out / "train.parquet").read_bytes()
    capsys.readouterr()
    for name, text in (("bad.jsonl", '{"instruction": "x"}\n[]\n'), ("empty.jsonl", "")):
        (tmp_path / name).write_text(text)
        assert main(["prepare", "toolrl", "--input", str(tmp_path / name), "--out", str(out)]) == 2
        err = capsys.readouterr().err  # progress bar, then the error line
        last = err.rstrip("\n").rsplit("\n", 1)[-1]
        assert last.startswith("verl-rewards prepare toolrl: error: ") and err.count("error") == 1, err
        assert "no row converted" in last and "nothing written" in last
        assert (out / "train.parquet").read_bytes() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prompts", "0"], "--prompts must be a positive integer, got 0"),
        (["--n", "-1"], "--n must be a positive integer, got -1"),
        (["--workers", "0"], "--workers must be a positive integer, got 0"),
        (["--beta", "nan"], "--beta must be a finite number >= 0, got nan"),
        (["--beta=-inf"], "--beta must be a finite number >= 0, got -inf"),
    ],
)
def test_demo_rejects_impossible_settings_before_ray_starts(capsys, monkeypatch, args, message):
    import ray

    from verl_rewards.cli import main

    def no_ray(*_args, **_kwargs):
        raise AssertionError("the demo started Ray before checking its settings")

    monkeypatch.setattr(ray, "init", no_ray)  # another test may have left a cluster running: watch for a start
    assert main(["demo", *args]) == 2
    assert capsys.readouterr().err == f"verl-rewards demo: error: {message}\n"


def test_usage_errors_are_one_line_with_exit_code_2(capsys):
    from verl_rewards.cli import main

    with pytest.raises(SystemExit) as info:
        main(["demo", "--prompts", "many"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "verl-rewards demo: error: argument --prompts: invalid int value: 'many' (see verl-rewards demo --help)\n"
    )


def test_prepare_toolrl_refuses_an_output_folder_that_is_a_file_before_reading(tmp_path, capsys):
    from verl_rewards.cli import main

    (tmp_path / "taken").write_text("keep")
    missing, taken = str(tmp_path / "missing.jsonl"), str(tmp_path / "taken")
    assert main(["prepare", "toolrl", "--input", missing, "--out", taken]) == 2
    assert capsys.readouterr().err.endswith("taken is not a directory\n")  # not "input file not found": checked first
    assert (tmp_path / "taken").read_text() == "keep"
