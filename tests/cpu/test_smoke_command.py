"""``verl-rewards smoke`` without a run: arguments, the CPU overrides as verl composes them, stage naming."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import pytest

from verl_rewards.cli import main
from verl_rewards.cpu import command
from verl_rewards.cpu.command import SmokeError, check_run, cpu_overrides, failed_stage, split_arguments, stage_timings

from recipe_support import compose_script
from tau2_support import require_data


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
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
    rows, tools = command._prepare("tau2", "banking_knowledge", "normal", str(root), tmp_path, "grep_only")
    frame = pd.read_parquet(rows)
    assert rows.name == "all.parquet" and len(frame) == 97
    assert list(frame["extra_info"].map(lambda e: e["task_id"])[:3]) == ["task_001", "task_002", "task_003"]
    assert dict(frame["extra_info"][0]["domain_options"]) == {"retrieval": "grep_only"}
    assert tools is not None
    names = [t["function"]["name"] for t in command._tool_schemas(tools)]
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


@pytest.mark.slow
def test_the_cpu_overrides_compose_after_the_recipe_and_before_the_user(tmp_path: Path):
    overrides = cpu_overrides(
        model="/m",
        out=tmp_path,
        steps=2,
        batch=2,
        n=2,
        prompt_len=512,
        response_len=256,
        policy="script",
        loops_yaml=tmp_path / "loops.yaml",
        wandb=True,
    )
    cfg = compose_script(
        "recipes/toolrl_grpo/run_toolrl_grpo.sh",
        {"MODEL_PATH": "/m", "N_GPUS": "1"},
        *overrides,
        "actor_rollout_ref.rollout.n=3",  # the user's override wins
    )
    rollout = cfg["actor_rollout_ref"]["rollout"]
    assert (rollout["name"], rollout["n"]) == ("hf_cpu", 3)
    assert rollout["agent"]["agent_loop_config_path"] == str(tmp_path / "loops.yaml")
    assert cfg["trainer"]["v1"]["trainer_mode"] == "cpu_sync" and cfg["trainer"]["device"] == "cpu"
    assert cfg["trainer"]["logger"] == ["console", "file", "wandb"]
    assert cfg["data"]["train_batch_size"] == 2 and cfg["data"]["max_prompt_length"] == 512
    assert cfg["reward"]["reward_kwargs"]["contribution"]["type"] == "none"  # the recipe's own settings stay


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
    assert command._opening({"mode": "normal", "user_scenario": scenario}) == [
        {"role": "assistant", "content": GREETING},
        {"role": "user", "content": scenario},
    ]
    assert command._opening({"mode": "normal", "instruction": "Cancel order #1"})[1]["content"] == "Cancel order #1"
    assert command._opening({"mode": "solo", "user_scenario": scenario}) == []
    assert command._opening(None) == []


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
        command.check_sft(tmp_path, 2)
    assert exc.value.stage == "sft" and "expected 2 finite" in str(exc.value)
    write(2.0, float("nan"))
    with pytest.raises(SmokeError, match="expected 2 finite"):
        command.check_sft(tmp_path, 2)
    write(2.0, 1.5)
    with pytest.raises(SmokeError, match="no SFT checkpoint"):
        command.check_sft(tmp_path, 2)
    hf = command.sft_checkpoint(tmp_path, 2)
    hf.mkdir(parents=True)
    (hf / "config.json").write_text("{}")
    assert command.check_sft(tmp_path, 2) == [2.0, 1.5]


@pytest.mark.slow
def test_the_warm_start_recipe_composes_the_cpu_sft_stage(tmp_path: Path):
    """With VERL_PLATFORM=cpu the recipe launches verl_rewards.cpu.sft, which composes verl's own SFT config; the
    smoke's SFT variables land in it."""
    import yaml

    from recipe_support import run_script

    plan = command.SftPlan("tau_bench", tmp_path / "sft.parquet", rows=4, dropped=0, texts=[], steps=3, batch=2)
    env = {"VERL_PLATFORM": "cpu", "DOMAIN": "retail", "MODE": "instruction", "MODEL_PATH": "/m", "N_GPUS": "1",
           **command.sft_env(plan, tmp_path)}  # fmt: skip
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
