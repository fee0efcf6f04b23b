"""Scoring functions used by the tests (also loaded by path through verl's custom_reward_function)."""

from __future__ import annotations

import asyncio
import time


def exact_match(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl style: 1.0 when the stripped response equals the ground truth."""
    return float(solution_str.strip() == str(ground_truth).strip())


def exact_match_dict(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl style returning a dict with components."""
    ok = float(solution_str.strip() == str(ground_truth).strip())
    return {"score": ok * 2.0, "acc": ok, "resp_chars": len(solution_str), "pred": solution_str[:20]}


exact_match_dict.extra_keys = ("resp_chars", "pred")


def em_sometimes(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """Undeclared components: a dict with ``em`` for answers containing a digit, a bare float otherwise."""
    if solution_str.startswith("slow"):
        time.sleep(1.5)  # finishes after every other sample of its batch
    ok = float(solution_str.strip() == str(ground_truth).strip())
    if any(ch.isdigit() for ch in solution_str):
        return {"score": ok, "em": ok}
    return ok


def key_per_sample(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """A reward that (wrongly) puts an id into a key name: a new key for every sample."""
    return {"score": 1.0, f"seen_{(extra_info or {}).get('index')}": 1.0}


def toolrl_style(solution_str, ground_truth, step, prev_step_dict, cur_step_dict):
    """ToolRL style: a 4-tuple (score, format, correctness, length); reports what it was given via the score."""
    fmt = 1.0 if solution_str.startswith("<think>") else 0.0
    corr = 1.0 if str(ground_truth) in solution_str else -1.0
    return fmt + corr + step / 1000.0, fmt, corr, 0.0


async def async_score(solution_str, ground_truth):
    await asyncio.sleep(0)
    return {"reward": float(str(ground_truth) in solution_str), "async_ok": 1}


async_score.extra_keys = ("async_ok",)  # a plain function declares the extras it returns


def raises(solution_str):
    raise RuntimeError("boom")


def hangs(solution_str):
    time.sleep(30)
    return 1.0


async def async_blocks(solution_str, ground_truth):
    """Blocks its event loop (time.sleep inside async def) for answers starting with "block"."""
    if solution_str.startswith("block"):
        time.sleep(5)
    return float(solution_str.strip() == str(ground_truth).strip())


def hangs_sometimes(solution_str, ground_truth):
    """Hangs (30 s) for answers starting with "hang", else exact match."""
    if solution_str.startswith("hang"):
        time.sleep(30)
    return float(solution_str.strip() == str(ground_truth).strip())


def exits(solution_str):
    import sys

    sys.exit(3)


def returns_nan(solution_str):
    return float("nan")


def needs_missing(solution_str, golden_answer):
    return 1.0


def huge_score(solution_str):
    """Finite in float64, inf in the float32 reward tensor for answers starting with "huge"."""
    return 1e39 if solution_str.startswith("huge") else 1.0
