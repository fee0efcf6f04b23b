"""Every sample of a run reports the same extra keys, whatever it returned, its data source or its timing; absent
values never count in metrics and never reach verl's GDPO estimator as NaN."""

from __future__ import annotations

import itertools
import logging

import numpy as np
import pytest
import torch

from verl_rewards.batching import padded_batch
from verl_rewards.metrics import reward_extra_metrics, validation_infos
from verl_rewards.scoring.extras import ABSENT_KEY, MAX_UNDECLARED_NAMES, UNDECLARED_KEY, ExtraKeys, present_columns

from repo_paths import SUPPORT
from verl_support import compose_verl_config

SCORE_FNS = str(SUPPORT / "score_fns.py")
GT = (
    "<think> I should use the appropriate tool with proper parameters to respond to the user's need. </think>\n"
    '<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}\n</tool_call>'
)
GOOD = '<think> The user wants the weather. </think>\n<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}\n</tool_call>'  # noqa: E501
HALF = '<think> hmm </think>\n<tool_call>\n{"name": "get_weather", "parameters": {"city": "Rome", "days": 3}}\n</tool_call>'  # noqa: E501


def test_row_has_every_declared_key_and_names_the_absent_ones():
    keys = ExtraKeys(["em", "f1"])
    full = keys.row({"base_score": 1.0, "em": 1.0, "f1": 0.5})
    bare = keys.row({"base_score": 0.0})
    assert list(full) == list(bare) == list(keys.names)
    assert set(full[ABSENT_KEY].split(",")) == {
        "contrib",
        "reward_error",
        "reward_timeout",
        "step_dict_error",
        "step_error",
    }
    assert bare["em"] == 0.0 and "em" in bare[ABSENT_KEY].split(",") and "f1" in bare[ABSENT_KEY].split(",")
    assert full[UNDECLARED_KEY] == bare[UNDECLARED_KEY] == ""


def test_absent_values_do_not_count_in_training_metrics():
    keys = ExtraKeys(["em"])
    rows = [keys.row({"base_score": 1.0, "em": 1.0}), keys.row({"base_score": 0.0}), keys.row({"base_score": 0.5})]
    columns = {k: [r[k] for r in rows] for k in keys.names}
    metrics = reward_extra_metrics(columns)
    assert metrics["reward_extra/em/mean"] == 1.0 and metrics["reward_extra/em/min"] == 1.0  # not (1+0+0)/3
    assert metrics["reward_extra/base_score/mean"] == pytest.approx(0.5)
    assert not any(k.startswith(f"reward_extra/{ABSENT_KEY}") for k in metrics)


def test_undeclared_components_are_kept_and_logged_once(caplog):
    keys = ExtraKeys([])
    with caplog.at_level(logging.WARNING, logger="verl_rewards"):
        rows = [
            keys.row({"base_score": 1.0, "judge": 0.25}, "fn"),
            keys.row({"base_score": 1.0}, "fn"),
            keys.row({"base_score": 1.0, "judge": 0.75}, "fn"),
        ]
    assert all(set(r) == set(keys.names) for r in rows)
    cols = present_columns({k: [r[k] for r in rows] for k in keys.names})
    assert cols["judge"] == [0.25, 0.75]
    assert reward_extra_metrics({k: [r[k] for r in rows] for k in keys.names})["reward_extra/judge/mean"] == 0.5
    assert sum("'judge'" in r.getMessage() for r in caplog.records) == 1


def test_a_new_key_per_sample_is_capped_with_an_error(caplog):
    keys = ExtraKeys([])
    with caplog.at_level(logging.WARNING, logger="verl_rewards"):
        rows = [keys.row({"base_score": 1.0, f"seen_{i}": 1.0}, "key_per_sample") for i in range(500)]
    assert all(list(r) == list(keys.names) for r in rows)  # the columns never grow
    cols = present_columns({k: [r[k] for r in rows] for k in keys.names})
    assert len([k for k in cols if k.startswith("seen_")]) == MAX_UNDECLARED_NAMES
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "new key per sample" in errors[0].getMessage()


