"""tau2 ``banking_knowledge``: reward throughput against tau2-bench's own evaluator, and BM25 search latency.

**Scoring.** For every task (97) two trajectories are built from the task's gold actions: the gold one and the
gold one without its last state-changing action. Both are scored with the task's own basis (DB or ACTION):

* **ours**: ``evaluate_trajectory(domain, task, messages, nl_policy="skip")`` on a freshly constructed domain (its
  per-task gold cache starts cold);
* **tau2**: tau2-bench 1.0.1's own ``evaluate_simulation(..., EvaluationType.ALL)`` with the environment kwargs its
  runner passes (``retrieval_variant``, ``task``, ``read_log_allowlist``), run in a separate Python that has tau2
  installed (``--tau2-python``; tau2 is never installed next to this package). It replays the same action lists
  on its own environment to build its messages (not timed), then times the evaluation of every sample.

Both sides must give the same reward on every sample. Prints samples/s for both and their ratio.

**Search.** The BM25 index over the 698 documents is built once; every query of a fixed list is searched
``--repeats`` times. Reported: microseconds per search for ours and for ``rank_bm25.BM25Okapi.get_scores`` + a
stable sort (what tau2's retriever does) on the same index, and their ratio; grep's latency too.

Usage: ``python benchmarks/bench_tau2_banking.py [--data-dir DIR] [--tau2-python /tmp/tau2ref/bin/python
--tau2-src /tmp/tau2src/src] [--repeats 200]``. Without ``--tau2-python`` the scoring comparison is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from verl_rewards.tau2.domain import Domain, resolve_data_dir  # noqa: E402
from verl_rewards.tau2.domains.banking_knowledge import retrieval  # noqa: E402
from verl_rewards.tau2.evaluator import evaluate_trajectory  # noqa: E402

QUERIES = [
    "close debit card",
    "How do I dispute a credit card transaction?",
    "Rho-Bank+ subscription benefits",
    "lost stolen card replacement",
    "credit limit increase eligibility",
    "transfer_to_human_agents reason",
    "ATM deposit discrepancy",
    "early closure fee savings",
    "Gold Rewards Card annual fee",
    "business checking account requirements",
    "provisional credit Regulation E",
    "teen account Light Green daily ATM withdrawal limit",
]

TAU2_SIDE = r"""
import json, sys, time
from loguru import logger
logger.remove()
from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
from tau2.data_model.simulation import SimulationRun, TerminationReason
from tau2.domains.banking_knowledge.environment import get_environment, get_tasks
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
from tau2.runner.build import _derive_read_log_allowlist

samples = json.load(open(sys.argv[1]))
tasks = {t.id: t for t in get_tasks()}
for t in tasks.values():  # no LLM judge: NL assertions are left out, as ours with nl_policy="skip"
    basis = t.evaluation_criteria.reward_basis
    t.evaluation_criteria.reward_basis = [b for b in basis if str(getattr(b, "value", b)) != "NL_ASSERTION"]
def kwargs(task):
    return {"retrieval_variant": "no_knowledge", "task": task, "read_log_allowlist": _derive_read_log_allowlist(task)}
built = []
for tid, actions in samples:
    task = tasks[tid]
    env = get_environment(**kwargs(task))
    st = task.initial_state
    env.set_state(initialization_data=st.initialization_data if st else None,
                  initialization_actions=st.initialization_actions if st else None, message_history=[])
    msgs = [AssistantMessage(role="assistant", content="Hello, how can I help?")]
    for i, (req, name, args) in enumerate(actions):
        tc = ToolCall(id=f"c{i}", name=name, arguments=args, requestor=req)
        msgs += [(AssistantMessage if req == "assistant" else UserMessage)(role=req, content=None, tool_calls=[tc]),
                 env.get_response(tc)]
    msgs.append(AssistantMessage(role="assistant", content="Goodbye."))
    built.append((task, SimulationRun(id="x", task_id=tid, start_time="", end_time="", duration=0.0,
                                      termination_reason=TerminationReason.AGENT_STOP, messages=msgs)))
start = time.perf_counter()
rewards = [evaluate_simulation(sim, task, EvaluationType.ALL, False, "banking_knowledge",
                               env_kwargs=kwargs(task)).reward for task, sim in built]
