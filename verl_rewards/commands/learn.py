"""``verl-rewards learn``: show on the CPU that our reward teaches a policy, with verl's own trainers.

A tiny Qwen2 (built here, its weights drawn from ``--model-seed``, by default ``--seed``) is warm-started by verl's
SFT trainer on the gold answers of ToolRL rows (``export-sft gold toolrl``), then trained by verl's ``main_ppo``
with GRPO on **sampled rollouts only**, scored by our reward manager; both stages run through ``recipes/warm_start``
on the CPU backend (as ``smoke --sft`` does). The sampled policy is measured on one fixed set of validation rows,
the training prompts (this shows that the reward signal moves the policy, not that it generalises), before SFT,
after SFT and after GRPO (:mod:`verl_rewards.learning.evaluate`: mean reward, pass^1..pass^k; ``--trials`` samples
per row, 24 by default: one set of 4 draws moves a model's mean reward by up to 0.6, more than GRPO's gain), and the
run writes ``learn.json`` and ``learn.png`` (reward per step, verl's own validation every ``--test-freq`` steps with
``--val-trials`` samples per row, which are the evaluations' first draws).

Why ToolRL: its reward is dense (format 0/1 plus correctness from -3 to 3 with partial credit for the tool name,
the parameter names and each value), so two samples of one prompt rarely tie and every GRPO group carries an
advantage; one turn per rollout keeps a step to seconds on two cores. tau2's mock and airline tasks score 0 or 1
after a multi-turn episode, and a tiny model's groups would mostly tie at 0.

Why a command of its own rather than ``smoke --learn``: it is a measurement with its own contract (one task, no
scripted turns, SFT then GRPO, evaluations before and after, a verdict on the reward going up), and most ``smoke``
options (``--policy``, ``--script-ratio``, ``--user``, ``--mode``, ``--sft``) would be meaningless under it.

Deterministic: every rollout is sampled with its own seed (:mod:`.policy`: verl's ``rollout.seed``, the step, the
row, the rollout), the trainer's batches come in row order (:mod:`.sampler`), one thread per process; two runs
with one seed log the same metrics.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cpu.sft import TARGET_LOSS_WINDOW
from ..smoke.data import SmokeData, read_metrics
from ..smoke.errors import SmokeError

HELP = "show on the CPU that our reward teaches a policy: a tiny model, SFT on gold answers, GRPO on sampled rollouts"
STAGES = ("set-up", "sft", "rollout", "reward", "update", "validation", "checkpoint", "evaluation", "learning")
#: the run's reward settings, in main_ppo (the recipe's variables) and in the evaluations alike
REWARD_KWARGS: dict[str, Any] = {"contribution": {"type": "none"}}

if TYPE_CHECKING:
    from ..learning.evaluate import Evaluation, Sampling


@dataclass(frozen=True)
class Plan:
    """A learning run's settings (the defaults are the measured ones of docs/guides/learn.md)."""

    seed: int = 1
    model_seed: int | None = None
    val_seed: int | None = None
    sft_steps: int = 200
    sft_target_loss: float | None = 0.09
    sft_lr: float = 5e-3
    sft_batch: int = 8
    steps: int = 10
    lr: float = 3e-4
    batch: int = 8
    mini_batch: int = 8
    n: int = 16
    trials: int = 24
    val_trials: int = 4
    temperature: float = 0.7
    test_freq: int = 5
    layers: int = 2
    hidden: int = 64
    max_new_tokens: int = 160
    response_length: int = 256

    @property
    def weights_seed(self) -> int:
        """The seed of the tiny model's weights: ``--model-seed``, else ``--seed``. verl's SFT trainer shuffles with
        its own fixed ``data.seed``, so this seed alone decides the SFT model."""
        return self.seed if self.model_seed is None else self.model_seed

    @property
    def validation_seed(self) -> int:
        """The seed of the validation draws: ``--val-seed``, else the weights' seed. Runs from one SFT model (one
        ``--model-seed``, several ``--seed``) then draw the same validation samples, so they share the after-SFT
        evaluation exactly and their after-GRPO evaluations differ only by the weights GRPO gave them."""
        return self.weights_seed if self.val_seed is None else self.val_seed


