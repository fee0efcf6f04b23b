"""Time the reference projects' own reward code on our benchmark samples; run inside their throwaway venv.

``bench_tau_bench_reward.py`` and ``bench_tau2_reward.py`` call this script with ``--reference-python`` (a venv with
tau2-bench installed, which brings litellm and pydantic; tau-bench's source is put on ``sys.path`` from
``--tau-bench-src``). It reads ``{"kind", "domain", "samples": [{"task_id", "messages"}]}`` as JSON on stdin and
prints ``{"seconds": [...], "rewards": [...]}``: one timing and one reward per sample, in order, each call timed
alone with ``time.perf_counter`` exactly as the benchmark times ours.

* ``tau_bench``: tau-bench's ``Env.calculate_reward`` (``tau_bench/envs/base.py``). The trajectory's tool calls are
  first run live on the env, as tau-bench's episode would have run them (not timed); the agent's text replies are
  recorded as ``respond`` actions. The timed call then hashes the data, reloads it, replays the gold actions and
  hashes again, as tau-bench does at the end of every episode.
* ``tau2``: tau2-bench's ``evaluate_simulation(..., EvaluationType.ALL)`` (``src/tau2/evaluator/evaluator.py``) on a
  ``SimulationRun`` holding the trajectory (our ``tau2_messages`` shape), termination ``user_stop``; NL
  assertions, which need an LLM judge, are graded as met without a call.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def tau_bench(domain: str, samples: list[dict[str, Any]]) -> dict[str, list[float]]:
    from tau_bench.envs import get_env
    from tau_bench.types import Action

    envs: dict[str, Any] = {}
    seconds, rewards = [], []
    for sample in samples:
        split, index = sample["task_id"].split("/")
        env = envs.get(split)
        if env is None:
            env = envs[split] = get_env(domain, "human", "none", split, task_index=0)
        env.task_index = int(index)
        env.task = env.tasks[int(index)]
        env.data = env.data_load_func()
        env.actions = []
        for m in sample["messages"]:
            if m["role"] != "assistant":
                continue
            calls = m.get("tool_calls") or []
            if not calls:
                env.actions.append(Action(name="respond", kwargs={"content": m.get("content") or ""}))
            for call in calls[:1]:
                env.step(Action(name=call["function"]["name"], kwargs=json.loads(call["function"]["arguments"])))
        t0 = time.perf_counter()
        result = env.calculate_reward()
        seconds.append(time.perf_counter() - t0)
        rewards.append(float(result.reward))
    return {"seconds": seconds, "rewards": rewards}


def tau2(domain: str, samples: list[dict[str, Any]]) -> dict[str, list[float]]:
    from tau2.data_model.simulation import NLAssertionCheck, SimulationRun
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.evaluator.evaluator_nl_assertions import NLAssertionsEvaluator
    from tau2.registry import registry

    def all_met(cls: Any, trajectory: Any, assertions: Any) -> list[Any]:
        return [NLAssertionCheck(nl_assertion=a, met=True, justification="") for a in assertions]

    NLAssertionsEvaluator.evaluate_nl_assertions = classmethod(all_met)  # type: ignore[method-assign,assignment]
    tasks = {t.id: t for t in registry.get_tasks_loader(domain)()}
    seconds, rewards = [], []
    for sample in samples:
        sim = SimulationRun(
            id="bench",
            task_id=sample["task_id"],
            start_time="",
            end_time="",
            duration=0.0,
            termination_reason="user_stop",
            messages=sample["messages"],
        )
        t0 = time.perf_counter()
        info = evaluate_simulation(sim, tasks[sample["task_id"]], EvaluationType.ALL, False, domain)
        seconds.append(time.perf_counter() - t0)
        rewards.append(float(info.reward))
    return {"seconds": seconds, "rewards": rewards}


def main() -> int:
    request = json.load(sys.stdin)
    for path in request.get("sys_path", []):
        sys.path.insert(0, path)
    run = tau_bench if request["kind"] == "tau_bench" else tau2
    json.dump(run(request["domain"], request["samples"]), sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
