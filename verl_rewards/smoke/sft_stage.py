"""``smoke --sft``: the SFT stage before GRPO. Its data are ``export-sft gold`` of the smoke's split (run as a user
would), its settings the warm-start recipe's variables, and its result a Hugging Face checkpoint and finite losses."""

from __future__ import annotations

import math
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .data import read_metrics
from .errors import SmokeError


@dataclass
class SftPlan:
    """The SFT stage of ``--sft``: the gold export it trains on and its size."""

    family: str
    files: Path
    rows: int
    dropped: int
    texts: list[str]
    steps: int
    batch: int


def sft_data(family: str, domain: str, mode: str, data_dir: str, split: str, out: Path, steps: int) -> SftPlan:
    """``verl-rewards export-sft gold`` of the smoke's split (the tasks the GRPO stage trains on), run as a user
    would, into ``out/<split>.parquet``."""
    import pandas as pd

    cmd = [sys.executable, "-m", "verl_rewards.cli", "export-sft", "gold", family, "--domain", domain, "--split", split,
           "--mode", mode, "--data-dir", data_dir, "--out", str(out), "--force"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SmokeError("set-up", f"--sft: export-sft gold failed ({shlex.join(cmd)}):\n{proc.stderr[-2000:]}")
    dropped = re.search(r"; dropped (\d+)", proc.stdout)
    frame = pd.read_parquet(out / f"{split}.parquet")
    texts = [*frame["messages_json"], *dict.fromkeys(frame["tools_json"])]
    return SftPlan(family, out / f"{split}.parquet", len(frame), int(dropped.group(1)) if dropped else 0, texts, steps,
                   min(2, len(frame)))  # fmt: skip


def sft_env(plan: SftPlan, out: Path, lr: float = 1e-3) -> dict[str, str]:
    """The warm-start recipe's variables for a CPU SFT stage (``VERL_PLATFORM=cpu`` makes the recipe launch
    :mod:`verl_rewards.cpu.sft`); the SFT metrics go to their own file logger (``OUT/sft_metrics.jsonl``)."""
    overrides = [
        "data.num_workers=0",
        "data.use_dynamic_bsz=False",
        "model.use_remove_padding=False",
        "model.enable_gradient_checkpointing=False",
        "+model.override_config.attn_implementation=sdpa",
        "engine.strategy=fsdp2",
        f"trainer.total_training_steps={plan.steps}",
        "trainer.resume_mode=disable",
        "trainer.logger=[console,file]",
    ]
    return {
        "FAMILY": plan.family,  # the warm-start recipe's RL stage runs this family's GRPO recipe
        "STAGE": "both",
        "SFT_FILES": str(plan.files),
        "SFT_DIR": str(out / "sft"),
        "SFT_FILE_LOGGER_PATH": str(out / "sft_metrics.jsonl"),
        "SFT_BATCH_SIZE": str(plan.batch),
        "SFT_EPOCHS": str(plan.steps),  # at least one batch per epoch: enough epochs for the steps
        "SFT_LR": f"{lr:g}",
        "SFT_MAX_LENGTH": "32768",  # the tiny model's positions; truncation=error names a longer conversation
        "SFT_OVERRIDES": " ".join(overrides),
    }


def sft_checkpoint(out: Path, steps: int) -> Path:
    """Where the SFT stage leaves the Hugging Face model the GRPO stage starts from."""
    return out / "sft" / f"global_step_{steps}" / "huggingface"


def sft_steps_run(out: Path) -> int | None:
    """The step of the SFT stage's last checkpoint (verl's ``latest_checkpointed_iteration.txt``), None without one:
    ``--sft-steps``, or fewer when a target loss ended the stage early."""
    tracker = out / "sft" / "latest_checkpointed_iteration.txt"
    try:
        return int(tracker.read_text().strip())
    except (OSError, ValueError):
        return None


def check_sft(out: Path, steps: int) -> list[float]:
    """After the SFT stage: its steps logged with a finite loss and its Hugging Face checkpoint, else stage sft."""
    losses = [
        r["data"]["train/loss"]
        for r in read_metrics(out / "sft_metrics.jsonl")
        if "train/loss" in (r.get("data") or {})
    ]
    if len(losses) < steps or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in losses):
        raise SmokeError("sft", f"SFT logged losses {losses} in {out / 'sft_metrics.jsonl'}; expected {steps} finite")
    hf = sft_checkpoint(out, steps)
    if not (hf / "config.json").is_file():
        raise SmokeError("sft", f"no SFT checkpoint at {hf}")
    return [float(x) for x in losses]
