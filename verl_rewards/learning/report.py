"""What ``verl-rewards learn`` reports: the table of before SFT / after SFT / after GRPO, the run's metrics per
step (verl's file logger and validation dumps), ``learn.json`` and a PNG of reward and validation per step."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..evaluation.passk import TOLERANCE
from .evaluate import Evaluation

STAGES = ("before SFT", "after SFT", "after GRPO")


def table(evaluations: Sequence[Evaluation]) -> list[str]:
    """One line per stage: mean reward and pass^k of the validation rows for k = 1, 2, 4, 8, ... up to the trials
    (``learn.json`` holds every k)."""
    trials = max((len(e.pass_hat()) for e in evaluations), default=0)
    ks = [2**i for i in range(trials.bit_length()) if 2**i <= trials]
    head = f"  {'':<12} {'reward':>8}" + "".join(f" {f'pass^{k}':>8}" for k in ks)
    lines = [head]
    for stage, ev in zip(STAGES, evaluations, strict=False):
        passes = ev.pass_hat()
        cells = "".join(f" {passes[k]:8.3f}" if k in passes else f" {'-':>8}" for k in ks)
        lines.append(f"  {stage:<12} {ev.mean_reward:8.3f}" + cells)
    return lines


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def series(records: Sequence[Mapping[str, Any]], key: str) -> list[tuple[int, float]]:
    """``(step, value)`` of ``key`` over verl's file-logger records that hold it."""
    out = []
    for record in records:
        value = _finite((record.get("data") or {}).get(key))
        if value is not None:
            out.append((int(record.get("step", 0)), value))
    return out


def dump_pass1(dump_dir: Path, target: Any) -> list[tuple[int, float]]:
    """``(step, pass^1)`` of every validation dump (``<step>.jsonl`` of ``trainer.validation_data_dir``): the share
    of samples whose ``score`` reaches ``target(ground_truth)``."""
    out = []
    for path in sorted(dump_dir.glob("*.jsonl"), key=lambda p: int(p.stem) if p.stem.isdigit() else -1):
        if not path.stem.isdigit():
            continue
        hits = total = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            score = _finite(row.get("score"))
            total += 1
            hits += score is not None and score >= target(row.get("gts")) - TOLERANCE
        if total:
            out.append((int(path.stem), hits / total))
    return out


