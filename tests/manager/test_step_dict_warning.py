"""No silent zero: the manager warns once per run when every sample of a training step, for a data source, came
without step dicts while a contribution term reads them (samples fed to ``run_single`` one by one, as verl's
reward workers do, each carrying its training step)."""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest

from verl_rewards.batching import streaming_item

from manager_support import build_manager, enc

WARNING = "came without step dicts"


def _item(tok, source: str, step: int, steps: dict | None = None):
    row = {"data_source": source, "reward_model": {"ground_truth": "42"}, "extra_info": {"index": 0}}
    row["global_steps"] = step
    if steps is not None:
        row["tool_extra_fields"] = steps
    return streaming_item(enc(tok, "q"), enc(tok, "42"), row)


def _score(mgr, tok, samples) -> None:
    async def go() -> None:
        for source, step, steps in samples:
            await mgr.run_single(_item(tok, source, step, steps))

    asyncio.run(go())


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if WARNING in r.getMessage()]


@pytest.fixture
def manager(small_tokenizer_dir, small_tokenizer):
    return build_manager(small_tokenizer_dir, small_tokenizer, "exact_match", {"contribution.type": "C0"})


def test_one_warning_per_run_naming_the_data_source(manager, small_tokenizer, caplog):
    recorded = {"prev_step_dict": [], "cur_step_dict": []}  # a loop that records them; no tool turn this time
    step_one = [("plain", 1, None), ("plain", 1, None), ("tools", 1, recorded), ("tools", 1, None)]
    with caplog.at_level(logging.WARNING, logger="verl_rewards"):
        _score(manager, small_tokenizer, step_one)
        assert _warnings(caplog) == []  # step 1 is not over yet
        _score(manager, small_tokenizer, [("plain", 2, None)])  # a sample of step 2: step 1 is judged
        _score(manager, small_tokenizer, [("plain", 3, None), ("plain", 4, None), ("plain", 5, None)])
    warnings = _warnings(caplog)
    assert len(warnings) == 1
    assert "data source(s) 'plain'" in warnings[0] and "'tools'" not in warnings[0]
    assert "c0 (C0)" in warnings[0] and "reward.reward_kwargs.contribution.type=none" in warnings[0]
    assert manager.core.step_dicts.reported == ["plain"]


def test_no_warning_when_step_dicts_arrive_or_no_term_reads_them(small_tokenizer_dir, small_tokenizer, caplog):
    with_steps = build_manager(small_tokenizer_dir, small_tokenizer, "exact_match", {"contribution.type": "C1"})
    steps = {"prev_step_dict": [{"value_est": 0.0}], "cur_step_dict": [{"value_est": 0.5}]}
    without_terms = build_manager(small_tokenizer_dir, small_tokenizer, "exact_match", {"contribution.type": "none"})
    with caplog.at_level(logging.WARNING, logger="verl_rewards"):
        _score(with_steps, small_tokenizer, [("tools", s, steps) for s in (1, 1, 2, 3)])
        _score(without_terms, small_tokenizer, [("plain", s, None) for s in (1, 2, 3)])
        # a late sample of an earlier step is not counted in the step the watch is in
        _score(with_steps, small_tokenizer, [("tools", 2, None), ("tools", 4, steps)])
    assert _warnings(caplog) == []
    assert with_steps.core.step_dicts.reported is None and without_terms.core.step_dicts.reported is None


@pytest.mark.ray
def test_the_claim_is_shared_by_every_worker_of_a_ray_job(ray_cluster):
    from verl_rewards.manager.step_watch import claim_once_per_run

    ray = ray_cluster

    @ray.remote(num_cpus=0)
    def claim(key: str) -> bool:
        return claim_once_per_run(key)

    # keys of this test alone: the claims actor lives for the whole Ray job, which earlier tests share
    key = f"missing_step_dicts-{uuid.uuid4().hex}"
    got = ray.get([claim.remote(key) for _ in range(4)])
    assert sorted(got) == [False, False, False, True]
    assert ray.get(claim.remote(f"another_key-{uuid.uuid4().hex}")) is True


@pytest.mark.ray
def test_the_claims_outlive_the_call_that_created_them(ray_cluster):
    """Reward workers are long-lived actors that claim one after another: the claims actor the first one created
    must still hold its claim when the next asks (an actor that is not detached ends when its creator drops the
    last handle it owns)."""
    from verl_rewards.manager.step_watch import CLAIMS_ACTOR, claim_once_per_run

    ray = ray_cluster

    @ray.remote(num_cpus=0)
    class RewardWorker:
        def claim(self, key: str) -> bool:
            return claim_once_per_run(key)

    first, second = RewardWorker.remote(), RewardWorker.remote()
    assert ray.get(first.claim.remote("outlives")) is True
    actor = ray.get_actor(CLAIMS_ACTOR)
    assert ray.get(actor.claim.remote("outlives")) is False  # the first claim is still there
    assert ray.get(second.claim.remote("outlives")) is False
    assert ray.get(second.claim.remote("outlives_2")) is True
    assert ray.get(first.claim.remote("outlives_2")) is False