DEFAULT = Plan()


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``learn`` subcommand to the ``verl-rewards`` subparsers."""
    p = sub.add_parser("learn", help=HELP, description=HELP)
    p.add_argument(
        "--seed", type=int, default=DEFAULT.seed,
        help="every rollout's seed, and the tiny model's weights and the validation draws unless --model-seed or "
        "--val-seed is given",
    )  # fmt: skip
    p.add_argument(
        "--model-seed", type=int, default=DEFAULT.model_seed,
        help="the tiny model's weights, hence the SFT model (default: --seed); runs with one --model-seed and "
        "several --seed measure GRPO's spread from one SFT model",
    )  # fmt: skip
    p.add_argument(
        "--val-seed", type=int, default=DEFAULT.val_seed,
        help="the validation draws' seed (default: the model's seed), in verl's validation and in the evaluations "
        "before SFT, after SFT and after GRPO alike",
    )  # fmt: skip
    p.add_argument(
        "--sft-steps", type=int, default=DEFAULT.sft_steps,
        help="the most SFT steps (verl's SFT trainer): it ends earlier at --sft-target-loss",
    )  # fmt: skip
    p.add_argument(
        "--sft-target-loss", type=float, default=DEFAULT.sft_target_loss,
        help=f"end SFT at the first step whose mean train loss over the last {TARGET_LOSS_WINDOW} steps is at most "
        "this, so that runs from different model seeds start equally trained; 0: run every --sft-steps step",
    )  # fmt: skip
    p.add_argument("--sft-lr", type=float, default=DEFAULT.sft_lr, help="SFT learning rate")
    p.add_argument("--steps", type=int, default=DEFAULT.steps, help="GRPO steps (verl's main_ppo)")
    p.add_argument("--lr", type=float, default=DEFAULT.lr, help="GRPO learning rate of the actor")
    p.add_argument("--batch-size", type=int, default=DEFAULT.batch, help="prompts per GRPO step")
    p.add_argument(
        "--mini-batch", type=int, default=DEFAULT.mini_batch,
        help="prompts per actor update (verl's ppo_mini_batch_size): batch-size / mini-batch updates per GRPO step",
    )  # fmt: skip
    p.add_argument("--n", type=int, default=DEFAULT.n, help="sampled rollouts per prompt (the GRPO group)")
    p.add_argument(
        "--trials", type=int, default=DEFAULT.trials,
        help="samples per validation row in the evaluations after SFT and after GRPO (the measure of the gain; "
        "pass^1..pass^k); the one before SFT, the random model's floor, draws --val-trials",
    )  # fmt: skip
    p.add_argument(
        "--val-trials", type=int, default=DEFAULT.val_trials,
        help="samples per validation row in verl's own validation every --test-freq GRPO steps (the curve of "
        "learn.png): the evaluations' first draws",
    )  # fmt: skip
    p.add_argument(
        "--temperature", type=float, default=DEFAULT.temperature, help="sampling temperature, training and validation"
    )
    p.add_argument(
        "--test-freq", type=int, default=DEFAULT.test_freq,
        help="GRPO steps between verl's validations (and at the last step; none before training, where the after-SFT "
        "evaluation stands for it)",
    )  # fmt: skip
    p.add_argument("--input", default=None, help="ToolRL rows (.jsonl/.json/.parquet; default: the packaged sample)")
    p.add_argument(
        "--out", default=None, help="output folder (default: ./learn/toolrl-seed<SEED>[-model<MODEL_SEED>]-<time>)"
    )
    p.add_argument("--timeout-s", type=float, default=1800.0, help="seconds before the training is stopped")
    return p


def _plan(args: argparse.Namespace) -> Plan:
    plan = Plan(
        seed=args.seed, model_seed=args.model_seed, val_seed=args.val_seed, sft_steps=args.sft_steps,
        sft_target_loss=args.sft_target_loss or None, sft_lr=args.sft_lr, steps=args.steps, lr=args.lr,
        batch=args.batch_size, mini_batch=args.mini_batch, n=args.n, trials=args.trials, val_trials=args.val_trials,
        test_freq=args.test_freq, temperature=args.temperature,
    )  # fmt: skip
    for name in ("sft_steps", "steps", "batch", "mini_batch", "n", "trials", "val_trials", "test_freq"):
        if getattr(plan, name) < 1:
            option = "batch-size" if name == "batch" else name.replace("_", "-")
            raise SmokeError("set-up", f"--{option} must be at least 1")
    if plan.batch % plan.mini_batch:
        raise SmokeError("set-up", f"--batch-size {plan.batch} must be a multiple of --mini-batch {plan.mini_batch}")
    if plan.n < 2:
        raise SmokeError("set-up", "--n must be at least 2: GRPO's advantage compares the rollouts of one prompt")
    if not 0 < plan.temperature <= 2:
        raise SmokeError("set-up", f"--temperature must be within (0, 2], got {plan.temperature}")
    if plan.sft_target_loss is not None and not plan.sft_target_loss > 0:
        raise SmokeError("set-up", f"--sft-target-loss must be a positive number or 0, got {plan.sft_target_loss}")
    for name in ("sft_lr", "lr"):
        if not 0 < getattr(plan, name) < 1:
            raise SmokeError("set-up", f"--{name.replace('_', '-')} must be within (0, 1), got {getattr(plan, name)}")
    return plan


# -- set-up ----------------------------------------------------------------------------------------------------
def _data(plan: Plan, source: Path, out: Path) -> tuple[SmokeData, list[dict[str, Any]], Path, Path, Path]:
    """The rows (``prepare toolrl``) and their file, training = validation rows, the SFT export, the wrapped sampling
    loops."""
    import shutil

    import pandas as pd

    from ..cpu.policy import DEFAULT_SCRIPT_SOURCE
    from ..gold.export import export_gold
    from ..gold.rows import plain
    from ..smoke.data import wrap_loops
    from ..toolrl.data import prepare_toolrl

    prepared = out / "data" / "prepared"
    report = prepare_toolrl(source, prepared, split="train", show_progress=False, report_to=io.StringIO())
    rows_file = Path(report.output_path)
    rows = [plain(r) for r in pd.read_parquet(rows_file).to_dict("records")]
    train, val = out / "data" / "train.parquet", out / "data" / "val.parquet"
    shutil.copyfile(rows_file, train)
    shutil.copyfile(rows_file, val)  # the validation rows are the training prompts (the signal, not generalisation)
    sft = export_gold("toolrl", "", "train", out / "data" / "sft", rows_file=rows_file, progress=False)
    texts = [str(m.get("content") or "") for r in rows for m in r["prompt"]] + [
        str(r["reward_model"]["ground_truth"]) for r in rows
    ]
    data = SmokeData(train, val, None, texts, 0)
    loops = wrap_loops(data, "sample", 0.0, DEFAULT_SCRIPT_SOURCE, out / "data", val_seed=plan.validation_seed)
    return data, rows, rows_file, Path(sft.out), loops


def _overrides(plan: Plan, out: Path) -> list[str]:
    """The learning run's Hydra overrides, after the CPU ones: sampled rollouts only, no KL term (no reference model
    to run), the actor's learning rate, ``batch / mini_batch`` actor updates per step (one forward each), the random
    seeds, verl's validation every ``test_freq`` steps with ``val_trials`` samples per row and its dumps, the ordered
    batches and a Hugging Face copy of the last actor."""
    from ..cpu.sampler import SAMPLER_OVERRIDES

    rollout = "actor_rollout_ref.rollout"
    return [
        f"actor_rollout_ref.actor.optim.lr={plan.lr}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={plan.mini_batch}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={plan.mini_batch * plan.n}",
        "actor_rollout_ref.actor.use_kl_loss=False",
        "actor_rollout_ref.actor.entropy_coeff=0",
        "actor_rollout_ref.actor.checkpoint.save_contents=[model,optimizer,extra,hf_model]",
        f"{rollout}.seed={plan.seed}",
        f"{rollout}.temperature={plan.temperature}",
        f"{rollout}.val_kwargs.temperature={plan.temperature}",
        f"{rollout}.val_kwargs.n={plan.val_trials}",
        f"data.val_batch_size={4 * plan.batch}",
        f"trainer.test_freq={plan.test_freq}",
        "trainer.val_before_train=False",  # the after-SFT evaluation is that validation, with more draws
        f"trainer.validation_data_dir={out / 'val_dumps'}",
        "trainer.experiment_name=learn-toolrl",
        *SAMPLER_OVERRIDES,
    ]


def _prompt_length(model: str, data: SmokeData) -> int:
    from ..smoke.data import prompt_tokens

    return 128 * math.ceil((prompt_tokens(model, data) + 16) / 128)


def _grpo_checkpoint(out: Path, steps: int) -> Path:
    """Where main_ppo leaves the Hugging Face copy of the last actor."""
    return out / "checkpoints" / f"global_step_{steps}" / "actor" / "huggingface"


def redraw(payload: dict[str, Any], val_seed: int) -> tuple[Evaluation, Evaluation]:
    """A finished run's SFT and GRPO models evaluated again with the validation draws of ``val_seed``: the same rows,
    sampling and reward as the run's own evaluation (``payload``: its ``learn.json``), other random numbers. Shows
    whether a gain holds beyond the one set of draws the run measured it with."""
    import pandas as pd

    from ..gold.rows import plain
    from ..learning.evaluate import Sampling, evaluate

    files = payload["files"]
    sampling = Sampling(**{**payload["sampling"], "seed": val_seed})
    rows = [plain(r) for r in pd.read_parquet(files["rows"]).to_dict("records")]
    after_sft = evaluate(files["after_sft"], rows, sampling, REWARD_KWARGS)
    return after_sft, evaluate(files["after_grpo"], rows, sampling, REWARD_KWARGS)


# -- the run ---------------------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    try:
        plan = _plan(args)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        model = "" if plan.model_seed is None else f"-model{plan.model_seed}"
        out = Path(args.out or f"learn/toolrl-seed{plan.seed}{model}-{stamp}").resolve()
        out.mkdir(parents=True, exist_ok=True)
        for stale in ("metrics.jsonl", "checkpoints", "sft", "learn.json"):
            if (out / stale).exists():
                raise SmokeError("set-up", f"{out / stale} exists: use a fresh --out folder")
        result = _learn(plan, Path(args.input) if args.input else None, out, args.timeout_s, started)
    except SmokeError as exc:
        print(f"learn: FAILED at stage {exc.stage}: {exc}", file=sys.stderr)
        return 1
    return 0 if result else 1


def _learn(plan: Plan, source: Path | None, out: Path, timeout: float, started: float) -> bool:
    """Set up, then verl's SFT stage and GRPO stage one after the other (``command.sh`` runs both at once), each
    evaluation in a worker process beside the stage that follows it: before SFT (``val_trials`` samples per row: the
    random model's floor) beside SFT, which trains on one core; after SFT beside GRPO; after GRPO in two halves at
    once."""
    from ..benchmark_list import TOOLRL
    from ..cpu.model import build_tiny_qwen2
    from ..learning.evaluate import Pool, Sampling
    from ..learning.report import STAGES as EVALUATED
    from ..smoke.recipe import REPO, WARM_START_RECIPE, cpu_overrides, recipe_env, write_command
    from ..smoke.sft_stage import SftPlan, check_sft, sft_checkpoint, sft_env
    from ..toolrl.data import SAMPLE_PATH

    t0 = time.monotonic()
    data, rows, rows_file, sft_file, loops = _data(plan, source or SAMPLE_PATH, out)
    model = build_tiny_qwen2(out / "model", data.texts, seed=plan.weights_seed, layers=plan.layers, hidden=plan.hidden)
    prompt_len = _prompt_length(model, data)
    sampling = Sampling(plan.validation_seed, plan.trials, plan.temperature, prompt_len, plan.response_length,
                        plan.max_new_tokens)  # fmt: skip
    sft = SftPlan("toolrl", sft_file, len(rows), 0, [], plan.sft_steps, plan.sft_batch)
    env = recipe_env(TOOLRL, "rlla", "single", "", data, model, out, "scripted", plan.batch)
    env.update(sft_env(sft, out, lr=plan.sft_lr))
    env["SFT_OVERRIDES"] += f" data.micro_batch_size_per_gpu={plan.sft_batch}"  # one forward per step
    if plan.sft_target_loss is not None:
        env["SFT_OVERRIDES"] += f" +trainer.target_loss={plan.sft_target_loss!r}"
    env.update({"CONTRIBUTION": "0", "EXPERIMENT_NAME": "learn-toolrl"})
    for unset in ("SFT_MODEL_PATH", "SFT_VAL_FILES"):
        env.pop(unset, None)
    recipe = ["bash", str(REPO / WARM_START_RECIPE)]  # its SFT stage takes no overrides: SFT_OVERRIDES holds them
    cmd = recipe + cpu_overrides(
        model=None, out=out, steps=plan.steps, batch=plan.batch, n=plan.n, prompt_len=prompt_len,
        response_len=plan.response_length, policy="sample", loops_yaml=loops, wandb=False,
        max_new_tokens=plan.max_new_tokens,
    ) + _overrides(plan, out)  # fmt: skip
    write_command(out, env, cmd, _SHOWN)
    setup_s = time.monotonic() - t0
    print(f"learn: ToolRL, {len(rows)} rows (training = validation prompts), seed {plan.seed}, model seed "
          f"{plan.weights_seed}, validation seed {plan.validation_seed} -> {out}")  # fmt: skip
    target = plan.sft_target_loss
    until = f"to train loss {target:g} (at most {plan.sft_steps} steps)" if target else f"{plan.sft_steps} steps"
    print(f"learn: SFT {until} on {len(rows)} gold answers, then GRPO {plan.steps} steps "
          f"({plan.batch} prompts x {plan.n} sampled rollouts), through {WARM_START_RECIPE}; evaluations of "
          f"{len(rows)} rows x {plan.trials} samples beside them")  # fmt: skip
    with Pool(workers=2) as pool:
        floor = replace(sampling, trials=min(plan.trials, plan.val_trials))  # the random model never writes the format
        before = pool.submit(model, rows, floor, REWARD_KWARGS)
        t0 = time.monotonic()
        sft_steps = _sft_stage(recipe, env, out, timeout - (t0 - started))
        hf = sft_checkpoint(out, sft_steps)
        sft_losses = check_sft(out, sft_steps)
        after_sft = pool.submit(str(hf), rows, sampling, REWARD_KWARGS)
        records = _grpo_stage(cmd, env, out, timeout - (time.monotonic() - started), plan.steps, plan.test_freq)
        train_s = time.monotonic() - t0
        final = _grpo_checkpoint(out, plan.steps)
        after_grpo = pool.submit(str(final), rows, sampling, REWARD_KWARGS, parts=2)
        t0 = time.monotonic()
        evaluations = results(dict(zip(EVALUATED, (before, after_sft, after_grpo), strict=True)))
        wait_s = time.monotonic() - t0
    files = {"rows": str(rows_file), "after_sft": str(hf), "after_grpo": str(final)}
    return _report(plan, sampling, files, out, records, sft_losses, evaluations, rows,
                   {"set-up": setup_s, "SFT + GRPO (verl)": train_s, "evaluations after GRPO": wait_s,
                    "total": time.monotonic() - started})  # fmt: skip


def results(pending: Mapping[str, Callable[[], Evaluation]]) -> list[Evaluation]:
    """The evaluations' results in order; one that failed in its worker process (a model that does not load, a
    worker killed) is the run's failure at stage ``evaluation``, naming which."""
    out = []
    for name, result in pending.items():
        try:
            out.append(result())
        except Exception as exc:  # noqa: BLE001 - whatever the worker raised, named with the evaluation
            raise SmokeError("evaluation", f"the evaluation {name} failed: {type(exc).__name__}: {exc}") from exc
    return out