def plot(
    path: Path,
    records: Sequence[Mapping[str, Any]],
    sft_losses: Sequence[float],
    evaluations: Sequence[Evaluation],
    val_key: str,
    val_pass1: Sequence[tuple[int, float]],
    title: str,
) -> None:
    """Three panels: SFT loss per step; GRPO training reward per step (mean, min-max band); validation reward and
    pass^1 per GRPO step (verl's validation), with the evaluations after SFT (at step 0) and after GRPO (at the last
    step) as squares and the one before SFT as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    ax = axes[0]
    ax.plot(range(1, len(sft_losses) + 1), sft_losses, color="tab:gray")
    ax.set(title="SFT (verl's SFT trainer)", xlabel="SFT step", ylabel="train/loss")
    ax = axes[1]
    mean = series(records, "critic/score/mean")
    low, high = dict(series(records, "critic/score/min")), dict(series(records, "critic/score/max"))
    steps = [s for s, _ in mean]
    ax.plot(steps, [v for _, v in mean], color="tab:blue", label="mean")
    if all(s in low and s in high for s in steps):
        ax.fill_between(steps, [low[s] for s in steps], [high[s] for s in steps], alpha=0.15, color="tab:blue",
                        label="min-max")  # fmt: skip
    ax.set(title="GRPO: reward of the sampled rollouts", xlabel="GRPO step", ylabel="reward")
    ax.legend(loc="lower right", fontsize=8)
    ax = axes[2]
    val = series(records, val_key)
    ax.plot([s for s, _ in val], [v for _, v in val], marker="o", color="tab:green", label="verl's validation")
    if evaluations:
        ax.axhline(evaluations[0].mean_reward, color="tab:green", linestyle="--", linewidth=1, label="before SFT")
    if len(evaluations) == 3:
        last = max([s for s, _ in mean] + [s for s, _ in val], default=0)
        ax.plot([0, last], [evaluations[1].mean_reward, evaluations[2].mean_reward], "s", color="tab:red",
                label="after SFT / GRPO (all draws)")  # fmt: skip
    ax.set(title="validation (same rows every time)", xlabel="GRPO step", ylabel="reward")
    right = ax.twinx()
    right.plot([s for s, _ in val_pass1], [v for _, v in val_pass1], marker="s", color="tab:orange")
    right.set_ylabel("pass^1", color="tab:orange")
    right.set_ylim(-0.02, 1.02)
    ax.legend(loc="lower right", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def write_json(path: Path, payload: Mapping[str, Any]) -> None:
    """``learn.json``: the settings, the three evaluations and the timings of one run."""
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Margin:
    """GRPO's gain over the SFT model across runs with different random seeds, against the spread the random
    seed alone causes.

    ``gains[i]`` is run ``i``'s after-GRPO minus after-SFT validation reward. The gain counts as shown when the
    smallest gain is larger than the largest max-min spread over the runs of any of: the after-SFT reward (how far
    the random seed moves the starting point, or only the validation draws when the runs share one SFT model), the
    after-GRPO reward and the gain itself (how far it moves the outcome)."""

    labels: tuple[str, ...]
    after_sft: tuple[float, ...]
    after_grpo: tuple[float, ...]

    @property
    def gains(self) -> tuple[float, ...]:
        return tuple(g - s for s, g in zip(self.after_sft, self.after_grpo, strict=True))

    @property
    def spreads(self) -> dict[str, float]:
        """max - min over the runs of each measure."""
        return {
            name: max(values) - min(values)
            for name, values in (("after SFT", self.after_sft), ("after GRPO", self.after_grpo), ("gain", self.gains))
        }

    @property
    def shown(self) -> bool:
        return len(self.labels) >= 3 and min(self.gains) > max(self.spreads.values())

    @classmethod
    def pooled(cls, margins: Sequence[Margin]) -> Margin:
        """The runs' evaluations pooled over several sets of validation draws of equal size (each run's mean over
        the sets): as many times the samples per row, so less of the spread is the draws'."""
        if not margins or len({m.labels for m in margins}) != 1:
            raise ValueError("pooling needs one or more margins of the same runs")

        def mean(columns: list[tuple[float, ...]]) -> tuple[float, ...]:
            return tuple(math.fsum(values) / len(values) for values in zip(*columns, strict=True))

        return cls(margins[0].labels, mean([m.after_sft for m in margins]), mean([m.after_grpo for m in margins]))

    def lines(self) -> list[str]:
        """The table and the verdict, as printed."""
        width = max([24, *(len(label) for label in self.labels)])
        out = [f"  {'run':<{width}} {'after SFT':>10} {'after GRPO':>11} {'gain':>8}"]
        for label, sft, grpo, gain in zip(self.labels, self.after_sft, self.after_grpo, self.gains, strict=True):
            out.append(f"  {label:<{width}} {sft:10.3f} {grpo:11.3f} {gain:+8.3f}")
        spreads = ", ".join(f"{k} {v:.3f}" for k, v in self.spreads.items())
        verdict = "shown" if self.shown else "not shown"
        out.append(f"  smallest gain {min(self.gains):+.3f}; max-min spread over the runs: {spreads}")
        out.append(f"  GRPO's gain larger than every spread over {len(self.labels)} runs (3 or more): {verdict}")
        return out


def margin(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> Margin:
    """The :class:`Margin` of runs given as ``(label, learn.json payload)`` pairs."""
    labels = tuple(label for label, _ in runs)
    sft = tuple(float(payload["evaluations"]["after_sft"]["reward"]) for _, payload in runs)
    grpo = tuple(float(payload["evaluations"]["after_grpo"]["reward"]) for _, payload in runs)
    return Margin(labels, sft, grpo)
