"""The parts of ``verl-rewards learn`` that run without Ray: the ToolRL gold export its SFT stage trains on, the
evaluator (a model's sampled policy on fixed rows, scored by our manager), the report and the option checks."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
import pytest

from verl_rewards.commands import learn as command
from verl_rewards.cpu.model import build_tiny_qwen2
from verl_rewards.gold import gold_reward, row_info
from verl_rewards.gold.export import ExportError, export_gold
from verl_rewards.gold.rows import plain
from verl_rewards.learning.evaluate import Evaluation, Pool, Sampling, evaluate, merge
from verl_rewards.learning.report import Margin, dump_pass1, margin, plot, table
from verl_rewards.smoke.errors import SmokeError
from verl_rewards.toolrl.data import SAMPLE_PATH, prepare_toolrl


@pytest.fixture(scope="module")
def rows_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("toolrl")
    report = prepare_toolrl(SAMPLE_PATH, out, split="train", show_progress=False)
    return Path(report.output_path)


@pytest.fixture(scope="module")
def rows(rows_file) -> list[dict]:
    return [plain(r) for r in pd.read_parquet(rows_file).to_dict("records")]


def test_the_toolrl_gold_export_answers_every_row_with_its_ground_truth(tmp_path, rows_file, rows):
    report = export_gold("toolrl", "", "train", tmp_path, rows_file=rows_file, progress=False)
    assert report.dropped_tasks == []
    written = pd.read_parquet(report.out).to_dict("records")
    assert len(written) == len(rows) == 24
    for record, row in zip(written, rows, strict=True):
        messages = json.loads(record["messages"]) if isinstance(record["messages"], str) else list(record["messages"])
        assert [dict(m)["role"] for m in messages] == [m["role"] for m in row["prompt"]] + ["assistant"]
        assert dict(messages[-1])["content"] == row["reward_model"]["ground_truth"].strip()


def test_the_toolrl_gold_export_needs_rows_of_toolrl(tmp_path):
    with pytest.raises(ExportError, match="--rows FILE is required"):
        export_gold("toolrl", "", "train", tmp_path, progress=False)
    other = tmp_path / "other.parquet"
    pd.DataFrame({"data_source": ["tau2/airline"], "prompt": [[{"role": "user", "content": "x"}]]}).to_parquet(other)
    with pytest.raises(ExportError, match="holds no ToolRL rows"):
        export_gold("toolrl", "", "train", tmp_path / "o", rows_file=other, progress=False)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, rows) -> str:
    texts = [m["content"] for r in rows for m in r["prompt"]] + [r["reward_model"]["ground_truth"] for r in rows]
    return build_tiny_qwen2(tmp_path_factory.mktemp("model"), texts, seed=3)


def test_an_evaluation_is_the_same_for_one_seed_and_differs_for_another(tiny, rows):
    subset = rows[:3]
    sampling = Sampling(seed=5, trials=2, temperature=1.0, prompt_length=1024, response_length=32, max_new_tokens=24)
    first = evaluate(tiny, subset, sampling, command.REWARD_KWARGS)
    again = evaluate(tiny, subset, sampling, command.REWARD_KWARGS)
    other = evaluate(tiny, subset, Sampling(**{**sampling.__dict__, "seed": 6}), command.REWARD_KWARGS)
    assert first == again
    assert len(first.rewards) == 3 and all(len(r) == 2 for r in first.rewards)
    assert first.targets == tuple(gold_reward(row_info(r)) for r in subset)
    assert first.responses != other.responses and all(len(t) == 2 for t in first.responses)
    # a random model never writes ToolRL's format: it earns the format penalty's floor, below every gold reward
    assert all(r < t for row, t in zip(first.rewards, first.targets, strict=True) for r in row)


def test_more_trials_add_draws_after_the_first_ones(tiny, rows):
    """verl's validation of a run draws ``--val-trials`` samples per row, the evaluations ``--trials``: the same
    first draws, so the validation at step 0 is the after-SFT evaluation's first samples."""
    subset = rows[:2]
    sampling = Sampling(seed=5, trials=2, temperature=1.0, prompt_length=1024, response_length=16, max_new_tokens=12)
    two = evaluate(tiny, subset, sampling, command.REWARD_KWARGS)
    three = evaluate(tiny, subset, Sampling(**{**sampling.__dict__, "trials": 3}), command.REWARD_KWARGS)
    assert [row[:2] for row in three.responses] == list(two.responses)
    assert [row[:2] for row in three.rewards] == list(two.rewards)
    assert all(len(row) == 3 for row in three.responses)


