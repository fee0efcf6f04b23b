"""``verl-rewards export-sft results`` on hand-made inputs (the mock domain's tasks and tools): the files ``eval``
reads are read alike (lines end at ``\\n`` only), every malformed input is one line naming the file, the place and
the field (exit code 2, nothing written), dump lines without a recorded conversation are counted, content parts are
exported as their text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from verl_rewards.cli import main
from verl_rewards.scoring.recorded import TRAJECTORY_KEY

import tau2_support


@pytest.fixture(scope="module")
def root() -> str:
    return str(tau2_support.require_data("mock"))


def _call(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _conversation(*calls: tuple[str, Any], last: Any = "done") -> list[dict[str, Any]]:
    """A user line, one assistant tool call and its result per call, a final assistant text."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    for i, (name, arguments) in enumerate(calls):
        messages.append({"role": "assistant", "content": "", "tool_calls": [_call(name, arguments, f"c{i}")]})
        messages.append({"role": "tool", "id": f"c{i}", "content": "ok", "requestor": "assistant"})
    messages.append({"role": "assistant", "content": last})
    return messages


def _results(path: Path, *simulations: Any, simulations_value: Any = None) -> Path:
    """A tau2 Results file of the mock domain."""
    sims = list(simulations) if simulations_value is None else simulations_value
    doc = {"info": {"environment_info": {"domain_name": "mock"}, "num_trials": 1}, "tasks": [], "simulations": sims}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _sim(task_id: str, messages: Any, reward: Any = 1.0) -> dict[str, Any]:
    return {"task_id": task_id, "messages": messages, "reward_info": {"reward": reward}}


def _dump_line(messages: Any, trajectory: Any = None, task_id: str = "create_task_1", **columns: Any) -> str:
    """One line of a verl validation dump as ``record_trajectory`` writes it (``ensure_ascii=False``, as verl)."""
    if trajectory is None:
        payload = {"data_source": "tau2/mock", "task_id": task_id, "split": "base", "mode": "normal",
                   "termination": "agent_stop", "messages": messages}  # fmt: skip
        trajectory = json.dumps(payload, ensure_ascii=False)
    row = {"input": "x", "output": "y", "gts": "", "score": 1.0, "step": 0, "base_score": 1.0, **columns}
    return json.dumps({**row, TRAJECTORY_KEY: trajectory}, ensure_ascii=False)


