"""Throughput of the tau-bench (v1) reward on tau-bench's own data: ours versus tau-bench's way.

A GRPO step scores every task ``--group`` times. For each task of each v1 domain this builds ``--group``
trajectories from the task's gold actions, as a policy would produce them (reads included, each call answered by
its real observation, a final text reply stating the outputs): half of them correct, half wrong (the last
successful write dropped; for tasks whose gold leaves the data unchanged, a successful unrequested write added).

* **ours**: ``tau_bench_reward(domain, task, messages)`` on a freshly loaded domain (the per-task gold cache starts
  cold): copy-on-write overlays, the gold state and its hash cached per task, ``DBState.same_as`` instead of hashes;
* **tau-bench's way** (``Env.calculate_reward``): per trajectory, read the data files from disk, run the
  trajectory's tool calls on it, hash it; read the data again, replay the gold actions, hash it; compare. Same
  tools (ours, on plain dicts mutated in place). It runs on the first ``--baseline-samples`` samples only (it is
  slow) and must agree with ours.

Prints samples/s for both and their ratio, measured in the same run.

**First and repeat calls** (``--reference-python``): a reward worker meets each task first with a cold gold cache
and then again for the rest of its group. Each call is timed alone; per task, the first call goes to *first*, the
others to *repeat* (medians, ms). Ours gets the row's ``gt_data_hash`` as the ``contribution`` manager passes it
(``prepare tau_bench`` writes it; computed here outside the timing, as prepare does). The reference is tau-bench's
own ``Env.calculate_reward``, run by :mod:`reference_rewards` in a throwaway venv (``--reference-python``, with
tau-bench's source at ``--tau-bench-src``) on the first ``--reference-tasks`` tasks' samples, timed the same way.
Each line gives ours first / repeat, their ratio (a first call should cost at most 2 repeats), the reference's
figures and the speed-up of each.

Usage: ``python benchmarks/bench_tau_bench_reward.py [--domains retail,airline] [--data-dir DIR] [--group 8]
[--reference-python /tmp/venv/bin/python --tau-bench-src /tmp/tau-bench]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/common.py, also when loaded by path

from bench_tau2_reward import PlainState  # noqa: E402
from common import first_and_repeat  # noqa: E402

from verl_rewards.engine.trajectory import pair_tool_calls, parse_messages  # noqa: E402
from verl_rewards.tau2.errors import Tau2Error  # noqa: E402
from verl_rewards.tau_bench.domain import DATA_DIR_ENV, TauBenchDomain  # noqa: E402
from verl_rewards.tau_bench.hashing import data_hash  # noqa: E402
from verl_rewards.tau_bench.reward import tau_bench_reward  # noqa: E402


# ------------------------------------------------------------------------------------------ baseline
def _run(toolkit: Any, name: str, arguments: dict[str, Any]) -> None:
    if name in toolkit.tool_specs():
        try:
            toolkit.call(name, json.loads(json.dumps(arguments)))
        except Exception:  # noqa: BLE001 - tau-bench turns every failure into an observation
            pass


def tau_bench_way(domain: TauBenchDomain, task_id: str, messages: list[dict[str, Any]]) -> float:
    """tau-bench's ``calculate_reward``: fresh data from disk and a full hash on both sides, nothing cached."""

    def fresh() -> Any:
        return domain.spec.agent_toolkit(
            PlainState({p: json.loads((domain.data_dir / f"{p}.json").read_text()) for p in domain.spec.data_files})
        )

    agent = fresh()
    for call, _ in pair_tool_calls(parse_messages(messages)).pairs:
        if call.name in domain.terminate_tools:
            break
        if call.valid:
            _run(agent, call.name, call.arguments or {})
    agent_hash = data_hash(agent.db.data)
    gold = fresh()
    for action in domain.task(task_id).actions:
        if action["name"] not in domain.terminate_tools:
            _run(gold, action["name"], action["kwargs"])
    return 1.0 if data_hash(gold.db.data) == agent_hash else 0.0


