"""The smoke policy: training groups that mix scripted and sampled rollouts, seeds per request that make a run
independent of the order requests reach the server, and the replay buffer's row order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml

from verl_rewards.commands.smoke import SCRIPT_RATIO
from verl_rewards.cpu.model import build_tiny_qwen2
from verl_rewards.cpu.policy import PolicyAgentLoop, SeededServer, sample_seed, scripted_session, trajectory_key
from verl_rewards.cpu.rollout import HFCpuServer
from verl_rewards.cpu.sampler import trajectory_order
from verl_rewards.smoke.data import SmokeData, loop_name, wrap_loops
from verl_rewards.smoke.recipe import cpu_overrides

OFFSETS = [i / 97 for i in range(97)]


@pytest.mark.parametrize("ratio,n,scripted", [(0.5, 2, 1), (0.5, 4, 2), (0.25, 4, 1), (0.75, 4, 3), (1.0, 3, 3)])
def test_every_group_holds_the_ratio_s_share_of_scripted_rollouts(ratio, n, scripted):
    for offset in OFFSETS:
        assert sum(scripted_session(ratio, s, offset) for s in range(n)) == scripted


def test_the_default_ratio_mixes_one_scripted_and_one_sampled_rollout_per_default_group():
    assert SCRIPT_RATIO == 0.5
    for offset in OFFSETS:
        assert {scripted_session(SCRIPT_RATIO, s, offset) for s in (0, 1)} == {True, False}
    assert not any(scripted_session(0.0, s, 0.3) for s in range(4))


def test_seeds_are_the_same_for_the_same_trajectory_and_differ_otherwise():
    key = trajectory_key(7, "train", 3, 5, 1)
    assert sample_seed(*key, 0) == sample_seed(*trajectory_key(7, "train", 3, 5, 1), 0)
    others = {
        sample_seed(*trajectory_key(*parts), call)
        for parts, call in [((7, "train", 3, 5, 1), 1), ((7, "train", 4, 5, 1), 0), ((7, "train", 3, 6, 1), 0),
                            ((7, "train", 3, 5, 0), 0), ((8, "train", 3, 5, 1), 0), ((7, "val", 3, 5, 1), 0)]
    }  # fmt: skip
    assert len(others) == 6 and sample_seed(*key, 0) not in others
    assert 0 <= sample_seed(*key, 0) < 2**63
    # validation draws the same numbers at every step
    assert trajectory_key(7, "val", 3, 5, 1) == trajectory_key(7, "val", 9, 5, 1)


class _Recorder:
    def __init__(self, server: HFCpuServer):
        self.server = server
        self.seeds: list[int] = []

    async def generate(self, *, request_id, prompt_ids, sampling_params, **kwargs):
        self.seeds.append(sampling_params["seed"])
        return await self.server.generate(prompt_ids=prompt_ids, sampling_params=sampling_params, request_id=request_id)


def test_a_seeded_trajectory_samples_the_same_tokens_whatever_ran_before(tmp_path: Path):
    model = build_tiny_qwen2(tmp_path / "m", ["find the order and cancel it"] * 20)
    cfg = SimpleNamespace(prompt_length=16, response_length=12, max_model_len=None, engine_kwargs={})
    server = HFCpuServer(cfg, SimpleNamespace(local_path=model, path=model))
    params = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True, "ignore_eos": True}

    def trajectory(key: tuple, turns: int = 2) -> tuple[list[list[int]], list[int]]:
        recorder = _Recorder(server)
        seeded = SeededServer(recorder, key)
        outs = [
            asyncio.run(seeded.generate("r", prompt_ids=[5, 6, 7], sampling_params=dict(params))).token_ids
            for _ in range(turns)
        ]
        return outs, recorder.seeds

    first, seeds = trajectory(trajectory_key(1, "train", 1, 0, 0))
    trajectory(trajectory_key(1, "train", 1, 0, 1))  # another rollout in between draws from the global generator
    again, seeds_again = trajectory(trajectory_key(1, "train", 1, 0, 0))
    assert first == again and seeds == seeds_again
    assert seeds[0] != seeds[1] and first[0] != first[1]  # each call of a trajectory has its own seed


def test_batches_are_ordered_by_row_then_rollout():
    keys = ["c9_1_0", "a1_0_0", "f3_1_0", "b2_0_1", "b2_0_0", "e7_0_0"]
    indexes = [3, 7, 7, 3, 3, 1]
    assert trajectory_order(keys, indexes) == ["e7_0_0", "b2_0_0", "b2_0_1", "c9_1_0", "a1_0_0", "f3_1_0"]


def test_each_split_gets_its_loop_training_mixed_and_validation_scripted(tmp_path: Path):
    prompt = [{"role": "user", "content": "x"}]
    frame = pd.DataFrame({"prompt": [prompt] * 2, "agent_name": ["tool_agent", "tau2_agent"]})
    train, val = tmp_path / "train.parquet", tmp_path / "val.parquet"
    frame.to_parquet(train)
    frame.to_parquet(val)
    path = wrap_loops(SmokeData(train, val, None, [], 0), "script", 0.5, "m:f", tmp_path)
    loops = {e["name"]: e for e in yaml.safe_load(path.read_text())}
    assert loops[loop_name("train", "tool_agent")]["script_ratio"] == 0.5
    assert loops[loop_name("val", "tool_agent")]["script_ratio"] == 1.0
    assert {e["split"] for e in loops.values()} == {"train", "val"} and len(loops) == 4
    assert list(pd.read_parquet(val)["agent_name"]) == [loop_name("val", "tool_agent"), loop_name("val", "tau2_agent")]


def test_a_validation_seed_of_its_own_replaces_the_rollout_seed_in_validation_only(tmp_path: Path, small_tokenizer):
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap

    frame = pd.DataFrame({"prompt": [[{"role": "user", "content": "x"}]], "agent_name": ["tool_agent"]})
    train, val = tmp_path / "train.parquet", tmp_path / "val.parquet"
    frame.to_parquet(train)
    frame.to_parquet(val)
    path = wrap_loops(SmokeData(train, val, None, [], 0), "sample", 0.0, "m:f", tmp_path, val_seed=5)
    entries = {e["split"]: e for e in yaml.safe_load(path.read_text())}
    assert entries["val"]["seed"] == 5 and "seed" not in entries["train"]
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"seed": 7}}})
    kwargs = {"session_id": 1, "global_steps": 3, "index": 4}

    def key(entry: dict) -> tuple:
        options = {k: v for k, v in entry.items() if k not in ("name", "_target_")}
        loop = PolicyAgentLoop(trainer_config=DictConfigWrap(config), server_manager=None, tokenizer=small_tokenizer,
                               processor=None, dataset_cls=None, data_config=DictConfigWrap(OmegaConf.create({})),
                               **options)  # fmt: skip
        return loop.seed_key(kwargs)

    assert key(entries["val"]) == trajectory_key(5, "val", 0, 4, 1)
    assert key(entries["train"]) == trajectory_key(7, "train", 3, 4, 1)
    # without a validation seed, validation draws from verl's rollout.seed as before
    plain = yaml.safe_load(wrap_loops(SmokeData(train, val, None, [], 0), "sample", 0.0, "m:f", tmp_path).read_text())
    assert key(next(e for e in plain if e["split"] == "val")) == trajectory_key(7, "val", 0, 4, 1)


def test_mixed_groups_cap_sampled_turns_but_not_the_scripted_conversation(tmp_path: Path):
    common = dict(model="/m", out=tmp_path, steps=2, batch=2, n=2, prompt_len=512, response_len=8192,
                  loops_yaml=None, wandb=False)  # fmt: skip
    mixed = cpu_overrides(policy="mixed", **common)  # type: ignore[arg-type]
    assert "+actor_rollout_ref.rollout.engine_kwargs.hf_cpu.max_new_tokens=48" in mixed
    assert not [o for o in mixed if "max_assistant_turns" in o]
    sample = cpu_overrides(policy="sample", **common)  # type: ignore[arg-type]
    assert "actor_rollout_ref.rollout.multi_turn.max_assistant_turns=4" in sample
    script = cpu_overrides(policy="script", **common)  # type: ignore[arg-type]
    assert not [o for o in script if "max_new_tokens" in o]
