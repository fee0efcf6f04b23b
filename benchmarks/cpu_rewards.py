"""CPU-bound and hanging rewards for bench_reward_layer.py, in both forms: a verl-style ``compute_score``
(for verl's naive manager) and ``@reward`` functions (for the contribution manager's reward layer)."""

from __future__ import annotations

import json
import re
import time

from verl_rewards import reward

CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
WORD = re.compile(r"[A-Za-z]+")
ROUNDS = 300


def parse_score(text: str, ground_truth: str) -> float:
    """Regex- and JSON-heavy scoring (~10 ms of pure-Python CPU per call): parse every tool call many times."""
    hits = 0
    for _ in range(ROUNDS):
        for blob in CALL.findall(text):
            try:
                call = json.loads(blob)
            except ValueError:
                continue
            hits += int(call.get("name") == ground_truth)
        hits += len(WORD.findall(text)) % 2
    return hits / (ROUNDS * 10)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl style, for the naive manager."""
    if "HANG" in solution_str:
        time.sleep(float(extra_info.get("hang_s", 15)) if isinstance(extra_info, dict) else 15)
    return parse_score(solution_str, str(ground_truth))


@reward(name="bench_cpu", executor="process")
def bench_cpu(final_response: str, ground_truth: str) -> float:
    return parse_score(final_response, str(ground_truth))


@reward(name="bench_cpu_thread", executor="thread")
def bench_cpu_thread(final_response: str, ground_truth: str) -> float:
    return parse_score(final_response, str(ground_truth))


@reward(name="bench_hang")
def bench_hang(final_response: str, ground_truth: str, hang_s: float = 15.0) -> float:
    if "HANG" in final_response:
        time.sleep(hang_s)
    return parse_score(final_response, str(ground_truth))


@reward(name="bench_trivial", executor="process")
def bench_trivial(final_response: str) -> float:
    """No work at all: what a call costs is the executor's own overhead."""
    return float(len(final_response))
