"""``verl-rewards export-sft results DUMP.jsonl``: verl validation dumps whose samples the contribution manager
scored with ``record_trajectory`` on. The dump is written by verl's own writer (``_write_generations``, what
``_dump_generations`` runs for ``trainer.validation_data_dir``) from the manager's real extras of gold episodes played
in our environments; the exported conversations equal the gold export's, under the same rules as simulate results
(min reward, per task, dedupe, held-out split guard)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from verl_rewards.cli import main
from verl_rewards.gold.episodes import play_gold, score_episodes
from verl_rewards.gold.sft import conversation_key
from verl_rewards.scoring.recorded import MAX_TRAJECTORY_CHARS, TRAJECTORY_KEY, read_trajectory_text

import tau2_support


def _rows(domain: Any, task_ids: list[str], mode: str) -> list[dict[str, Any]]:
    from verl_rewards.tau2.data import solo_system_prompt, task_row

    root = str(domain.data_dir.parent)
    system = solo_system_prompt(domain) if mode == "solo" else None
    if mode == "normal":
        from verl_rewards.tau2.normal.prompts import agent_system_prompt

        system = agent_system_prompt(domain)
    split_of = {t: s for s in ("base", "train", "test") for t in domain.splits.get(s, ())}  # train/test over base
    return [
        task_row(domain, domain.task(t), i, split_of.get(t, "base"), root, system, mode) for i, t in enumerate(task_ids)
    ]


def _verl_dump(path: Path, rows: list[dict[str, Any]], root: str, *, trials: int = 2, step: int = 3) -> Path:
    """Play and score the rows' gold episodes (``record_trajectory`` on) and dump them with verl's writer, each
    row ``trials`` times (verl's ``val_kwargs.n``), as ``_validate`` assembles the columns."""
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer

    episodes = [play_gold(row, data_dir=root) for row in rows for _ in range(trials)]
    scored = score_episodes(episodes, {"tau2": {"data_dir": root}, "record_trajectory": True})
    scores = [s["reward"] for s in scored]
    extras: dict[str, list[Any]] = {"reward": scores}
    for key in scored[0]:
        if key != "reward":
            extras[key] = [s[key] for s in scored]
    inputs = [json.dumps(e.row["prompt"]) for e in episodes]  # decoded text in a real run; only carried along
    outputs = [str(e.messages[-1].get("content") or "") for e in episodes]
    gts = [e.row["reward_model"]["ground_truth"] for e in episodes]
    path.mkdir(parents=True, exist_ok=True)
    RayPPOTrainer._write_generations(inputs, outputs, gts, scores, extras, str(path), step)
    return path / f"{step}.jsonl"


def _export(*args: str) -> int:
    return main(["export-sft", "results", *args])


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("verl-rewards export-sft: error: ")
    return err


@pytest.fixture(scope="module")
def airline(tmp_path_factory):
    domain = tau2_support.require_domain("airline")
    with_actions = [t for t in domain.split("train") if domain.task(t).evaluation_criteria.actions]
    tasks = [*with_actions[:2], domain.split("test")[0]]  # two train tasks with tool calls, one held-out task
    rows = _rows(domain, tasks, "normal")
    root = str(domain.data_dir.parent)
    dump = _verl_dump(tmp_path_factory.mktemp("val") / "val_generations", rows, root)
    return {"domain": domain, "tasks": tasks, "rows": rows, "root": root, "dump": dump}


def test_verl_writes_the_recorded_conversation_into_the_dump(airline):
    lines = [json.loads(line) for line in airline["dump"].read_text().splitlines()]
    assert len(lines) == 6 and {line["step"] for line in lines} == {3}
    assert {"input", "output", "score", "base_score", TRAJECTORY_KEY, "reward_extra_absent"} <= set(lines[0])
    payload = read_trajectory_text(lines[0][TRAJECTORY_KEY])
    assert payload is not None
    assert payload["data_source"] == "tau2/airline" and payload["task_id"] == airline["tasks"][0]
    assert payload["mode"] == "normal" and payload["split"] == "train" and payload["termination"] == "user_stop"
    roles = {m["role"] for m in payload["messages"]}
    assert {"assistant", "user", "tool"} <= roles
    assert all(line["score"] == 1.0 and TRAJECTORY_KEY not in line["reward_extra_absent"] for line in lines)


def test_a_dump_exports_the_gold_conversations_once_per_task(tmp_path, airline, capsys):
    from verl_rewards.gold.export import export_gold

    dump, root = airline["dump"], airline["root"]
    assert _export(str(dump), "--data-dir", root, "--out", str(tmp_path / "a")) == 2
    assert f"{airline['tasks'][2]} (test)" in _error(capsys) and not (tmp_path / "a").exists()
    assert _export(str(dump), "--data-dir", root, "--allow-split-mix", "--out", str(tmp_path / "a")) == 0
    assert "dropped 3" in capsys.readouterr().out  # each task's second trial is the same conversation
    frame = pd.read_parquet(tmp_path / "a" / "train.parquet")
    assert list(frame["task_id"]) == airline["tasks"] and list(frame["split"]) == ["train", "train", "test"]
    assert set(frame["mode"]) == {"normal"} and set(frame["reward"]) == {1.0}
    assert frame["source"][0] == f"{dump}:1"
    # the very conversations (and tools) the gold export writes for these tasks
    export_gold("tau2", "airline", "train", tmp_path / "gold", mode="normal", data_dir=root, progress=False)
    gold = pd.read_parquet(tmp_path / "gold" / "train.parquet").set_index("task_id")
    for _, row in frame[frame["split"] == "train"].iterrows():
        ours = {"messages": json.loads(row["messages_json"]), "tools": json.loads(row["tools_json"])}
        theirs = gold.loc[row["task_id"]]
        expected = {"messages": json.loads(theirs["messages_json"]), "tools": json.loads(theirs["tools_json"])}
        assert conversation_key(ours) == conversation_key(expected)


def test_min_reward_and_per_task_read_the_dump_like_results(tmp_path, airline, capsys):
    lines = [json.loads(line) for line in airline["dump"].read_text().splitlines()]
    lines[0]["base_score"] = 0.0  # the first task's first trial failed: its second trial still qualifies
    lines[2]["base_score"] = lines[3]["base_score"] = 0.0  # the second task failed twice
    dump = tmp_path / "5.jsonl"
    dump.write_text("".join(json.dumps(line) + "\n" for line in lines))
    root = airline["root"]
    assert _export(str(dump), "--data-dir", root, "--allow-split-mix", "--out", str(tmp_path / "a")) == 0
    frame = pd.read_parquet(tmp_path / "a" / "train.parquet")
    assert list(frame["task_id"]) == [airline["tasks"][0], airline["tasks"][2]]
    assert list(frame["source"]) == [f"{dump}:2", f"{dump}:5"]
    assert _export(str(dump), str(airline["dump"]), "--data-dir", root, "--allow-split-mix", "--per-task", "1",
                   "--out", str(tmp_path / "b")) == 0  # fmt: skip
    assert len(pd.read_parquet(tmp_path / "b" / "train.parquet")) == 3


def test_a_solo_dump_gets_the_solo_tools_and_prompt(tmp_path, capsys):
    from verl_rewards.gold.sft import training_tool_schemas
    from verl_rewards.tau2.data import solo_system_prompt, tool_config_text

    domain = tau2_support.require_domain("mock")
    root = str(domain.data_dir.parent)
    rows = _rows(domain, ["create_task_1", "update_task_with_message_history"][:1], "solo")
    dump = _verl_dump(tmp_path / "dumps", rows, root, trials=1, step=0)
    assert _export(str(dump), "--data-dir", root, "--out", str(tmp_path / "a")) == 0
    frame = pd.read_parquet(tmp_path / "a" / "train.parquet")
    assert list(frame["mode"]) == ["solo"]
    assert json.loads(frame["tools_json"][0]) == training_tool_schemas(tool_config_text(domain, mode="solo"))
    assert json.loads(frame["messages_json"][0])[0] == {"role": "system", "content": solo_system_prompt(domain)}


def test_a_dump_without_recorded_conversations_names_the_setting(tmp_path, airline, capsys):
    plain = tmp_path / "0.jsonl"
    plain.write_text(json.dumps({"input": "hi", "output": "hello", "gts": "", "score": 1.0, "step": 0}) + "\n")
    assert _export(str(plain), "--out", str(tmp_path / "a")) == 2
    assert "+reward.reward_kwargs.record_trajectory=true" in _error(capsys)
    lines = [json.loads(line) for line in airline["dump"].read_text().splitlines()]
    for line in lines:  # a run whose loop recorded no messages: the key is absent (0.0) on every line
        line[TRAJECTORY_KEY] = 0.0
    absent = tmp_path / "1.jsonl"
    absent.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert _export(str(absent), "--out", str(tmp_path / "b")) == 2
    assert "no line carries a recorded tau2 / tau-bench conversation" in _error(capsys)
    bad = tmp_path / "2.jsonl"
    bad.write_text("{not json\n")
    assert _export(str(bad), "--out", str(tmp_path / "c")) == 2
    assert "2.jsonl:1: not valid JSON" in _error(capsys)
    assert not any((tmp_path / d).exists() for d in ("a", "b", "c"))


def test_the_manager_records_only_when_asked_and_within_the_bound():
    from verl_rewards.manager.config import ManagerConfig, ManagerConfigError
    from verl_rewards.offline import score_samples
    from verl_rewards.scoring.sample import Sample

    def sample(messages: list[dict[str, Any]]) -> Sample:
        row = {"data_source": "qa", "reward_model": {"ground_truth": "4"}, "extra_info": {"task_id": "t1"},
               "tool_extra_fields": {"messages": messages}}  # fmt: skip
        return Sample.from_text(row, response="4")

    short = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    long = [{"role": "user", "content": "x" * MAX_TRAJECTORY_CHARS}]
    off = score_samples([sample(short)], {"reward_fn": "qa_em"})
    assert TRAJECTORY_KEY not in off.keys
    on = score_samples([sample(short), sample(long)], {"reward_fn": "qa_em", "record_trajectory": True})
    assert TRAJECTORY_KEY in on.keys
    payload = read_trajectory_text(on.extras[0][TRAJECTORY_KEY])
    assert payload == {"data_source": "qa", "task_id": "t1", "split": "", "mode": "", "termination": "",
                       "messages": short}  # fmt: skip
    assert on.extras[1][TRAJECTORY_KEY] == "" and TRAJECTORY_KEY in on.extras[1]["reward_extra_absent"]
    with pytest.raises(ManagerConfigError, match="record_trajectory"):
        ManagerConfig.from_reward_kwargs({"record_trajectory": "maybe"})
