"""``verl-rewards smoke FAMILY``: a real ``main_ppo`` run of a family's recipe on the CPU, in minutes.

It builds a tiny Qwen2 and a tokenizer on this machine (:mod:`.model`), a small dataset from the family's real
``prepare`` output, and runs the family's recipe script (which runs ``python -m verl.trainer.main_ppo``) with the
CPU overrides after the recipe's own and the user's overrides last: N steps, validation before and after, one
checkpoint, verl's file logger (``DIR/metrics.jsonl``), wandb offline on request. Each training group mixes
scripted gold rollouts and sampled ones (``--script-ratio``), so its rewards differ and the update gets a real
advantage. It exits non-zero naming the stage that failed (set-up, sft, rollout, reward, update, validation,
checkpoint or resume) and the cause, also when ``main_ppo`` exited 0 but every reward of a step failed, no step had
a non-zero advantage or ``actor/pg_loss`` was 0 throughout (:mod:`.smoke_checks`); the first reward error of the log is
printed either way.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cli_help import data_dir_help, domain_help, mode_choices, mode_help
from ..coerce import finite_float
from .smoke_checks import check_run, check_signal, failed_stage, first_reward_error, stage_timings
from .smoke_data import (
    SmokeData,
    SmokeError,
    _build_data,
    _prepare,
    _prompt_tokens,
    _wrap_loops,
    family_data_dir,
    read_metrics,
)
from .smoke_modes import MODES, mode_overrides, resumed_from, run_resume
from .smoke_process import ended as _ended
from .smoke_process import stream as _stream
from .smoke_sft import _sft_data, check_sft, sft_checkpoint, sft_env

HELP = "run a family's recipe through verl's real main_ppo on the CPU (tiny model, a few steps)"
OVERRIDES_HELP = "-- OVERRIDES: Hydra overrides for main_ppo, after ours (yours win), passed on unchanged"
STAGES = ("set-up", "sft", "rollout", "reward", "update", "validation", "checkpoint", "resume")
WARM_START_RECIPE = "recipes/warm_start/run_warm_start.sh"
REPO = Path(__file__).resolve().parents[2]
#: the default share of scripted rollouts per training group: with two rollouts per prompt one gold, one sampled
SCRIPT_RATIO = 0.5


@dataclass(frozen=True)
class FamilySpec:
    recipe: str
    modes: tuple[str, ...]
    default_mode: str
    domains: tuple[str, ...]
    default_domain: str
    data_env: str = ""
    #: the loop each mode runs (verl's default loop for rows without agent_name)
    loops: Mapping[str, str] = field(default_factory=dict)


FAMILIES: dict[str, FamilySpec] = {
    "toolrl": FamilySpec("recipes/toolrl_grpo/run_toolrl_grpo.sh", ("single",), "single", ("rlla",), "rlla"),
    "tau2": FamilySpec(
        "recipes/tau2_grpo/run_tau2_grpo.sh",
        ("normal", "solo"),
        "normal",
        ("airline", "retail", "telecom", "mock", "banking_knowledge"),
        "airline",
        "TAU2_DATA_DIR",
    ),
    "tau_bench": FamilySpec(
        "recipes/tau_bench_grpo/run_tau_bench_grpo.sh",
        ("normal", "instruction"),
        "normal",
        ("retail", "airline"),
        "retail",
        "TAU_BENCH_DATA_DIR",
    ),
}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``smoke`` subcommand to the ``verl-rewards`` subparsers."""
    p = sub.add_parser("smoke", help=HELP, description=HELP, epilog=OVERRIDES_HELP)
    p.passthrough = "overrides"  # what follows the first "--", unparsed (verl-rewards' CliParser)
    p.set_defaults(overrides=[])
    _add_options(p)
    p.add_argument("family", choices=sorted(FAMILIES), help="the family whose recipe runs")
    return p


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--domain",
        default=None,
        help=domain_help("tau2", "tau_bench") + " (default: tau2/airline, tau_bench/retail)",
    )
    p.add_argument(
        "--mode",
        choices=mode_choices("tau2", "tau_bench"),
        default=None,
        help=mode_help("tau2", "tau_bench", default="normal"),
    )
    p.add_argument(
        "--retrieval",
        default=None,
        help="tau2 banking_knowledge: the retrieval configuration, passed to prepare (default: bm25)",
    )
    p.add_argument(
        "--steps",
        type=int,
        default=2,
        help="training steps; validation runs before the first and after the last, the checkpoint after the last "
        "(default: 2)",
    )
    p.add_argument(
        "--policy",
        choices=["auto", "script", "sample"],
        default="auto",
        help="script: the task's gold turns are played (scored under the current weights); sample: the model "
        "generates; auto: script when the gold module is installed",
    )
    p.add_argument(
        "--script-ratio",
        type=float,
        default=SCRIPT_RATIO,
        help=f"share of each training group's rollouts played by the script, the rest sampled (default: "
        f"{SCRIPT_RATIO}; with --n 2 one of each, so the group's rewards differ and GRPO has an advantage); "
        "validation plays the script",
    )
    p.add_argument(
        "--script-source",
        default=None,
        metavar="MODULE:FUNC",
        help="where scripted turns come from (default: verl_rewards.gold:gold_assistant_turns)",
    )
    p.add_argument(
        "--user",
        choices=["scripted", "policy"],
        default="scripted",
        help="normal mode's user: scripted (the task's instructions first, ###STOP### after the agent's last "
        "message) or policy (the policy plays it)",
    )
    p.add_argument("--batch-size", type=int, default=2, help="prompts per step (default: 2)")
    p.add_argument("--n", type=int, default=2, help="rollouts per prompt (default: 2)")
    p.add_argument(
        "--val-rows", type=int, default=2, help="validation prompts, 2 trials each: pass^1, pass^2 (default: 2)"
    )
    p.add_argument(
        "--data-dir",
        default=None,
        help=data_dir_help("tau2", "tau_bench"),
    )
    p.add_argument(
        "--out",
        default=None,
        help="output folder, which must not hold an earlier run (default: ./smoke/<EXPERIMENT_NAME or "
        "family-domain-mode>-<time>)",
    )
    p.add_argument(
        "--wandb", action="store_true", help="also log to wandb, offline (OUT/wandb; `wandb sync` uploads it later)"
    )
    p.add_argument(
        "--sft",
        action="store_true",
        help="tau2 / tau_bench: first verl's SFT trainer on the split's gold conversations (export-sft gold), then "
        "GRPO from its checkpoint, both through recipes/warm_start (SFT losses in OUT/sft_metrics.jsonl, its "
        "checkpoint in OUT/sft/)",
    )
    p.add_argument("--sft-steps", type=int, default=2, help="SFT steps with --sft (default: 2)")
    p.add_argument(
        "--trainer-mode",
        choices=MODES,
        default="sync",
        help="verl's V1 trainer mode, run by the CPU trainer of that mode (cpu_<mode>; separate_async: two logical "
        "GPUs, trainer and standalone rollout) (default: sync)",
    )
    p.add_argument(
        "--resume", action="store_true", help="then run main_ppo again from the last checkpoint for one more step"
    )
    p.add_argument(
        "--timeout-s",
        type=_seconds,
        default=1800.0,
        help="seconds (at most a week) before the run is stopped, with every process it started; it then fails "
        "saying 'timed out after N s'",
    )
    p.add_argument("--recipe", default=None, help="the recipe script to run (default: the family's, in recipes/)")


