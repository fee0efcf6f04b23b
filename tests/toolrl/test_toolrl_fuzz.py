"""Seeded fuzz: thousands of random and malformed completions never raise and stay inside score_bounds().

Plain ``random`` with a fixed seed, so every run checks the same cases; the whole file runs in a few seconds.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from verl_rewards.toolrl import (
    ENV_VARS,
    ToolRLOptions,
    correctness_range,
    format_range,
    score_bounds,
    score_with_options,
)

from repo_paths import REPO

SEED = 20250314
N_CASES = 3000
EPS = 1e-9
SAMPLE = REPO / "verl_rewards" / "toolrl" / "sample_data" / "toolrl_sample.jsonl"
STEPS = (0, 1, 29, 30, 31, 75, 105, 149, 150, 151, 300, 301, 450, 1000, 10**6, 10**9)

TAGS = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<response>",
    "</response>",
    "<|im_start|>assistant",
    "<|im_end|>",
    "<|start_header_id|>assistant<|end_header_id|>",
    "<|eot_id|>",
    "<|im_start|>user",
    "<|endoftext|>",
    "<obs>",
    "</obs>",
]
JUNK = [
    "\n",
    "\n\n",
    " ",
    "\t",
    "\r\n",
    "{",
    "}",
    "[",
    "]",
    '"',
    ":",
    ",",
    "\\",
    "name",
    "parameters",
    "null",
    "true",
    "1",
    "1.0",
    '"1"',
    "NaN",
    "-Infinity",
    "1e999",
    "é",
    "\u2028",
    "\U0001f600",
    "\ud800",
    "\x00",
    "ʻ",
    "中文",
    "\u200b",
    "</thi",
    "<tool_",
    "nk>",
]
NAMES = ["f", "get_weather", "get_stock_quote", "set_volume", "book_hotel", "", "F", "get weather"]


def _load_sample_gts() -> list[str]:
    rows = [json.loads(t) for t in SAMPLE.read_text(encoding="utf-8").splitlines() if t.strip()]
    return [r["output"] for r in rows]


BASE_GTS = [
    '<think> t </think>\n<tool_call>\n{"name": "set_volume", "parameters": {"level": 1}}\n</tool_call>',
    '<think> t </think>\n<tool_call>\n{"name": "get_weather", "parameters": {"city": "Oslo", "days": 1}}\n'
    '{"name": "get_stock_quote", "parameters": {"symbol": "NVDA"}}\n'
    '{"name": "get_weather", "parameters": {"city": "Rome", "days": 2, "metric": true}}\n</tool_call>',
    '<think> t </think>\n<tool_call>\n{"name": "f", "parameters": {}}\n</tool_call>',
    "<think> t </think>\n<response> Which city? </response>",
    '<think> t </think>\n<tool_call>\n{"name": "f", "parameters": {"a": [1, {"b": null}]}}\n</tool_call>\n'
    "<response> ok </response>",
    "<think> nothing </think>",
]
GTS = BASE_GTS + _load_sample_gts()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in [*ENV_VARS.values(), "EXPERIMENT_NAME"]:
        monkeypatch.delenv(var, raising=False)


# ------------------------------------------------------------------------------------ generators


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.randint(-3, 3)
    if kind == 1:
        return rng.choice([True, False, None])
    if kind == 2:
        return rng.choice(["1", "Oslo", "NVDA", "", "é", "x" * rng.randint(0, 50)])
    if kind == 3:
        return rng.choice([0.0, 1.0, 2.5, -0.0, 1e308])
    if kind == 4:
        return rng.choice([1, 2, "Rome"])
    if kind == 5:
        return "Oslo"
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice("abc"): random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def random_call(rng: random.Random) -> str:
    obj: object
    roll = rng.random()
    if roll < 0.75:
        params = {
            rng.choice(["level", "city", "days", "symbol", "metric", "a"]): random_value(rng)
            for _ in range(rng.randint(0, 4))
        }
        key = "parameters" if rng.random() < 0.9 else rng.choice(["arguments", "params"])
        obj = {"name": rng.choice(NAMES), key: params}
        if rng.random() < 0.05:
            obj = {"parameters": params}
    elif roll < 0.85:
        obj = [rng.choice(NAMES)]
    else:
        obj = random_value(rng)
    return json.dumps(obj, indent=rng.choice([None, None, None, None, 2]), ensure_ascii=rng.random() < 0.5)


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(9)
        pos = rng.randint(0, len(text))
        if op == 0 and text:  # delete a span
            end = min(len(text), pos + rng.randint(1, 12))
            text = text[:pos] + text[end:]
        elif op == 1:  # insert a tag or junk
            text = text[:pos] + rng.choice(TAGS + JUNK) + text[pos:]
        elif op == 2:  # duplicate a line
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif op == 3:  # shuffle lines
            lines = text.split("\n")
            rng.shuffle(lines)
            text = "\n".join(lines)
        elif op == 4:
            text = text.replace("\n", rng.choice([" ", "\r\n", "\n\n"]), 1)
        elif op == 5:
            text = text.replace('"1"', "1").replace(": 1", ': "1"', 1)
        elif op == 6:
            text = text.replace("true", "1", 1)
        elif op == 7:  # swap a tool-call line for a random one
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            lines[i] = random_call(rng)
            text = "\n".join(lines)
        else:
            text = text.upper() if rng.random() < 0.1 else text
    return text


def structured_near_miss(rng: random.Random, gt: str, think: str) -> str:
    """Re-serialise the ground truth's calls after changing names, parameters, values, order or count."""
    if "<tool_call>" not in gt:
        return f"<think> {think} </think>\n<tool_call>\n{random_call(rng)}\n</tool_call>"
    calls = [json.loads(t) for t in gt.split("<tool_call>")[1].split("</tool_call>")[0].strip().split("\n")]
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(7)
        call = rng.choice(calls) if calls else None
        if op == 0 and call and call["parameters"]:
            del call["parameters"][rng.choice(list(call["parameters"]))]
        elif op == 1 and call and call["parameters"]:
            call["parameters"][rng.choice(list(call["parameters"]))] = random_value(rng)
        elif op == 2 and call:
            call["parameters"][rng.choice(["extra", "units", "a"])] = random_value(rng)
        elif op == 3 and calls:
            calls.append(json.loads(json.dumps(rng.choice(calls))))
        elif op == 4 and len(calls) > 1:
            calls.pop(rng.randrange(len(calls)))
        elif op == 5:
            rng.shuffle(calls)
        elif call:
            call["parameters"] = dict(reversed(list(call["parameters"].items())))
    body = "\n".join(json.dumps(c) for c in calls)
    tail = "\n<response> ok </response>" if "<response>" in gt else ""
    return f"<think> {think} </think>\n<tool_call>\n{body}\n</tool_call>{tail}"


