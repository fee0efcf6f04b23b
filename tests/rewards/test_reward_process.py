"""ProcessRunner: sync rewards in spawned worker processes, with timeouts, crash isolation and clean shutdown."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from pathlib import Path

import pytest

from verl_rewards.scoring.executors.process import ProcessRunner, RemoteRewardError, SlotState

from repo_paths import SUPPORT

FNS = str(SUPPORT / "reward_fns_process.py")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _children() -> set[int]:
    """Pids of this process's live child processes (the workers of every runner of this test process)."""
    return {p.pid for p in multiprocessing.active_children() if p.pid is not None}


def _wait_gone(pid: int, within_s: float = 5.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return not _alive(pid)


def _wait_file(path: Path, within_s: float = 10.0) -> str:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} was not written")


def run(runner: ProcessRunner, name: str, timeout_s: float | None = 20.0, **kwargs):
    return asyncio.run(runner.run(name, kwargs, timeout_s))


async def meet(runner: ProcessRunner, folder: Path, n: int = 2) -> list[dict]:
    """``n`` calls that each wait until all ``n`` run at once: every ``reward`` is ``n`` only if ``n`` workers
    served them together (an event, not a clock, shows that the calls ran in parallel)."""
    folder.mkdir()
    return await asyncio.gather(
        *(runner.run("proc_test_meet", {"folder": str(folder), "n": n}, 120.0) for _ in range(n))
    )


@pytest.fixture(scope="module")
def runner():
    r = ProcessRunner(max_workers=2, modules=[FNS, "verl_rewards.rewards.text"])
    yield r
    r.close()


def test_no_process_before_first_run():
    # Children of earlier tests may still be exiting: the runner must add none (a subset), not freeze the set.
    before = _children()
    r = ProcessRunner(max_workers=4, modules=[FNS])
    assert _children() <= before
    r.close()
    with pytest.raises(RuntimeError, match="closed"):
        run(r, "proc_test_trivial", final_response="x")
    assert _children() <= before


def test_result_and_worker_reuse(runner):
    first = run(runner, "proc_test_cpu", n=10)
    assert first["reward"] == 285.0  # 0 + 1 + 4 + ... + 81
    assert first["pid"] != os.getpid()
    second = run(runner, "proc_test_cpu", n=4)
    assert second["reward"] == 14.0
    assert {first["pid"], second["pid"]} <= _children()  # workers are kept and reused, not started per call
    assert run(runner, "PROC_TEST_TRIVIAL", final_response="abc") == 1.0  # names are case-insensitive


def test_builtin_reward_by_module_name(runner):
    out = run(runner, "qa_f1", final_response="New York City", ground_truth=["new york"])
    assert out == pytest.approx({"reward": 0.8, "f1": 0.8, "em": 0.0, "precision": 2 / 3, "recall": 1.0})


def test_listed_builtins_are_registered_in_workers_and_unknown_names_fail():
    with ProcessRunner(max_workers=1, modules=[FNS, "verl_rewards.catalog"]) as r:  # as the engine lists them
        assert run(r, "proc_test_trivial", final_response="x") == 1.0
        out = run(r, "qa_em", timeout_s=60.0, final_response="The answer.", ground_truth=["an answer", "x"])
        assert out["reward"] == 1.0
        with pytest.raises(RemoteRewardError, match="no reward named 'proc_test_no_such_reward'") as info:
            run(r, "proc_test_no_such_reward")
        assert info.value.exc_type == "RewardRegistryError"


def test_signal_using_reward_runs_in_the_child_main_thread(runner):
    out = run(runner, "proc_test_signal", seconds=0.05)
    assert out == {"reward": 1.0, "main_thread": 1.0}


def test_exception_becomes_remote_error_with_traceback(runner):
    with pytest.raises(RemoteRewardError) as info:
        run(runner, "proc_test_raises", value=42)
    err = info.value
    assert err.exc_type == "ScoringError"
    assert err.reward_name == "proc_test_raises"
    assert "ScoringError: bad value 42" in str(err)
    assert "_inner_check" in err.remote_traceback and "Traceback (most recent call last)" in err.remote_traceback
    assert err.remote_traceback in str(err)
    assert _alive(err.pid) and err.pid in _children()  # an exception does not cost the worker


