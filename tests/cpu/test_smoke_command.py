"""``verl-rewards smoke`` without a run: arguments, the CPU overrides as verl composes them, stage naming."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd
import pytest

from verl_rewards.benchmark_list import TAU2
from verl_rewards.cli import main
from verl_rewards.commands import smoke as command
from verl_rewards.commands.common import CliParser
from verl_rewards.commands.smoke import split_arguments
from verl_rewards.smoke import data as smoke_data
from verl_rewards.smoke import sft_stage as smoke_sft
from verl_rewards.smoke.checks import check_run, failed_stage, stage_timings
from verl_rewards.smoke.errors import SmokeError
from verl_rewards.smoke.process import ended, stream

from recipe_support import smoke_config
from tau2_support import require_data


def _parse(*argv: str) -> argparse.Namespace:
    parser = CliParser()
    command.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["smoke", *argv])


def test_options_after_the_family_and_overrides_after_the_dashes():
    args = _parse("tau2", "--steps", "3", "--mode", "solo", "--", "a.b=1", "+c=[x,y]", "--cfg", "job")
    assert split_arguments(args) == ["a.b=1", "+c=[x,y]", "--cfg", "job"]
    assert (args.family, args.steps, args.mode, args.policy) == ("tau2", 3, "solo", "auto")


def test_a_bad_choice_fails_at_set_up(capsys):
    assert main(["smoke", "tau2", "--domain", "nowhere"]) == 1
    assert "FAILED at stage set-up" in capsys.readouterr().err
    assert main(["smoke", "toolrl", "--script-ratio", "2"]) == 1
    assert "script-ratio" in capsys.readouterr().err
    assert main(["smoke", "tau2", "--domain", "banking_knowledge", "--mode", "solo"]) == 1
    assert "banking_knowledge runs in normal mode only" in capsys.readouterr().err
    assert main(["smoke", "tau2", "--domain", "airline", "--retrieval", "grep_only"]) == 1
    assert "--retrieval is a banking_knowledge option" in capsys.readouterr().err


def test_banking_knowledge_rows_are_all_its_tasks_with_the_retrieval_in_rows_and_tools(tmp_path: Path):
    """banking_knowledge has no split: smoke prepares all tasks in id order (the first six score the gold reward
    under the scripted user), and --retrieval reaches the rows and the tool config."""
    root = require_data("banking_knowledge")
    rows, tools = smoke_data.prepare_rows(TAU2, "banking_knowledge", "normal", str(root), tmp_path, "grep_only")
    frame = pd.read_parquet(rows)
    assert rows.name == "all.parquet" and len(frame) == 97
    assert list(frame["extra_info"].map(lambda e: e["task_id"])[:3]) == ["task_001", "task_002", "task_003"]
    assert dict(frame["extra_info"][0]["domain_options"]) == {"retrieval": "grep_only"}
    assert tools is not None
    names = [t["function"]["name"] for t in smoke_data.tool_schemas(tools)]
    assert "grep" in names and "KB_search" not in names


@pytest.mark.parametrize(
    "log,steps,stage",
    [
        ("Traceback ... ValueError: bad config", 0, "set-up"),
        ("all initialize finished\nray::RewardLoopWorker.compute_score() ... KeyError", 0, "reward"),
        ("all initialize finished\nray::HFCpuServer.generate() ... RuntimeError", 0, "rollout"),
        ("all initialize finished\nWorkerDict.actor_rollout_ref_update_actor ... update_actor", 1, "update"),
        ("all initialize finished\n  File trainer_base.py, in _validate\n", 1, "validation"),
        ("all initialize finished\n  in _save_checkpoint\n OSError", 2, "checkpoint"),
    ],
)
def test_the_failed_stage_is_named_from_the_traceback(log, steps, stage):
    assert failed_stage(log, steps) == stage


def _rec(step: int, **data: float) -> dict:
    return {"step": step, "data": data}


def test_stage_timings_sum_verls_timers():
    records = [
        _rec(0, **{"val-core/x/reward/mean@1": 1.0}),
        _rec(1, **{"actor/grad_norm": 1.0, "timing_s/gen": 2.0, "timing_s/update_actor": 1.0, "timing_s/step": 4.0}),
        _rec(2, **{"timing_s/gen": 3.0, "timing_s/ref": 0.5, "timing_s/testing": 2.5, "timing_s/step": 5.0}),
    ]
    timings = stage_timings(records)
    assert timings["rollout (incl. streaming reward)"] == 5.0 and timings["update"] == 1.5
    assert timings["validation"] == 2.5 and timings["steps total"] == 9.0 and "reward" not in timings


def test_check_run_names_what_is_missing(tmp_path: Path):
    val = {"val-core/x/reward/mean@1": 1.0}
    step = {"actor/grad_norm": 0.1}
    with pytest.raises(SmokeError) as exc:
        check_run(tmp_path, 2, [_rec(0, **val), _rec(1, **step)])
    assert exc.value.stage == "update"
    with pytest.raises(SmokeError) as exc:
        check_run(tmp_path, 2, [_rec(0, **val), _rec(1, **step), _rec(2, **step)])
    assert exc.value.stage == "validation"
    with pytest.raises(SmokeError) as exc:
        check_run(tmp_path, 2, [_rec(0, **val), _rec(1, **step), _rec(2, **step, **val)])
    assert exc.value.stage == "checkpoint"
    (tmp_path / "checkpoints" / "global_step_2").mkdir(parents=True)
    check_run(tmp_path, 2, [_rec(0, **val), _rec(1, **step), _rec(2, **step, **val)])
    # a run that validates at given steps (a learning run: none before training): each must hold a record
    check_run(tmp_path, 2, [_rec(1, **step, **val), _rec(2, **step, **val)], validations=[1, 2])
    check_run(tmp_path, 2, [_rec(1, **step), _rec(2, **step, **val)], validations=[2])
    with pytest.raises(SmokeError, match=r"no validation record at step\(s\) \[1\]") as exc:
        check_run(tmp_path, 2, [_rec(0, **val), _rec(1, **step), _rec(2, **step, **val)], validations=[1, 2])
    assert exc.value.stage == "validation"


@pytest.mark.slow
def test_the_cpu_overrides_compose_after_the_recipe_and_before_the_user(tmp_path: Path):
    loops = tmp_path / "loops.yaml"
    cfg = smoke_config(tmp_path, "actor_rollout_ref.rollout.n=3", loops_yaml=loops, wandb=True)  # the user's n wins
    rollout = cfg["actor_rollout_ref"]["rollout"]
    assert (rollout["name"], rollout["n"]) == ("hf_cpu", 3)
    assert rollout["agent"]["agent_loop_config_path"] == str(tmp_path / "loops.yaml")
    assert cfg["trainer"]["v1"]["trainer_mode"] == "cpu_sync" and cfg["trainer"]["device"] == "cpu"
    assert cfg["trainer"]["logger"] == ["console", "file", "wandb"]
    assert cfg["data"]["train_batch_size"] == 2 and cfg["data"]["max_prompt_length"] == 512
    assert cfg["reward"]["reward_kwargs"]["contribution"]["type"] == "none"  # the recipe's own settings stay
    # the critic's engine (verl's CriticConfig.engine) seeds its new value head: two runs give the same C-1
    critic = cfg["critic"]["fsdp"]
    assert critic["full_determinism"] is True and critic["seed"] == 42


def test_the_cpu_backend_is_off_unless_selected(monkeypatch):
    from verl_rewards import cpu, plugin

    monkeypatch.delenv("VERL_PLATFORM", raising=False)
    assert not cpu.selected()
    assert not [name for name in plugin.STATUS if name.startswith("cpu_")]
    monkeypatch.setenv("VERL_PLATFORM", "CPU")
    assert cpu.selected()


def test_normal_mode_prompt_length_counts_the_greeting_and_the_user_s_opening():
    """The loop adds the greeting and the user's first message before the agent's first turn: smoke's prompt length
    must leave room for them (else verl left-truncates the system prompt)."""
    from verl_rewards.tau2.normal import GREETING

    scenario = "Instructions:\n\tYou want a card with no annual fee."
    assert smoke_data.opening({"mode": "normal", "user_scenario": scenario}) == [
        {"role": "assistant", "content": GREETING},
        {"role": "user", "content": scenario},
    ]
    assert smoke_data.opening({"mode": "normal", "instruction": "Cancel order #1"})[1]["content"] == "Cancel order #1"
    assert smoke_data.opening({"mode": "solo", "user_scenario": scenario}) == []
    assert smoke_data.opening(None) == []


def test_sft_needs_a_benchmark_with_gold_conversations_and_steps(capsys):
    assert main(["smoke", "toolrl", "--sft"]) == 1
    assert "--sft needs tau2 or tau_bench" in capsys.readouterr().err
    assert main(["smoke", "tau2", "--sft", "--sft-steps", "0"]) == 1
    assert "--sft-steps must be at least 1" in capsys.readouterr().err


def test_check_sft_wants_every_step_s_finite_loss_and_the_checkpoint(tmp_path: Path):
    import json

    def write(*losses: float) -> None:
        lines = [json.dumps({"step": i + 1, "data": {"train/loss": x}}) for i, x in enumerate(losses)]
        (tmp_path / "sft_metrics.jsonl").write_text("\n".join(lines) + "\n")

    write(2.0)
    with pytest.raises(SmokeError) as exc:
        smoke_sft.check_sft(tmp_path, 2)
    assert exc.value.stage == "sft" and "expected 2 finite" in str(exc.value)
    write(2.0, float("nan"))
    with pytest.raises(SmokeError, match="expected 2 finite"):
        smoke_sft.check_sft(tmp_path, 2)
    write(2.0, 1.5)
    with pytest.raises(SmokeError, match="no SFT checkpoint"):
        smoke_sft.check_sft(tmp_path, 2)
    hf = smoke_sft.sft_checkpoint(tmp_path, 2)
    hf.mkdir(parents=True)
    (hf / "config.json").write_text("{}")
    assert smoke_sft.check_sft(tmp_path, 2) == [2.0, 1.5]


@pytest.mark.slow
def test_the_warm_start_recipe_composes_the_cpu_sft_stage(tmp_path: Path):
    """With VERL_PLATFORM=cpu the recipe launches verl_rewards.cpu.sft, which composes verl's own SFT config; the
    smoke's SFT variables land in it."""
    import yaml

    from recipe_support import run_script

    plan = smoke_sft.SftPlan("tau_bench", tmp_path / "sft.parquet", rows=4, dropped=0, texts=[], steps=3, batch=2)
    env = {"VERL_PLATFORM": "cpu", "DOMAIN": "retail", "MODE": "instruction", "MODEL_PATH": "/m", "N_GPUS": "1",
           **smoke_sft.sft_env(plan, tmp_path)}  # fmt: skip
    assert env["FAMILY"] == "tau_bench"  # the RL stage runs the tau-bench GRPO recipe
    env["STAGE"] = "sft"
    proc = run_script("recipes/warm_start/run_warm_start.sh", env, "--cfg", "job")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (cfg,) = [c for c in yaml.safe_load_all(proc.stdout) if c]
    assert cfg["data"]["train_files"] == str(tmp_path / "sft.parquet")
    assert cfg["data"]["train_batch_size"] == 2 and cfg["data"]["num_workers"] == 0
    assert cfg["trainer"]["total_training_steps"] == 3 and cfg["trainer"]["total_epochs"] == 3
    assert cfg["trainer"]["default_local_dir"] == str(tmp_path / "sft")
    assert cfg["engine"]["strategy"] == "fsdp2" and cfg["model"]["override_config"]["attn_implementation"] == "sdpa"
    assert "hf_model" in cfg["checkpoint"]["save_contents"]


