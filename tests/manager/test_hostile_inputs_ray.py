"""Hostile numbers and token ids through verl's real RewardLoopManager / RewardLoopWorker actors on Ray: flagged
per sample, never a ``RayTaskError``, and verl's GDPO over the result stays finite."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from verl_rewards.batching import padded_batch

from repo_paths import SUPPORT
from verl_support import compose_verl_config

pytestmark = pytest.mark.ray
HOSTILE = str(SUPPORT / "hostile_fns.py")
HUGE = 10**400


def test_huge_numbers_bad_token_ids_and_bad_components_are_flagged_per_sample(
    ray_cluster, small_tokenizer_dir, small_tokenizer
):
    import ray
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager
    from verl.trainer.ppo.ray_trainer import compute_advantage

    tok = small_tokenizer
    terms = "[{type: C1, beta: 0.5}, {type: C2, beta: 0.1, schedule: exp, half_life: 10}]"
    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={small_tokenizer_dir}",
            "reward.reward_manager.name=contribution",
            "reward.num_workers=1",
            f"reward.custom_reward_function.path={HOSTILE}",
            "reward.custom_reward_function.name=bad_component",
            f"+reward.reward_kwargs.contribution.terms={terms}",
            "algorithm.adv_estimator=gdpo",
            "+algorithm.gdpo_reward_keys=[quality]",
        ]
    )
    responses = ["42", "42", "42", "42", "nan", "huge", "42", "7"]
    n = len(responses)
    batch = padded_batch(
        [tok.encode("q", add_special_tokens=False)] * n,
        [tok.encode(r, add_special_tokens=False) for r in responses],
        {
            "data_source": ["t"] * n,
            "reward_model": [{"ground_truth": "42"}] * n,
            "extra_info": [{"index": i} for i in range(n)],
            "uid": ["a"] * 4 + ["b"] * 4,
            "prev_step_dict": [{"value_est": 0.0}] * n,
            "cur_step_dict": ['{"value_est": 1' + "0" * 400 + "}"] + [{"value_est": 0.5}] * (n - 1),
            "global_steps": [3, math.inf] + [None] * (n - 2),
            "step": [None, None, HUGE] + [None] * (n - 3),
        },
        pad_token_id=tok.pad_token_id,
    )
    width = batch.batch["prompts"].shape[1]
    batch.batch["responses"][3, 0] = -5  # an id no tokenizer can decode
    batch.batch["input_ids"][:, width:] = batch.batch["responses"]
    manager = RewardLoopManager(config)
    try:
        out = manager.compute_rm_score(batch)
    finally:
        for worker in manager.reward_loop_workers:
            ray.kill(worker)
    info = out.non_tensor_batch
    assert info["reward_error"].tolist() == [0, 0, 0, 1, 0, 0, 0, 0]  # only the undecodable row failed
    assert info["step_error"].tolist() == [0, 1, 1, 0, 0, 0, 0, 0]
    assert info["contrib_missing"].tolist() == [2.0] + [0.0] * 7
    assert info["extra_dropped"].tolist() == [0, 0, 0, 0, 1, 1, 0, 0]
    assert info["quality"].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    scores = out.batch["rm_scores"].sum(-1).tolist()
    assert scores == pytest.approx([1.0, 1.3, 1.3, 0.3, 0.3, 0.3, 1.3, 0.3])

    # verl's legacy trainer puts the extras into the batch and hands them to its GDPO estimator
    data = batch.union(out)
    data.batch["token_level_rewards"] = out.batch["rm_scores"]
    data.batch["response_mask"] = data.batch["attention_mask"][:, width:]
    data = compute_advantage(data, adv_estimator="gdpo", config=config.algorithm)
    assert torch.isfinite(data.batch["advantages"]).all()
    assert np.isfinite(np.asarray(info["quality"], dtype=np.float32)).all()