#: the longest --timeout-s (one week, as reward.reward_kwargs.timeout_s)
MAX_TIMEOUT_S = 7 * 24 * 3600.0


def _seconds(text: str) -> float:
    """An argparse ``type=``: a positive, finite number of seconds up to :data:`MAX_TIMEOUT_S` (usage error)."""
    try:
        return finite_float(text, positive=True, maximum=MAX_TIMEOUT_S)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def split_arguments(args: argparse.Namespace) -> list[str]:
    """The Hydra overrides given after ``--``: the smoke parser (a ``CliParser`` with ``passthrough``) hands them
    over unparsed, as argparse alone cannot (it drops a ``--`` right after FAMILY)."""
    return list(args.overrides or [])


# -- set-up ----------------------------------------------------------------------------------------------------
def _resolve(args: argparse.Namespace) -> tuple[FamilySpec, str, str]:
    spec = FAMILIES[args.family]
    domain = (args.domain or spec.default_domain).removeprefix(f"{args.family}/")  # tau2/airline: the data source
    mode = args.mode or spec.default_mode
    if domain not in spec.domains:
        raise SmokeError("set-up", f"{args.family}: --domain must be one of {', '.join(spec.domains)}, got {domain!r}")
    if mode not in spec.modes:
        raise SmokeError("set-up", f"{args.family}: --mode must be one of {', '.join(spec.modes)}, got {mode!r}")
    if domain == "banking_knowledge" and mode != "normal":
        raise SmokeError("set-up", f"{args.family}: banking_knowledge runs in normal mode only, got --mode {mode}")
    if args.retrieval is not None and domain != "banking_knowledge":
        raise SmokeError("set-up", f"--retrieval is a banking_knowledge option, not {args.family} {domain}'s")
    if args.steps < 1 or args.batch_size < 1 or args.n < 1 or args.val_rows < 1:
        raise SmokeError("set-up", "--steps, --batch-size, --n and --val-rows must be at least 1")
    if not 0.0 <= args.script_ratio <= 1.0:
        raise SmokeError("set-up", f"--script-ratio must be within [0, 1], got {args.script_ratio}")
    if args.sft and args.family == "toolrl":
        raise SmokeError("set-up", "--sft needs tau2 or tau_bench: its data are the gold conversations of export-sft")
    if args.sft and args.sft_steps < 1:
        raise SmokeError("set-up", f"--sft-steps must be at least 1, got {args.sft_steps}")
    return spec, domain, mode


