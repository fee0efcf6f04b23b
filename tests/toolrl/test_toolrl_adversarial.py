"""Worst-case timing of 64 KiB adversarial completions: every scoring path stays linear.

Measured on the 2-core dev machine: the slowest case below takes ~70 ms (20,000 ``{}`` tool-call lines, each
parsed as ToolRL does); everything else is a few ms. The limits asserted here are generous on purpose
(shared CPUs), but far below what a super-linear regex would need (the format regex without the tag-count
pre-check takes seconds on 11 KB and minutes on 45 KB of repeated tags).
"""

from __future__ import annotations

import json
import time

import pytest

from verl_rewards.toolrl import MAX_PREDICTION_CHARS, ToolRLOptions, extract_prediction, score_with_options
from verl_rewards.toolrl.correctness import MAX_JSON_DEPTH, json_depth_exceeds
from verl_rewards.toolrl.format_reward import format_passes

SIZE = MAX_PREDICTION_CHARS - 200  # leave room for the wrapping tags, so nothing is cut by the cap

GTS = {
    "tool_call": '<think> t </think>\n<tool_call>\n{"name": "f", "parameters": {"a": 1, "b": "x"}}\n'
    '{"name": "g", "parameters": {}}\n</tool_call>',
    "response": "<think> t </think>\n<response> hi </response>",
    "both": '<think> t </think>\n<tool_call>\n{"name": "f", "parameters": {"a": 1}}\n</tool_call>\n'
    "<response> hi </response>",
    "neither": "<think> t </think>",
}
OPTIONS = [
    ToolRLOptions(),
    ToolRLOptions(with_length=True, schedule_length=True, schedule_reward=True, refined_reward=True),
    ToolRLOptions(intermediate_reward=True, with_length=True),
]


def fill(unit: str, size: int = SIZE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


ADVERSARIAL = {
    "repeated think/tool_call openers": "<think>" + fill("</think>\n<tool_call>\n"),
    "repeated both-case separators": "<think>" + fill("</think>\n<tool_call>\n\n</tool_call>\n<response>"),
    "repeated response openers": "<think>" + fill("</think>\n<response>"),
    "repeated </response>": "<think></think>\n<response>" + fill("</response>x"),
    "repeated </think>": "<think>" + fill("</think>x"),
    "one of each tag, huge bodies": "<think>"
    + "a " * 10000
    + "</think>\n<tool_call>\n"
    + "b\n" * 10000
    + "\n</tool_call>\n<response>"
    + "c" * 10000
    + "</response>",
    "64 KiB of [": "<think></think>\n<tool_call>\n" + fill("[") + "\n</tool_call>",
    "64 KiB of nested objects": "<think></think>\n<tool_call>\n" + fill('{"a":') + "\n</tool_call>",
    "64 KiB of escapes": "<think></think>\n<tool_call>\n" + fill('"\\"') + "\n</tool_call>",
    "20k empty objects": "<think></think>\n<tool_call>\n" + fill("{}\n").strip() + "\n</tool_call>",
    "1.7k matching calls": "<think></think>\n<tool_call>\n"
    + fill('{"name": "f", "parameters": {"a": 1, "b": "x"}}\n').rsplit("\n", 1)[0]
    + "\n</tool_call>",
    "one call with 4k keys": "<think></think>\n<tool_call>\n"
    + json.dumps({"name": "f", "parameters": {f"k{i}": i for i in range(4000)}})
    + "\n</tool_call>",
    "60k-digit integer": '<think></think>\n<tool_call>\n{"name": "f", "parameters": {"a": '
    + "9" * 60000
    + "}}\n</tool_call>",
    "many think blocks": fill("<think> w w </think>"),
    "many assistant headers": fill("<|im_start|>assistant"),
    "unicode soup": fill("\u2028é<think>\U0001f600\ud800"),
    "10 MB without markers": "x" * (10 * 1024 * 1024),
    "10 MB with a header at the end": "y" * (10 * 1024 * 1024) + "<|im_start|>assistant\n<think> a </think>",
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_is_fast(name):
    text = ADVERSARIAL[name]
    worst = 0.0
    for gt in GTS.values():
        for options in OPTIONS:
            started = time.perf_counter()
            got = score_with_options(text, gt, 100, options)
            worst = max(worst, time.perf_counter() - started)
            assert all(isinstance(v, float) for v in got.values())
    # a guard against catastrophic backtracking only (minutes to hours on these inputs), never a speed claim:
    # the bound is far above any load this suite meets
    assert worst < 30.0, f"{name}: {worst:.3f}s"


def test_all_adversarial_inputs_together_are_fast():
    started = time.perf_counter()
    for text in ADVERSARIAL.values():
        for gt in GTS.values():
            score_with_options(text, gt, 100, OPTIONS[1])
    assert time.perf_counter() - started < 120.0  # catastrophic-backtracking guard, not a speed claim


def test_format_check_is_linear_on_repeated_separators():
    # Without counting tags first, this input makes the both-case regex take minutes.
    text = "<think>" + fill("</think>\n<tool_call>\n\n</tool_call>\n<response>")
    started = time.perf_counter()
    assert not format_passes(text, GTS["both"])
    assert time.perf_counter() - started < 30.0  # catastrophic-backtracking guard, not a speed claim


def test_caps():
    assert extract_prediction("z" * (MAX_PREDICTION_CHARS * 3)) == "z" * MAX_PREDICTION_CHARS
    assert json_depth_exceeds("[" * (MAX_JSON_DEPTH + 1))
    assert not json_depth_exceeds("[" * MAX_JSON_DEPTH)
