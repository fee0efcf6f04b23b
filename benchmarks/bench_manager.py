"""Throughput of the ``contribution`` manager against verl's built-in ``naive`` manager, in one run.

The same GRPO batch (default 1024 samples, responses of 1-2k Qwen tokens, left-padded prompts) and the same
verl-style scoring function go through

* ``--mode ray``: verl's real ``RewardLoopManager`` / ``RewardLoopWorker`` actors on a local Ray cluster, once per
  manager configuration (samples/s for each and the ratios);
* ``--mode worker``: one verl ``RewardLoopWorker`` in this process, as its actor runs it: ``run_single`` per
  sample gathered on one event loop (and, for context, the worker's ``compute_score_batch``, whose per-sample
  ``DataProto`` slicing both managers pay alike), naive and contribution(C0) timed in ABBA order (whichever runs
  first in a pair is favoured), plus the per-sample cost of each stage of our path (decoding, building the sample,
  routing + guarded call, contribution term, extras).

    python benchmarks/bench_manager.py [--mode ray|worker|both] [--samples 1024] [--workers 2] [--repeats 7]
        [--kinds C1 C0 none] [--baseline-tree DIR]

``--baseline-tree DIR`` adds ``contribution(C0)`` with its reward-loop actors importing ``verl_rewards`` from another
checkout (``PYTHONPATH=DIR``), timed in the same rounds: a change's effect measured against the code before it under
the same machine load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import start_manager  # noqa: E402

WORDS = (
    "the agent calls search_flights with origin SFO destination JFK and reads the result then it books the "
    "cheapest economy seat for the passenger after confirming the payment method and the baggage allowance "
    "<think> I should verify the reservation first </think> <answer> 42 </answer> tool_call json parameters"
).split()


def make_batch(tok, n: int, seed: int):
    from verl_rewards.batching import padded_batch

    rng = random.Random(seed)
    prompts, responses, gts, prev, cur = [], [], [], [], []
    for i in range(n):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        prompt = tok.apply_chat_template(
            [{"role": "user", "content": f"What is {a} + {b}? Think, then answer."}],
            add_generation_prompt=True,
            tokenize=False,
        )
        prompts.append(tok.encode(prompt, add_special_tokens=False))
        target = rng.randint(1000, 2000)
        words: list[str] = ["<think>"]
        ids: list[int] = []
        while len(ids) < target:
            words.extend(rng.choice(WORDS) for _ in range(200))
            ids = tok.encode(" ".join(words), add_special_tokens=False)
        guess = a + b if rng.random() < 0.5 else a + b + 1
        ids = ids[: target - 16] + tok.encode(f" </think><answer>{guess}</answer>", add_special_tokens=False)
        responses.append(ids + [tok.eos_token_id])
        gts.append(str(a + b))
        prev.append({"bb_hash": f"h{i}", "value_est": 0.25})
        cur.append({"bb_hash": f"h{i + (i % 2)}", "value_est": 0.25 + 0.5 * (i % 3 == 0)})
    return padded_batch(
        prompts,
        responses,
        {
            "data_source": ["bench"] * n,
            "reward_model": [{"ground_truth": g} for g in gts],
            "extra_info": [{"index": i} for i in range(n)],
            "prev_step_dict": prev,
            "cur_step_dict": cur,
        },
        pad_token_id=tok.pad_token_id,
    )


def time_rounds(managers: dict, batch, repeats: int) -> dict[str, list[float]]:
    """Interleave the managers round by round so that machine noise hits all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in managers}
    names = list(managers)
    for r in range(repeats):  # the order rotates each round: no manager always runs first or last
        for name in names[r % len(names) :] + names[: r % len(names)]:
            manager = managers[name]
            start = time.perf_counter()
            manager.compute_rm_score(batch)
            times[name].append(time.perf_counter() - start)
    return times


def in_worker(overrides: list[str], tok_dir: str) -> Any:
    """A verl ``RewardLoopWorker`` built in this process (no Ray) with its own event loop."""
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    from verl_rewards.verl_config import compose_config

    asyncio.set_event_loop(asyncio.new_event_loop())  # the worker (and naive) capture the current loop
    config = compose_config([f"actor_rollout_ref.model.path={tok_dir}", *overrides])
    return RewardLoopWorker(config)