def _policy(args: argparse.Namespace) -> tuple[str, str]:
    from .policy import DEFAULT_SCRIPT_SOURCE, load_script_source

    source = args.script_source or DEFAULT_SCRIPT_SOURCE
    if args.policy == "sample":
        return "sample", source
    try:
        load_script_source(source)
    except (ImportError, TypeError, ValueError) as exc:
        if args.policy == "script":
            raise SmokeError("set-up", f"--policy script: {exc}") from exc
        print(f"smoke: no scripted turns ({exc}); using --policy sample", file=sys.stderr)
        return "sample", source
    return "script", source


def _data_dir(args: argparse.Namespace, spec: FamilySpec) -> str:
    if not spec.data_env:
        return ""
    return family_data_dir(args.data_dir, spec.data_env, args.family)  # --data-dir, the variable, the installed


# -- the run ---------------------------------------------------------------------------------------------------
def cpu_overrides(
    *,
    model: str,
    out: Path,
    steps: int,
    batch: int,
    n: int,
    prompt_len: int,
    response_len: int,
    policy: str,
    loops_yaml: Path | None,
    wandb: bool,
    max_new_tokens: int = 48,
    trainer_mode: str = "sync",
) -> list[str]:
    """The Hydra overrides that put a recipe on the CPU (after the recipe's own, before the user's). ``policy``:
    ``script`` (every rollout scripted), ``mixed`` (scripted and sampled ones) or ``sample``; sampled turns are cut
    at ``max_new_tokens``."""
    rollout = "actor_rollout_ref.rollout"
    out_list = [
        f"actor_rollout_ref.model.path={model}",
        "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
        "actor_rollout_ref.model.use_remove_padding=False",
        "actor_rollout_ref.model.enable_gradient_checkpointing=False",
        "actor_rollout_ref.actor.strategy=fsdp2",
        "actor_rollout_ref.ref.strategy=fsdp2",
        "actor_rollout_ref.ref.fsdp_config.param_offload=False",
        "actor_rollout_ref.actor.fsdp_config.param_offload=False",
        "actor_rollout_ref.actor.fsdp_config.optimizer_offload=False",
        "actor_rollout_ref.actor.use_dynamic_bsz=False",
        # scripted groups tie (every rollout earns the gold reward, GRPO's advantage is 0): the entropy term keeps
        # a real gradient in every update
        "actor_rollout_ref.actor.entropy_coeff=0.01",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={batch}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={batch * n}",
        f"{rollout}.log_prob_micro_batch_size_per_gpu={batch * n}",
        f"actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu={batch * n}",
        f"{rollout}.name=hf_cpu",
        f"{rollout}.tensor_model_parallel_size=1",
        f"{rollout}.n={n}",
        f"{rollout}.calculate_log_probs=True",
        f"{rollout}.agent.num_workers=1",
        *(f"{rollout}.val_kwargs.{kv}" for kv in ("n=2", "do_sample=True", "temperature=1.0")),
        f"data.train_batch_size={batch}",
        f"data.val_batch_size={batch * 4}",
        f"data.max_prompt_length={prompt_len}",
        f"data.max_response_length={response_len}",
        "data.dataloader_num_workers=0",
        "data.shuffle=False",
        *(f"trainer.{kv}" for kv in ("device=cpu", "n_gpus_per_node=1", "nnodes=1")),
        f"trainer.total_training_steps={steps}",
        "trainer.total_epochs=1000",
        f"trainer.test_freq={steps}",
        f"trainer.save_freq={steps}",
        "trainer.val_before_train=True",
        f"trainer.default_local_dir={out / 'checkpoints'}",
        "trainer.resume_mode=disable",
        "trainer.logger=[console,file,wandb]" if wandb else "trainer.logger=[console,file]",
        *mode_overrides(trainer_mode),
        "ray_kwargs.ray_init.num_cpus=32",
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=2",
        "reward.num_workers=1",
        # the critic, in runs that have one (algorithm.adv_estimator=gae): the actor's CPU settings
        *("critic.strategy=fsdp2", f"critic.model.path={model}", "critic.model.use_remove_padding=False"),
        *("+critic.model.override_config.attn_implementation=sdpa", "critic.model.enable_gradient_checkpointing=False"),
        f"critic.ppo_micro_batch_size_per_gpu={batch * n}",
        # transformers gives the tiny model a new, random value head when the critic loads it; verl's engine seeds
        # it (critic.fsdp.seed) only in full-determinism mode: without, every run's critic and C-1 differ
        "critic.fsdp.full_determinism=True",
    ]
    if policy != "script":  # sampled turns of a random model: short (scripted turns are never cut by the cap)
        out_list.append(f"+{rollout}.engine_kwargs.hf_cpu.max_new_tokens={max_new_tokens}")
    if policy == "sample":  # no script bounds the conversation
        out_list.append(f"{rollout}.multi_turn.max_assistant_turns=4")
        out_list.append(f"{rollout}.multi_turn.max_user_turns=4")
    if loops_yaml is not None:
        out_list.append(f"{rollout}.agent.agent_loop_config_path={loops_yaml}")
    return out_list


