"""``simulate`` against tau2-bench's own runner (``tau2 run``): start-up to the first request, wall and CPU time.

Both runners play the same tasks (one trial each, concurrency 1 by default) of each domain against one scripted
OpenAI-compatible server on 127.0.0.1 (``tests/support/chat_server.py``), started by this script, whose answers
depend on the request only: the user model opens with a request, the agent model answers with text, the user then
stops (``###STOP###``); the NL judge (tau2's default model, sent to the same server: ``--judge-*`` for ours,
``OPENAI_BASE_URL`` for tau2) grades an empty list. A failed simulation is not retried (``--max-retries 0``, both).
Both interpreters cache bytecode under one folder of this run (``PYTHONPYCACHEPREFIX``; a first, untimed run of each
per domain fills it), as an installed package has its ``.pyc`` files. Each run is a fresh process, timed from its
start:

* **first request**: until the server receives the run's first request (ours: the start-up probe; tau2: the user
  model's first turn), i.e. imports, loading the domain and its tasks, building the run;
* **wall**: until the process exits (results written); **CPU**: user + system time of the process and its children
  (``RUSAGE_CHILDREN``); the server's own time is in neither.

Runs are interleaved (per round and domain: ours, tau2, then tau2, ours in the next round); medians over the
rounds. The load average and the CPU count are printed before and after, as every figure depends on them. Both
runs' rewards are compared per task (they must agree).

Usage: ``python benchmarks/bench_simulate_startup.py [--domains mock,airline,retail,telecom,banking_knowledge]
[--tasks 4] [--rounds 3] [--data-dir DIR] --tau2 /path/to/venv/bin/tau2 --tau2-data-dir DIR`` (``--tau2-data-dir``:
tau2's ``TAU2_DATA_DIR``, holding ``tau2/domains/<domain>``). Without ``--tau2`` only ours is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "support"))

from chat_server import ChatServer  # noqa: E402

JUDGE_MODEL = "gpt-4.1-2025-04-14"  # tau2's default judge
SEED = 300


def respond(body: dict[str, Any], n: int) -> dict[str, Any]:
    """The scripted models: a function of the request only."""
    if body.get("model") == "user-model":
        own_turns = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        return {"content": "Hi, I need help with my account." if own_turns == 0 else "Thanks, that's all. ###STOP###"}
    if body.get("model") == "agent-model":
        return {"content": "Sure, I can help with that. Could you tell me more?"}
    return {"content": json.dumps({"results": []})}


class Clock:
    """The arrival time of the first request after :meth:`arm`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.first: float | None = None

    def arm(self) -> None:
        with self._lock:
            self.first = None

    def seen(self, body: dict[str, Any]) -> None:
        now = time.perf_counter()
        with self._lock:
            if self.first is None:
                self.first = now