# ------------------------------------------------------------------------------------------ samples
def _trajectory(domain: TauBenchDomain, task_id: str, calls: list[tuple[str, dict[str, Any]]]) -> list[dict]:
    task = domain.task(task_id)
    env = domain.make_env(task_id)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": domain.policy},
        {"role": "user", "content": task.instruction},
    ]
    for i, (name, args) in enumerate(calls):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": env.step(name, args)})
    messages.append({"role": "assistant", "content": "Done. " + " ".join(task.outputs)})
    return messages


def build_samples(domain: TauBenchDomain, group: int, max_tasks: int | None) -> list[tuple[str, list, bool]]:
    samples = []
    kinds = domain.tool_kinds()
    for task_id in list(domain.tasks)[:max_tasks]:
        calls = [
            (a["name"], dict(a["kwargs"]))
            for a in domain.task(task_id).actions
            if a["name"] not in domain.terminate_tools
        ]
        probe = domain.make_env(task_id)
        ok_writes = [
            i for i, (n, a) in enumerate(calls) if not probe.step(n, a).startswith("Error:") and kinds[n] == "write"
        ]
        if ok_writes:
            wrong = calls[: ok_writes[-1]] + calls[ok_writes[-1] + 1 :]
        else:
            user = domain.task(task_id).user_id
            extra = (
                ("send_certificate", {"user_id": user, "amount": 1})
                if domain.name == "airline"
                else (
                    "modify_user_address",
                    {
                        "user_id": user,
                        "address1": "x",
                        "address2": "",
                        "city": "c",
                        "state": "s",
                        "country": "USA",
                        "zip": "0",
                    },
                )
            )
            wrong = [*calls, extra]
        correct_msgs, wrong_msgs = _trajectory(domain, task_id, calls), _trajectory(domain, task_id, wrong)
        samples += [(task_id, correct_msgs if i % 2 == 0 else wrong_msgs, i % 2 == 0) for i in range(group)]
    return samples


