"""Executors against hostile rewards: forks, forged replies, slow conversions of the returned value, blocking
callbacks left on a thread's loop, hung calls past the thread cap, slow worker start-up. Every reply reaches only
the call it answers, and all work on a reward's return value happens inside the call's time limit."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading

import pytest

from verl_rewards.scoring.executors.threads import ThreadExecutor
from verl_rewards.scoring.loading import load_module

from manager_support import make_batch
from repo_paths import SUPPORT
from verl_support import compose_verl_config

HOSTILE = str(SUPPORT / "reward_fns_hostile.py")


@pytest.fixture
def hostile():
    """The hostile reward module as the manager loads it; its blocking calls are released after the test."""
    module = load_module(HOSTILE)
    module.RELEASE.clear()
    yield module
    module.RELEASE.set()


def _manager(tokenizer_dir, tok, modules=f"[{HOSTILE}]", **kwargs):
    from verl.trainer.ppo.reward import load_reward_manager

    overrides = [
        f"actor_rollout_ref.model.path={tokenizer_dir}",
        "reward.reward_manager.name=contribution",
        f"+reward.reward_kwargs.modules={modules}",
        "+reward.reward_kwargs.fallback_reward=-1",
        *[f"+reward.reward_kwargs.{k}={v}" for k, v in kwargs.items()],
    ]
    return load_reward_manager(compose_verl_config(overrides), tok)


def _close(mgr) -> None:
    if mgr.core._runner is not None:
        mgr.core._runner.close()


def _score(mgr, tok, responses):
    out = mgr(make_batch(tok, ["q"] * len(responses), responses), return_dict=True)
    return out["reward_tensor"].sum(-1).tolist(), out["reward_extra_info"]


# ------------------------------------------------------------------------------------- replies and request ids


def test_forking_reward_scores_its_own_value_and_shifts_no_other_sample(small_tokenizer_dir, small_tokenizer, hostile):
    mgr = _manager(small_tokenizer_dir, small_tokenizer, reward_fn="h_fork", executor="process", timeout_s=30)
    try:
        for _ in range(2):
            scores, extra = _score(mgr, small_tokenizer, ["fork", "a", "bb", "ccc", "dddd"])
            assert scores == [0.0, 1.0, 2.0, 3.0, 4.0]  # the forked child's 1000.0 reaches no sample
            assert extra["reward_error"] == [0] * 5 and extra["reward_timeout"] == [0] * 5
        scores, extra = _score(mgr, small_tokenizer, ["x", "yy", "zzz"])
        assert scores == [1.0, 2.0, 3.0]
    finally:
        _close(mgr)


def test_forked_copy_of_a_thread_executor_reward_exits_instead_of_serving(tmp_path):
    pool = ThreadExecutor(max_workers=1)
    child_file = tmp_path / "child"

    def forks() -> float:
        if os.fork() == 0:  # the child returns into the pool thread instead of calling os._exit
            child_file.write_text(str(os.getpid()))
            return 1000.0
        return 0.0

    async def main() -> list:
        return [await pool.run(forks, 30.0), await pool.run(lambda: 1.0, 30.0)]

    assert asyncio.run(main()) == [0.0, 1.0]
    while not child_file.exists() or not child_file.read_text():
        threading.Event().wait(0.01)
    child = int(child_file.read_text())
    pid, status = os.waitpid(child, 0)  # the forked copy exits (a copy that kept serving would never end)
    assert pid == child and os.waitstatus_to_exitcode(status) == 0


def _exit_code_within(pid: int, bound_s: float) -> int | None:
    """The exit code of child ``pid`` once it ends (None, after killing it, when it is still running after
    ``bound_s``: that bound only limits how long a failing test waits)."""
    import select

    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], bound_s)
    finally:
        os.close(fd)
    if not ready:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return None
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_forked_copy_of_an_async_reward_exits_even_when_the_fork_froze_a_held_pool_lock():
    """An ``async def`` reward that forks: its copy returns through the thread's own event loop. Another thread of
    the pool held the executor's lock at the fork (here on purpose, so the race is certain): in the copy that lock
    stays held for good, so a copy that takes it before exiting hangs as an orphan."""
    pool = ThreadExecutor(max_workers=2)
    held, release = threading.Event(), threading.Event()

    def hold_the_pool_lock() -> None:
        with pool._cond:  # what every submit, start and finish of a call takes, for a moment
            held.set()
            release.wait()

    async def forks() -> float:
        holder = threading.Thread(target=hold_the_pool_lock)
        holder.start()
        held.wait()
        child = os.fork()
        if child == 0:  # the copy returns into the pool thread's loop instead of calling os._exit
            return 1000.0
        release.set()
        holder.join()
        return float(child)

    async def main() -> list:
        return [await pool.run_async(forks, 60.0), await pool.run(lambda: 1.0, 60.0)]

    child, after = asyncio.run(main())
    assert after == 1.0
    assert _exit_code_within(int(child), 60.0) == 0  # the copy exits (a hung one is killed after 60 s: fails)


def test_a_reply_for_another_request_is_dropped_and_flags_its_call(small_tokenizer_dir, small_tokenizer, hostile):
    mgr = _manager(small_tokenizer_dir, small_tokenizer, reward_fn="h_forge", executor="process", timeout_s=30)
    try:
        scores, extra = _score(mgr, small_tokenizer, ["a", "forge", "bb", "ccc"])
        assert scores == [1.0, -1.0, 2.0, 3.0]
        assert extra["reward_error"] == [0, 1, 0, 0] and extra["reward_timeout"] == [0] * 4
        scores, extra = _score(mgr, small_tokenizer, ["x", "yy", "zzz", "wwww"])  # the worker was replaced
        assert scores == [1.0, 2.0, 3.0, 4.0] and extra["reward_error"] == [0] * 4
    finally:
        _close(mgr)


# ------------------------------------------------------------------------------ post-call work is bounded


@pytest.mark.parametrize("executor", ["thread", "process"])
@pytest.mark.parametrize("reward_fn", ["h_slow_text", "h_slow_float"])
def test_slow_conversion_of_the_returned_value_is_bounded_by_the_timeout(
    small_tokenizer_dir, small_tokenizer, hostile, executor, reward_fn
):
    mgr = _manager(small_tokenizer_dir, small_tokenizer, reward_fn=reward_fn, executor=executor, timeout_s=2)
    try:
        scores, extra = _score(mgr, small_tokenizer, ["a", "slow", "bb"])
        if reward_fn == "h_slow_float":  # the finite-number rule reads a float subclass by its stored value:
            assert extra["reward_timeout"] == [0, 0, 0]  # its slow __float__ never runs
            assert scores == [1.0, 1.0, 2.0]
        else:
            assert extra["reward_timeout"] == [0, 1, 0]  # the conversion ran inside the call, under timeout_s
            assert scores == [1.0, -1.0, 2.0]
    finally:
        _close(mgr)


@pytest.mark.parametrize("executor", ["thread", "process"])
def test_a_result_with_millions_of_components_is_an_error(small_tokenizer_dir, small_tokenizer, executor):
    mgr = _manager(small_tokenizer_dir, small_tokenizer, reward_fn="h_many_keys", executor=executor, timeout_s=60)
    try:
        scores, extra = _score(mgr, small_tokenizer, ["a", "many", "bb"])
        assert extra["reward_error"] == [0, 1, 0]
        assert scores == [1.0, -1.0, 2.0]
        assert extra["reward_extra_undeclared"] == ["", "", ""]
    finally:
        _close(mgr)


# ----------------------------------------------------------------------------- the thread executor's loops


def test_blocking_callback_left_on_a_thread_loop_is_not_charged_to_the_next_call(hostile):
    from verl_rewards.scoring.spec import get_reward

    spec = get_reward("h_async_leaves_blocking")
    pool = ThreadExecutor(max_workers=1)

    async def main() -> tuple:
        first = await asyncio.wait_for(pool.run_async(lambda: spec.invoke(final_response="leave")), 10.0)
        second = await asyncio.wait_for(pool.run_async(lambda: spec.invoke(final_response="ok")), 10.0)
        return first, second

    first, second = asyncio.run(main())
    assert first["reward"] == 5.0 and second["reward"] == 2.0
    assert first["thread"] != second["thread"]  # the thread busy with the left-over callback took no new call


def test_timed_out_async_reward_leaves_no_unretrieved_future_exception(caplog):
    pool = ThreadExecutor(max_workers=1)
    cancelled = threading.Event()

    async def slow() -> float:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 1.0

    async def main() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(pool.run_async(slow), 0.2)
        while pool.abandoned:  # the abandoned call has settled its future
            await asyncio.sleep(0.01)
        for _ in range(5):
            await asyncio.sleep(0)  # the exception reaches this loop's copy of the future

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(main())
        gc.collect()
    assert cancelled.is_set()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


# ------------------------------------------------------------------------------ past the hung-thread cap


def test_past_the_hung_thread_cap_sync_rewards_move_to_the_process_executor(
    small_tokenizer_dir, small_tokenizer, hostile, caplog
):
    from verl_rewards.scoring.executors import threads

    # the hung calls time out fast; the calls after them get a generous timeout, so a loaded machine cannot time
    # them out: the thread executor's overload is process-wide, so the second manager sees it too
    mgr = _manager(small_tokenizer_dir, small_tokenizer, reward_fn="h_hang", timeout_s=0.5)
    later = _manager(small_tokenizer_dir, small_tokenizer, reward_fn="h_hang", timeout_s=120)
    executor = threads.thread_executor()
    try:
        n = threads.MAX_ABANDONED + 2
        with caplog.at_level(logging.ERROR, logger="verl_rewards"):
            scores, extra = _score(mgr, small_tokenizer, ["hang"] * n)  # each holds its thread until released
        assert extra["reward_timeout"] == [1] * n
        # the cap is reached; under load the last hung calls may start after it and go to the process executor
        # (which times them out there), so the count is the cap or more
        assert executor.abandoned >= threads.MAX_ABANDONED
        for _ in range(2):
            scores, extra = _score(later, small_tokenizer, ["a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g", "hh"])
            assert scores == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 2.0]
            assert extra["reward_timeout"] == [0] * 8
            assert all(pid != os.getpid() for pid in extra["pid"])  # scored in worker processes
        assert any("executor=process" in r.getMessage() for r in caplog.records)
    finally:
        hostile.RELEASE.set()
        _close(mgr)
        _close(later)
    while executor.abandoned:  # the released calls end and leave the executor as it was
        threading.Event().wait(0.05)


def test_worker_start_up_is_not_charged_to_calls(small_tokenizer_dir, small_tokenizer, hostile, tmp_path):
    """The first calls wait for the workers started with the manager, and the next calls after a hang wait for
    the replacement, without either start counting toward timeout_s (workers here take ~4 s to start)."""
    slow = tmp_path / "slow_start.py"
    slow.write_text(
        "import multiprocessing, time\n"
        "if multiprocessing.parent_process() is not None:  # only in the process executor's workers\n"
        "    time.sleep(4)\n"
    )
    mgr = _manager(
        small_tokenizer_dir,
        small_tokenizer,
        reward_fn="h_hang",
        executor="process",
        timeout_s=1,
        modules=f"[{HOSTILE},{slow}]",
    )
    try:
        runner = mgr.core._runner
        assert runner is not None and len(runner.worker_pids) == runner.max_workers  # started with the manager
        scores, extra = _score(mgr, small_tokenizer, ["a", "bb", "ccc"])
        assert extra["reward_timeout"] == [0, 0, 0] and scores == [1.0, 2.0, 3.0]
        hung = ["hang"] * runner.max_workers
        scores, extra = _score(mgr, small_tokenizer, hung)
        assert extra["reward_timeout"] == [1] * len(hung)  # every worker was killed and is being replaced
        scores, extra = _score(mgr, small_tokenizer, ["dddd", "eeeee"])
        assert extra["reward_timeout"] == [0, 0] and scores == [4.0, 5.0]
    finally:
        _close(mgr)
