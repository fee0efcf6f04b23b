"""Helpers shared by the tau-bench (v1) tests: locating the data and building trajectories from gold actions."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from verl_rewards.engine.data_dir import TAU_BENCH_DATA

from data_support import data_root, missing_reason, require_root
from repo_paths import DATA

REFERENCE = DATA / "reference"

_SKIP = missing_reason(TAU_BENCH_DATA)


def tau_bench_data_dir() -> Path | None:
    """The tau-bench data folder by the package's rule (``TAU_BENCH_DATA_DIR``, else the installed one), else None."""
    return data_root(TAU_BENCH_DATA)


def require_domain(name: str):
    """The loaded tau-bench domain, or skip with a clear message."""
    root = require_root(TAU_BENCH_DATA, name)
    from verl_rewards.tau_bench import load_domain

    return load_domain(name, root)


def gold_hashes(domain) -> dict[str, Any]:
    """tau-bench's own hashes of the domain's initial and gold states (``initial_data_hash``, ``gold_<split>``),
    recorded from its code (``tests/data/reference/README.md``)."""
    return _GOLD_HASHES()[domain.name]


@functools.cache
def _GOLD_HASHES() -> dict[str, Any]:
    return json.loads((REFERENCE / "tau_bench_gold_hashes.json").read_text(encoding="utf-8"))


def call_message(name: str, args: dict[str, Any], cid: str, content: str | None = None) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    }


def trajectory(domain, task_id: str, calls: list[tuple[str, dict[str, Any]]], final: str | None = "Done.") -> list:
    """System + instruction, each call with its real observation, then an optional final text reply."""
    task = domain.task(task_id)
    env = domain.make_env(task_id)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": domain.policy},
        {"role": "user", "content": task.instruction},
    ]
    for i, (name, args) in enumerate(calls):
        messages.append(call_message(name, args, f"c{i}"))
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": env.step(name, args)})
    if final is not None:
        messages.append({"role": "assistant", "content": final})
    return messages


def gold_calls(domain, task_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The task's gold actions as calls, a transfer (which ends the episode) moved to the end."""
    actions = [(a["name"], dict(a["kwargs"])) for a in domain.task(task_id).actions]
    transfer = [c for c in actions if c[0] in domain.terminate_tools]
    return [c for c in actions if c[0] not in domain.terminate_tools] + transfer[:1]


def gold_trajectory(domain, task_id: str) -> list:
    """The gold actions played, with every required output said in one reply before the episode ends."""
    task = domain.task(task_id)
    said = "Here you go: " + ", ".join(task.outputs) + "." if task.outputs else "All done."
    calls = gold_calls(domain, task_id)
    if calls and calls[-1][0] in domain.terminate_tools:  # say the outputs, then transfer
        messages = trajectory(domain, task_id, calls[:-1], final=said)
        messages.append(call_message(*calls[-1], "transfer"))
        messages.append({"role": "tool", "tool_call_id": "transfer", "content": "Transfer successful"})
        return messages
    return trajectory(domain, task_id, calls, final=said)
