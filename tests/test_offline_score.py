"""`verl-rewards score`: verl's rollout dump and the plain format, per-component table, PNG histogram,
scored JSONL, and clear errors for malformed input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import SUPPORT

LAYER = str(SUPPORT / "reward_fns_layer.py")


def _run(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "verl_rewards.cli", "score", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )


@pytest.mark.slow
def test_scores_verl_dump_and_plain_rows(tmp_path):
    rollouts = tmp_path / "rollouts.jsonl"
    rows = [
        {"input": "user: q", "output": "42", "gts": "42", "score": 1.0, "step": 3},  # verl's dump format
        {"input": "user: q", "output": "41", "gts": "42", "score": 0.0, "step": 3},
        {"response": "42", "ground_truth": "42", "data_source": "qa", "step": 7, "raw_prompt": []},  # plain
        {"response": "x", "ground_truth": "42", "data_source": "qa"},
    ]
    rollouts.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    hist, out = tmp_path / "hist.png", tmp_path / "scored.jsonl"
    proc = _run(
        str(rollouts),
        "--reward",
        "t_fields",
        "--module",
        LAYER,
        "--hist",
        str(hist),
        "--out",
        str(out),
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = {line.split()[0]: line.split() for line in proc.stdout.splitlines() if line and line[0].isalpha()}
    assert lines["reward"][1:] == ["4", "0.5000", "0.0000", "1.0000"]
    assert lines["step_seen"][1:] == ["4", "3.2500", "0.0000", "7.0000"]
    assert "error rate 0.00% (0/4)" in proc.stdout
    assert hist.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["reward"] for r in scored] == [1.0, 0.0, 1.0, 0.0]
    assert scored[0]["output"] == "42" and scored[2]["step_seen"] == 7


@pytest.mark.slow
def test_failures_are_counted_in_the_error_rate(tmp_path):
    rollouts = tmp_path / "r.jsonl"
    rollouts.write_text("\n".join(json.dumps({"response": str(i)}) for i in range(3)) + "\n")
    proc = _run(str(rollouts), "--reward", "t_raise", "--module", LAYER, "--hist", "", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "error rate 100.00% (3/3)" in proc.stdout


@pytest.mark.slow
def test_malformed_line_is_reported_with_its_number(tmp_path):
    rollouts = tmp_path / "bad.jsonl"
    rollouts.write_text('{"response": "a"}\n{not json\n')
    proc = _run(str(rollouts), "--reward", "t_int", "--module", LAYER, cwd=str(tmp_path))
    assert proc.returncode == 2
    assert ":2: not valid JSON" in proc.stderr


# ------------------------------------------------------------------------------- input limits and errors
def _score_in_process(capsys, *args: str) -> tuple[int, str, str]:
    from verl_rewards.cli import main

    code = main(["score", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("verl-rewards score: error: "), err
    return lines[0]


def _write_big_line(path: Path, n_bytes: int, chunk: int = 1 << 20) -> None:
    """One JSONL line of about ``n_bytes``, written chunk by chunk (never built in memory)."""
    piece = b"a" * chunk
    with open(path, "wb") as handle:
        handle.write(b'{"response": "')
        for _ in range(n_bytes // chunk):
            handle.write(piece)
        handle.write(b'"}\n')


def test_line_over_the_cap_is_rejected_while_read_with_bounded_memory(tmp_path, monkeypatch):
    import tracemalloc

    from verl_rewards import offline

    cap = 2 << 20
    monkeypatch.setattr(offline, "MAX_LINE_BYTES", cap)
    path = tmp_path / "big.jsonl"
    _write_big_line(path, 20 * cap)  # a 40 MB line
    tracemalloc.start()
    try:
        with pytest.raises(offline.OfflineInputError, match=":1: longer than"):
            offline.read_rollouts(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < cap + (1 << 20), f"peak {peak} bytes for a {cap}-byte cap"  # the cap + one read chunk (64 KiB)


def test_line_of_exactly_the_cap_is_read_and_one_more_byte_is_not(tmp_path, monkeypatch):
    from verl_rewards import offline

    monkeypatch.setattr(offline, "MAX_LINE_BYTES", 100_000)
    head, tail = b'{"response": "', b'"}'
    path = tmp_path / "edge.jsonl"
    path.write_bytes(head + b"x" * (100_000 - len(head) - len(tail)) + tail + b"\n")
    assert len(offline.read_rollouts(str(path))[0].response_text) == 100_000 - 16
    path.write_bytes(head + b"x" * (100_001 - len(head) - len(tail)) + tail)  # no final newline either
    with pytest.raises(offline.OfflineInputError, match=":1: longer than"):
        offline.read_rollouts(str(path))


def test_non_utf8_line_is_a_one_line_error_naming_file_and_line(tmp_path, capsys):
    rollouts = tmp_path / "latin1.jsonl"
    rollouts.write_bytes(b'{"response": "a"}\n{"response": "caf\xe9"}\n')
    code, _, err = _score_in_process(capsys, str(rollouts), "--reward", "qa_em", "--hist", "")
    assert code == 2
    assert "latin1.jsonl:2: not valid UTF-8" in _error_line(err)


def test_deeply_nested_json_line_is_malformed_input(tmp_path, capsys):
    rollouts = tmp_path / "deep.jsonl"
    rollouts.write_text('{"response": "a"}\n{"response": "b"}\n{"response": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    code, _, err = _score_in_process(capsys, str(rollouts), "--reward", "qa_em", "--hist", "")
    assert code == 2
    assert "deep.jsonl:3: not valid JSON (nested too deeply)" in _error_line(err)


# ------------------------------------------------------------------------------------------- outputs
@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--hist", "rewards.xyz", "--hist rewards.xyz: extension '.xyz'"),
        ("--hist", "rewards", "--hist rewards: no extension"),
        ("--out", ".", "--out '.' is a directory"),
        ("--out", "in.jsonl/scored.jsonl", "in.jsonl is not a directory"),
    ],
)
def test_bad_output_is_refused_before_reading_or_scoring(tmp_path, capsys, monkeypatch, option, value, message):
    monkeypatch.chdir(tmp_path)
    Path("in.jsonl").write_text('{"response": "a"}\n{not json\n')  # reading it would fail on line 2
    args = ["in.jsonl", "--reward", "qa_em", "--out", "scored.jsonl", "--hist", ""]
    args[args.index(option) + 1] = value
    code, out, err = _score_in_process(capsys, *args)
    assert code == 2 and out == ""
    assert message in _error_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_hist_may_not_overwrite_the_input_or_the_scores(tmp_path, capsys):
    rollouts = tmp_path / "in.png"
    rollouts.write_text('{"response": "a", "ground_truth": "a"}\n')
    code, _, err = _score_in_process(capsys, str(rollouts), "--reward", "qa_em", "--hist", str(rollouts))
    assert code == 2 and "is the input file" in _error_line(err)
    code, _, err = _score_in_process(
        capsys, str(rollouts), "--reward", "qa_em", "--hist", str(tmp_path / "x.png"), "--out", str(tmp_path / "x.png")
    )
    assert code == 2 and "--out and --hist are the same file" in _error_line(err)
    assert rollouts.read_text() == '{"response": "a", "ground_truth": "a"}\n'


def test_out_may_be_the_input_file(tmp_path, capsys):
    rollouts = tmp_path / "r.jsonl"
    rows = [{"response": str(i), "ground_truth": "3", "id_": i} for i in range(6)]
    rollouts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    hist = tmp_path / "h.svg"
    code, _, err = _score_in_process(
        capsys, str(rollouts), "--reward", "qa_em", "--hist", str(hist), "--out", str(rollouts)
    )
    assert code == 0, err
    scored = [json.loads(line) for line in rollouts.read_text().splitlines()]
    assert [r["id_"] for r in scored] == list(range(6))
    assert [r["reward"] for r in scored] == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    assert hist.read_text().lstrip().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.svg", "r.jsonl"]


def test_histogram_write_failure_keeps_the_old_histogram(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from verl_rewards.offline import write_histogram

    hist = tmp_path / "h.png"
    write_histogram([0.0, 1.0, 1.0], str(hist))
    before = hist.read_bytes()
    real_savefig = Figure.savefig

    def half_then_fail(self, fname, **kw):
        real_savefig(self, fname, **kw)
        Path(fname).write_bytes(Path(fname).read_bytes()[:100])
        raise OSError("disk full")

    monkeypatch.setattr(Figure, "savefig", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        write_histogram([0.5] * 10, str(hist))
    assert hist.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["h.png"]


KILL_WHILE_WRITING = """
import json, sys, time
real_dumps = json.dumps
written = 0