def test_the_dashes_right_after_the_family_pass_the_overrides(capsys):
    args = _parse("tau2", "--", "a.b=1", "+c=[x,y]")  # argparse drops this "--"
    assert split_arguments(args) == ["a.b=1", "+c=[x,y]"] and args.steps == 2
    args = _parse("toolrl", "--", "--cfg", "job")  # Hydra's own flags too
    assert split_arguments(args) == ["--cfg", "job"]
    assert split_arguments(_parse("toolrl", "--steps", "3")) == []
    # options before FAMILY, then "--": the overrides reach the run, which stops at the bad --steps
    assert main(["smoke", "--steps", "0", "tau2", "--", "reward.reward_kwargs.contribution.type=C2"]) == 1
    assert "FAILED at stage set-up: --steps" in capsys.readouterr().err


RECIPES = {
    "toolrl": "recipes/toolrl_grpo/run_toolrl_grpo.sh",
    "tau2": "recipes/tau2_grpo/run_tau2_grpo.sh",
    "tau_bench": "recipes/tau_bench_grpo/run_tau_bench_grpo.sh",
}


@pytest.mark.parametrize("family", sorted(RECIPES))
def test_the_recipes_smoke_form_passes_its_arguments_as_overrides(tmp_path: Path, family: str):
    """``SMOKE=1 bash <recipe> OVERRIDES``: the command the recipe runs (caught by a ``python3`` first on PATH)
    parses, and the overrides are the script's arguments."""
    import os
    import subprocess

    from verl_rewards.cli import build_parser

    from repo_paths import REPO

    shim = tmp_path / "bin" / "python3"
    shim.parent.mkdir()
    shim.write_text('#!/usr/bin/env bash\nprintf "%s\\0" "$@" > "$ARGV_FILE"\n')
    shim.chmod(0o755)
    env = {
        **os.environ,
        "SMOKE": "1",
        "ARGV_FILE": str(tmp_path / "argv"),
        "PATH": f"{shim.parent}:{os.environ['PATH']}",
    }
    for name in ("SMOKE_ARGS", "DOMAIN", "MODE", "USER_BACKEND"):
        env.pop(name, None)
    overrides = ["trainer.total_epochs=1", "+reward.reward_kwargs.contribution.gamma=0.99"]
    proc = subprocess.run(["bash", str(REPO / RECIPES[family]), *overrides], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    argv = (tmp_path / "argv").read_text().split("\0")[:-1]
    assert argv[:3] == ["-m", "verl_rewards.cli", "smoke"]
    args = build_parser().parse_args(argv[2:])
    assert args.family == family and split_arguments(args) == overrides


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--timeout-s", "-5", "argument --timeout-s: expected a positive number, got '-5'"),
        ("--timeout-s", "0", "argument --timeout-s: expected a positive number, got '0'"),
        ("--timeout-s", "nan", "argument --timeout-s: expected a finite number, got 'nan'"),
        ("--timeout-s", "1e300", "argument --timeout-s: expected a number <= 604800"),
        ("--out", "/proc/smoke-out", "--out /proc/smoke-out: cannot create this folder (No such file or directory)"),
        ("--out", "FILE", "cannot create this folder (File exists)"),
    ],
)
def test_options_that_cannot_work_are_refused_in_one_line(tmp_path: Path, capsys, option, value, message):
    if value == "FILE":
        value = str(tmp_path / "a-file")
        Path(value).write_text("")
    argv = ["smoke", "toolrl", option, value, "--recipe", str(tmp_path / "no-recipe.sh")]
    if option != "--out":
        argv += ["--out", str(tmp_path / "out")]
    try:
        code = main(argv)
    except SystemExit as exc:  # a usage error, from argparse
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("verl-rewards smoke")
    assert message in err
    assert not (tmp_path / "out").exists()