def test_timeout_kills_the_hung_worker_and_next_call_succeeds(runner, tmp_path):
    pid_file = tmp_path / "pid"
    with pytest.raises(TimeoutError, match="proc_test_hang"):
        run(runner, "proc_test_hang", timeout_s=1.0, pid_file=str(pid_file))
    hung = int(_wait_file(pid_file))
    assert _wait_gone(hung), "the hung worker is still alive"
    out = run(runner, "proc_test_cpu", n=5)
    assert out["reward"] == 30.0 and out["pid"] != hung


def test_worker_deaf_to_sigterm_is_sigkilled(runner, tmp_path):
    pid_file = tmp_path / "pid"
    with pytest.raises(TimeoutError):
        run(runner, "proc_test_hang", timeout_s=0.5, pid_file=str(pid_file), ignore_sigterm=True)
    hung = int(_wait_file(pid_file))
    assert _wait_gone(hung, within_s=5.0)
    assert run(runner, "proc_test_trivial", final_response="") == 1.0


def test_dying_worker_gives_remote_error_and_is_replaced(runner):
    with pytest.raises(RemoteRewardError, match="exit code 3") as info:
        run(runner, "proc_test_exit", code=3)
    assert info.value.exc_type == "WorkerDied"
    assert _wait_gone(info.value.pid)
    out = run(runner, "proc_test_cpu", n=2)
    assert out["reward"] == 1.0 and out["pid"] != info.value.pid


def test_unpicklable_result_and_arguments(runner):
    with pytest.raises(RemoteRewardError, match="cannot be pickled back") as info:
        run(runner, "proc_test_unpicklable")
    assert "lock" in str(info.value).lower()
    assert _alive(info.value.pid)
    with pytest.raises(RemoteRewardError, match="cannot send the arguments"):
        run(runner, "proc_test_echo", final_response=threading.Lock())


def test_async_rewards_and_bad_arguments_are_rejected_in_the_child(runner):
    with pytest.raises(RemoteRewardError, match="is async") as info:
        run(runner, "proc_test_async", final_response="x")
    assert info.value.exc_type == "TypeError"
    with pytest.raises(RemoteRewardError, match="missing 1 required") as info:
        run(runner, "proc_test_trivial")
    assert info.value.exc_type == "TypeError"


def test_concurrent_calls_run_in_two_processes(runner, tmp_path):
    a, b = asyncio.run(meet(runner, tmp_path / "meet"))
    assert a["reward"] == b["reward"] == 2.0  # the two jobs ran at the same time
    assert a["pid"] != b["pid"]
    assert {a["pid"], b["pid"]} <= _children()