print(json.dumps({"seconds": time.perf_counter() - start, "rewards": rewards}))
"""


def build_samples(dom: Domain) -> list[tuple[str, list[tuple[str, str, dict[str, Any]]]]]:
    samples = []
    for tid, task in dom.tasks.items():
        gold = [(a.requestor, a.name, dict(a.arguments)) for a in task.evaluation_criteria.actions]
        env = dom.make_env(tid)
        writes = [i for i, (_, name, _) in enumerate(gold) if env.is_mutating_tool(name)]
        samples.append((tid, gold))
        samples.append((tid, gold[: writes[-1]] + gold[writes[-1] + 1 :] if writes else gold[:-1]))
    return samples


def messages_for(dom: Domain, tid: str, actions: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    env = dom.make_env(tid)
    msgs: list[dict[str, Any]] = [{"role": "assistant", "content": "Hello, how can I help?"}]
    for i, (req, name, args) in enumerate(actions):
        obs, _ = env.execute(name, args, req)
        call = {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        msgs += [
            {"role": req, "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": obs, "requestor": req},
        ]
    msgs.append({"role": "assistant", "content": "Goodbye."})
    return msgs


def bench_scoring(folder: Path, tau2_python: str | None, tau2_src: str | None) -> None:
    dom = Domain("banking_knowledge", folder)
    samples = build_samples(dom)
    trajectories = [(tid, messages_for(dom, tid, actions)) for tid, actions in samples]
    fresh = Domain("banking_knowledge", folder)  # cold gold cache
    start = time.perf_counter()
    ours = [evaluate_trajectory(fresh, tid, msgs, nl_policy="skip").reward for tid, msgs in trajectories]
    ours_s = time.perf_counter() - start
    print(f"scoring: {len(samples)} samples (97 tasks x gold / gold minus its last write)")
    print(
        f"  ours: {len(samples) / ours_s:10.1f} samples/s ({1000 * ours_s / len(samples):.2f} ms/sample), cold caches"
    )
    start = time.perf_counter()
    again = [evaluate_trajectory(fresh, tid, msgs, nl_policy="skip").reward for tid, msgs in trajectories]
    warm_s = time.perf_counter() - start
    assert again == ours
    print(
        f"  ours: {len(samples) / warm_s:10.1f} samples/s ({1000 * warm_s / len(samples):.2f} ms/sample), "
        "warm (a later step)"
    )
    if not tau2_python:
        print("  tau2: skipped (pass --tau2-python and --tau2-src to compare with tau2's own evaluator)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "samples.json"
        path.write_text(json.dumps(samples))
        env = {**os.environ, "PYTHONPATH": tau2_src or ""}
        env.pop("TAU2_DATA_DIR", None)  # tau2 reads its own data folder (it would look for tau2/domains/ there)
        out = subprocess.run([tau2_python, "-c", TAU2_SIDE, str(path)], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"tau2's side failed:\n{out.stderr[-3000:]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if got["rewards"] != ours:
        bad = [i for i, (a, b) in enumerate(zip(got["rewards"], ours, strict=True)) if a != b]
        raise SystemExit(f"rewards differ from tau2's on samples {bad[:10]}")
    tau2_s = got["seconds"]
    print(f"  tau2: {len(samples) / tau2_s:10.1f} samples/s ({1000 * tau2_s / len(samples):.2f} ms/sample)")
    print(f"  ratio ours/tau2: {tau2_s / ours_s:.0f}x (same reward on all {len(samples)} samples)")


def bench_search(folder: Path, repeats: int) -> None:
    import numpy as np

    kb = retrieval.knowledge_base(folder)
    t0 = time.perf_counter()
    index = retrieval.bm25_index(kb)
    build_ms = 1000 * (time.perf_counter() - t0)
    n = repeats * len(QUERIES)
    start = time.perf_counter()
    for _ in range(repeats):
        for q in QUERIES:
            index.search(q)
    ours_us = 1e6 * (time.perf_counter() - start) / n
    start = time.perf_counter()
    for _ in range(repeats):
        for q in QUERIES:
            scores = index.model.get_scores(q.lower().split())
            sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)[:10]
    lib_us = 1e6 * (time.perf_counter() - start) / n
    for q in QUERIES:  # same ranking as the library path
        scores = index.model.get_scores(q.lower().split())
        ref = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)[:10]
        assert [index.ids[i] for i in ref] == [d for d, _ in index.search(q)] and np.array_equal(
            scores, index.scores(q)
        )
    grep = retrieval.GrepIndex(kb)
    patterns = ["debit card", "fee|charge", "credit.*card", "Rho-Bank"]
    start = time.perf_counter()
    for _ in range(max(1, repeats // 10)):
        for p in patterns:
            grep.search(p)
    grep_us = 1e6 * (time.perf_counter() - start) / (max(1, repeats // 10) * len(patterns))
    print(f"search over {len(kb)} documents (index built once in {build_ms:.0f} ms), {n} searches:")
    print(f"  BM25 ours:                {ours_us:8.1f} us/search")
    print(f"  BM25 rank_bm25 + sort:    {lib_us:8.1f} us/search (tau2's retriever)")
    print(f"  ratio:                    {lib_us / ours_us:8.1f}x")
    print(f"  grep:                     {grep_us:8.1f} us/search")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="tau2 data folder (default: $TAU2_DATA_DIR)")
    parser.add_argument("--tau2-python", default=None, help="a Python with tau2-bench 1.0.1 importable")
    parser.add_argument("--tau2-src", default=None, help="PYTHONPATH for --tau2-python (tau2's src folder)")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--no-search", action="store_true", help="only the scoring comparison")
    args = parser.parse_args()
    folder = resolve_data_dir("banking_knowledge", args.data_dir, {"db": "db.json"})
    if not args.no_search:
        bench_search(folder, args.repeats)
    bench_scoring(folder, args.tau2_python, args.tau2_src)


if __name__ == "__main__":
    main()