def recipe_env(
    family: str, domain: str, mode: str, data_dir: str, data: SmokeData, model: str, out: Path, user: str, batch: int
) -> dict[str, str]:
    """Environment for the recipe script: its data, model, one logical GPU, the CPU platform, the logger files."""
    env = dict(os.environ)
    env.update(
        {
            "SMOKE": "0",
            "VERL_PLATFORM": "cpu",
            "VERL_FILE_LOGGER_PATH": str(out / "metrics.jsonl"),
            "WANDB_MODE": "offline",
            "WANDB_DIR": str(out),
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "PYTHONUNBUFFERED": "1",
            "MODEL_PATH": model,
            "TRAIN_FILES": str(data.train),
            "VAL_FILES": str(data.val),
            "N_GPUS": "1",
            "TRAIN_BATCH_SIZE": str(batch),
            "DOMAIN": domain,
            "MODE": mode,
            "USER_BACKEND": user,
        }
    )
    env.setdefault("EXPERIMENT_NAME", f"smoke-{family}-{domain}-{mode}")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    if data.tool_config is not None:
        env["TOOL_CONFIG"] = str(data.tool_config)
    if family == "tau2":
        env["TAU2_DATA_DIR"] = data_dir
    elif family == "tau_bench":
        env["TAU_BENCH_DATA_DIR"] = data_dir
    return env


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    reward_error: str | None = None
    try:
        overrides = split_arguments(args)
        spec, domain, mode = _resolve(args)
        policy, source = _policy(args)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = os.environ.get("EXPERIMENT_NAME") or f"{args.family}-{domain}-{mode}"
        out = Path(args.out or f"smoke/{name}-{stamp}").resolve()
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a usage error, as argparse's: one line, exit code 2
            why = f"--out {out}: cannot create this folder ({exc.strerror})"
            print(f"verl-rewards smoke: error: {why}", file=sys.stderr)
            return 2
        for stale in ("metrics.jsonl", "checkpoints", "sft_metrics.jsonl", "sft"):
            if (out / stale).exists():
                raise SmokeError("set-up", f"{out / stale} exists: use a fresh --out folder")
        recipe = Path(args.recipe) if args.recipe else REPO / (WARM_START_RECIPE if args.sft else spec.recipe)
        if not recipe.is_file():
            raise SmokeError("set-up", f"recipe not found: {recipe} (smoke runs the recipes of a source checkout)")
        data_dir = _data_dir(args, spec)
        t0 = time.monotonic()
        prepared, tools = _prepare(args.family, domain, mode, data_dir, out / "data" / "prepared", args.retrieval)
        data = _build_data(prepared, tools, out / "data", args.batch_size * args.steps, args.val_rows, policy, source)
        loops = _wrap_loops(data, policy, args.script_ratio, source, out / "data")
        sft = None
        if args.sft:
            sft = _sft_data(args.family, domain, mode, data_dir, prepared.stem, out / "data" / "sft", args.sft_steps)
            data.texts += sft.texts
        from .model import build_tiny_qwen2

        model = build_tiny_qwen2(out / "model", data.texts)
        prompt_tokens = _prompt_tokens(model, data)
        prompt_len = 256 * math.ceil((prompt_tokens + 64) / 256)
        response_len = 256 if args.family == "toolrl" else (8192 if policy == "script" else 1024)
        setup_s = time.monotonic() - t0
        env = recipe_env(args.family, domain, mode, data_dir, data, model, out, args.user, args.batch_size)
        if sft is not None:  # recipes/warm_start: SFT from the tiny model, then GRPO from the SFT checkpoint
            env.update(sft_env(sft, out))
            for unset in ("SFT_MODEL_PATH", "SFT_VAL_FILES"):  # the caller's would replace the smoke's checkpoint/data
                env.pop(unset, None)
        cmd = ["bash", str(recipe)] + cpu_overrides(
            model=str(sft_checkpoint(out, sft.steps)) if sft is not None else model,
            out=out,
            steps=args.steps,
            batch=args.batch_size,
            n=args.n,
            prompt_len=prompt_len,
            response_len=response_len,
            policy=policy if args.script_ratio >= 1.0 or policy == "sample" else "mixed",
            loops_yaml=loops,
            wandb=args.wandb,
            trainer_mode=args.trainer_mode,
        )
        cmd += overrides
        (out / "command.sh").write_text(
            "".join(f"export {k}={shlex.quote(v)}\n" for k, v in sorted(env.items()) if k in _SHOWN_ENV)
            + shlex.join(cmd)
            + "\n",
            encoding="utf-8",
        )
        print(
            f"smoke: {args.family} {domain} {mode}, policy {policy}, {args.steps} steps, trainer mode "
            f"{args.trainer_mode} -> {out}"
        )
        print(f"smoke: data {data.train} ({args.batch_size * args.steps} rows), {data.val}; dropped {data.dropped}")
        print(f"smoke: model {model} (prompt <= {prompt_tokens} tokens)")
        if sft is not None:
            print(
                f"smoke: SFT first, {sft.steps} steps on {sft.files} ({sft.rows} gold conversations, {sft.dropped} "
                f"dropped), then GRPO from {sft_checkpoint(out, sft.steps)}"
            )
        t1 = time.monotonic()
        code = _stream(cmd, env, out / "run.log", args.timeout_s, REPO)
        run_s = time.monotonic() - t1
        records = read_metrics(out / "metrics.jsonl")
        steps_logged = sum(1 for r in records if any(k.startswith("actor/") for k in r.get("data") or {}))
        sft_losses: list[float] = []
        if sft is not None and (code == 0 or sft_checkpoint(out, sft.steps).is_dir()):
            sft_losses = check_sft(out, sft.steps)
        log = (out / "run.log").read_text(encoding="utf-8", errors="replace")
        reward_error = first_reward_error(log)
        if code != 0:
            if sft is not None and not sft_checkpoint(out, sft.steps).is_dir():
                raise SmokeError("sft", f"the SFT stage {_ended(code, args.timeout_s)}; see {out / 'run.log'}")
            stage = failed_stage(log, steps_logged)
            raise SmokeError(stage, f"main_ppo {_ended(code, args.timeout_s)}; see {out / 'run.log'}")
        check_run(out, args.steps, records)
        check_signal(records, out / "run.log")
        if args.resume:
            t2 = time.monotonic()
            run_resume(cmd, env, out, args.steps, args.timeout_s, REPO)
            print(f"smoke: resumed {resumed_from(out, args.steps)} in {time.monotonic() - t2:.0f} s")
    except SmokeError as exc:
        print(f"smoke: FAILED at stage {exc.stage}: {exc}", file=sys.stderr)
        if reward_error and "first error:" not in str(exc):
            print(f"smoke: first reward error: {reward_error}", file=sys.stderr)
        return 1
    _summary(out, args.steps, records, setup_s, run_s, time.monotonic() - started, args.wandb, bool(sft_losses))
    if reward_error:
        print(f"  first reward error  {reward_error}")
    if sft_losses:
        print(f"  SFT         {sft_checkpoint(out, len(sft_losses))} ({out / 'sft_metrics.jsonl'})")
        print(f"  {'SFT train/loss by step':<40} {', '.join(f'{x:.4g}' for x in sft_losses)}")
    return 0