def test_validation_metrics_average_only_over_samples_that_reported_a_key():
    from verl.trainer.ppo import metric_utils

    keys = ExtraKeys(["em"])
    rows = [keys.row({"base_score": s, **({"em": s} if s else {}), "judge": s}) for s in (1.0, 0.0, 1.0, 0.0)]
    infos = {k: [r[k] for r in rows] for k in keys.names}
    infos["reward"] = [1.0, 0.0, 1.0, 0.0]
    assert metric_utils.process_validation_metrics.__verl_rewards_hook__  # the plugin wrapped verl's function
    out = metric_utils.process_validation_metrics(["src"] * 4, ["u0", "u0", "u1", "u1"], infos)
    assert out["src"]["em"]["mean@1"] == 1.0  # the two samples without em are skipped, not counted as 0
    assert out["src"]["reward"]["mean@2"] == 0.5
    assert out["src"]["judge"]["mean@2"] == 0.5  # undeclared, unpacked
    assert ABSENT_KEY not in out["src"] and UNDECLARED_KEY not in out["src"]
    assert validation_infos(infos)["em"] == [1.0, None, 1.0, None]


@pytest.mark.ray
def test_mixed_results_with_the_slowest_sample_first_through_verls_reward_loop(
    ray_cluster, small_tokenizer_dir, small_tokenizer
):
    """sample 0 returns {"score", "em"} and finishes last; others return floats: verl would index every sample
    with sample 0's keys (KeyError before) or silently drop keys that sample 0 lacks."""
    import ray
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager
    from verl.trainer.ppo.reward import extract_reward

    tok = small_tokenizer
    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={small_tokenizer_dir}",
            "reward.reward_manager.name=contribution",
            "reward.num_workers=2",
            f"reward.custom_reward_function.path={SCORE_FNS}",
            "reward.custom_reward_function.name=em_sometimes",
        ]
    )
    mgr = RewardLoopManager(config)
    try:
        for responses in (["slow 1", "x", "y", "1", "z", "2"], ["slow x", "1", "y", "2", "z", "1"]):
            n = len(responses)
            batch = padded_batch(
                [tok.encode(f"q {i}", add_special_tokens=False) for i in range(n)],
                [tok.encode(r, add_special_tokens=False) for r in responses],
                {
                    "data_source": ["t"] * n,
                    "reward_model": [{"ground_truth": "1"}] * n,
                    "extra_info": [{"index": i} for i in range(n)],
                },
                pad_token_id=tok.pad_token_id,
            )
            out = mgr.compute_rm_score(batch)
            scores, extras = extract_reward(batch.union(out))
            expected = [float(r.strip() == "1") for r in responses]
            assert scores.sum(-1).tolist() == expected
            reported = [any(c.isdigit() for c in r) for r in responses]
            em_values = present_columns({k: list(v) for k, v in extras.items()})["em"]
            assert em_values == [e for e, rep in zip(expected, reported, strict=True) if rep]
            metrics = reward_extra_metrics({k: list(v) for k, v in extras.items()})
            assert metrics["reward_extra/em/mean"] == pytest.approx(np.mean(em_values))
            assert metrics["reward_extra/acc/mean"] == 0.0  # acc: only the float results (all wrong answers)
    finally:
        for worker in mgr.reward_loop_workers:
            ray.kill(worker)


def _legacy_gdpo_batch(tok, rows):
    """Score rows with the manager's legacy adapter and lay them out as verl's legacy trainer does."""
    from verl.trainer.ppo.reward import load_reward_manager

    mgr = load_reward_manager(
        compose_verl_config(
            [f"actor_rollout_ref.model.path={tok.name_or_path}", "reward.reward_manager.name=contribution"]
        ),
        tok,
    )
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": "Weather in Paris?"}], add_generation_prompt=True, tokenize=False
    )
    batch = padded_batch(
        [tok.encode(prompt, add_special_tokens=False)] * len(rows),
        [tok.encode(r[1] + "<|im_end|>", add_special_tokens=False) for r in rows],
        {
            "data_source": [r[0] for r in rows],
            "reward_model": [{"ground_truth": GT if r[0] == "rlla" else "42"} for r in rows],
            "uid": [r[0] for r in rows],
        },
        pad_token_id=tok.pad_token_id,
    )
    out = mgr(batch, return_dict=True)
    width = batch.batch["prompts"].shape[1]
    batch.batch["token_level_rewards"] = out["reward_tensor"]
    batch.batch["response_mask"] = batch.batch["attention_mask"][:, width:]
    batch.non_tensor_batch.update({k: np.array(v) for k, v in out["reward_extra_info"].items()})
    return batch