def dumps_then_hang(obj, *args, **kwargs):
    global written
    if isinstance(obj, dict) and "reward" in obj:
        written += 1
        if written == 20:
            print("WRITING", flush=True)
            time.sleep(120)
    return real_dumps(obj, *args, **kwargs)

json.dumps = dumps_then_hang
from verl_rewards.cli import main
sys.exit(main(["score", sys.argv[1], "--reward", "qa_em", "--hist", "", "--out", sys.argv[1]]))
"""


@pytest.mark.slow
def test_kill_while_writing_out_over_the_input_keeps_the_input(tmp_path):
    import signal

    rollouts = tmp_path / "r.jsonl"
    rollouts.write_text("".join(json.dumps({"response": "x" * 50, "ground_truth": str(i)}) + "\n" for i in range(150)))
    before = rollouts.read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-c", KILL_WHILE_WRITING, str(rollouts)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(tmp_path),
    )
    try:
        for line in proc.stdout:
            if line.strip() == "WRITING":
                break
        else:
            raise AssertionError(f"the writer never started: {proc.stderr.read()[-2000:]}")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert rollouts.read_bytes() == before  # all 150 rows, untouched


# ------------------------------------------------------------------------------- ToolRL on verl's dumps
TOOLRL_SYSTEM = (
    "You may call tools. Answer as <think> ... </think> then <tool_call>\n"
    '{"name": ..., "parameters": {...}}\n</tool_call>'
)
TOOLRL_GT = (
    '<think> Look it up. </think>\n<tool_call>\n{"name": "get_time", "parameters": {"city": "Oslo"}}\n</tool_call>'
)
TOOLRL_PERFECT = (
    "<think> The user wants the time in Oslo. </think>\n<tool_call>\n"
    '{"name": "get_time", "parameters": {"city": "Oslo"}}\n</tool_call>'
)


def _verl_dump(tokenizer, dump_dir: Path, responses: list[str], extras: dict | None = None) -> Path:
    """A rollout dump written by verl's own writer from token ids decoded as verl decodes them."""
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer

    messages = [{"role": "system", "content": TOOLRL_SYSTEM}, {"role": "user", "content": "Time in Oslo?"}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=False)
    response_ids = [tokenizer.encode(r, add_special_tokens=False) + [tokenizer.eos_token_id] for r in responses]
    inputs = tokenizer.batch_decode([prompt_ids] * len(responses), skip_special_tokens=True)
    outputs = tokenizer.batch_decode(response_ids, skip_special_tokens=True)
    assert "<|im_start|>" not in inputs[0] and "<|im_end|>" not in outputs[0]
    RayPPOTrainer._write_generations(
        inputs, outputs, [TOOLRL_GT] * len(responses), [0.0] * len(responses), extras or {}, str(dump_dir), 7
    )
    return dump_dir / "7.jsonl"


