"""reward_extra/<key>/mean|max|min in both trainers: the legacy compute_data_metrics hook and the V1
trainer modes that read reward extras back from TransferQueue."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from verl_rewards.metrics import reward_extra_metrics

from repo_paths import SUPPORT
from verl_support import compose_verl_config


def test_numeric_bool_and_non_numeric_values():
    metrics = reward_extra_metrics(
        {
            "acc": np.array([1.0, 0.0, 1.0, 1.0]),
            "flag": np.array([True, False, False, False]),
            "pred": np.array(["a", "b", "c", "d"], dtype=object),
            "mixed": np.array([1, None, "x", 3], dtype=object),
            "nan": np.array([float("nan"), 2.0]),
        }
    )
    assert metrics["reward_extra/acc/mean"] == 0.75
    assert metrics["reward_extra/acc/max"] == 1.0 and metrics["reward_extra/acc/min"] == 0.0
    assert metrics["reward_extra/flag/mean"] == 0.25
    assert "reward_extra/pred/mean" not in metrics
    assert metrics["reward_extra/mixed/mean"] == 2.0 and metrics["reward_extra/mixed/min"] == 1.0
    assert metrics["reward_extra/nan/mean"] == 2.0


def _scored_batch(tokenizer_dir, tok):
    """A real padded batch scored by the manager's legacy adapter, laid out as the v0 trainer holds it."""

    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage
    from verl.trainer.ppo.reward import load_reward_manager

    from verl_rewards.batching import padded_batch

    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={tokenizer_dir}",
            "reward.reward_manager.name=contribution",
            f"reward.custom_reward_function.path={SUPPORT / 'score_fns.py'}",
            "reward.custom_reward_function.name=exact_match_dict",
            "+reward.reward_kwargs.contribution.type=C0",
        ]
    )
    mgr = load_reward_manager(config, tok)
    responses = ["42", "41", "42", "x"]
    batch = padded_batch(
        [tok.encode("q", add_special_tokens=False)] * 4,
        [tok.encode(r, add_special_tokens=False) for r in responses],
        {
            "data_source": ["t"] * 4,
            "reward_model": [{"ground_truth": "42"}] * 4,
            "uid": ["u0", "u0", "u1", "u1"],
            "prev_step_dict": [{"bb_hash": "a"}] * 4,
            "cur_step_dict": [{"bb_hash": "a"}, {"bb_hash": "b"}, {"bb_hash": "a"}, {"bb_hash": "a"}],
        },
        pad_token_id=tok.pad_token_id,
    )
    out = mgr(batch, return_dict=True)
    width = batch.batch["prompts"].shape[1]
    mask = batch.batch["attention_mask"][:, width:]
    adv, ret = compute_grpo_outcome_advantage(out["reward_tensor"], mask, np.array(batch.non_tensor_batch["uid"]))
    batch.batch.update(
        {
            "token_level_scores": out["reward_tensor"],
            "token_level_rewards": out["reward_tensor"],
            "response_mask": mask,
            "advantages": adv,
            "returns": ret,
        }
    )
    batch.non_tensor_batch.update({k: np.array(v) for k, v in out["reward_extra_info"].items()})
    batch.meta_info["reward_extra_keys"] = list(out["reward_extra_info"])
    return batch


def test_legacy_trainer_compute_data_metrics_reports_reward_extra(small_tokenizer_dir, small_tokenizer):
    import verl.trainer.ppo.ray_trainer as ray_trainer
    from verl.trainer.ppo import metric_utils

    from verl_rewards.metrics import compute_data_metrics_hooked

    assert compute_data_metrics_hooked()
    assert ray_trainer.compute_data_metrics is metric_utils.compute_data_metrics  # the name the trainer calls
    batch = _scored_batch(small_tokenizer_dir, small_tokenizer)
    metrics = ray_trainer.compute_data_metrics(batch=batch, use_critic=False)
    assert metrics["critic/score/mean"] == pytest.approx((2.0 + 0.0 + 2.0 + 0.0) / 4 + 0.05 * 0.25, abs=1e-6)
    assert metrics["reward_extra/base_score/mean"] == pytest.approx(1.0)
    assert metrics["reward_extra/acc/mean"] == pytest.approx(0.5)
    assert metrics["reward_extra/contrib_c0/max"] == 1.0 and metrics["reward_extra/contrib_c0/mean"] == 0.25
    assert metrics["reward_extra/contrib/max"] == pytest.approx(0.05)  # the weighted bonus added to the score
    assert metrics["reward_extra/resp_chars/max"] == 2.0
    assert not any(k.startswith("reward_extra/pred/") for k in metrics)  # strings are skipped


