"""End to end through verl's real RewardLoopManager / RewardLoopWorker actors on a local Ray cluster."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from verl_rewards.batching import padded_batch, streaming_item

from repo_paths import SUPPORT
from verl_support import compose_verl_config

pytestmark = pytest.mark.ray
SCORE_FNS = str(SUPPORT / "score_fns.py")


def _manager(tokenizer_dir, name, fn, extra=()):
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={tokenizer_dir}",
            f"reward.reward_manager.name={name}",
            "reward.num_workers=2",
            f"reward.custom_reward_function.path={SCORE_FNS}",
            f"reward.custom_reward_function.name={fn}",
            *extra,
        ]
    )
    return RewardLoopManager(config)


def _release(manager):
    import ray

    for worker in manager.reward_loop_workers:
        ray.kill(worker)


def _batch(tok, responses, **fields):
    n = len(responses)
    return padded_batch(
        [tok.encode(f"question {i}", add_special_tokens=False) for i in range(n)],
        [tok.encode(r, add_special_tokens=False) for r in responses],
        {
            "data_source": ["t"] * n,
            "reward_model": [{"ground_truth": "42"}] * n,
            "extra_info": [{"index": i} for i in range(n)],
            **fields,
        },
        pad_token_id=tok.pad_token_id,
    )


@pytest.mark.parametrize("fn", ["exact_match", "exact_match_dict"])
def test_contribution_off_equals_verl_naive(ray_cluster, small_tokenizer_dir, small_tokenizer, fn):
    tok = small_tokenizer
    responses = ["42", "41", " 42 ", "", "forty-two", "42 is it"]
    batch = _batch(tok, responses, prev_step_dict=[{"bb_hash": "a"}] * 6, cur_step_dict=[{"bb_hash": "b"}] * 6)
    naive = _manager(small_tokenizer_dir, "naive", fn)
    expected = naive.compute_rm_score(batch[[0, 1, 2, 4, 5]])  # naive would put an empty response's score at -1
    _release(naive)
    ours = _manager(small_tokenizer_dir, "contribution", fn, ["+reward.reward_kwargs.contribution.type=none"])
    got = ours.compute_rm_score(batch)
    _release(ours)
    keep = [0, 1, 2, 4, 5]
    assert torch.equal(got.batch["rm_scores"][keep], expected.batch["rm_scores"])
    assert torch.count_nonzero(got.batch["rm_scores"][3]) == 0
    for key in expected.meta_info["reward_extra_keys"]:
        if key == "score":
            np.testing.assert_array_equal(got.non_tensor_batch["base_score"][keep], expected.non_tensor_batch[key])
        else:
            np.testing.assert_array_equal(got.non_tensor_batch[key][keep], expected.non_tensor_batch[key])
    assert set(got.meta_info["reward_extra_keys"]) >= {"base_score", "contrib", "reward_error", "reward_timeout"}


def test_streaming_call_and_colocated_batch_with_contribution(ray_cluster, small_tokenizer_dir, small_tokenizer):
    import ray
    from verl.trainer.ppo.reward import extract_reward

    tok = small_tokenizer
    mgr = _manager(
        small_tokenizer_dir,
        "contribution",
        "exact_match_dict",
        ["+reward.reward_kwargs.contribution.type=C1", "+reward.reward_kwargs.contribution.beta=0.5"],
    )
    try:
        batch = _batch(
            tok,
            ["42", "7"],
            prev_step_dict=['{"value_est": 0.1}', {"value_est": 0.9}],
            cur_step_dict=[{"value_est": 0.5}, {"value_est": 0.2}],
        )
        out = mgr.compute_rm_score(batch)
        scores, extras = extract_reward(batch.union(out))
        assert scores.sum(-1).tolist() == pytest.approx([2.0 + 0.5 * 0.4, 0.0])
        assert extras["contrib_c1"].tolist() == pytest.approx([0.4, 0.0])
        assert extras["contrib"].tolist() == pytest.approx([0.5 * 0.4, 0.0])
        # the agent loop's streaming call: one trajectory to a worker handle, step dicts in tool_extra_fields
        item = streaming_item(
            tok.encode("q", add_special_tokens=False),
            tok.encode("42", add_special_tokens=False),
            {
                "data_source": "t",
                "reward_model": {"ground_truth": "42"},
                "tool_extra_fields": {"prev_step_dict": {"value_est": 0.0}, "cur_step_dict": {"value_est": 1.0}},
                "global_steps": 3,
            },
        )
        result = ray.get(mgr.reward_loop_worker_handles[0].compute_score.remote(item))
        assert result["reward_score"] == pytest.approx(2.5)
        assert result["reward_extra_info"]["contrib_c1"] == 1.0
    finally:
        _release(mgr)


def test_demo_prints_reward_extra_training_metrics(ray_cluster, capsys, tmp_path, monkeypatch):
    import tempfile

    from verl_rewards.demo import run_demo

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the demo's own temporary folder goes
    metrics = run_demo(n_prompts=4, rollout_n=4, contrib_type="C1", beta=0.05)
    assert list(tmp_path.iterdir()) == []  # the demo leaves no folder behind
    out = capsys.readouterr().out
    assert "reward_extra/contrib/mean" in out and "critic/score/mean" in out
    expected = metrics["reward_extra/base_score/mean"] + metrics["reward_extra/contrib/mean"]  # contrib: the bonus
    assert metrics["critic/score/mean"] == pytest.approx(expected, abs=1e-5)
    assert metrics["reward_extra/contrib/mean"] == pytest.approx(0.05 * metrics["reward_extra/contrib_c1/mean"])
    assert metrics["reward_extra/beta_c1/mean"] == pytest.approx(0.05)
    assert metrics["reward_extra/reward_error/max"] == 0.0
    assert 0.0 <= metrics["reward_extra/acc/mean"] <= 1.0