def _sft_stage(cmd: list[str], env: dict[str, str], out: Path, timeout: float) -> int:
    """The recipe's SFT stage (its log in ``sft.log``): the step of its last checkpoint."""
    from ..smoke.process import ended, stream
    from ..smoke.recipe import REPO
    from ..smoke.sft_stage import sft_steps_run

    log_path = out / "sft.log"
    code = stream(cmd, {**env, "STAGE": "sft"}, log_path, timeout, REPO)
    if code != 0:
        raise SmokeError("sft", f"the SFT stage {ended(code, timeout)}; see {log_path}")
    steps = sft_steps_run(out)
    if steps is None:
        raise SmokeError("sft", f"the SFT stage left no checkpoint in {out / 'sft'}")
    return steps


def validation_steps(steps: int, test_freq: int) -> list[int]:
    """The GRPO steps verl validates at in a learning run: every ``test_freq``-th and the last (none before
    training)."""
    return sorted({s for s in range(test_freq, steps + 1, test_freq)} | {steps})


def _grpo_stage(
    cmd: list[str], env: dict[str, str], out: Path, timeout: float, steps: int, test_freq: int
) -> list[dict[str, Any]]:
    """The recipe's GRPO stage from the SFT checkpoint (its log in ``run.log``): verl's metrics of every step, each
    step logged and a reward signal in the groups (:mod:`verl_rewards.smoke.checks`), else the stage that failed."""
    from ..smoke.checks import check_run, check_signal, failed_stage, first_reward_error
    from ..smoke.process import ended, stream
    from ..smoke.recipe import REPO

    log_path = out / "run.log"
    code = stream(cmd, {**env, "STAGE": "rl"}, log_path, timeout, REPO)
    records = read_metrics(out / "metrics.jsonl")
    if code != 0:
        log = log_path.read_text(encoding="utf-8", errors="replace")
        steps_logged = sum(1 for r in records if any(k.startswith("actor/") for k in r.get("data") or {}))
        first = first_reward_error(log)
        raise SmokeError(failed_stage(log, steps_logged), f"main_ppo {ended(code, timeout)}; see {log_path}"
                         + (f"; first reward error: {first}" if first else ""))  # fmt: skip
    check_run(out, steps, records, validations=validation_steps(steps, test_freq))
    check_signal(records, log_path, _TIED)
    return records