_SHOWN_ENV = (
    "VERL_PLATFORM",
    "VERL_FILE_LOGGER_PATH",
    "WANDB_MODE",
    "WANDB_DIR",
    "MODEL_PATH",
    "TRAIN_FILES",
    "VAL_FILES",
    "N_GPUS",
    "TRAIN_BATCH_SIZE",
    "DOMAIN",
    "MODE",
    "USER_BACKEND",
    "TOOL_CONFIG",
    "TAU2_DATA_DIR",
    "TAU_BENCH_DATA_DIR",
    "EXPERIMENT_NAME",
    "SMOKE",
    "FAMILY",
    "STAGE",
    "SFT_FILES",
    "SFT_DIR",
    "SFT_FILE_LOGGER_PATH",
    "SFT_BATCH_SIZE",
    "SFT_EPOCHS",
    "SFT_LR",
    "SFT_MAX_LENGTH",
    "SFT_OVERRIDES",
)


def _summary(
    out: Path,
    steps: int,
    records: Sequence[Mapping[str, Any]],
    setup_s: float,
    run_s: float,
    total_s: float,
    wb: bool,
    sft: bool = False,
) -> None:
    timings = stage_timings(records)
    in_steps = timings.get("steps total", 0.0) + timings.get("validation", 0.0)
    print("smoke: PASSED")
    print(f"  metrics     {out / 'metrics.jsonl'} ({len(records)} records)")
    print(f"  checkpoint  {out / 'checkpoints' / f'global_step_{steps}'}")
    print(f"  log         {out / 'run.log'}")
    print(f"  command     {out / 'command.sh'}")
    if wb:
        print(f"  wandb       {out / 'wandb'} (offline)")
    ran = "SFT + main_ppo" if sft else "main_ppo"
    print(f"  time        {total_s:.0f} s: set-up {setup_s:.0f} s, {ran} {run_s:.0f} s")
    for name, seconds in timings.items():
        print(f"    {name:<34} {seconds:7.1f} s")
    rest = "SFT, Ray, actors, models starting" if sft else "Ray, actors and models starting"
    print(f"    {rest:<34} {max(0.0, run_s - in_steps):7.1f} s (the rest of {ran})")
    train = [r["data"] for r in records if "actor/grad_norm" in (r.get("data") or {})]
    last: Mapping[str, Any] = train[-1] if train else {}
    first: Mapping[str, Any] = train[0] if train else {}
    for key in ("reward_extra/base_score/max", "reward_extra/base_score/min"):
        if key in first:
            # max: the gold reward of the scripted rollouts (1.0 for tau2 / tau-bench rows whose gold episode
            # scores 1.0 under the scripted user; not every row's does: docs/guides/smoke-and-check.md); min: a
            # sampled one's
            print(f"  {'step 1 ' + key:<40} {first[key]:.6g}")
    for key in ("critic/advantages/max", "critic/advantages/min", "actor/pg_loss", "actor/grad_norm",
                "training/rollout_probs_diff_max", "training/off_policy/trajectory_staleness_worst/max"):  # fmt: skip
        if key in last:
            print(f"  {key:<40} {last[key]:.6g}")