def test_a_redraw_evaluates_a_run_s_models_again_with_other_validation_draws(tiny, rows_file, rows):
    sampling = Sampling(seed=5, trials=1, temperature=1.0, prompt_length=1024, response_length=32, max_new_tokens=24)
    payload = {"sampling": sampling.__dict__, "files": {"rows": str(rows_file), "after_sft": tiny, "after_grpo": tiny}}
    sft, grpo = command.redraw(payload, 5)
    assert sft == grpo == evaluate(tiny, rows, sampling, command.REWARD_KWARGS)  # the run's own draws, exactly
    other, _ = command.redraw(payload, 6)
    assert other.responses != sft.responses and len(other.rewards) == len(rows)


def test_an_evaluation_in_parts_in_worker_processes_is_the_evaluation_in_one(tiny, rows):
    subset = rows[:5]
    sampling = Sampling(seed=7, trials=2, temperature=1.0, prompt_length=1024, response_length=16, max_new_tokens=12)
    whole = evaluate(tiny, subset, sampling, command.REWARD_KWARGS)
    with Pool(workers=2) as pool:
        halves = pool.submit(tiny, subset, sampling, command.REWARD_KWARGS, parts=2)
        thirds = pool.submit(tiny, subset, sampling, command.REWARD_KWARGS, parts=3)
        assert halves() == whole and thirds() == whole
    # the parts are joined in row order: the other order is another evaluation
    first, second = (
        evaluate(tiny, subset[:3], sampling, command.REWARD_KWARGS),
        evaluate(tiny, subset[3:], sampling, command.REWARD_KWARGS),
    )
    assert merge([first, second]) == whole != merge([second, first])


def test_an_evaluation_that_fails_in_its_worker_fails_the_run_naming_it(tmp_path, tiny, rows):
    sampling = Sampling(seed=7, trials=1, temperature=1.0, prompt_length=1024, response_length=8, max_new_tokens=4)
    with Pool(workers=1) as pool:
        fine = pool.submit(tiny, rows[:1], sampling, command.REWARD_KWARGS)
        missing = pool.submit(str(tmp_path / "no-model"), rows[:1], sampling, command.REWARD_KWARGS)
        with pytest.raises(SmokeError, match="the evaluation after GRPO failed: OSError") as exc:
            command.results({"after SFT": fine, "after GRPO": missing})
    assert exc.value.stage == "evaluation"


def test_pass_hat_counts_trials_at_the_gold_reward():
    ev = Evaluation(rewards=((4.0, 4.0), (4.0, -1.0), (0.5, 1.0)), targets=(4.0, 4.0, 1.0))
    assert ev.mean_reward == pytest.approx((8 + 3 + 1.5) / 6)
    assert ev.pass_hat() == {1: pytest.approx(2 / 3), 2: pytest.approx(1 / 3)}
    lines = table([ev, ev, ev])
    assert lines[0].split() == ["reward", "pass^1", "pass^2"]
    assert lines[3].split() == ["after", "GRPO", f"{ev.mean_reward:.3f}", "0.667", "0.333"]
    # many trials: the columns are pass^1, 2, 4, 8, ...; a stage with fewer trials shows none past its own
    many = Evaluation(rewards=((4.0,) * 5 + (0.0,) * 5,), targets=(4.0,))
    lines = table([ev, many])
    assert lines[0].split() == ["reward", "pass^1", "pass^2", "pass^4", "pass^8"]
    assert lines[1].split()[-2:] == ["-", "-"] and lines[2].split()[-2:] == [
        f"{5 * 4 * 3 * 2 / (10 * 9 * 8 * 7):.3f}",
        "0.000",
    ]


