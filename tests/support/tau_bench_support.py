"""Helpers shared by the tau-bench (v1) tests: locating the data and building trajectories from gold actions."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from repo_paths import REPO

_SKIP = (
    "tau-bench data not found: set TAU_BENCH_DATA_DIR to the folder holding retail/ and airline/ "
    "(or place it at <repo>/../shared/data/tau_bench)"
)


def tau_bench_data_dir() -> Path | None:
    """TAU_BENCH_DATA_DIR, else <repo>/../shared/data/tau_bench, else None."""
    env = os.environ.get("TAU_BENCH_DATA_DIR")
    if env and Path(env).is_dir():
        return Path(env)
    shared = REPO.parent / "shared" / "data" / "tau_bench"
    return shared if shared.is_dir() else None


def require_domain(name: str):
    """The loaded tau-bench domain, or skip with a clear message."""
    root = tau_bench_data_dir()
    if root is None or not (root / name).is_dir():
        pytest.skip(_SKIP + f" [domain {name}]")
    from verl_rewards.tau_bench import load_domain

    return load_domain(name, root)


def gold_hashes(domain) -> dict[str, Any]:
    """tau-bench's own ``gold_data_hashes.json`` of the domain."""
    return json.loads((domain.data_dir / "gold_data_hashes.json").read_text())


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