def test_a_run_that_prints_nothing_is_stopped_at_the_timeout(tmp_path: Path):
    import os

    pid_file = tmp_path / "pid"
    script = f"echo started; sleep 600 & echo $! > {pid_file}; wait"  # a child of the run, silent
    code = stream(["bash", "-c", script], dict(os.environ), tmp_path / "run.log", 1.0, tmp_path)
    assert code is None
    assert (tmp_path / "run.log").read_text().splitlines()[-1] == "smoke: stopped after 1 s"
    assert ended(code, 1.0) == "timed out after 1 s" and ended(3, 1.0) == "exited with 3"
    child = Path(f"/proc/{pid_file.read_text().strip()}/status")
    # killed with the run's process group: SIGKILL is delivered asynchronously, so wait (bounded) for the child to
    # leave the running states rather than reading its state once
    deadline = time.monotonic() + 30
    while child.exists() and "\nState:\tZ" not in child.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not child.exists() or "\nState:\tZ" in child.read_text()


@pytest.mark.slow
def test_a_timed_out_run_fails_saying_so(tmp_path: Path, capsys):
    recipe = tmp_path / "slow_recipe.sh"
    recipe.write_text("echo recipe started\nsleep 600\n")
    code = main(["smoke", "toolrl", "--recipe", str(recipe), "--timeout-s", "2", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert "main_ppo timed out after 2 s; see" in err and "exited with" not in err


def test_smoke_finds_the_installed_data_folder_without_flag_or_variable(tmp_path: Path, monkeypatch):
    """The one data-folder rule: with neither ``--data-dir`` nor the variable, smoke uses the folder that
    ``verl-rewards data get`` fills (it stopped with "needs its data" before); a variable naming no folder is an
    error, and with nothing at all the error says how to get the data."""
    from verl_rewards.smoke.data import family_data_dir

    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    with pytest.raises(SmokeError, match="verl-rewards data get tau2"):
        family_data_dir(None, TAU2)
    installed = tmp_path / "share" / "verl-rewards" / "tau2"
    installed.mkdir(parents=True)
    assert family_data_dir(None, TAU2) == str(installed.resolve())
    assert family_data_dir(str(tmp_path), TAU2) == str(tmp_path.resolve())
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "missing"))
    with pytest.raises(SmokeError, match="is not a folder"):
        family_data_dir(None, TAU2)