#: what to change when every GRPO group tied
_TIED = (
    "the SFT model's samples all scored alike: more --sft-steps when they all failed, fewer when they all earned the "
    "gold reward; a higher --temperature spreads them"
)


#: the recipe variables ``command.sh`` repeats
_SHOWN = (
    "VERL_PLATFORM", "VERL_FILE_LOGGER_PATH", "MODEL_PATH", "TRAIN_FILES", "VAL_FILES", "N_GPUS", "TRAIN_BATCH_SIZE",
    "FAMILY", "STAGE", "CONTRIBUTION", "EXPERIMENT_NAME", "SFT_FILES", "SFT_DIR", "SFT_FILE_LOGGER_PATH",
    "SFT_BATCH_SIZE", "SFT_EPOCHS", "SFT_LR", "SFT_MAX_LENGTH", "SFT_OVERRIDES",
)  # fmt: skip


def _report(
    plan: Plan,
    sampling: Sampling,
    files: dict[str, str],
    out: Path,
    records: list[dict[str, Any]],
    sft_losses: list[float],
    evaluations: list[Evaluation],
    rows: list[dict[str, Any]],
    timings: dict[str, float],
) -> bool:
    """Print the table and the verdict, write ``learn.json`` and ``learn.png``; True when GRPO raised the reward."""
    from ..gold import gold_reward, row_info
    from ..learning.report import dump_pass1, plot, series, table, write_json

    val_key = f"val-core/{rows[0]['data_source']}/reward/mean@{plan.val_trials}"
    verl_val = series(records, val_key)

    def target(ground_truth: Any) -> float:
        row = {"data_source": rows[0]["data_source"], "reward_model": {"ground_truth": ground_truth}}
        return gold_reward(row_info(row))

    pass1 = dump_pass1(out / "val_dumps", target)
    before, after_sft, after_grpo = evaluations
    gain = after_grpo.mean_reward - after_sft.mean_reward
    print(f"learn: validation on {len(rows)} rows x {plan.trials} samples (seed {plan.validation_seed})")
    for line in table(evaluations):
        print(line)
    last = sft_losses[-TARGET_LOSS_WINDOW:]
    print(f"  SFT: {len(sft_losses)} steps, mean train loss of the last {len(last)} {sum(last) / len(last):.3f}")
    print(f"  GRPO gain over SFT: {gain:+.3f} reward")
    if verl_val:
        print(f"  verl's own validation ({val_key}): " + ", ".join(f"step {s}: {v:.3f}" for s, v in verl_val))
    png = out / "learn.png"
    plot(png, records, sft_losses, evaluations, val_key, pass1,
         f"verl-rewards learn: ToolRL, tiny Qwen2 {plan.layers}x{plan.hidden}, seed {plan.seed}, "
         f"model seed {plan.weights_seed}")  # fmt: skip
    names = ("before_sft", "after_sft", "after_grpo")
    write_json(out / "learn.json", {
        "plan": asdict(plan),
        "evaluations": {name: ev.summary() for name, ev in zip(names, evaluations, strict=True)},
        "gain": gain,
        "sft_steps": len(sft_losses),
        "verl_validation": {str(s): v for s, v in verl_val},
        "validation_pass1": {str(s): v for s, v in pass1},
        "timings_s": timings,
        "sampling": asdict(sampling),
        "files": files,
    })  # fmt: skip
    print(f"  files       {out / 'learn.json'}, {png}, {out / 'metrics.jsonl'}, {out / 'run.log'}")
    print("  time        " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    if gain <= 0:
        print(f"learn: FAILED at stage learning: GRPO did not raise the validation reward ({gain:+.3f})",
              file=sys.stderr)  # fmt: skip
        return False
    print("learn: PASSED (GRPO raised the validation reward of the SFT model)")
    return True