def _export(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["export-sft", "results", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _error(err: str) -> str:
    """The error line: the last line of stderr (after any progress bar), and no traceback."""
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("verl-rewards export-sft: error: ")
    return line


def test_a_dump_with_unicode_line_separators_is_read_by_eval_and_export(tmp_path, root, capsys):
    text = "line\u2028separator\u2029paragraph\x85next line"
    dump = tmp_path / "0.jsonl"
    dump.write_text(_dump_line(_conversation(("get_users", {}), last=text)) + "\n", encoding="utf-8")
    assert "\u2028" in dump.read_text(encoding="utf-8")  # raw, as verl writes it
    assert main(["eval", str(dump), "--data-source", "tau2/mock"]) == 0
    capsys.readouterr()
    code, out, err = _export(capsys, str(dump), "--data-dir", root, "--out", str(tmp_path / "a"))
    assert code == 0, err
    assert "wrote 1 conversation(s)" in out
    messages = json.loads(pd.read_parquet(tmp_path / "a" / "train.parquet")["messages_json"][0])
    assert messages[-1] == {"role": "assistant", "content": text}


def test_dump_lines_without_a_recorded_conversation_are_counted_as_dropped(tmp_path, root, capsys):
    dump = tmp_path / "0.jsonl"
    good = _dump_line(_conversation(("get_users", {})))
    dump.write_text("\n".join([good, _dump_line(None, trajectory=""), _dump_line(None, trajectory=0.0)]) + "\n")
    code, out, err = _export(capsys, str(dump), "--data-dir", root, "--out", str(tmp_path / "a"))
    assert code == 0, err
    assert "wrote 1 conversation(s)" in out
    assert "dropped 2 (2 dump line(s) without a recorded conversation, 0 below --min-reward 1" in out


def test_content_parts_are_exported_as_their_text(tmp_path, root, capsys):
    parts = [{"type": "text", "text": "Your task"}, {"type": "text", "text": "is created."}]
    results = _results(tmp_path / "r.json", _sim("create_task_1", _conversation(("get_users", {}), last=parts)))
    code, _, err = _export(capsys, str(results), "--data-dir", root, "--out", str(tmp_path / "a"))
    assert code == 0, err
    messages = json.loads(pd.read_parquet(tmp_path / "a" / "train.parquet")["messages_json"][0])
    assert messages[-1] == {"role": "assistant", "content": "Your task\nis created."}  # joined as the engine joins


def _with(messages: list[dict[str, Any]], index: int, **changes: Any) -> list[dict[str, Any]]:
    messages[index] = {**messages[index], **changes}
    return messages


BAD_RESULTS = {
    "tool call that is a string": (
        lambda: [_sim("create_task_1", _with(_conversation(("get_users", {})), 1, tool_calls=["get_users"]))],
        "r.json: simulations[0].messages: message 1: tool_calls[0]: Invalid tool call: not an object",
    ),
    "list arguments": (
        lambda: [_sim("create_task_1", _conversation(("create_task", ["user_1", "title"])))],
        "r.json: simulations[0].messages: message 1: tool_calls[0]: Invalid tool arguments: expected a JSON object, "
        "got list",
    ),
    "arguments that are not JSON": (
        lambda: [_sim("create_task_1", _conversation(("get_users", {}), ("create_task", '{"user_id": ')))],
        "r.json: simulations[0].messages: message 3: tool_calls[0]: Invalid tool arguments: not valid JSON",
    ),
    "a message that is not an object": (
        lambda: [_sim("create_task_1", [*_conversation(("get_users", {})), "thanks"])],
        "r.json: simulations[0].messages: message 4: expected a dict, got str",
    ),
    "a failed simulation's message that is not an object": (
        lambda: [_sim("create_task_1", _conversation(("get_users", {}))), _sim("update_task_1", [7], reward=0.0)],
        "r.json: simulations[1].messages: message 0: expected a dict, got int",
    ),
    "simulations that are not a list": (5, "r.json: simulations: expected a list of simulations, got int"),
    "a reward that is no number": (
        lambda: [_sim("create_task_1", _conversation(("get_users", {})), reward="1.0")],
        "r.json: simulations[0].reward_info.reward: expected a finite number, got '1.0'",
    ),
    "a task id that is not one": (
        lambda: [_sim(["create_task_1"], _conversation(("get_users", {})))],  # type: ignore[arg-type]
        "r.json: simulations[0].task_id: expected a task id, got ['create_task_1']",
    ),
    "a path-like task id": (
        lambda: [_sim("../../x", _conversation(("get_users", {})))],
        "r.json: simulations[0]: '../../x' is not a task of tau2/mock",
    ),
}


@pytest.mark.parametrize("case", list(BAD_RESULTS))
def test_malformed_results_are_one_line_naming_file_place_and_field(tmp_path, root, capsys, case):
    make, expected = BAD_RESULTS[case]
    if callable(make):
        results = _results(tmp_path / "r.json", *make())
    else:
        results = _results(tmp_path / "r.json", simulations_value=make)
    code, _, err = _export(capsys, str(results), "--data-dir", root, "--out", str(tmp_path / "a"))
    assert code == 2
    assert expected in _error(err)
    assert not (tmp_path / "a").exists()


BAD_DUMPS = {
    "not JSON": ('{"input": "x", "output": ', "0.jsonl:2: not valid JSON (Expecting value at column 26; cut short"),
    "not an object": ("[1, 2]", "0.jsonl:2: expected a JSON object, got list"),
    "not UTF-8": (b'{"input": "caf\xe9"}', "0.jsonl:2: not valid UTF-8 (invalid continuation byte at byte 14"),
    "a base score beyond any float": (
        _dump_line(_conversation(("get_users", {})), base_score=10**400),
        "0.jsonl:2: base_score: expected a finite number, got an integer of 401 digits",
    ),
    "a recorded conversation that is not JSON": (
        _dump_line(None, trajectory='{"data_source": "tau2/mock", '),
        f"0.jsonl:2: {TRAJECTORY_KEY}: not valid JSON",
    ),
    "a recorded conversation without messages": (
        _dump_line(None, trajectory=json.dumps({"data_source": "tau2/mock", "task_id": "create_task_1"})),
        f"0.jsonl:2: {TRAJECTORY_KEY}: messages: expected a non-empty list of message objects",
    ),
    "a recorded conversation without a task id": (
        _dump_line(_conversation(("get_users", {})), task_id=""),
        f"0.jsonl:2: {TRAJECTORY_KEY}.task_id: expected a task id, got ''",
    ),
}


@pytest.mark.parametrize("case", list(BAD_DUMPS))
def test_malformed_dump_lines_are_one_line_naming_file_line_and_field(tmp_path, root, capsys, case):
    line, expected = BAD_DUMPS[case]
    dump = tmp_path / "0.jsonl"
    first = _dump_line(_conversation(("get_users", {}))).encode()
    dump.write_bytes(first + b"\n" + (line if isinstance(line, bytes) else line.encode()) + b"\n")
    code, _, err = _export(capsys, str(dump), "--data-dir", root, "--out", str(tmp_path / "a"))
    assert code == 2
    assert expected in _error(err)
    assert not (tmp_path / "a").exists()


def test_a_path_like_domain_is_refused(tmp_path, root, capsys):
    messages = _conversation(("get_users", {}))
    payload = {"data_source": "tau2/../../mock", "task_id": "create_task_1", "messages": messages}
    dump = tmp_path / "0.jsonl"
    dump.write_text(_dump_line(None, trajectory=json.dumps(payload)) + "\n")
    code, _, err = _export(capsys, str(dump), "--data-dir", root, "--out", str(tmp_path / "a"))
    assert code == 2
    assert f"0.jsonl:1: {TRAJECTORY_KEY}: unknown tau2 domain '../../mock'" in _error(err)
    assert not (tmp_path / "a").exists()


def test_a_tau_bench_task_id_must_be_a_task_of_the_domain(tmp_path, capsys):
    import tau_bench_support

    domain = tau_bench_support.require_domain("airline")
    traj = [{"role": "system", "content": domain.policy}, *_conversation(("get_user_details", {"user_id": "x"}))]
    for task_id, expected in (("../../x", "unknown task id '../../x'"), ("train/../../0", "unknown task id")):
        results = tmp_path / "tb.json"
        entry = {"task_id": 0, "reward": 1.0, "traj": traj, "trial": 0,
                 "info": {"domain": "tau_bench/airline", "id": task_id}}  # fmt: skip
        results.write_text(json.dumps([entry]))
        code, _, err = _export(capsys, str(results), "--data-dir", str(domain.data_dir.parent),
                               "--out", str(tmp_path / "a"))  # fmt: skip
        assert code == 2
        assert f"tb.json: [0]: {expected}" in _error(err)
        assert not (tmp_path / "a").exists()


ARGUMENT_CASES = {
    # one argument of two JSON types across calls, and a call without arguments next to calls with them
    "mixed types": [
        ("create_task_1", [("create_task", {"user_id": 7340, "title": "Buy milk"}), ("get_users", {})]),
        ("update_task_1", [("create_task", {"user_id": "raj_sanchez_7340", "title": "Pay rent"})]),
    ],
    # every call of the file has {} arguments: parquet has no struct without fields
    "all empty": [("create_task_1", [("get_users", {})]), ("update_task_1", [("get_users", {}), ("get_users", {})])],
}


@pytest.mark.parametrize("case", list(ARGUMENT_CASES))
def test_tool_call_arguments_round_trip_through_parquet_and_verls_sft_datasets(
    tmp_path, root, capsys, tool_tokenizer, case
):
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

    from verl_rewards.gold.sft_dataset import GoldSFTDataset

    from sft_support import loss_spans, sft_data_config

    played = ARGUMENT_CASES[case]
    results = _results(tmp_path / "r.json", *(_sim(task, _conversation(*calls)) for task, calls in played))
    code, out, err = _export(capsys, str(results), "--data-dir", root, "--out", str(tmp_path / "a"))
    assert code == 0, err
    path = tmp_path / "a" / "train.parquet"
    frame = pd.read_parquet(path)
    exact = [json.loads(text) for text in frame["messages_json"]]
    tools = [json.loads(text) for text in frame["tools_json"]]
    for messages, (_, calls) in zip(exact, played, strict=True):  # the exact copy holds every argument as played
        sent = [c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or ()]
        assert sent == [arguments for _, arguments in calls]
    stock = MultiTurnSFTDataset(str(path), tool_tokenizer, sft_data_config())
    ours = GoldSFTDataset(str(path), tool_tokenizer, sft_data_config())
    assert len(stock) == len(ours) == len(played)
    for i in range(len(played)):
        assistants = sum(1 for m in exact[i] if m["role"] == "assistant")
        for dataset in (stock, ours):
            assert len(loss_spans(dataset[i]["loss_mask"])) == assistants  # verl loads it and trains every turn
        expected = tool_tokenizer.apply_chat_template(exact[i], tools=tools[i], tokenize=True, return_dict=False)
        assert ours[i]["input_ids"].tolist() == list(expected)  # the exact arguments, types and {} included
    text = tool_tokenizer.decode(ours[0]["input_ids"])
    assert '"name": "get_users", "arguments": {}' in text
    if case == "mixed types":
        assert '"arguments": {"user_id": 7340, "title": "Buy milk"}' in text
        assert '"user_id": "raj_sanchez_7340"' in tool_tokenizer.decode(ours[1]["input_ids"])
        # the stock reader gets the parquet column: the argument parquet cannot type is its text there
        assert '"user_id": "7340"' in tool_tokenizer.decode(stock[0]["input_ids"])
