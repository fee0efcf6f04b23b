"""``verl-rewards simulate`` against recorded ``tau2 run`` runs: the same requests, byte for byte as litellm sent them,
and a results file that differs from tau2's only in timings, ids and costs.

The reference, ``tests/data/reference/tau2_runs.json`` (``dump_reference.py runs``; how: ``README.md`` there), holds
real runs of tau2-bench 1.0.1's runner (litellm 1.82.6) against a scripted chat-completions server: every request
body the server received, its answer, and tau2's results file. Here a server on 127.0.0.1 answers each request with
the recorded answer to the identical request (a request tau2 never sent gets a 400), and ``simulate`` runs the same
tasks, trials, seed and models (``openai/agent-model``, ``openai/user-model``; tau2's default judge model)."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.engine.client import Endpoint
from verl_rewards.tau2.normal.simulate import SimulateConfig, simulate

from chat_server import ChatServer
from tau2_runs import RUNS, flag
from tau2_support import require_domain

JUDGE_MODEL = "gpt-4.1-2025-04-14"  # tau2's DEFAULT_LLM_NL_ASSERTIONS, with temperature 0.0


def replay(name: str, tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """Run ``simulate`` as the recorded run was run; ``(our results, the requests we sent, unanswered ones)``."""
    run = RUNS[name]
    command = run["command"]
    domain = require_domain(flag(command, "--domain")[0])
    recorded = [(ex["request"], ex["response"]) for ex in run["exchanges"]]
    unknown: list[dict[str, Any]] = []

    def respond(body: dict[str, Any], n: int) -> Any:
        for request, response in recorded:
            if request == body:
                return ("raw", json.dumps(response).encode())
        unknown.append(body)
        return ("status", 400)

    with ChatServer(respond) as server:

        def endpoint(model: str) -> Endpoint:
            return Endpoint(base_url=server.base_url, model=model, timeout_s=10, retries=0)

        config = SimulateConfig(
            domain=domain.name,
            agent=endpoint(flag(command, "--agent-llm")[0]),
            user=endpoint(flag(command, "--user-llm")[0]),
            judge=endpoint(JUDGE_MODEL),
            out=str(tmp_path / f"{name}.json"),
            data_dir=str(domain.data_dir.parent),
            task_ids=flag(command, "--task-ids"),
            num_trials=int(flag(command, "--num-trials")[0]),
            seed=int(flag(command, "--seed")[0]),
            concurrency=1,
            progress=False,
        )
        asyncio.run(simulate(config))
        ours = json.loads(Path(config.out).read_text(encoding="utf-8"))
        base_url = server.base_url
    return _port(ours, base_url, run["base_url"]), list(server.requests), unknown


def _port(value: Any, ours: str, theirs: str) -> Any:
    """``value`` with our server's URL written as the recorded one (the runs used another port)."""
    return json.loads(json.dumps(value).replace(json.dumps(ours)[1:-1], json.dumps(theirs)[1:-1]))


TIMINGS = {"timestamp", "start_time", "end_time", "duration", "generation_time_seconds"}
COSTS = {"agent_cost", "user_cost", "cost"}


def _without(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def comparable(results: dict[str, Any]) -> dict[str, Any]:
    """A results file without what may differ between two runs of the same simulations: timings (at any depth:
    tau2 stamps a task's history messages when it loads the task), ids of simulations, costs."""
    out = _without(copy.deepcopy(results), TIMINGS | COSTS)
    sims = [{k: v for k, v in sim.items() if k != "id"} for sim in out["simulations"]]
    out["simulations"] = sorted(sims, key=lambda s: (s["trial"], s["task_id"]))
    return out


@pytest.mark.parametrize("name", [n for n, r in RUNS.items() if "exchanges" in r])
def test_requests_equal_the_ones_litellm_sent(name: str, tmp_path: Path) -> None:
    """Model names without litellm's provider prefix, tool-call messages without ``content`` and with a ``name``
    in each call, arguments re-encoded as tau2 encodes them, seeds, sampling: every request as tau2 sent it."""
    _, sent, unknown = replay(name, tmp_path)
    assert unknown == []
    key = lambda body: json.dumps(body, sort_keys=True)  # noqa: E731
    assert sorted(map(key, sent)) == sorted(key(ex["request"]) for ex in RUNS[name]["exchanges"])


@pytest.mark.parametrize("name", [n for n, r in RUNS.items() if "exchanges" in r])
def test_results_file_differs_from_tau2s_only_in_timings_ids_and_costs(name: str, tmp_path: Path) -> None:
    ours, _, _ = replay(name, tmp_path)
    theirs = comparable(RUNS[name]["results"])
    ours = comparable(ours)
    for key in ("info", "tasks"):
        assert ours[key] == theirs[key], key
    assert len(ours["simulations"]) == len(theirs["simulations"])
    for mine, want in zip(ours["simulations"], theirs["simulations"], strict=True):
        assert mine == want, (mine["task_id"], mine["trial"])
    assert ours == theirs
