"""Offline scoring of saved rollouts (``verl-rewards score``) with any registered reward.

Input is UTF-8 JSONL in one of two formats (auto-detected per line):

* **verl** — what ``trainer.rollout_data_dir`` writes: ``{"input", "output", "gts", "score", "step", ...}``;
  ``output`` is the response, ``input`` the prompt, ``gts`` the ground truth. verl 0.9.1 decodes both with
  ``skip_special_tokens=True`` (``RayPPOTrainer._log_rollout_data``), so they hold no chat markers such as an
  assistant header: when every row is in this layout, scorers that ask for prompt + response (ToolRL, which
  takes the text after the last assistant header) get the response alone, which is exactly the assistant turn;
* **plain** — ``{"response" (or "final_response"), "ground_truth", "data_source", "prompt", "extra_info",
  "step", "prev_step_dict", "cur_step_dict", ...}``; any other key is a task field rewards can ask for.

The file is read as every command reads JSON lines (:mod:`verl_rewards.json_files`): a line longer than
:data:`MAX_LINE_BYTES` is an error found while reading it, so are a line that is not UTF-8 or not a JSON object;
errors name the file and the line (``rollouts.jsonl:3: ...``).

The rows go through the same scoring core as training (inputs by name, timeout, fallback, contribution),
so a reward behaves offline exactly as it will in ``main_ppo``. The outputs (scored JSONL, histogram) are
written atomically (:mod:`verl_rewards.files`), so ``--out`` may be the input file itself.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .files import atomic_path, image_format
from .json_files import json_lines
from .manager.build import build_scoring
from .manager.config import ManagerConfig
from .scoring.extras import present_columns
from .scoring.sample import Sample

MAX_LINE_BYTES = 16 * 1024 * 1024


class OfflineInputError(ValueError):
    """A line of the input file is not a rollout."""


def is_verl_dump(row: Mapping[str, Any]) -> bool:
    """True for a row in the layout of verl's rollout dump (``input`` and ``output`` texts)."""
    return "output" in row and "input" in row


def row_to_sample(row: Mapping[str, Any], line_no: int) -> Sample:
    """A :class:`Sample` from one JSONL object (verl dump or plain format)."""
    if not isinstance(row, Mapping):
        raise OfflineInputError(f"expected a JSON object, got {type(row).__name__}")
    data = dict(row)
    if is_verl_dump(data):
        response, prompt = data.get("output"), data.get("input")
        data.setdefault("ground_truth", data.get("gts"))
    else:
        response = data.get("response", data.get("final_response"))
        prompt = data.get("prompt", "")
    if not isinstance(response, str):
        raise OfflineInputError("no response text (keys 'output', 'response' or 'final_response')")
    if not isinstance(prompt, str):
        data.setdefault("raw_prompt", prompt)
        prompt = ""
    data.setdefault("index", line_no)
    return Sample.from_text(data, response=response, prompt=prompt)


def read_rollouts(path: str) -> list[Sample]:
    """Every rollout of a JSONL file; a malformed line is an error naming the file and its line number."""
    samples = []
    for line_no, row in json_lines(path, OfflineInputError, max_bytes=MAX_LINE_BYTES):
        try:
            samples.append(row_to_sample(row, line_no))
        except OfflineInputError as exc:
            raise OfflineInputError(f"{path}:{line_no}: {exc}") from None
    if not samples:
        raise OfflineInputError(f"{path}: no rollouts")
    return samples


@dataclass
class OfflineResult:
    """Scores of an offline run: per-sample rewards and extras, plus a per-component summary."""

    rewards: list[float]
    extras: list[dict[str, Any]]
    keys: list[str] = field(default_factory=list)

    def summary(self) -> list[tuple[str, int, float, float, float]]:
        """Rows ``(component, n, mean, min, max)`` over numeric values, the total reward first."""
        rows = [("reward", *_stats(self.rewards))]
        columns = present_columns({key: [e.get(key) for e in self.extras] for key in self.keys})
        for key, values in columns.items():  # values of the samples that reported the key
            nums = [float(v) for v in values if isinstance(v, int | float) and math.isfinite(float(v))]
            if nums:
                rows.append((key, *_stats(nums)))
        return rows

    def table(self) -> str:
        lines = [f"{'component':<24} {'n':>6} {'mean':>10} {'min':>10} {'max':>10}"]
        for name, n, mean, lo, hi in self.summary():
            lines.append(f"{name:<24} {n:>6} {mean:>10.4f} {lo:>10.4f} {hi:>10.4f}")
        n = len(self.rewards)
        errors = sum(int(e.get("reward_error", 0) or 0) for e in self.extras)
        timeouts = sum(int(e.get("reward_timeout", 0) or 0) for e in self.extras)
        lines.append(f"error rate {errors / n:.2%} ({errors}/{n}), timeout rate {timeouts / n:.2%} ({timeouts}/{n})")
        return "\n".join(lines)


def _stats(values: list[float]) -> tuple[int, float, float, float]:
    return len(values), sum(values) / len(values), min(values), max(values)


def score_samples(samples: Iterable[Sample], reward_kwargs: Mapping[str, Any], tokenizer: Any = None) -> OfflineResult:
    """Score samples with the manager's core configured by ``reward_kwargs`` (``reward_fn`` selects the reward);
    ``tokenizer`` decodes samples that carry token ids instead of text, as the manager does in training."""
    samples = list(samples)
    reward_kwargs = dict(reward_kwargs)
    if samples and all(is_verl_dump(s.row) for s in samples):
        # texts decoded without special tokens: the prompt carries no assistant header to cut at
        decode = dict(reward_kwargs.get("decode") or {})
        decode.setdefault("include_prompt", False)
        reward_kwargs["decode"] = decode
    config = ManagerConfig.from_reward_kwargs(reward_kwargs)
    # the rows are all known: each is routed once, and the run's keys are those of the rewards they route to
    scoring = build_scoring(config, tokenizer, samples=samples)
    core, routes = scoring.core, scoring.routes or []

    async def run_all() -> list:
        return await asyncio.gather(*(core.score(s, scorer) for s, scorer in zip(samples, routes, strict=True)))

    results = asyncio.run(run_all())
    keys = core.extra_keys
    return OfflineResult(
        rewards=[r.reward for r in results],
        extras=[{k: r.extra.get(k, 0.0) for k in keys} for r in results],
        keys=keys,
    )


def write_histogram(rewards: list[float], path: str, title: str = "rewards") -> None:
    """A histogram image of the rewards (matplotlib, headless; format from the extension), written atomically."""
    fmt = image_format(path, "--hist")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    try:
        ax.hist(rewards, bins=min(50, max(5, len(set(rewards)))), color="#3b6ea8", edgecolor="white")
        ax.set_xlabel("reward")
        ax.set_ylabel("samples")
        ax.set_title(f"{title} (n={len(rewards)}, mean={sum(rewards) / len(rewards):.3f})")
        fig.tight_layout()
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt)
    finally:
        plt.close(fig)


def write_scored(samples: list[Sample], result: OfflineResult, path: str) -> None:
    """The input rows with ``reward`` and every extra key added, as JSONL, written atomically (``path`` may be
    the input file: it is replaced only once every row is written)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for sample, reward, extra in zip(samples, result.rewards, result.extras, strict=True):
            row = {**sample.row, "reward": reward, **extra}
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
