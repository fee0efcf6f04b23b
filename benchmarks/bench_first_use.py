"""A task's first episode against a repeat: what per-task state built on first use costs a rollout.

A domain builds each task's initial state (validation, initialisation data and actions) the first time the task is
used and caches it. A rollout pays that once per task and worker, inside its first episode; so the episode is the
unit compared here: ``make_env(task)`` plus the task's gold actions (agent and user calls, each through
``Environment.step``), first on a freshly loaded domain, then repeated on the same domain (median of ``--repeats``).
``make_env`` alone is reported beside it (first against a repeat), the call the cache serves.

The back-to-back repeat runs with the task's records, arguments and code hot in the CPU caches, which a first
episode never has, whatever a domain caches. So each task's episode is also timed once more in a second pass over
the tasks (same order, after every other task ran: what a rollout sees when the task comes back), the *later
repeat*: first ÷ later repeat is the share of a first episode that is the per-task state built on first use. A
control, *prebuilt*: a fresh domain whose every task's state is built (``make_env``) before the first episodes, so
its first ÷ repeat is what the CPU caches alone cost.

Per domain (mock, airline, retail, telecom, banking_knowledge with BM25), on the first ``--tasks`` tasks of its
``base`` split (tasks without gold actions too: their episode is ``make_env`` alone): the median over tasks of the
first episode and of the repeat, in ms, the ratio of those medians and the median of the per-task ratios.
``--rounds`` rounds (a fresh ``Domain`` per round and domain; domains in rotating order); the figures are medians
over rounds. Loading the domain is not timed (``bench_simulate_startup.py`` measures it). The load average and CPU
count are printed before and after: every figure depends on them; ratios are from the same run.

Usage: ``python benchmarks/bench_first_use.py [--domains ...] [--tasks 40] [--rounds 3] [--repeats 5]
[--data-dir DIR]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from typing import Any

from verl_rewards.tau2.domain import Domain
from verl_rewards.tau2.scripted import gold_calls

DOMAINS = ("mock", "airline", "retail", "telecom", "banking_knowledge")
OPTIONS: dict[str, dict[str, Any]] = {"banking_knowledge": {"retrieval": "bm25"}}


def _episode(domain: Domain, task_id: str, calls: list[tuple[str, dict[str, Any], str]]) -> float:
    """Seconds for ``make_env(task_id)`` and the gold calls."""
    start = time.perf_counter()
    env = domain.make_env(task_id)
    for name, arguments, requestor in calls:
        env.step(name, arguments, requestor)
    return time.perf_counter() - start


def _make_env(domain: Domain, task_id: str) -> float:
    start = time.perf_counter()
    domain.make_env(task_id)
    return time.perf_counter() - start


def measure(name: str, data_dir: str | None, tasks: int, repeats: int) -> dict[str, float]:
    """One round of one domain: medians (ms) and ratios over its first ``tasks`` base tasks."""
    options = OPTIONS.get(name, {})
    probe = Domain(name, data_dir, **options)
    task_ids = probe.split("base")[:tasks]
    calls = {tid: gold_calls(probe, tid) for tid in task_ids}
    keys = ("first", "repeat", "later", "env_first", "env_repeat", "pre_first", "pre_repeat")
    out: dict[str, list[float]] = {k: [] for k in keys}
    for kind in ("episode", "env", "prebuilt"):
        domain = Domain(name, data_dir, **options)  # cold per-task caches
        domain.make_env()  # the domain's own first use (no task), not a task's
        if kind == "prebuilt":
            for tid in task_ids:
                domain.make_env(tid)
        gc.collect()
        for tid in task_ids:
            if kind == "prebuilt":
                out["pre_first"].append(_episode(domain, tid, calls[tid]))
                out["pre_repeat"].append(statistics.median(_episode(domain, tid, calls[tid]) for _ in range(repeats)))
            elif kind == "episode":
                out["first"].append(_episode(domain, tid, calls[tid]))
                out["repeat"].append(statistics.median(_episode(domain, tid, calls[tid]) for _ in range(repeats)))
            else:
                out["env_first"].append(_make_env(domain, tid))
                out["env_repeat"].append(statistics.median(_make_env(domain, tid) for _ in range(repeats)))
        if kind == "episode":  # the second pass: each task again, after all the others
            out["later"] = [_episode(domain, tid, calls[tid]) for tid in task_ids]
    med = {k: statistics.median(v) * 1000 for k, v in out.items()}
    return {
        **med,
        "ratio": med["first"] / med["repeat"],
        "ratio_per_task": statistics.median(f / r for f, r in zip(out["first"], out["repeat"], strict=True)),
        "later_ratio": med["first"] / med["later"],
        "pre_ratio": med["pre_first"] / med["pre_repeat"],
        "env_ratio": med["env_first"] / med["env_repeat"],
        "tasks": float(len(task_ids)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domains", default=",".join(DOMAINS))
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    names = [d for d in args.domains.split(",") if d]
    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs")
    runs: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    for r in range(args.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            runs[name].append(measure(name, args.data_dir, args.tasks, args.repeats))
    print(
        f"{'domain':18s} tasks  episode first / repeat (ms)  first÷repeat  (per-task median)"
        "  | make_env first / repeat (ms)  first÷repeat  | later repeat (ms)  first÷later  | prebuilt first÷repeat"
    )
    for name in names:
        m = {k: statistics.median(run[k] for run in runs[name]) for k in runs[name][0]}
        print(
            f"{name:18s} {int(m['tasks']):5d}  {m['first']:9.3f} / {m['repeat']:8.3f}      {m['ratio']:6.2f}"
            f"        ({m['ratio_per_task']:5.2f})        | {m['env_first']:8.3f} / {m['env_repeat']:8.3f}"
            f"          {m['env_ratio']:6.2f}  | {m['later']:8.3f}           {m['later_ratio']:6.2f}"
            f"       | {m['pre_ratio']:6.2f}"
        )
    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