def timed(command: list[str], env: dict[str, str], cwd: str, clock: Clock) -> dict[str, float]:
    """Run ``command`` to its end: seconds to its first request, wall seconds, CPU seconds (it and its children)."""
    clock.arm()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:4]} exited {done.returncode}: {done.stderr.strip()[-600:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    first = (clock.first - start) if clock.first is not None else float("nan")
    return {"first": first, "wall": wall, "cpu": cpu}


def ours_command(domain: str, task_ids: list[str], data_dir: str, base: str, out: str, concurrency: int) -> list[str]:
    return [
        sys.executable,
        *("-m", "verl_rewards.cli", "simulate", "--domain", domain, "--data-dir", data_dir),
        *("--task-ids", *task_ids, "--num-trials", "1", "--seed", str(SEED), "--concurrency", str(concurrency)),
        *("--max-retries", "0"),
        *("--agent-base-url", base, "--agent-model", "agent-model"),
        *("--user-base-url", base, "--user-model", "user-model"),
        *("--judge-base-url", base, "--judge-model", JUDGE_MODEL, "--out", out),
    ]


def tau2_command(tau2: str, domain: str, task_ids: list[str], base: str, save: str, concurrency: int) -> list[str]:
    llm_args = json.dumps({"temperature": 0.0, "api_base": base})
    command = [
        *(tau2, "run", "--domain", domain, "--task-ids", *task_ids, "--num-trials", "1", "--seed", str(SEED)),
        *("--max-retries", "0"),
        *("--max-concurrency", str(concurrency), "--agent-llm", "openai/agent-model", "--agent-llm-args", llm_args),
        *("--user-llm", "openai/user-model", "--user-llm-args", llm_args, "--save-to", save),
    ]
    if domain == "banking_knowledge":
        command += ["--retrieval-config", "bm25"]
    return command


def rewards(path: str) -> dict[str, Any]:
    """``{task id: reward}`` of a tau2 results file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {s["task_id"]: (s.get("reward_info") or {}).get("reward") for s in data["simulations"]}


def pick_tasks(domain: str, data_dir: str, count: int) -> list[str]:
    """The domain's first ``count`` tasks without a message history (telecom: of its ``base`` split, tau2's)."""
    from verl_rewards.tau2 import load_domain

    loaded = load_domain(domain, data_dir)
    ids = loaded.split("base") if "base" in loaded.splits else list(loaded.tasks)
    return [t for t in ids if not loaded.task(t).history][:count]


def load_line() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="mock,airline,retail,telecom,banking_knowledge")
    parser.add_argument("--tasks", type=int, default=4, help="tasks per domain (one trial each)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--data-dir", default=os.environ.get("TAU2_DATA_DIR"), help="ours: folder of <domain>/")
    parser.add_argument("--tau2", default=None, help="tau2-bench's `tau2` command (a venv with it installed)")
    parser.add_argument("--tau2-data-dir", default=None, help="tau2's TAU2_DATA_DIR (holds tau2/domains/<domain>)")
    args = parser.parse_args(argv)
    if not args.data_dir:
        parser.error("no tau2 data: pass --data-dir or set TAU2_DATA_DIR")
    clock = Clock()
    server = ChatServer(respond, on_request=clock.seen).start()
    base = server.base_url
    ours_env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "PYTHONPATH": str(REPO)}
    tau2_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    tau2_env.update(OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=base, OPENAI_API_BASE=base)
    tau2_env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", TAU2_DATA_DIR=args.tau2_data_dir or "")
    print(f"simulate start-up and run time vs tau2 run ({args.tasks} tasks x 1 trial, concurrency {args.concurrency})")
    print(f"before: {load_line()}")
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    tasks = {d: pick_tasks(d, args.data_dir, args.tasks) for d in domains}
    times: dict[tuple[str, str], list[dict[str, float]]] = {}
    agree: dict[str, bool] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for env in (ours_env, tau2_env):  # bytecode cached as an installed package has it (no source tree written)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for round_no in range(-1, args.rounds):  # round -1: untimed warm-up (bytecode, OS file cache)
            for domain in domains:
                order = ["ours", "tau2"] if round_no % 2 == 0 else ["tau2", "ours"]  # alternating, -1 included
                got: dict[str, dict[str, Any]] = {}
                for who in order:
                    if who == "tau2" and not args.tau2:
                        continue
                    out = str(Path(tmp) / f"{who}_{domain}_{round_no + 1}")
                    if who == "ours":
                        command = ours_command(
                            domain, tasks[domain], args.data_dir, base, out + ".json", args.concurrency
                        )
                        measured = timed(command, ours_env, tmp, clock)
                        got[who] = rewards(out + ".json")
                    else:
                        command = tau2_command(args.tau2, domain, tasks[domain], base, out, args.concurrency)
                        measured = timed(command, tau2_env, tmp, clock)
                        got[who] = rewards(str(Path(out) / "results.json"))
                    if round_no >= 0:
                        times.setdefault((domain, who), []).append(measured)
                if len(got) == 2:
                    agree[domain] = agree.get(domain, True) and got["ours"] == got["tau2"]
    server.stop()
    print(f"after:  {load_line()}")
    header = "domain             ours first / wall / CPU (s)    tau2 first / wall / CPU (s)    ratio wall  CPU  first"
    print(header)
    for domain in domains:
        mine = {k: statistics.median(t[k] for t in times[(domain, "ours")]) for k in ("first", "wall", "cpu")}
        line = f"{domain:18s} {mine['first']:6.2f} / {mine['wall']:6.2f} / {mine['cpu']:6.2f}"
        if (domain, "tau2") in times:
            ref = {k: statistics.median(t[k] for t in times[(domain, "tau2")]) for k in ("first", "wall", "cpu")}
            line += f"      {ref['first']:6.2f} / {ref['wall']:6.2f} / {ref['cpu']:6.2f}"
            ratios = [ref[k] / mine[k] for k in ("wall", "cpu", "first")]
            line += "      " + " ".join(f"{r:5.1f}x" for r in ratios)
            line += "  rewards agree" if agree.get(domain) else "  REWARDS DIFFER"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
