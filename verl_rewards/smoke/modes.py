"""What a smoke run's V1 trainer mode adds (``--trainer-mode``), and its resume stage (``--resume``).

* ``sync``: ``cpu_sync``, one logical GPU (trainer and rollout share it, as verl's hybrid engine does).
* ``colocate_async``: ``cpu_colocate_async``, the same one logical GPU; verl adds a warm-up batch of prompts, so a
  step may train on trajectories generated under the previous weights (``training/off_policy/*``).
* ``separate_async``: ``cpu_separate_async``, two logical GPUs: the trainer's pool and a standalone rollout pool
  (``rollout.nnodes=1``, ``rollout.n_gpus_per_node=1``) whose ``hf_cpu`` server receives the weights through the
  ``cpu_gloo`` checkpoint engine (verl refuses ``naive`` there). ``parameter_sync_step=1`` keeps verl's rule
  ``train_batch_size == parameter_sync_step * ppo_mini_batch_size`` with the smoke's one mini-batch per step.

``--resume`` runs ``main_ppo`` a second time from the checkpoint the first run wrote, for one more step (verl's
``trainer.resume_mode=resume_path``): the actor, the dataloader and, in the async modes, the TransferQueue state
(finished trajectories kept, in-flight prompts re-issued) come back from ``checkpoints/global_step_<N>``. It writes
``metrics_resume.jsonl``, ``run_resume.log`` and ``checkpoints/global_step_<N+1>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..cpu.names import CHECKPOINT_BACKEND, TRAINER_MODES
from .data import read_metrics
from .errors import SmokeError
from .process import ended, stream

MODES = tuple(TRAINER_MODES)
RESUME_METRICS = "metrics_resume.jsonl"
RESUME_LOG = "run_resume.log"


def logical_gpus(mode: str) -> int:
    """The logical GPUs Ray must offer: the trainer's one, and the standalone rollout's in ``separate_async``."""
    return 2 if mode == "separate_async" else 1


def mode_overrides(mode: str) -> list[str]:
    """The Hydra overrides of ``mode`` (after the CPU overrides, before the user's)."""
    if mode not in TRAINER_MODES:
        raise SmokeError("set-up", f"--trainer-mode must be one of {', '.join(MODES)}, got {mode!r}")
    out = [f"trainer.v1.trainer_mode={TRAINER_MODES[mode]}", f"+ray_kwargs.ray_init.num_gpus={logical_gpus(mode)}"]
    if mode == "separate_async":
        rollout = "actor_rollout_ref.rollout"
        out += [
            f"{rollout}.nnodes=1",
            f"{rollout}.n_gpus_per_node=1",
            f"{rollout}.checkpoint_engine.backend={CHECKPOINT_BACKEND}",
            f"+{rollout}.checkpoint_engine.engine_kwargs.{CHECKPOINT_BACKEND}.host=127.0.0.1",
            "trainer.v1.separate_async.parameter_sync_step=1",
        ]
    return out


def resume_overrides(out: Path, steps: int) -> list[str]:
    """From ``checkpoints/global_step_<steps>`` to one more step, validated after it (not again before)."""
    return [
        "trainer.resume_mode=resume_path",
        f"trainer.resume_from_path={out / 'checkpoints' / f'global_step_{steps}'}",
        f"trainer.total_training_steps={steps + 1}",
        "trainer.val_before_train=False",
    ]


def run_resume(
    cmd: Sequence[str], env: Mapping[str, str], out: Path, steps: int, timeout: float, cwd: Path
) -> list[dict[str, Any]]:
    """The second ``main_ppo`` run, from the first one's checkpoint; its metrics records, or :class:`SmokeError`
    at stage ``resume``."""
    env = {**env, "VERL_FILE_LOGGER_PATH": str(out / RESUME_METRICS)}
    code = stream([*cmd, *resume_overrides(out, steps)], env, out / RESUME_LOG, timeout, cwd)
    if code != 0:
        raise SmokeError("resume", f"main_ppo from global_step_{steps} {ended(code, timeout)}; see {out / RESUME_LOG}")
    records = read_metrics(out / RESUME_METRICS)
    check_resume(out, steps, records)
    return records


def check_resume(out: Path, steps: int, records: Sequence[Mapping[str, Any]]) -> None:
    """The resumed run trained step ``steps + 1`` (not step 1 again), validated after it and saved it."""
    step = steps + 1
    trained = [r.get("step") for r in records if "actor/grad_norm" in (r.get("data") or {})]
    if trained != [step]:
        raise SmokeError("resume", f"the resumed run trained steps {trained}, expected [{step}]")
    if not any(r.get("step") == step and any(k.startswith("val-") for k in r.get("data") or {}) for r in records):
        raise SmokeError("resume", f"no validation after the resumed step {step} in {out / RESUME_METRICS}")
    if not (out / "checkpoints" / f"global_step_{step}").is_dir():
        raise SmokeError("resume", f"no checkpoint at {out / 'checkpoints' / f'global_step_{step}'}")


def resumed_from(out: Path, steps: int) -> str:
    ckpt = out / "checkpoints" / f"global_step_{steps}"
    kept = " (with its TransferQueue state)" if (ckpt / "transfer_queue").is_dir() else ""
    return f"{ckpt}{kept} -> {out / 'checkpoints' / f'global_step_{steps + 1}'}"
