"""Every reward call, sync or async, is bounded by ``timeout_s``; hung calls never take capacity from later ones."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from verl_rewards.scoring.executors.threads import ThreadExecutor

from manager_support import build_manager, make_batch


def test_hung_sync_rewards_do_not_starve_later_batches(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "hangs_sometimes", {"timeout_s": 0.5})
    hung = mgr(make_batch(tok, ["q"] * 12, ["hang"] * 12), return_dict=True)  # more than min(32, cpus + 4) threads
    assert hung["reward_extra_info"]["reward_timeout"] == [1] * 12
    out = mgr(make_batch(tok, ["q"] * 6, ["42", "7", "42", "42", "x", "42"]), return_dict=True)
    assert out["reward_extra_info"]["reward_timeout"] == [0] * 6
    assert out["reward_tensor"].sum(-1).tolist() == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]


def test_healthy_samples_in_a_batch_with_hung_ones_score_within_their_own_time(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "hangs_sometimes", {"timeout_s": 1.0})
    responses = ["hang"] * 10 + ["42"] * 10
    out = mgr(make_batch(tok, ["q"] * 20, responses), return_dict=True)
    assert out["reward_extra_info"]["reward_timeout"] == [1] * 10 + [0] * 10
    assert out["reward_tensor"].sum(-1).tolist() == [0.0] * 10 + [1.0] * 10


def test_async_reward_blocking_its_event_loop_is_bounded_and_flagged(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "async_blocks", {"timeout_s": 0.5})
    out = mgr(make_batch(tok, ["q"] * 4, ["block", "42", "block", "7"]), return_dict=True)
    assert out["reward_extra_info"]["reward_timeout"] == [1, 0, 1, 0]  # the limit fired although the loop blocked
    assert out["reward_tensor"].sum(-1).tolist() == [0.0, 1.0, 0.0, 0.0]


def test_sys_exit_in_a_reward_is_an_error_reported_at_once(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exits", {"timeout_s": 3600})  # a lost call would hang the test
    out = mgr(make_batch(tok, ["q", "q"], ["42", "7"]), return_dict=True)
    assert out["reward_extra_info"]["reward_error"] == [1, 1]
    assert out["reward_extra_info"]["reward_timeout"] == [0, 0]


def test_awaiting_coroutine_is_cancelled_when_abandoned():
    pool = ThreadExecutor(max_workers=1)
    cancelled = threading.Event()

    async def slow() -> float:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 1.0

    async def main() -> float:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(pool.run_async(slow), 0.2)
        return await asyncio.wait_for(pool.run(lambda: 2.0), 1.0)

    assert asyncio.run(main()) == 2.0
    assert cancelled.wait(2.0)


def test_past_the_abandoned_cap_the_executor_says_to_use_the_process_executor(caplog):
    pool = ThreadExecutor(max_workers=1, max_abandoned=2)
    release = threading.Event()

    async def main() -> None:
        for _ in range(3):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(pool.run(release.wait), 0.1)
        with pytest.raises(TimeoutError):  # no replacement thread any more: the call queues
            await asyncio.wait_for(pool.run(lambda: 1), 0.3)

    with caplog.at_level(logging.ERROR, logger="verl_rewards"):
        asyncio.run(main())
    release.set()
    assert pool.abandoned <= 3
    assert any("executor=process" in r.getMessage() for r in caplog.records)