def completion_for(rng: random.Random, gt: str) -> str:
    """A random completion: correct, near-miss, tag soup, broken/huge/deep JSON, unicode, 64 KB strings."""
    kind = rng.randrange(100)
    think = " ".join(rng.choice(["plan", "the", "user", "wants", "x"]) for _ in range(rng.randint(0, 700)))
    correct = gt.replace(gt[gt.find("<think>") : gt.find("</think>")], "<think> " + think + " ", 1)
    if kind < 15:
        return correct
    if kind < 30:
        return structured_near_miss(rng, gt, think)
    if kind < 55:
        return mutate(rng, correct)
    if kind < 65:
        return "".join(rng.choice(TAGS + JUNK + [random_call(rng)]) for _ in range(rng.randint(0, 40)))
    if kind < 75:
        calls = "\n".join(random_call(rng) for _ in range(rng.randint(0, 6)))
        tail = rng.choice(["", "\n<response> done </response>", " </response>"])
        return f"<think> {think} </think>\n<tool_call>\n{calls}\n</tool_call>{tail}"
    if kind < 80:  # deep or wide JSON
        depth = rng.choice([10, 63, 64, 65, 100, 1000, 20000])
        value = "[" * depth + "]" * depth if rng.random() < 0.5 else '{"a":' * depth + "1" + "}" * depth
        return f'<think> x </think>\n<tool_call>\n{{"name": "f", "parameters": {{"a": {value}}}}}\n</tool_call>'
    if kind < 85:  # random unicode, including lone surrogates and control characters
        return "".join(
            chr(rng.choice([rng.randint(0, 0x2FFF), rng.randint(0xD800, 0xDFFF), rng.randint(0x1F300, 0x1FAFF)]))
            for _ in range(rng.randint(0, 300))
        )
    if kind < 90:  # huge numbers and strings
        return (
            '<think> x </think>\n<tool_call>\n{"name": "set_volume", "parameters": {"level": '
            + rng.choice(["9" * 5000, "1" + "0" * 400, "1e400", '"' + "a" * 60000 + '"'])
            + "}}\n</tool_call>"
        )
    if kind < 97:  # ~64 KB (and some larger) adversarial repetitions
        unit = rng.choice(
            [
                "</think>\n<tool_call>\n",
                "</think>\n<response>",
                "<think>",
                "{}\n",
                "[",
                '"\\',
                correct + "\n",
                "</tool_call>\n<response>",
                "a b ",
            ]
        )
        size = rng.choice([60_000, 65_000, 65_536, 70_000, 200_000])
        body = (unit * (size // max(1, len(unit)) + 1))[:size]
        return (
            rng.choice(["<think>", "", "<think> x </think>\n<tool_call>\n"]) + body + rng.choice(["", "\n</tool_call>"])
        )
    return ""  # empty completion


def wrap_in_transcript(rng: random.Random, completion: str) -> str:
    style = rng.randrange(5)
    if style == 0:
        return (
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n"
            f"<|im_start|>assistant\n{completion}<|im_end|>"
        )
    if style == 1:
        return (
            f"<|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|><|start_header_id|>assistant"
            f"<|end_header_id|>\n\n{completion}<|eot_id|>"
        )
    if style == 2:
        return f"<|im_start|>assistant\n{completion}"  # truncated, no end token
    return completion


def random_options(rng: random.Random) -> ToolRLOptions:
    flags = {name: rng.random() < 0.35 for name in ENV_VARS}
    return ToolRLOptions(**flags, chat_template=rng.choice(["auto", "auto", "qwen", "llama"]))


def random_step(rng: random.Random) -> int:
    return rng.choice(STEPS) if rng.random() < 0.6 else rng.randint(0, 2000)


def generate_cases(seed: int, n: int):
    rng = random.Random(seed)
    for _ in range(n):
        gt = rng.choice(GTS)
        yield wrap_in_transcript(rng, completion_for(rng, gt)), gt, random_step(rng), random_options(rng)


# ----------------------------------------------------------------------------------------- checks


def check_result(got: dict, gt: str, step: int, options: ToolRLOptions) -> None:
    assert set(got) == {"score", "format", "correctness", "length"}
    for key, value in got.items():
        assert type(value) is float, (key, value)
        assert math.isfinite(value), (key, value)
    f_lo, f_hi = format_range(options, step)
    c_lo, c_hi = correctness_range(options, step)
    assert got["format"] in (f_lo, f_hi)
    if "<tool_call>" in gt:
        assert min(c_lo, c_hi) - EPS <= got["correctness"] <= max(c_lo, c_hi) + EPS
    else:
        assert got["correctness"] == 0.0
    if options.with_length:
        assert 0.0 <= got["length"] <= 1.0
    else:
        assert got["length"] == 0.0
    assert got["score"] == pytest.approx(got["format"] + got["correctness"] + got["length"], abs=EPS)
    lo, hi = score_bounds(options, step)
    assert lo - EPS <= got["score"] <= hi + EPS, (got, lo, hi)


def test_fuzz_never_raises_and_stays_in_bounds():
    formats_passed = perfect = partial = 0
    for solution, gt, step, options in generate_cases(SEED, N_CASES):
        try:
            got = score_with_options(solution, gt, step, options)
        except Exception as exc:  # noqa: BLE001 - report the failing case
            pytest.fail(f"raised {exc!r} for step={step} options={options} gt={gt[:80]!r} solution={solution[:200]!r}")
        check_result(got, gt, step, options)
        f_lo, f_hi = format_range(options, step)
        c_lo, c_hi = correctness_range(options, step)
        formats_passed += got["format"] == f_hi
        if "<tool_call>" in gt and c_lo != c_hi:
            perfect += got["correctness"] == c_hi
            partial += got["correctness"] not in (c_lo, c_hi)
    # the fuzz must reach the interesting paths, not only the failure ones
    assert formats_passed > N_CASES // 10
    assert perfect > N_CASES // 20
    assert partial > N_CASES // 20


def test_fuzz_is_deterministic():
    first = [score_with_options(s, g, st, o) for s, g, st, o in generate_cases(SEED + 1, 200)]
    second = [score_with_options(s, g, st, o) for s, g, st, o in generate_cases(SEED + 1, 200)]
    assert first == second


def test_fuzz_through_compute_score_with_config_values():
    from verl_rewards.toolrl import compute_score

    rng = random.Random(SEED + 2)
    for solution, gt, step, options in generate_cases(SEED + 2, 300):
        kwargs = {
            k: rng.choice([v, str(v).lower(), int(v)]) for k, v in options.as_kwargs().items() if k != "chat_template"
        }
        got = compute_score(solution, gt, step, chat_template=options.chat_template, **kwargs)
        check_result(got, gt, step, options)