def score_in_worker(worker: Any, items: list) -> float:
    """Seconds for ``run_single`` on every item, gathered on the worker's event loop (as its actor runs them)."""
    manager = worker.reward_manager
    start = time.perf_counter()
    worker.loop.run_until_complete(asyncio.gather(*(manager.run_single(item) for item in items)))
    return time.perf_counter() - start


def batch_in_worker(worker: Any, batch: Any) -> float:
    """Seconds for the worker's own ``compute_score_batch`` (its per-sample ``DataProto`` slicing included)."""
    start = time.perf_counter()
    worker.loop.run_until_complete(worker.compute_score_batch(batch))
    return time.perf_counter() - start


def stage_costs(worker: Any, batch: Any, tok: Any) -> dict[str, float]:
    """Per-sample microseconds of each stage of the contribution manager's path, measured one at a time."""
    from verl_rewards.contribution import compute_contribution
    from verl_rewards.scoring.sample import sample_from_row

    mgr = worker.reward_manager
    core = mgr.core
    items = [batch[i : i + 1] for i in range(len(batch))]
    n = len(items)
    out: dict[str, float] = {}

    start = time.perf_counter()
    samples = []
    for item in items:
        row = {k: v[0] for k, v in item.non_tensor_batch.items()}
        b = item.batch
        samples.append(sample_from_row(b["prompts"][0], b["responses"][0], b["attention_mask"][0], row, {}))
    out["sample (slice row, step dicts)"] = (time.perf_counter() - start) / n * 1e6

    scorer = core.route(samples[0])
    ctx = core.context
    start = time.perf_counter()
    for s in samples:
        ctx.decode_now(s, scorer.spec.decode)
    out["decode alone (one by one)"] = (time.perf_counter() - start) / n * 1e6

    async def decode_all() -> list:
        return await asyncio.gather(*(ctx.decode_text(s, scorer.spec.decode) for s in samples))

    start = time.perf_counter()
    worker.loop.run_until_complete(decode_all())
    out["decode alone (batched, as the scorer does)"] = (time.perf_counter() - start) / n * 1e6

    start = time.perf_counter()
    for s in samples:
        compute_contribution("C0", s.prev_step_dict, s.cur_step_dict)
    out["contribution term (C0)"] = (time.perf_counter() - start) / n * 1e6

    start = time.perf_counter()
    for _ in samples:
        core.keys.row({"base_score": 1.0, "contrib": 1.0, "reward_error": 0, "reward_timeout": 0, "acc": 1.0})
    out["extras row"] = (time.perf_counter() - start) / n * 1e6

    async def all_scores() -> list:
        return await asyncio.gather(*(core.score(s) for s in samples))

    start = time.perf_counter()
    worker.loop.run_until_complete(all_scores())
    out["core.score (route, decode, guarded call, contrib, extras)"] = (time.perf_counter() - start) / n * 1e6

    start = time.perf_counter()
    worker.loop.run_until_complete(asyncio.gather(*(mgr.run_single(item) for item in items)))
    out["run_single end to end"] = (time.perf_counter() - start) / n * 1e6
    return out