def _table(out: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in out.splitlines() if line and line[0].isalpha()}


def test_toolrl_by_name_scores_a_perfect_answer_in_verls_dump_as_perfect(qwen_tokenizer, tmp_path, capsys):
    wrong = TOOLRL_PERFECT.replace("Oslo", "Bergen")
    dump = _verl_dump(qwen_tokenizer, tmp_path / "dump", [TOOLRL_PERFECT, wrong])
    code, out, err = _score_in_process(capsys, str(dump), "--reward", "toolrl", "--hist", "")
    assert code == 0, err
    table = _table(out)
    assert table["reward"] == ["2", "3.0000", "2.0000", "4.0000"]  # perfect: 1 + 3; wrong city: 1 + (6*2/3 - 3)
    assert table["format"] == ["2", "1.0000", "1.0000", "1.0000"]
    assert table["correctness"] == ["2", "2.0000", "1.0000", "3.0000"]


def test_toolrl_by_data_source_scores_verls_dump_on_the_response(qwen_tokenizer, tmp_path, capsys):
    # the dump keeps every per-sample reward extra; here one of them is the data source
    dump = _verl_dump(qwen_tokenizer, tmp_path / "dump", [TOOLRL_PERFECT], {"data_source": ["rlla"]})
    code, out, err = _score_in_process(capsys, str(dump), "--hist", "")
    assert code == 0, err
    assert _table(out)["reward"] == ["1", "4.0000", "4.0000", "4.0000"]