def test_validation_dumps_give_pass1_per_step(tmp_path):
    dumps = tmp_path / "val_dumps"
    dumps.mkdir()
    for step, scores in ((0, [4.0, 1.0, 0.0, 1.0]), (12, [4.0, 4.0, 1.0, 1.0])):
        lines = [json.dumps({"score": s, "gts": gt}) for s, gt in zip(scores, ["a", "a", "b", "b"], strict=True)]
        (dumps / f"{step}.jsonl").write_text("\n".join(lines) + "\n")
    (dumps / "notes.jsonl").write_text('{"score": 0}\n')
    targets = {"a": 4.0, "b": 1.0}
    assert dump_pass1(dumps, targets.__getitem__) == [(0, 0.5), (12, 1.0)]


def test_the_plot_is_a_png(tmp_path):
    records = [
        {"step": 0, "data": {"val-core/rlla/reward/mean@2": -1.0}},
        {"step": 1, "data": {"critic/score/mean": 0.1, "critic/score/min": -3.0, "critic/score/max": 4.0}},
        {"step": 2, "data": {"critic/score/mean": 0.4, "critic/score/min": -3.0, "critic/score/max": 4.0,
                             "val-core/rlla/reward/mean@2": 0.5}},
    ]  # fmt: skip
    ev = Evaluation(rewards=((1.0, 2.0),), targets=(4.0,))
    path = tmp_path / "learn.png"
    plot(path, records, [3.0, 2.0, 1.5], [ev], "val-core/rlla/reward/mean@2", [(0, 0.0), (2, 0.5)], "t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _args(**changes) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["learn"])
    for key, value in changes.items():
        setattr(args, key, value)
    return args


def test_a_learning_run_validates_every_test_freq_steps_and_at_the_last():
    assert command.validation_steps(10, 5) == [5, 10]
    assert command.validation_steps(4, 4) == [4]
    assert command.validation_steps(12, 5) == [5, 10, 12]
    assert command.validation_steps(3, 5) == [3]


def test_the_default_plan_is_the_measured_one():
    assert command._plan(_args()) == command.DEFAULT
    assert command.DEFAULT.sft_target_loss == 0.09 and command._plan(_args(sft_target_loss=0.0)).sft_target_loss is None


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"n": 1}, "--n must be at least 2"),
        ({"steps": 0}, "--steps must be at least 1"),
        ({"trials": 0}, "--trials must be at least 1"),
        ({"val_trials": 0}, "--val-trials must be at least 1"),
        ({"batch_size": 0}, "--batch-size must be at least 1"),
        ({"mini_batch": 0}, "--mini-batch must be at least 1"),
        ({"mini_batch": 3}, "--batch-size 8 must be a multiple of --mini-batch 3"),
        ({"lr": 1.5}, "--lr must be within (0, 1)"),
        ({"temperature": 0.0}, "--temperature must be within (0, 2]"),
        ({"sft_target_loss": -0.1}, "--sft-target-loss must be a positive number or 0"),
    ],
)
def test_bad_options_fail_at_set_up_naming_the_option(changes, message):
    with pytest.raises(SmokeError) as exc:
        command._plan(_args(**changes))
    assert exc.value.stage == "set-up" and message in str(exc.value)


def test_a_used_output_folder_is_refused(tmp_path, capsys):
    (tmp_path / "metrics.jsonl").write_text("")
    assert command.run(_args(out=str(tmp_path))) == 1
    assert f"FAILED at stage set-up: {tmp_path / 'metrics.jsonl'} exists" in capsys.readouterr().err


def test_the_mini_batch_sets_the_actor_updates_per_step(tmp_path):
    plan = command._plan(_args(mini_batch=2))
    overrides = command._overrides(plan, tmp_path)
    assert "actor_rollout_ref.actor.ppo_mini_batch_size=2" in overrides
    assert f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={2 * plan.n}" in overrides


