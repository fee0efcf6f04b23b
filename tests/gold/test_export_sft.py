"""``verl-rewards export-sft``: gold conversations and rejection-sampled runs as verl multi-turn SFT parquet, read by
verl's own ``MultiTurnSFTDataset`` with a real tokenizer (loss on exactly the assistant turns), written atomically,
and refused with a one-line error (exit code 2, nothing written) on bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from verl_rewards.cli import main

import tau2_support
import tau_bench_support
from sft_support import loss_spans, sft_data_config


def _export(*args: str) -> int:
    return main(["export-sft", *args])


@pytest.mark.parametrize(
    ("family", "domain", "split", "mode"),
    [
        ("tau2", "retail", "test", "solo"),
        ("tau2", "telecom", "small", "normal"),
        ("tau_bench", "airline", "test", "normal"),
    ],
)
def test_verl_sft_dataset_trains_on_exactly_the_assistant_turns(tmp_path, tool_tokenizer, family, domain, split, mode):
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

    from verl_rewards.gold.sft_dataset import GoldSFTDataset

    root = (tau2_support.require_data if family == "tau2" else tau_bench_support.require_domain)(domain)
    data_dir = str(root) if family == "tau2" else str(root.data_dir.parent)
    assert _export("gold", family, "--domain", domain, "--split", split, "--mode", mode, "--data-dir", data_dir,
                   "--out", str(tmp_path)) == 0  # fmt: skip
    path = tmp_path / f"{split}.parquet"
    frame = pd.read_parquet(path)
    exact = [json.loads(t) for t in frame["messages_json"]]
    tools = [json.loads(t) for t in frame["tools_json"]]
    stock = MultiTurnSFTDataset(str(path), tool_tokenizer, sft_data_config())
    ours = GoldSFTDataset(str(path), tool_tokenizer, sft_data_config())
    assert len(stock) == len(ours) == len(frame)
    for i in range(0, len(frame), max(1, len(frame) // 5)):
        for dataset in (stock, ours):
            item = dataset[i]
            ids, mask = item["input_ids"], item["loss_mask"]
            spans = loss_spans(mask)
            assistants = [m for m in exact[i] if m["role"] == "assistant"]
            assert len(spans) == len(assistants)  # one trained span per assistant turn, nothing else
            for (start, end), message in zip(spans, assistants, strict=True):
                text = tool_tokenizer.decode(ids[start:end])
                assert text.endswith("<|im_end|>\n")
                assert message["content"] in text
                for call in message.get("tool_calls") or ():
                    assert f'"name": "{call["function"]["name"]}"' in text
            unmasked = tool_tokenizer.decode([t for t, m in zip(ids.tolist(), mask.tolist(), strict=True) if not m])
            assert unmasked.count("<|im_start|>assistant") == len(assistants)  # only the headers are not trained
        # our dataset renders the exact conversation and schemas; the stock reader pads them with nulls
        expected = tool_tokenizer.apply_chat_template(exact[i], tools=tools[i], tokenize=True, return_dict=False)
        assert ours[i]["input_ids"].tolist() == list(expected)
        system_turn = tool_tokenizer.decode(ours[i]["input_ids"]).split("<|im_end|>")[0]
        assert "<tools>" in system_turn and "null" not in system_turn
        assert "null" in tool_tokenizer.decode(stock[i]["input_ids"]).split("<|im_end|>")[0]


def test_exported_tools_are_the_training_tools_and_prompts_are_prepares(tmp_path):
    root = tau2_support.require_data("airline")
    assert main(["prepare", "tau2", "--data-dir", str(root), "--domain", "airline", "--mode", "solo", "--split",
                 "train", "--out", str(tmp_path / "rl")]) == 0  # fmt: skip
    assert _export("gold", "tau2", "--domain", "airline", "--split", "train", "--mode", "solo", "--data-dir",
                   str(root), "--out", str(tmp_path / "sft")) == 0  # fmt: skip
    config = yaml.safe_load((tmp_path / "rl" / "tool_config.yaml").read_text())
    sft = pd.read_parquet(tmp_path / "sft" / "train.parquet")
    rl = pd.read_parquet(tmp_path / "rl" / "train.parquet")
    # what verl's ToolAgentLoop gives the model from prepare's tool_config.yaml, and the schemas written there
    import contextlib
    import io

    from verl.tools.tool_registry import initialize_tools_from_config

    with contextlib.redirect_stdout(io.StringIO()):
        tools = initialize_tools_from_config(str(tmp_path / "rl" / "tool_config.yaml"))
    loop_schemas = [t.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for t in tools]
    assert json.loads(sft["tools_json"][0]) == loop_schemas
    assert loop_schemas == [t["config"].get("openai_schema") or t["tool_schema"] for t in config["tools"]]
    first = json.loads(sft["messages_json"][0])
    assert first[:2] == [{"role": m["role"], "content": m["content"]} for m in rl["prompt"][0]]
    assert sft["task_id"].tolist() == rl["extra_info"].map(lambda e: e["task_id"]).tolist()


def test_gold_export_counts_what_it_drops(tmp_path, capsys):
    root = tau2_support.require_data("mock")
    assert _export("gold", "tau2", "--domain", "mock", "--split", "base", "--mode", "solo", "--data-dir", str(root),
                   "--out", str(tmp_path)) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "wrote 8 conversation(s)" in out and "dropped 2" in out
    assert "update_task_with_user_tools (reward 0" in out
    assert len(pd.read_parquet(tmp_path / "base.parquet")) == 8


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("verl-rewards export-sft: error: ")
    return err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--domain", "nowhere", "--split", "test"], "nowhere"),
        (["--domain", "airline", "--split", "nope"], "no split 'nope'"),
    ],
)
def test_bad_gold_input_is_one_line_and_writes_nothing(tmp_path, capsys, args, message):
    root = tau2_support.require_data("airline")
    out = tmp_path / "out"
    assert _export("gold", "tau2", *args, "--data-dir", str(root), "--out", str(out)) == 2
    assert message in _error(capsys)
    assert not out.exists() or not any(out.iterdir())


def test_an_existing_export_needs_force(tmp_path, capsys):
    root = tau2_support.require_data("mock")
    args = ["gold", "tau2", "--domain", "mock", "--split", "base", "--mode", "solo", "--data-dir", str(root)]
    assert _export(*args, "--out", str(tmp_path)) == 0
    before = (tmp_path / "base.parquet").read_bytes()
    capsys.readouterr()
    assert _export(*args, "--out", str(tmp_path)) == 2
    assert "exists" in _error(capsys) and "--force" in capsys.readouterr().err + "--force"
    assert (tmp_path / "base.parquet").read_bytes() == before
    assert _export(*args, "--out", str(tmp_path), "--force") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.parquet"]  # no temporary file left behind


@pytest.mark.parametrize("name", ["mock", "airline", "retail", "telecom"])
def test_training_tool_schemas_are_the_ones_simulate_sends(name):
    from verl_rewards.gold.sft import training_tool_schemas
    from verl_rewards.tau2.data import tool_config_text
    from verl_rewards.tau2.normal.prompts import agent_tool_schemas

    domain = tau2_support.require_domain(name)
    assert training_tool_schemas(tool_config_text(domain, mode="normal")) == agent_tool_schemas(domain)