def worker_mode(batch: Any, tok: Any, tok_dir: str, repeats: int) -> None:
    fn = [
        "reward.custom_reward_function.path=pkg://verl_rewards.demo",
        "reward.custom_reward_function.name=arith_reward",
    ]
    naive = in_worker([*fn, "reward.reward_manager.name=naive"], tok_dir)
    naive_loop = naive.loop
    ours = in_worker(
        [*fn, "reward.reward_manager.name=contribution", "+reward.reward_kwargs.contribution.type=C0"], tok_dir
    )
    items = [batch[i : i + 1] for i in range(len(batch))]  # what the worker hands run_single
    print(f"\none RewardLoopWorker in this process, {len(batch)} samples, ABBA order, {repeats} rounds:")
    for w in (naive, ours):  # warm-up: thread pools at full size, tokenizer caches
        asyncio.set_event_loop(w.loop)
        score_in_worker(w, items)
    pairs = {"naive": naive, "contribution C0": ours}
    for label, timer, data in (
        ("run_single gathered", score_in_worker, items),
        ("compute_score_batch", batch_in_worker, batch),
    ):
        times: dict[str, list[float]] = {name: [] for name in pairs}
        for r in range(repeats):
            order = list(pairs.items()) if r % 2 == 0 else list(pairs.items())[::-1]
            for name, w in order + order[::-1]:
                asyncio.set_event_loop(w.loop)
                times[name].append(timer(w, data))
        rates = {name: len(batch) / statistics.median(ts) for name, ts in times.items()}
        print(f"  {label}:")
        for name, rate in rates.items():
            print(f"    {name:<18} {rate:>8.1f} samples/s  ({1e6 / rate:.0f} us/sample, median of {len(times[name])})")
        print(f"    contribution(C0) / naive = {rates['contribution C0'] / rates['naive']:.2f}x")
    asyncio.set_event_loop(ours.loop)
    print("\nper-sample cost of each stage of the contribution path (us, measured separately):")
    for stage, us in stage_costs(ours, batch, tok).items():
        print(f"  {stage:<58} {us:>8.1f}")
    naive_loop.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["ray", "worker", "both"], default="both")
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--kinds", nargs="*", default=["C1", "C0", "none"], help="contribution types in ray mode")
    parser.add_argument("--baseline-tree", default=None, help="another checkout's root: its contribution(C0) too")
    parser.add_argument("--tokenizer-dir", default=os.path.join(tempfile.gettempdir(), "verl_rewards_qwen_tokenizer"))
    args = parser.parse_args()

    import ray
    import verl  # noqa: F401 - loads the plugin
    from transformers import AutoTokenizer

    from verl_rewards.local_tokenizer import build_qwen_tokenizer

    tok_dir = build_qwen_tokenizer(args.tokenizer_dir)
    tok = AutoTokenizer.from_pretrained(tok_dir)
    t0 = time.perf_counter()
    batch = make_batch(tok, args.samples, seed=0)
    warm = make_batch(tok, 16, seed=1)
    lengths = batch.batch["attention_mask"][:, batch.batch["prompts"].shape[1] :].sum(-1).float()
    print(
        f"batch: {len(batch)} samples, responses {int(lengths.min())}-{int(lengths.max())} tokens "
        f"(mean {lengths.mean():.0f}), Qwen vocabulary ({len(tok)} tokens), built in {time.perf_counter() - t0:.1f} s"
    )
    if args.mode in ("worker", "both"):
        worker_mode(batch, tok, tok_dir, args.repeats)
    if args.mode == "worker":
        return
    print(f"\nverl RewardLoopManager, reward.num_workers={args.workers}, local Ray with 2 CPUs")
    print(f"load average (1, 5, 15 min) before: {os.getloadavg()}\n")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    c0 = ["reward.reward_manager.name=contribution", "+reward.reward_kwargs.contribution.type=C0"]
    configs: dict[str, tuple[list[str], str | None]] = {
        "naive (verl built-in)": (["reward.reward_manager.name=naive"], None),
        **{
            f"contribution, type={kind}": (
                ["reward.reward_manager.name=contribution", f"+reward.reward_kwargs.contribution.type={kind}"],
                None,
            )
            for kind in args.kinds
        },
    }
    if args.baseline_tree:
        configs["contribution, type=C0, baseline"] = (c0, os.path.abspath(args.baseline_tree))
    try:
        fn = [
            "reward.custom_reward_function.path=pkg://verl_rewards.demo",
            "reward.custom_reward_function.name=arith_reward",
        ]
        managers = {
            name: start_manager(f"m{i}", [*fn, *overrides], tok_dir, args.workers, warm, tree)
            for i, (name, (overrides, tree)) in enumerate(configs.items())
        }
        times = time_rounds(managers, batch, args.repeats)
    finally:
        ray.shutdown()
    print(f"load average (1, 5, 15 min) after: {os.getloadavg()}")
    rates = {}
    for name, ts in times.items():
        med = statistics.median(ts)
        rates[name] = len(batch) / med
        print(f"  {name:<34} {rates[name]:>8.1f} samples/s  (median of {len(ts)}: {med:.3f} s, best {min(ts):.3f} s)")
    naive = rates["naive (verl built-in)"]
    print("\nratios (higher is faster; medians):")
    for name, rate in rates.items():
        if name != "naive (verl built-in)":
            print(f"  {name:<34} / naive = {rate / naive:.2f}x")
    if "contribution, type=none" in rates:
        off = rates["contribution, type=none"]
        for kind in ("C0", "C1"):
            if f"contribution, type={kind}" in rates:
                cost = 100 * (off / rates[f"contribution, type={kind}"] - 1)
                print(f"  time cost of {kind} vs none: {cost:+.1f}%")


if __name__ == "__main__":
    main()