def test_the_model_seed_sets_the_weights_and_the_seed_the_draws(tmp_path):
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    plan = command._plan(parser.parse_args(["learn", "--seed", "2", "--model-seed", "1"]))
    assert (plan.weights_seed, plan.seed) == (1, 2)
    assert "actor_rollout_ref.rollout.seed=2" in command._overrides(plan, tmp_path)
    assert command._plan(parser.parse_args(["learn", "--seed", "3"])).weights_seed == 3


def test_the_validation_draws_follow_the_model_seed_unless_a_validation_seed_is_given():
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())

    def seeds(*argv: str) -> tuple[int, int, int]:
        plan = command._plan(parser.parse_args(["learn", *argv]))
        return plan.seed, plan.weights_seed, plan.validation_seed

    assert seeds("--seed", "3") == (3, 3, 3)  # one seed for everything, as before --val-seed
    # runs from one SFT model share their validation draws, whatever their rollout seed
    assert seeds("--seed", "3", "--model-seed", "2") == (3, 2, 2)
    assert seeds("--seed", "3", "--model-seed", "2", "--val-seed", "9") == (3, 2, 9)


def _run(seed: int, sft: float, grpo: float, model_seed: int | None = None) -> dict:
    plan = {"seed": seed, "model_seed": model_seed}
    return {"plan": plan, "evaluations": {"after_sft": {"reward": sft}, "after_grpo": {"reward": grpo}}}


def test_the_margin_of_three_model_seeds_with_unequal_sft_models_is_not_shown():
    # the three runs of docs/guides/learn.md with a model per seed: gains +1.010, +0.028, +0.096
    result = margin([("1", _run(1, -1.3115, -0.3015)), ("2", _run(2, -1.331, -1.303)), ("3", _run(3, -0.314, -0.218))])
    assert [round(g, 3) for g in result.gains] == [1.01, 0.028, 0.096]
    assert round(result.spreads["after SFT"], 3) == 1.017 and not result.shown
    assert result.lines()[-1].endswith("not shown")


def test_the_margin_table_keeps_its_columns_for_long_run_labels():
    labels = ("seed 1, model seed 2, validation seed 2", "seed 2", "seed 3, model seed 2, validation seed 12")
    lines = margin([(label, _run(1, 0.058, g)) for label, g in zip(labels, (0.383, 0.423, 0.333), strict=True)]).lines()
    assert len({len(line) for line in lines[:4]}) == 1  # header and rows end at one column
    assert lines[1].endswith("+0.325") and lines[3].endswith("+0.275")


def test_pooled_draws_average_each_run_over_the_sets_and_apply_the_rule_again():
    labels = ("1", "2", "3")
    # one SFT model: the after-SFT reward is one per set of draws; the draws move each run's after-GRPO reward
    first = Margin(labels, (0.058,) * 3, (0.383, 0.423, 0.333))
    second = Margin(labels, (-0.217,) * 3, (0.548, 0.150, 0.399))
    assert first.shown and not second.shown
    pooled = Margin.pooled([first, second])
    assert pooled.after_sft == pytest.approx((-0.0795,) * 3)
    assert pooled.after_grpo == pytest.approx((0.4655, 0.2865, 0.366))
    assert pooled.shown  # smallest gain 0.366 > spread 0.179
    with pytest.raises(ValueError, match="same runs"):
        Margin.pooled([first, Margin(("a", "b", "c"), (0.0,) * 3, (1.0,) * 3)])


def test_the_margin_needs_every_spread_below_the_smallest_gain_and_three_runs():
    runs = [(str(s), _run(s, -1.3 + 0.05 * s, -0.4 + 0.1 * s, 1)) for s in (1, 2, 3)]
    result = margin(runs)
    assert result.shown and max(result.spreads.values()) < min(result.gains)
    assert not margin(runs[:2]).shown  # two runs are not enough
    runs[2] = ("3", _run(3, -1.15, 1.0, 1))  # a gain far above the others: the gains' spread (1.2) beats the smallest
    assert not margin(runs).shown and round(margin(runs).spreads["gain"], 3) == 1.2
