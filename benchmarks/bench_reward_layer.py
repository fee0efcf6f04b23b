"""Reward-layer execution modes against verl's ``naive`` manager, in one run, through verl's RewardLoopManager.

1. A CPU-bound reward (regex + JSON parsing, ~10 ms per call): naive (sync function in the worker's thread
   executor, GIL-bound) vs the contribution manager with the same reward in ``executor=thread`` and
   ``executor=process``, with the same ``reward.num_workers``. Prints samples/s and ratios.
2. A hung reward: one sample of the batch sleeps ``--hang-s`` seconds. Prints the step time of naive (held for
   the whole hang: verl has no per-call limit) and of the contribution manager with ``timeout_s`` (bounded).

    python benchmarks/bench_reward_layer.py [--samples 256] [--workers 1] [--hang-s 15] [--timeout-s 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REWARDS = os.path.join(HERE, "cpu_rewards.py")
sys.path.insert(0, HERE)
from common import start_manager, stop_manager  # noqa: E402


def make_batch(tok, n: int, hang_index: int | None = None):
    from verl_rewards.batching import padded_batch

    prompts, responses = [], []
    for i in range(n):
        calls = "".join(
            f'<tool_call>{{"name": "get_weather", "parameters": {{"city": "Paris", "days": {d}}}}}</tool_call> '
            f"checking day {d} now "
            for d in range(10)
        )
        text = ("HANG " if i == hang_index else "") + f"<think> request {i} </think>" + calls
        prompts.append(tok.encode(f"weather request {i}", add_special_tokens=False))
        responses.append(tok.encode(text, add_special_tokens=False))
    return padded_batch(
        prompts,
        responses,
        {
            "data_source": ["bench"] * n,
            "reward_model": [{"ground_truth": "get_weather"}] * n,
            "extra_info": [{"index": i} for i in range(n)],
        },
        pad_token_id=tok.pad_token_id,
    )


def timed(m, batch, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        m.compute_rm_score(batch)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--workers", type=int, default=1, help="reward.num_workers for every manager")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hang-s", type=float, default=15.0)
    parser.add_argument("--timeout-s", type=float, default=2.0)
    args = parser.parse_args()

    import ray
    from transformers import AutoTokenizer

    from verl_rewards.local_tokenizer import build_small_tokenizer

    tok_dir = build_small_tokenizer(os.path.join("/tmp", "verl_rewards_bench_small_tok"))
    tok = AutoTokenizer.from_pretrained(tok_dir)
    batch, warm = make_batch(tok, args.samples), make_batch(tok, 8)
    naive_fn = ["reward.custom_reward_function.path=" + REWARDS, "reward.custom_reward_function.name=compute_score"]
    layer = ["reward.reward_manager.name=contribution", f"+reward.reward_kwargs.modules=[{REWARDS}]"]
    print(f"CPU-bound reward (~10 ms/call), {args.samples} samples, reward.num_workers={args.workers}, 2 CPUs\n")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        rates = {}
        for name, overrides in [
            ("naive (verl built-in)", ["reward.reward_manager.name=naive", *naive_fn]),
            ("contribution, executor=thread", [*layer, "+reward.reward_kwargs.reward_fn=bench_cpu_thread"]),
            ("contribution, executor=process", [*layer, "+reward.reward_kwargs.reward_fn=bench_cpu"]),
        ]:
            m = start_manager(f"b{len(rates)}", overrides, tok_dir, args.workers, warm)
            try:
                rates[name] = args.samples / timed(m, batch, args.repeats)
            finally:
                stop_manager(m)
            print(f"  {name:<32} {rates[name]:>8.1f} samples/s")
        naive = rates["naive (verl built-in)"]
        print(f"\n  process / naive = {rates['contribution, executor=process'] / naive:.2f}x")
        print(f"  thread  / naive = {rates['contribution, executor=thread'] / naive:.2f}x")

        print(f"\nhung reward: 1 of {args.samples} samples sleeps {args.hang_s:.0f} s")
        hung = make_batch(tok, args.samples, hang_index=args.samples // 2)
        m = start_manager("h0", ["reward.reward_manager.name=naive", *naive_fn], tok_dir, args.workers, warm)
        try:
            naive_t = timed(m, hung, 1)
        finally:
            stop_manager(m)
        m = start_manager(
            "h1",
            [
                *layer,
                "+reward.reward_kwargs.reward_fn=bench_hang",
                f"+reward.reward_kwargs.timeout_s={args.timeout_s}",
                f"+reward.reward_kwargs.score_kwargs={{hang_s: {args.hang_s}}}",
            ],
            tok_dir,
            args.workers,
            warm,
        )
        try:
            ours_t = timed(m, hung, 1)
        finally:
            stop_manager(m)
        print(f"  naive (no per-call limit)         step {naive_t:>6.2f} s")
        print(f"  contribution, timeout_s={args.timeout_s:<5}    step {ours_t:>6.2f} s  (bounded by the timeout)")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    sys.exit(main())
