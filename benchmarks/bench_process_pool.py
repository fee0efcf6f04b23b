"""Per-call overhead of the process executor: ``ProcessRunner`` against a bare ``pebble.ProcessPool``, one run.

A trivial reward (returns the length of its input) is called ``--calls`` times through each, first one call
after another (latency), then all at once (throughput), with ``--workers`` processes. The pebble side is the
least any runner built on pebble would cost: ``schedule()`` and ``asyncio.wrap_future``, nothing else.
Skipped when pebble is not installed.

    python benchmarks/bench_process_pool.py [--calls 1000] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REWARDS = os.path.join(HERE, "cpu_rewards.py")


def _pebble_call(text: str) -> float:
    """The pebble side's task: look the reward up in the worker's registry and call it, as ProcessRunner does."""
    from verl_rewards.rewards.decorators import get_reward

    return get_reward("bench_trivial").invoke(final_response=text)


def _pebble_init(modules: list[str]) -> None:
    from verl_rewards.scoring.loading import load_modules

    load_modules(modules)


async def _measure(call, calls: int) -> tuple[float, float]:
    """(seconds per call one after another, seconds per call with all calls in flight)."""
    await asyncio.gather(*(call(str(i)) for i in range(20)))  # warm: every worker started
    t0 = time.perf_counter()
    for i in range(calls):
        assert await call("x" * (i % 7)) == float(i % 7)
    sequential = (time.perf_counter() - t0) / calls
    t0 = time.perf_counter()
    out = await asyncio.gather(*(call("x" * (i % 7)) for i in range(calls)))
    concurrent = (time.perf_counter() - t0) / calls
    assert out == [float(i % 7) for i in range(calls)]  # every result on its own call
    return sequential, concurrent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    from verl_rewards.scoring.executors.process import ProcessRunner

    results = {}
    with ProcessRunner(max_workers=args.workers, modules=[REWARDS]) as runner:
        results["ProcessRunner"] = asyncio.run(
            _measure(lambda text: runner.run("bench_trivial", {"final_response": text}, 60.0), args.calls)
        )
    try:
        import pebble
    except ImportError:
        print("pebble is not installed: only ProcessRunner measured")
    else:
        pool = pebble.ProcessPool(
            max_workers=args.workers,
            initializer=_pebble_init,
            initargs=([REWARDS],),
            context=multiprocessing.get_context("spawn"),
        )
        try:
            results["pebble.ProcessPool (bare)"] = asyncio.run(
                _measure(lambda text: asyncio.wrap_future(pool.schedule(_pebble_call, args=(text,))), args.calls)
            )
        finally:
            pool.stop()
            pool.join()
    print(f"trivial reward, {args.calls} calls, {args.workers} worker processes, {os.cpu_count()} CPUs")
    print(f"  {'':<28} {'one after another':>18} {'all in flight':>15}")
    for name, (seq, conc) in results.items():
        print(f"  {name:<28} {seq * 1e6:>13.0f} us/call {conc * 1e6:>10.0f} us/call")
    if len(results) == 2:
        (s0, c0), (s1, c1) = results.values()
        print(f"\n  ProcessRunner / pebble time per call: {s0 / s1:.2f}x one after another, {c0 / c1:.2f}x in flight")


if __name__ == "__main__":
    sys.exit(main())