@pytest.mark.parametrize("mode", ["sync", "colocate_async", "separate_async"])
def test_v1_builtin_modes_keep_verls_classes_and_log_reward_extra(mode):
    """Metrics in the V1 trainer change nothing else: the mode's class is verl's own, and verl's replay-buffer
    choice (``trainer_mode == "sync"``) and mode settings lookup see the built-in name."""
    from verl.trainer.ppo.v1 import PPOTrainerColocateAsync, PPOTrainerSeparateAsync, PPOTrainerSync, get_trainer_cls
    from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer, ReplayBufferAsync
    from verl.trainer.ppo.v1.trainer_base import PPOTrainer

    expected = {
        "sync": PPOTrainerSync,
        "colocate_async": PPOTrainerColocateAsync,
        "separate_async": PPOTrainerSeparateAsync,
    }[mode]
    cls = get_trainer_cls(mode)
    assert cls is expected and cls.__module__.startswith("verl.")
    assert cls._compute_metrics is PPOTrainer._compute_metrics
    assert PPOTrainer._compute_metrics.__verl_rewards_hook__

    config = compose_verl_config([f"trainer.v1.trainer_mode={mode}"])
    trainer = object.__new__(cls)
    trainer.config = config
    trainer.trainer_mode = config.trainer.v1.trainer_mode
    trainer._add_prompts_to_generate = lambda *a, **k: None
    buffer = trainer._build_replay_buffer()  # verl's own code path
    assert type(buffer) is (ReplayBuffer if mode == "sync" else ReplayBufferAsync)


def test_retired_reward_extra_modes_fail_with_the_builtin_name():
    from verl.trainer.ppo.v1 import get_trainer_cls

    with pytest.raises(ValueError, match="trainer_mode=sync_reward_extra is retired: use trainer.v1.trainer_mode=sync"):
        get_trainer_cls("sync_reward_extra")(compose_verl_config([]))


@pytest.mark.ray
def test_v1_compute_metrics_reads_reward_extra_from_transfer_queue(ray_cluster):
    import transfer_queue as tq
    from transfer_queue.metadata import KVBatchMeta
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    config = compose_verl_config(["transfer_queue.backend.SimpleStorage.num_data_storage_units=1"])
    tq.init(config.transfer_queue)
    try:
        rows, keys, tags = [], [], []
        infos = [
            {"base_score": 1.0, "contrib": 1.0, "reward_error": 0, "pred": "a", "ok": True},
            {"base_score": 0.0, "contrib": 0.0, "reward_error": 1, "pred": "b", "ok": False},
            {"base_score": 0.5, "contrib": 0.0, "reward_error": 0, "pred": "c", "ok": True},
            {"base_score": 9.0, "contrib": 9.0, "reward_error": 9, "pred": "pad", "ok": True},  # padding row
        ]
        for i, info in enumerate(infos):
            n = 3 + i
            score = torch.zeros(n)
            score[-1] = info["base_score"]
            rows.append(
                {
                    "prompts": torch.arange(4),
                    "responses": torch.arange(n),
                    "response_mask": torch.ones(n, dtype=torch.long),
                    "values": torch.zeros(n),
                    "advantages": torch.zeros(n),
                    "returns": torch.zeros(n),
                    "rm_scores": score,
                    "token_level_rewards": score,
                    "num_turns": 2,
                    "extra_fields": {"reward_extra_info": info},
                }
            )
            keys.append(f"k{i}")
            tags.append({"status": "success", "min_global_steps": 0, "max_global_steps": 0, "is_padding": i == 3})
        tq.kv_batch_put(keys=keys, fields=list_of_dict_to_tensordict(rows), tags=tags, partition_id="train")
        meta = KVBatchMeta(keys=keys, tags=tags, partition_id="train")

        trainer = object.__new__(get_trainer_cls("sync"))
        trainer.config = compose_verl_config([])
        trainer.use_critic = False
        trainer._rollout_moe_lb_metrics_accumulator = None
        trainer._get_n_gpus_for_throughput = lambda: 1
        metrics: dict = {}
        trainer._compute_metrics(meta, metrics, {"step": 1.0}, global_steps=1, epoch=0)
    finally:
        tq.close()
    assert "critic/score/mean" in metrics  # verl's own metrics still there
    assert metrics["reward_extra/base_score/mean"] == pytest.approx(0.5)
    assert metrics["reward_extra/base_score/max"] == 1.0
    assert metrics["reward_extra/reward_error/mean"] == pytest.approx(1 / 3)
    assert metrics["reward_extra/ok/mean"] == pytest.approx(2 / 3)
    assert metrics["reward_extra/contrib/max"] == 1.0  # the padding row (9.0) is excluded
    assert not any(k.startswith("reward_extra/pred/") for k in metrics)