def test_calls_from_two_event_loops_in_threads(runner):
    results: list = []

    def call(text: str) -> None:
        results.append(run(runner, "proc_test_echo", final_response=text, sleep_s=0.1))

    threads = [threading.Thread(target=call, args=(t,)) for t in ("ab", "abcd")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(r["reward"] for r in results) == [2.0, 4.0]


def test_single_worker_fifo_queue_and_queue_wait_counts_toward_timeout():
    with ProcessRunner(max_workers=1, modules=[FNS]) as single:

        async def scenario():
            first = asyncio.create_task(single.run("proc_test_echo", {"sleep_s": 0.8}, 20.0))
            await asyncio.sleep(0)
            starved = asyncio.create_task(single.run("proc_test_echo", {}, 0.3))
            later = [
                asyncio.create_task(single.run("proc_test_echo", {"final_response": "x" * i}, 20.0)) for i in (1, 2, 3)
            ]
            with pytest.raises(TimeoutError, match="waiting for a free process worker"):
                await starved
            return await first, await asyncio.gather(*later)

        first, later = asyncio.run(scenario())
        pids = {first["pid"]} | {r["pid"] for r in later}
        assert len(pids) == 1  # a timeout while queued does not kill the busy worker
        assert [r["reward"] for r in later] == [1.0, 2.0, 3.0]
        assert [r["seq"] for r in later] == [first["seq"] + 1, first["seq"] + 2, first["seq"] + 3]  # arrival order

        async def cancel_then_call():
            task = asyncio.create_task(single.run("proc_test_echo", {"sleep_s": 0.5}, 20.0))
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return await single.run("proc_test_echo", {"final_response": "ok"}, 20.0)

        assert asyncio.run(cancel_then_call())["reward"] == 2.0  # the slot came back after the running job
    assert _wait_gone(first["pid"], within_s=0.1)


def test_module_import_failure_is_reported_once_and_not_retried(tmp_path):
    bad = tmp_path / "broken_rewards.py"
    imports = tmp_path / "imports"
    bad.write_text(
        f"import os\nopen({str(imports)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
        "raise ImportError('no such dependency: fancylib')\n"
    )
    before = _children()
    with ProcessRunner(max_workers=1, modules=[str(bad)]) as r:
        with pytest.raises(RemoteRewardError, match="fancylib") as info:
            run(r, "proc_test_trivial", final_response="x")
        assert "failed to start" in str(info.value)
        with pytest.raises(RemoteRewardError, match="fancylib"):
            run(r, "proc_test_trivial", final_response="x")
        r.start()  # nor does an explicit start try again
        assert len(imports.read_text().split()) == 1  # no new process for a known-broken module list
        end = time.monotonic() + 5.0
        while _children() - before and time.monotonic() < end:
            time.sleep(0.05)
        assert not _children() - before  # no worker left behind


def test_close_stops_busy_and_idle_workers(tmp_path):
    pid_file = tmp_path / "pid"
    r = ProcessRunner(max_workers=2, modules=[FNS])

    async def scenario():
        warm = await asyncio.gather(*(r.run("proc_test_echo", {"sleep_s": 0.2}, 20.0) for _ in range(2)))
        idle_pid = warm[0]["pid"]
        hung = asyncio.create_task(r.run("proc_test_hang", {"pid_file": str(pid_file)}, 60.0))
        while not (pid_file.exists() and pid_file.read_text()):
            await asyncio.sleep(0.02)
        pids = {w["pid"] for w in warm} | {int(pid_file.read_text())}
        r.close()
        with pytest.raises(RuntimeError, match="closed"):
            await hung
        return idle_pid, pids

    idle_pid, pids = asyncio.run(scenario())
    assert len(pids) == 2 and idle_pid in pids  # the hung call runs in one of the two warm workers
    for pid in pids:
        assert not _alive(pid)
    with pytest.raises(RuntimeError, match="closed"):
        run(r, "proc_test_cpu", n=1)
    r.close()  # idempotent


def test_worker_start_up_is_not_charged_to_the_call_and_start_begins_it_early(tmp_path):
    imports = tmp_path / "imports"
    slow = tmp_path / "slow_import.py"
    slow.write_text(f"import os, time\nopen({str(imports)!r}, 'a').write(f'{{os.getpid()}}\\n')\ntime.sleep(1.0)\n")
    with ProcessRunner(max_workers=1, modules=[FNS, str(slow)]) as r:
        assert run(r, "proc_test_trivial", timeout_s=0.2, final_response="x") == 1.0  # 1 s start, 0.2 s limit
        out = run(r, "proc_test_cpu", timeout_s=10.0, n=3)
        assert out["reward"] == 5.0
        assert imports.read_text().split() == [str(out["pid"])]  # one worker, started once
    imports.unlink()
    before = _children()
    with ProcessRunner(max_workers=2, modules=[FNS, str(slow)]) as r:
        r.start()
        started = set(r.worker_pids)
        assert len(started) == 2 and started <= _children() - before  # spawned by start(), before any call
        outs = asyncio.run(meet(r, tmp_path / "meet"))
        assert {o["pid"] for o in outs} == started and [o["reward"] for o in outs] == [2.0, 2.0]
        assert sorted(imports.read_text().split()) == sorted(str(p) for p in started)


def test_no_slot_is_lost_under_timeouts_cancellations_and_crashes(tmp_path):
    with ProcessRunner(max_workers=2, modules=[FNS]) as r:

        async def scenario():
            tasks = []
            for i in range(24):
                if i % 6 == 5:
                    coro = r.run("proc_test_exit", {"code": 1}, 5.0)
                else:
                    coro = r.run("proc_test_echo", {"sleep_s": 0.01 * (i % 4)}, 0.05 + 0.05 * (i % 3))
                tasks.append(asyncio.create_task(coro))
                if i % 5 == 0:
                    await asyncio.sleep(0.01)
                    tasks[-1].cancel()
            outcomes = await asyncio.gather(*tasks, return_exceptions=True)
            kinds = {type(o).__name__ for o in outcomes}
            assert kinds <= {"dict", "TimeoutError", "CancelledError", "RemoteRewardError"}
            # every slot came back: two calls run at the same time again
            return await meet(r, tmp_path / "meet")

        before = _children()
        a, b = asyncio.run(scenario())
        assert a["reward"] == b["reward"] == 2.0  # both slots serve calls at the same time
        assert a["pid"] != b["pid"]
        assert len(_children() - before) <= 2


@pytest.mark.parametrize("crash", ["segfault", "exit3", "exit0", "sigkill"])
def test_worker_crash_flags_exactly_that_sample_through_the_manager(crash, small_tokenizer_dir, small_tokenizer):
    from manager_support import build_manager, make_batch

    tok = small_tokenizer
    mgr = build_manager(
        small_tokenizer_dir,
        tok,
        kwargs={
            "reward_fn": "proc_test_crash",
            "executor": "process",
            "modules": f"[{FNS}]",
            "timeout_s": 3600,  # a crash noticed only by the timeout would hold the test for an hour
            "fallback_reward": -1,
        },
    )
    responses = ["a", "bb", "ccc", crash, "dddd", "eeeee", "ffffff"]
    try:
        out = mgr(make_batch(tok, ["q"] * len(responses), responses), return_dict=True)
        extra = out["reward_extra_info"]
        assert out["reward_tensor"].sum(-1).tolist() == [1.0, 2.0, 3.0, -1.0, 4.0, 5.0, 6.0]
        assert extra["reward_error"] == [0, 0, 0, 1, 0, 0, 0]
        assert extra["reward_timeout"] == [0] * 7  # reported at once as the crash it is, not as a timeout
        again = mgr(make_batch(tok, ["q"] * 3, ["x", "yy", "zzz"]), return_dict=True)  # the pool recovered
        assert again["reward_tensor"].sum(-1).tolist() == [1.0, 2.0, 3.0]
        assert again["reward_extra_info"]["reward_error"] == [0, 0, 0]
    finally:
        if mgr.core._runner is not None:
            mgr.core._runner.close()


def test_idle_worker_killed_from_outside_is_replaced():
    with ProcessRunner(max_workers=2, modules=[FNS]) as r:

        async def two():
            return await asyncio.gather(*(r.run("proc_test_echo", {"sleep_s": 0.2}, 20.0) for _ in range(2)))

        victim = asyncio.run(two())[0]["pid"]
        os.kill(victim, 9)  # as the OOM killer would, while the worker is idle
        time.sleep(0.3)
        after = asyncio.run(two()) + asyncio.run(two())
        assert [a["reward"] for a in after] == [0.0] * 4
        assert victim not in {a["pid"] for a in after}


def test_hung_worker_deaf_to_sigterm_does_not_stall_calls_in_other_workers(tmp_path, monkeypatch):
    from verl_rewards.scoring.executors import process

    monkeypatch.setattr(process, "_KILL_GRACE_S", 600.0)  # the deaf worker outlives every call below
    pid_file = tmp_path / "pid"
    with ProcessRunner(max_workers=2, modules=[FNS]) as r:

        async def scenario():
            hung = asyncio.create_task(
                r.run("proc_test_hang", {"pid_file": str(pid_file), "ignore_sigterm": True}, 0.3)
            )
            while not (pid_file.exists() and pid_file.read_text()):
                await asyncio.sleep(0.01)
            with pytest.raises(TimeoutError):
                await hung
            deaf = int(pid_file.read_text())
            served = []
            for i in range(5):  # the other worker serves calls while the deaf one waits for its SIGKILL
                out = await r.run("proc_test_echo", {"final_response": "x" * i}, 60.0)
                served.append((out["reward"], out["pid"] != deaf, _alive(deaf)))
            os.kill(deaf, 9)  # end the grace period now
            return served

        served = asyncio.run(scenario())
        assert served == [(float(i), True, True) for i in range(5)]


@pytest.fixture
def bootstrapping():
    """This process in the state ``spawn`` puts a new worker in while it re-imports the parent's main script (what
    ``multiprocessing`` checks before it starts a process): as a worker re-importing a script without an
    ``if __name__ == '__main__':`` guard is, when that script builds a runner."""
    process = multiprocessing.current_process()
    before = getattr(process, "_inheriting", False)
    process._inheriting = True
    yield
    process._inheriting = before


def test_a_worker_that_cannot_be_spawned_is_a_remote_error_with_its_cause_and_frees_its_slot(bootstrapping):
    """The race behind ``process slot cannot go from starting to empty``: :meth:`ProcessRunner.start` takes a slot
    to ``starting`` and the spawn fails before a process exists. Driven here by multiprocessing's own refusal, not
    by timing: the first spawn fails every time."""
    with ProcessRunner(max_workers=2, modules=[FNS]) as r:
        with pytest.raises(RemoteRewardError, match="cannot start a reward worker process: RuntimeError") as info:
            r.start()
        message = str(info.value)
        assert "bootstrapping phase" in message and "if __name__ == '__main__':" in message
        assert isinstance(info.value.__cause__, RuntimeError) and info.value.exc_type == "RuntimeError"
        assert r.slot_states() == [SlotState.EMPTY, SlotState.EMPTY]  # no slot is lost in "starting"
        with pytest.raises(RemoteRewardError, match="cannot start a reward worker process") as call:
            run(r, "proc_test_trivial", final_response="x")  # a call that needs a worker: the same error
        assert call.value.reward_name == "proc_test_trivial"
        assert r.slot_states() == [SlotState.EMPTY, SlotState.EMPTY]
        multiprocessing.current_process()._inheriting = False  # the cause is gone: the pool works
        assert run(r, "proc_test_echo", final_response="xy")["reward"] == 2.0


UNGUARDED_SCRIPT = """
import sys
sys.path.insert(0, {support!r})
from manager_support import make_batch
from verl_support import compose_verl_config
from transformers import AutoTokenizer
from verl.trainer.ppo.reward import load_reward_manager

tok = AutoTokenizer.from_pretrained({tokenizer!r})
config = compose_verl_config([
    "actor_rollout_ref.model.path={tokenizer}",
    "reward.reward_manager.name=contribution",
    "+reward.reward_kwargs.reward_fn=qa_em",
    "+reward.reward_kwargs.executor=process",
    "+reward.reward_kwargs.on_error=raise",
])
manager = load_reward_manager(config, tok)  # no __main__ guard: every spawned worker runs this line again
manager(make_batch(tok, ["q"], ["a"]), return_dict=True)
"""


@pytest.mark.slow
def test_a_script_without_a_main_guard_gets_remote_errors_never_an_assertion(tmp_path, small_tokenizer_dir):
    """The issue's case: the parent's first call fails with the died-while-starting error and each worker, which
    re-ran the script's top level, fails with the cannot-start error; nothing anywhere is an AssertionError."""
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED_SCRIPT.format(support=str(SUPPORT), tokenizer=small_tokenizer_dir))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT.parents[1]), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]
    assert "AssertionError" not in out, out[-3000:]
    last = out.strip().splitlines()[-1]
    assert last.startswith("verl_rewards.scoring.executors.worker.RemoteRewardError: reward worker pid ")
    assert "died while starting" in last and "if __name__ == '__main__':" in last
    assert "RemoteRewardError: cannot start a reward worker process: RuntimeError" in out  # a worker's own report
