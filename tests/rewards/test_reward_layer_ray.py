"""The reward layer through verl's real Ray reward loop: mixed data sources with different extras in one
batch, plus rewards that raise, hang and return NaN — the step finishes within the timeout, keys are stable."""

from __future__ import annotations

import pytest

from verl_rewards.batching import padded_batch

from repo_paths import SUPPORT
from verl_support import compose_verl_config

pytestmark = pytest.mark.ray
LAYER = str(SUPPORT / "reward_fns_layer.py")


def test_mixed_sources_and_faulty_rewards_in_one_batch(ray_cluster, small_tokenizer_dir, small_tokenizer):
    import ray
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager
    from verl.trainer.ppo.reward import extract_reward

    tok = small_tokenizer
    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={small_tokenizer_dir}",
            "reward.reward_manager.name=contribution",
            "reward.num_workers=2",
            f"+reward.reward_kwargs.modules=[{LAYER}]",
            "+reward.reward_kwargs.reward_fn=qa_em",
            "+reward.reward_kwargs.reward_fn_by_source={lengthy: t_len, cls: t_class}",
            "+reward.reward_kwargs.timeout_s=2",
            "+reward.reward_kwargs.contribution.type=C0",
        ]
    )
    rows = [
        ("qa", "42", None),
        ("cls", "anything", None),
        ("lengthy", "far too long for the limit", None),
        ("qa", "nope", "t_raise"),
        ("qa", "x", "t_hang"),
        ("qa", "x", "t_nan"),
        ("qa", "the 42", None),
        ("lengthy", "ok", None),
    ]
    n = len(rows)
    batch = padded_batch(
        [tok.encode(f"q{i}", add_special_tokens=False) for i in range(n)],
        [tok.encode(r[1], add_special_tokens=False) for r in rows],
        {
            "data_source": [r[0] for r in rows],
            "reward_model": [{"ground_truth": "42"}] * n,
            "extra_info": [{"index": i, "reward_fn": r[2], "max_length": 10} for i, r in enumerate(rows)],
            "length_penalty": [True] * n,
            "prev_step_dict": [{"bb_hash": "a"}] * n,
            "cur_step_dict": [{"bb_hash": "a" if i % 2 else "b"} for i in range(n)],
        },
        pad_token_id=tok.pad_token_id,
    )
    manager = RewardLoopManager(config)
    try:
        manager.compute_rm_score(batch[:2])  # start the actors outside the timed step
        out = manager.compute_rm_score(batch)
    finally:
        for w in manager.reward_loop_workers:
            ray.kill(w)
    scores, extras = extract_reward(batch.union(out))
    assert extras["base_score"].tolist() == [1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    assert extras["reward_error"].tolist() == [0, 0, 0, 1, 0, 1, 0, 0]
    # the hung reward was cut at its timeout (flagged, fallback score) instead of holding the step for 30 s
    assert extras["reward_timeout"].tolist() == [0, 0, 0, 0, 1, 0, 0, 0]
    assert extras["contrib_c0"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    # a failed call's base score is the fallback; the contribution term still applies
    assert scores.sum(-1).tolist() == pytest.approx([1.05, 0.5, 0.05, 0.0, 0.05, 0.0, 1.05, 1.0])
    for key in ("em", "f1", "cls_calls"):  # extras of different rewards are all present on every row
        assert len(extras[key]) == n
    assert extras["em"][6] == 1.0 and extras["f1"][6] == 1.0  # SQuAD normalisation drops the article
