"""Throughput of the per-sample tau2 DB reward: our evaluator versus a naive replay-and-hash baseline.

A GRPO step scores every task ``--group`` times (8-16 in practice). For each task of each domain this builds
``--group`` realistic trajectories from the task's gold actions (half of them correct, half wrong: the last
successful write dropped, or a state-changing write added) and scores them:

* **ours**: ``evaluate_trajectory(domain, task, messages, reward_basis=["DB"])`` on a freshly loaded domain (so
  the per-task gold cache starts cold), i.e. copy-on-write DB overlays, a cached gold state and
  ``DBState.same_as`` instead of full hashes;
* **baseline**: deep-copy the normalised DB dict, replay the trajectory's mutating calls with the same tools on a
  plain-dict state, do the same for the gold actions on a second copy, then ``json.dumps`` + sha256 both; no
  cache. It runs on the first ``--baseline-samples`` samples only (it is slow) and must agree with ours. It
  ignores ``initial_state`` and the user DB, which airline and retail do not have (on mock it is only indicative).

Domains scored on env assertions (``--full-domains``, default telecom) are benchmarked on their **full** reward
(the task's own basis: ENV_ASSERTION, plus ACTION on telecom's transfer tasks) over the ``base`` split, each
task's gold trajectory and a wrong one (its last user action dropped) alternating in the group:

* **ours**: ``evaluate_trajectory(domain, task, messages)`` on a freshly loaded domain;
* **baseline**: deep copies of both DBs, the task's initialisation actions, the trajectory's mutating calls and
  the gold actions replayed on plain dicts with the environment sync after each call, full hashes of both DBs,
  the assertions and ACTION; no cache. It must agree with ours on every sample it scores.

Prints samples/s for both and their ratio. Domains whose module or data are missing are skipped with a message.

**First and repeat calls** (``--reference-python``, a throwaway venv with tau2-bench installed): each call of the
full reward (the task's basis; NL assertions graded as met by a stand-in judge, no LLM) is timed alone; per task
the first call (cold gold cache) goes to *first*, the others of its group to *repeat* (medians, ms). The reference
is tau2-bench's own ``evaluate_simulation(..., EvaluationType.ALL)`` run by :mod:`reference_rewards` in that venv
on the first ``--reference-tasks`` tasks' samples (as tau2 Results messages), timed the same way; tau2 finds its
data through ``TAU2_DATA_DIR`` (``--reference-data-dir``, holding ``tau2/domains/<domain>``).
Usage: ``python benchmarks/bench_tau2_reward.py [--domains airline,retail] [--full-domains telecom]
[--data-dir DIR] [--reference-python /tmp/tau2ref/bin/python --reference-data-dir DIR]``.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
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

from common import first_and_repeat  # noqa: E402

from verl_rewards.engine.trajectory import pair_tool_calls, parse_messages  # noqa: E402
from verl_rewards.tau2.domain import Domain, resolve_data_dir  # noqa: E402
from verl_rewards.tau2.errors import Tau2Error  # noqa: E402
from verl_rewards.tau2.evaluator import evaluate_trajectory  # noqa: E402
from verl_rewards.tau2.evaluators.action import check_actions  # noqa: E402
from verl_rewards.tau2.scripted import gold_calls, scripted_trajectory  # noqa: E402


# ------------------------------------------------------------------------------------------ baseline
class PlainState:
    """The DBState read/write interface over one plain dict, mutated in place (no overlay, no sharing)."""

    def __init__(self, data: dict[str, Any]):
        self.data = data

    def collection_names(self) -> list[str]:
        return list(self.data)

    def get(self, collection: str, key: Any, default: Any = None) -> Any:
        coll = self.data[collection]
        if isinstance(coll, list):
            return coll[key] if isinstance(key, int) and 0 <= key < len(coll) else default
        return coll.get(key, default)

    def contains(self, collection: str, key: Any) -> bool:
        sentinel = object()
        return self.get(collection, key, sentinel) is not sentinel

    def keys(self, collection: str):
        coll = self.data[collection]
        return iter(range(len(coll))) if isinstance(coll, list) else iter(list(coll))

    def items(self, collection: str):
        for k in self.keys(collection):
            yield k, self.get(collection, k)

    def values(self, collection: str):
        for _, v in self.items(collection):
            yield v

    def size(self, collection: str) -> int:
        return len(self.data[collection])

    def write(self, collection: str, key: Any) -> Any:
        if not self.contains(collection, key):
            raise KeyError(key)
        return self.get(collection, key)

    def insert(self, collection: str, key: Any, record: Any) -> None:
        self.data[collection][key] = record

    def append(self, collection: str, record: Any) -> int:
        self.data[collection].append(record)
        return len(self.data[collection]) - 1


def _naive_call(toolkit: Any, name: str, arguments: dict[str, Any]) -> None:
    try:
        toolkit.call(name, copy.deepcopy(arguments))
    except Exception:  # noqa: BLE001 - tool errors are observations, the state stays as the tool left it
        pass


def naive_db_reward(domain: Domain, task_id: str, messages: list[dict[str, Any]]) -> float:
    """The baseline: full copies, full replays, full hashes, nothing cached."""
    tools_cls = domain.spec.agent_toolkit
    specs = tools_cls.tool_specs()
    # agent side
    predicted = tools_cls(PlainState(copy.deepcopy(domain.base_db.data)))
    for call, _ in pair_tool_calls(parse_messages(messages)).pairs:
        if call.valid and call.name in specs and specs[call.name].mutates_state:
            _naive_call(predicted, call.name, call.arguments or {})
    # gold side
    gold = tools_cls(PlainState(copy.deepcopy(domain.base_db.data)))
    for name, arguments, _ in gold_calls(domain, task_id):
        if name in specs:
            _naive_call(gold, name, arguments)

    def full_hash(state: PlainState) -> str:
        return hashlib.sha256(json.dumps(state.data, sort_keys=True, default=str).encode()).hexdigest()

    return 1.0 if full_hash(predicted.db) == full_hash(gold.db) else 0.0


def _full_hash(state: PlainState) -> str:
    return hashlib.sha256(json.dumps(state.data, sort_keys=True, default=str).encode()).hexdigest()


def naive_full_reward(domain: Domain, task_id: str, messages: list[dict[str, Any]]) -> float:
    """The full-reward baseline for a domain with a user DB and a sync hook: copies, replays, hashes, no cache."""
    task = domain.task(task_id)
    sync = domain.spec.sync_tools

    def fresh_env() -> tuple[Any, Any]:
        agent = domain.spec.agent_toolkit(PlainState(copy.deepcopy(domain.base_db.data)))
        user = domain.spec.user_toolkit(PlainState(copy.deepcopy(domain.user_base_db.data)))
        for action in task.initial_state.initialization_actions or ():
            (user if action.env_type == "user" else agent).call(action.func_name, copy.deepcopy(action.arguments))
            sync(agent, user)
        return agent, user

    def run(agent: Any, user: Any, name: str, arguments: dict[str, Any], requestor: str) -> None:
        kit = user if requestor == "user" else agent
        if not kit.has_tool(name):
            return
        try:
            kit.call(name, copy.deepcopy(arguments))
            sync(agent, user)
        except Exception:  # noqa: BLE001 - tool errors are observations
            pass

    parsed = parse_messages(messages)
    agent, user = fresh_env()
    for call, _ in pair_tool_calls(parsed).pairs:
        kit = user if call.requestor == "user" else agent
        if call.valid and kit.has_tool(call.name) and kit.tool_specs()[call.name].mutates_state:
            run(agent, user, call.name, call.arguments or {}, call.requestor)
    sync(agent, user)
    gold_agent, gold_user = fresh_env()
    for name, arguments, requestor in gold_calls(domain, task_id):
        run(gold_agent, gold_user, name, arguments, requestor)
    db = _full_hash(agent.db) == _full_hash(gold_agent.db) and _full_hash(user.db) == _full_hash(gold_user.db)
    assertions = all(
        (user if a.env_type == "user" else agent).call(a.func_name, copy.deepcopy(a.arguments)) == a.assert_value
        for a in task.evaluation_criteria.env_assertions or ()
    )
    values = {"DB": float(db), "ENV_ASSERTION": float(assertions)}
    values["ACTION"] = check_actions(task, parsed).reward
    reward = 1.0
    for name in task.evaluation_criteria.reward_basis:
        reward *= values[name]
    return reward


# ------------------------------------------------------------------------------------------ samples
def _wrong_calls(domain: Domain, task_id: str, fallback: list[Any]) -> list[Any]:
    calls = gold_calls(domain, task_id)
    env = domain.make_env()
    _, errors = domain.gold_env(task_id)
    failed = {e["action_id"] for e in errors}
    actions = domain.task(task_id).evaluation_criteria.actions or ()
    writes = [i for i, a in enumerate(actions) if a.action_id not in failed and env.is_mutating_tool(a.name)]
    if writes:
        return calls[: writes[-1]] + calls[writes[-1] + 1 :]
    if not fallback:
        for tid in domain.tasks:
            for name, args, req in gold_calls(domain, tid):
                probe = domain.make_env()
                if probe.is_mutating_tool(name) and not probe.step(name, args).startswith("Error"):
                    fallback.append((name, args, req))
                    break
            if fallback:
                break
    return calls + fallback[:1]


def build_samples(domain: Domain, group: int, max_tasks: int | None) -> list[tuple[str, list[dict[str, Any]], bool]]:
    """``group`` trajectories per task (alternating correct / wrong), task by task as a GRPO step sees them."""
    samples = []
    fallback: list[Any] = []
    for task_id in list(domain.tasks)[:max_tasks]:
        correct = scripted_trajectory(domain, task_id, gold_calls(domain, task_id))
        wrong = scripted_trajectory(domain, task_id, _wrong_calls(domain, task_id, fallback))
        for i in range(group):
            samples.append((task_id, correct if i % 2 == 0 else wrong, i % 2 == 0))
    return samples


# ------------------------------------------------------------------------------------------ run
def against_baseline(
    domain: Any, samples: list, ours: list[float], ours_rate: float, baseline_samples: int, baseline: Any
) -> str:
    """Score the first ``baseline_samples`` the slow way and report speed-up, agreement and the built labels."""
    subset = samples[:baseline_samples]
    t0 = time.perf_counter()
    naive = [baseline(domain, tid, msgs) for tid, msgs, _ in subset]
    naive_s = time.perf_counter() - t0
    agree = sum(a == b for a, b in zip(ours, naive, strict=False))
    correct_ok = sum((r == 1.0) == good for r, (_, _, good) in zip(ours, samples, strict=True))
    naive_rate = len(subset) / naive_s if subset else float("nan")
    return (
        f"  | baseline {naive_rate:7.2f} samples/s on {len(subset)}"
        f"  | speed-up {ours_rate / naive_rate:7.1f}x"
        f"  | baseline agrees {agree}/{len(subset)}  | correct/wrong as built {correct_ok}/{len(samples)}"
    )


def bench_domain(name: str, data_dir: str | None, group: int, baseline_samples: int, max_tasks: int | None) -> None:
    try:
        folder = resolve_data_dir(name, data_dir, {"db": "db.json"})
        Domain(name, folder)  # validates module and data; loading time is not part of the benchmark
    except (Tau2Error, FileNotFoundError) as exc:
        print(f"{name:8s} SKIPPED: {exc}")
        return
    builder = Domain(name, folder)
    samples = build_samples(builder, group, max_tasks)

    fresh = Domain(name, folder)  # cold gold cache
    t0 = time.perf_counter()
    ours = [evaluate_trajectory(fresh, tid, msgs, reward_basis=["DB"]).reward for tid, msgs, _ in samples]
    ours_s = time.perf_counter() - t0

    ours_rate = len(samples) / ours_s
    print(
        f"{name:8s} tasks={len(samples) // group:4d} samples={len(samples):5d}  ours {ours_rate:9.1f} samples/s"
        + against_baseline(fresh, samples, ours, ours_rate, baseline_samples, naive_db_reward)
    )


def _drop_last_user_call(calls: list[Any]) -> list[Any]:
    users = [i for i, c in enumerate(calls) if c[2] == "user"]
    return calls[: users[-1]] + calls[users[-1] + 1 :] if users else calls[:-1]


def bench_full_domain(name: str, data_dir: str | None, group: int, baseline_samples: int, split: str) -> None:
    try:
        folder = resolve_data_dir(name, data_dir, {"db": "db.toml"})
        builder = Domain(name, folder)
    except (Tau2Error, FileNotFoundError) as exc:
        print(f"{name:8s} SKIPPED: {exc}")
        return
    samples = []
    for task_id in builder.split(split):
        calls = gold_calls(builder, task_id)
        correct = scripted_trajectory(builder, task_id, calls)
        wrong = scripted_trajectory(builder, task_id, _drop_last_user_call(calls))
        samples += [(task_id, correct if i % 2 == 0 else wrong, i % 2 == 0) for i in range(group)]
    gold_only = [s for s in samples if s[2]]

    fresh = Domain(name, folder)  # cold gold cache
    t0 = time.perf_counter()
    ours = [evaluate_trajectory(fresh, tid, msgs).reward for tid, msgs, _ in samples]
    ours_s = time.perf_counter() - t0
    fresh = Domain(name, folder)
    t0 = time.perf_counter()
    for tid, msgs, _ in gold_only:
        evaluate_trajectory(fresh, tid, msgs)
    gold_rate = len(gold_only) / (time.perf_counter() - t0)

    ours_rate = len(samples) / ours_s
    print(
        f"{name:8s} full reward, split {split}: tasks={len(samples) // group:4d} samples={len(samples):5d}"
        f"  ours {ours_rate:9.1f} samples/s (gold trajectories only: {gold_rate:9.1f})"
        + against_baseline(fresh, samples, ours, ours_rate, baseline_samples, naive_full_reward)
    )


def _all_met(messages: Any, assertions: Any) -> list[bool]:
    return [True] * len(assertions)


def bench_first_call(name: str, data_dir: str | None, group: int, python: str, ref_data: str, ref_tasks: int) -> None:
    """Per task: the first call of the full reward and its repeats, ours against tau2-bench's own evaluator."""
    from verl_rewards.tau2.normal.results import message_dumps as tau2_messages

    try:
        folder = resolve_data_dir(name, data_dir, {"db": "db.json" if name != "telecom" else "db.toml"})
        builder = Domain(name, folder)
    except (Tau2Error, FileNotFoundError) as exc:
        print(f"{name:8s} SKIPPED: {exc}")
        return
    ids = [t for t in builder.tasks if not builder.task(t).history]
    if name == "telecom":
        ids = builder.split("base")
    samples = []
    for task_id in ids:
        calls = gold_calls(builder, task_id)
        correct = scripted_trajectory(builder, task_id, calls)
        wrong = scripted_trajectory(builder, task_id, _drop_last_user_call(calls) if name == "telecom" else calls[:-1])
        samples += [(task_id, correct if i % 2 == 0 else wrong) for i in range(group)]
    fresh = Domain(name, folder)

    def ours(tid: str, msgs: list[dict[str, Any]]) -> float:
        return evaluate_trajectory(fresh, tid, msgs, "user_stop", judge=_all_met, assertion_errors="zero").reward

    ours(*samples[0])  # imports and first-use costs
    measured = [s for s in samples if s[0] != samples[0][0]]
    seconds = []
    for tid, msgs in measured:
        t0 = time.perf_counter()
        ours(tid, msgs)
        seconds.append(time.perf_counter() - t0)
    ours_first, ours_repeat = first_and_repeat(measured, seconds)
    subset = measured[: ref_tasks * group]
    request = {
        "kind": "tau2",
        "domain": name,
        "samples": [{"task_id": tid, "messages": tau2_messages(msgs)} for tid, msgs in subset],
    }
    script = Path(__file__).resolve().parent / "reference_rewards.py"
    done = subprocess.run(
        [python, str(script)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd="/",
        env={**os.environ, "TAU2_DATA_DIR": ref_data, "PYTHONPATH": ""},
    )
    if done.returncode != 0:
        print(f"{name:8s} reference FAILED: {done.stderr.strip().splitlines()[-1:]}")
        return
    ref = json.loads(done.stdout)
    ref_first, ref_repeat = first_and_repeat(subset, ref["seconds"])
    agree = sum(ours(t, m) == r for (t, m), r in zip(subset, ref["rewards"], strict=True))
    print(
        f"{name:8s} first call {ours_first:7.3f} ms, repeat {ours_repeat:7.3f} ms (first/repeat "
        f"{ours_first / ours_repeat:4.2f})  | tau2's evaluate_simulation: first {ref_first:7.2f} ms, repeat "
        f"{ref_repeat:7.2f} ms on {len(subset)}  | speed-up first {ref_first / ours_first:5.0f}x, repeat "
        f"{ref_repeat / ours_repeat:5.0f}x  | agree {agree}/{len(subset)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="airline,retail")
    parser.add_argument("--full-domains", default="telecom", help="domains benchmarked on their full reward")
    parser.add_argument("--split", default="base", help="split of the --full-domains")
    parser.add_argument(
        "--data-dir", default=os.environ.get("TAU2_DATA_DIR"), help="folder holding <domain>/ (default: $TAU2_DATA_DIR)"
    )
    parser.add_argument("--group", type=int, default=8, help="trajectories per task (GRPO group size)")
    parser.add_argument("--baseline-samples", type=int, default=16, help="samples scored by the slow baseline")
    parser.add_argument("--max-tasks", type=int, default=None, help="limit the tasks per domain")
    parser.add_argument("--reference-python", default=None, help="python of a venv with tau2-bench installed")
    parser.add_argument(
        "--reference-data-dir", default=None, help="TAU2_DATA_DIR for tau2-bench (holds tau2/domains/<domain>)"
    )
    parser.add_argument("--reference-tasks", type=int, default=8, help="tasks whose samples the reference scores")
    parser.add_argument(
        "--first-call-domains", default="airline,retail,telecom", help="mock: tau2 raises on its wrong trajectories"
    )
    args = parser.parse_args(argv)
    if not args.data_dir:
        parser.error("no tau2 data: pass --data-dir or set TAU2_DATA_DIR (tau2-bench's data/tau2/domains)")
    print(f"tau2 DB reward throughput (group={args.group}, data={args.data_dir})")
    for name in [d.strip() for d in args.domains.split(",") if d.strip()]:
        bench_domain(name, args.data_dir, args.group, args.baseline_samples, args.max_tasks)
    for name in [d.strip() for d in args.full_domains.split(",") if d.strip()]:
        bench_full_domain(name, args.data_dir, args.group, args.baseline_samples, args.split)
    if args.reference_python and args.reference_data_dir:
        print("first call for a task vs repeat calls (full reward), against tau2-bench's own evaluator")
        for name in [d.strip() for d in args.first_call_domains.split(",") if d.strip()]:
            bench_first_call(
                name, args.data_dir, args.group, args.reference_python, args.reference_data_dir, args.reference_tasks
            )
    else:
        print(
            "(first/repeat figures against tau2-bench's own evaluator: pass --reference-python, --reference-data-dir)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