# ------------------------------------------------------------------------------------------ run
def bench_domain(name: str, data_dir: str, group: int, baseline_samples: int, max_tasks: int | None) -> None:
    try:
        builder = TauBenchDomain(name, data_dir)
    except (Tau2Error, FileNotFoundError) as exc:
        print(f"{name:8s} SKIPPED: {exc}")
        return
    samples = build_samples(builder, group, max_tasks)
    fresh = TauBenchDomain(name, builder.data_dir)  # cold gold cache; loading is not part of the measurement
    t0 = time.perf_counter()
    ours = [tau_bench_reward(fresh, tid, msgs).reward for tid, msgs, _ in samples]
    ours_s = time.perf_counter() - t0
    subset = samples[:: max(1, len(samples) // baseline_samples)][:baseline_samples]
    t0 = time.perf_counter()
    naive = [tau_bench_way(fresh, tid, msgs) for tid, msgs, _ in subset]
    naive_s = time.perf_counter() - t0
    ours_of = {id(m): r for (_, m, _), r in zip(samples, ours, strict=True)}
    agree = sum(ours_of[id(m)] == r for (_, m, _), r in zip(subset, naive, strict=True))
    as_built = sum((r == 1.0) == good for r, (_, _, good) in zip(ours, samples, strict=True))
    ours_rate, naive_rate = len(samples) / ours_s, len(subset) / naive_s
    print(
        f"{name:8s} tasks={len(samples) // group:4d} samples={len(samples):5d}  ours {ours_rate:9.1f} samples/s"
        f"  | tau-bench's way {naive_rate:6.2f} samples/s on {len(subset)}  | speed-up {ours_rate / naive_rate:7.1f}x"
        f"  | agree {agree}/{len(subset)}  | correct/wrong as built {as_built}/{len(samples)}"
    )


def run_reference(python: str, kind: str, domain: str, samples: list, sys_path: list[str]) -> dict[str, Any]:
    """The reference's own reward on ``samples``, timed in its venv by ``reference_rewards.py``."""
    request = {
        "kind": kind,
        "domain": domain,
        "sys_path": sys_path,
        "samples": [{"task_id": tid, "messages": msgs} for tid, msgs, *_ in samples],
    }
    script = Path(__file__).resolve().parent / "reference_rewards.py"
    done = subprocess.run(
        [python, str(script)], input=json.dumps(request), capture_output=True, text=True, check=True, cwd="/"
    )
    return json.loads(done.stdout)


def bench_first_call(name: str, data_dir: str, group: int, python: str, src: str, ref_tasks: int) -> None:
    """Per task: the first call (cold gold cache) and the repeats, ours against tau-bench's own reward."""
    builder = TauBenchDomain(name, data_dir)
    samples = build_samples(builder, group, None)
    hashes = {tid: builder.gold_hash(tid) for tid in builder.tasks}  # what prepare writes into the rows
    fresh = TauBenchDomain(name, builder.data_dir)
    warm_id = samples[0][0]
    tau_bench_reward(fresh, warm_id, samples[0][1], gold_hash=hashes[warm_id])  # imports and first-use costs
    measured = [s for s in samples if s[0] != warm_id]
    seconds = []
    for tid, msgs, _ in measured:
        t0 = time.perf_counter()
        tau_bench_reward(fresh, tid, msgs, gold_hash=hashes[tid])
        seconds.append(time.perf_counter() - t0)
    ours_first, ours_repeat = first_and_repeat(measured, seconds)
    subset = measured[: ref_tasks * group]
    ref = run_reference(python, "tau_bench", name, subset, [src])
    ref_first, ref_repeat = first_and_repeat(subset, ref["seconds"])
    ours_of = {id(m): tau_bench_reward(fresh, t, m, gold_hash=hashes[t]).reward for t, m, _ in subset}
    agree = sum(ours_of[id(m)] == r for (_, m, _), r in zip(subset, ref["rewards"], strict=True))
    print(
        f"{name:8s} first call {ours_first:7.3f} ms, repeat {ours_repeat:7.3f} ms (first/repeat "
        f"{ours_first / ours_repeat:4.2f})  | tau-bench's calculate_reward: first {ref_first:8.2f} ms, repeat "
        f"{ref_repeat:8.2f} ms on {len(subset)}  | speed-up first {ref_first / ours_first:6.0f}x, repeat "
        f"{ref_repeat / ours_repeat:6.0f}x  | agree {agree}/{len(subset)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="retail,airline")
    parser.add_argument(
        "--data-dir",
        default=os.environ.get(DATA_DIR_ENV),
        help=f"folder holding retail/ and airline/ (default: ${DATA_DIR_ENV})",
    )
    parser.add_argument("--group", type=int, default=8, help="trajectories per task (GRPO group size)")
    parser.add_argument("--baseline-samples", type=int, default=64, help="samples scored the slow way")
    parser.add_argument("--max-tasks", type=int, default=None, help="limit the tasks per domain")
    parser.add_argument("--reference-python", default=None, help="python of a venv with litellm and pydantic")
    parser.add_argument("--tau-bench-src", default=None, help="tau-bench's source checkout (holds tau_bench/)")
    parser.add_argument("--reference-tasks", type=int, default=8, help="tasks whose samples the reference scores")
    args = parser.parse_args(argv)
    if not args.data_dir:
        parser.error(f"no tau-bench data: pass --data-dir or set {DATA_DIR_ENV}")
    print(f"tau-bench v1 reward throughput (group={args.group}, data={args.data_dir})")
    for name in [d.strip() for d in args.domains.split(",") if d.strip()]:
        bench_domain(name, args.data_dir, args.group, args.baseline_samples, args.max_tasks)
    if args.reference_python and args.tau_bench_src:
        print("first call for a task vs repeat calls, against tau-bench's own reward")
        for name in [d.strip() for d in args.domains.split(",") if d.strip()]:
            bench_first_call(
                name, args.data_dir, args.group, args.reference_python, args.tau_bench_src, args.reference_tasks
            )
    else:
        print("(first/repeat figures against tau-bench's own reward: pass --reference-python and --tau-bench-src)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