def test_gdpo_over_toolrl_components_on_mixed_batches_in_every_row_order(qwen_tokenizer):
    from verl.trainer.ppo.ray_trainer import compute_advantage

    tok = qwen_tokenizer
    algo = compose_verl_config(
        ["algorithm.adv_estimator=gdpo", "+algorithm.gdpo_reward_keys=[format,correctness,length]"]
    ).algorithm
    rows = [("openai/gsm8k", "#### 42"), ("openai/gsm8k", "#### 7"), ("rlla", GOOD), ("rlla", HALF)]
    for order in itertools.permutations(range(4)):
        batch = _legacy_gdpo_batch(tok, [rows[i] for i in order])
        data = compute_advantage(batch, adv_estimator="gdpo", config=algo)
        adv = data.batch["advantages"]
        assert torch.isfinite(adv).all()
        per_row = (adv * data.batch["response_mask"]).sum(-1) / data.batch["response_mask"].sum(-1)
        gsm = [j for j, i in enumerate(order) if rows[i][0] == "openai/gsm8k"]
        rlla = [j for j, i in enumerate(order) if rows[i][0] == "rlla"]
        # the gsm8k group reported no ToolRL component: zero advantage from each, so both rows are equal
        assert per_row[gsm[0]].item() == pytest.approx(per_row[gsm[1]].item(), abs=1e-5)
        assert abs(per_row[rlla[0]].item() - per_row[rlla[1]].item()) > 0.1  # GOOD beats HALF on correctness


@pytest.mark.ray
def test_gdpo_in_the_v1_trainer_reads_components_from_transfer_queue(ray_cluster):
    import transfer_queue as tq
    from transfer_queue.metadata import KVBatchMeta
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    keys = ExtraKeys(["format", "correctness"])
    infos = [
        keys.row({"base_score": 1.0, "format": 1.0, "correctness": 3.0}),
        keys.row({"base_score": 0.0, "format": 1.0, "correctness": -1.0}),
        keys.row({"base_score": 1.0}),  # gsm8k rows: no ToolRL component
        keys.row({"base_score": 0.0}),
    ]
    config = compose_verl_config(
        [
            "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
            "algorithm.adv_estimator=gdpo",
            "+algorithm.gdpo_reward_keys=[format,correctness]",
            "actor_rollout_ref.rollout.n=2",
        ]
    )
    tq.init(config.transfer_queue)
    try:
        rows, kv_keys, tags = [], [], []
        for i, info in enumerate(infos):
            score = torch.zeros(3)
            score[-1] = info["base_score"]
            rows.append(
                {
                    "uid": f"g{i // 2}",
                    "response_mask": torch.ones(3, dtype=torch.long),
                    "rm_scores": score,
                    "extra_fields": {"reward_extra_info": info},
                }
            )
            kv_keys.append(f"g{i // 2}_0_{i % 2}")
            tags.append({"status": "success", "min_global_steps": 0, "max_global_steps": 0})
        tq.kv_batch_put(keys=kv_keys, fields=list_of_dict_to_tensordict(rows), tags=tags, partition_id="train")
        meta = KVBatchMeta(keys=kv_keys, tags=tags, partition_id="train")
        trainer = object.__new__(get_trainer_cls("sync"))
        trainer.config = config
        trainer._compute_advantage(meta, {})  # verl's own method, with the plugin's GDPO columns
        adv = tq.kv_batch_get(keys=kv_keys, partition_id="train", select_fields=["advantages"])["advantages"]
        adv = [a.tolist() for a in adv.unbind(0)] if hasattr(adv, "unbind") else adv.tolist()
    finally:
        tq.close()
    flat = [float(np.mean(a)) for a in adv]
    assert all(np.isfinite(flat))
    assert flat[2] == pytest.approx(flat[3], abs=1e-5)  # the group without components: equal, zero from both
    assert flat[0] > flat[1]
