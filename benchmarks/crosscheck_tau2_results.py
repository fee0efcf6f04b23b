"""By-hand fidelity check of ``verl-rewards simulate``'s Results file against tau2-bench's own code.

Tests cannot import tau2-bench (it is not a dependency), so this script has two halves run by two interpreters:

1. ``make`` (our environment): plays tasks of a domain through :func:`verl_rewards.tau2.normal.simulate.simulate`
   against a scripted chat-completions server on 127.0.0.1 (the agent replays the task's gold agent actions one
   call per message and then states every ``communicate_info``; on odd trials it leaves out its last write; the
   user plays :func:`~verl_rewards.tau2.normal.users.default_script`; the agent endpoint reports ``usage``), plus
   one simulation whose agent sends malformed tool-call JSON. It writes one Results file.
2. ``check`` (a throwaway venv with tau2-bench installed, e.g. ``/tmp/tau2ref/bin/python``): loads the file with
   tau2's ``Results.load``, runs tau2's ``compute_metrics`` (every number must be finite: no NaN cost, reward or
   pass^k) and re-evaluates every simulation with tau2's ``evaluate_simulation(..., EvaluationType.ALL)``: its
   ``RewardInfo`` must equal ours field for field (NL-assertion grades, which need an LLM judge, are taken from
   our file; tasks whose NL assertions we did not grade are compared without the NL part).

Usage::

    PYTHONPATH=. python benchmarks/crosscheck_tau2_results.py make --domain airline --data-dir DIR --out /tmp/x.json
    TAU2_DATA_DIR=DIR /tmp/tau2ref/bin/python benchmarks/crosscheck_tau2_results.py check /tmp/x.json --domain airline
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------------------------ make
def make(domain_name: str, data_dir: str, out: str, max_tasks: int | None, trials: int) -> int:
    import asyncio

    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "tests" / "support"))
    from verl_rewards.engine.client import Endpoint
    from verl_rewards.engine.conversation import trial_seeds
    from verl_rewards.tau2 import load_domain
    from verl_rewards.tau2.normal.prompts import user_scenario_text, user_system_prompt
    from verl_rewards.tau2.normal.simulate import SimulateConfig, simulate
    from verl_rewards.tau2.normal.users import default_script

    from chat_server import ChatServer

    domain = load_domain(domain_name, data_dir)
    openings: dict[str, list[str]] = {}
    for t in domain.tasks:
        if not domain.task(t).history:
            openings.setdefault(str(default_script(domain, domain.task(t))[0].content), []).append(t)
    ids = sorted((v[0] for v in openings.values() if len(v) == 1), key=list(domain.tasks).index)[:max_tasks]
    by_opening = {str(default_script(domain, domain.task(t))[0].content): t for t in ids}
    by_prompt = {user_system_prompt(domain, user_scenario_text(domain.task(t))): t for t in ids}
    seeds = trial_seeds(300, trials)
    usage = {"prompt_tokens": 1000, "completion_tokens": 50}

    def agent_turns(task_id: str, trial: int) -> list[dict[str, Any]]:
        criteria = domain.task(task_id).evaluation_criteria
        calls = [a for a in (criteria.actions or ()) if a.requestor == "assistant"] if criteria else []
        if trial % 2 == 1 and calls:
            calls = calls[:-1]
        infos = (criteria.communicate_info or ()) if criteria else ()
        turns: list[dict[str, Any]] = [
            {"content": None, "tool_calls": [{"name": a.name, "arguments": dict(a.arguments)}]} for a in calls
        ]
        turns.append({"content": "All done. " + " ".join(f"{s}." for s in infos)})
        return turns

    def respond(body: dict[str, Any], n: int) -> Any:
        trial = seeds.index(body["seed"]) if body.get("seed") in seeds else 0
        messages = body["messages"]
        if body["model"] == "agent":
            task_id = by_opening.get(str(messages[2]["content"]))
            if task_id is None or (task_id == ids[0] and trial == trials):  # the malformed-JSON simulation
                return {"content": None, "tool_calls": [{"name": "x", "arguments": "{not json"}], "usage": usage}
            done = sum(1 for m in messages[2:] if m["role"] == "assistant")
            turns = agent_turns(task_id, trial)
            return dict(turns[min(done, len(turns) - 1)], usage=usage)
        script = default_script(domain, domain.task(by_prompt[messages[0]["content"]]))
        turn = script[min(sum(1 for m in messages if m["role"] == "assistant"), len(script) - 1)]
        return {"content": turn.content, "tool_calls": turn.tool_calls}

    with ChatServer(respond) as server:
        config = SimulateConfig(
            domain=domain_name,
            agent=Endpoint(base_url=server.base_url, model="openai/agent", timeout_s=10, retries=0),
            user=Endpoint(base_url=server.base_url, model="user", timeout_s=10, retries=0),
            out=out,
            data_dir=data_dir,
            task_ids=ids,
            num_trials=trials,
            progress=False,
            skip_nl_assertions=True,  # no judge here: NL grades are compared apart (see check)
            max_retries=0,
        )
        results = asyncio.run(simulate(config))
        # one more trial of the first task, whose agent sends malformed tool-call JSON (infrastructure_error)
        seeds.append(trial_seeds(300, trials + 1)[trials])
        broken = Path(out).with_suffix(".malformed.json")
        config.out, config.num_trials, config.task_ids = str(broken), trials + 1, ids[:1]
        extra = asyncio.run(simulate(config))
        broken.unlink()
    results["simulations"] += [s for s in extra["simulations"] if s["trial"] == trials]
    Path(out).write_text(json.dumps(results))
    sims = results["simulations"]
    terms = sorted({s["termination_reason"] for s in sims})
    print(f"wrote {out}: {len(sims)} simulations of {len(ids)} tasks ({domain_name}); terminations {terms}")
    return 0


# ----------------------------------------------------------------------------------------------- check
def _finite(name: str, value: Any, bad: list[str]) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        bad.append(name)
    elif isinstance(value, dict):
        for k, v in value.items():
            _finite(f"{name}.{k}", v, bad)


def check(path: str, domain_name: str) -> int:
    from tau2.data_model.simulation import NLAssertionCheck, Results, TerminationReason
    from tau2.evaluator import evaluator as tau2_evaluator
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.evaluator.evaluator_nl_assertions import NLAssertionsEvaluator
    from tau2.metrics.agent_metrics import compute_metrics

    results = Results.load(Path(path))
    metrics = compute_metrics(results)
    bad: list[str] = []
    for key, value in metrics.model_dump().items():
        _finite(key, value, bad)
    print("compute_metrics:", json.dumps(metrics.as_dict()))
    tasks = {t.id: t for t in results.tasks}
    ours_raw = json.loads(Path(path).read_text())["simulations"]
    compared = same = 0
    diffs: list[str] = []
    for sim, raw in zip(results.simulations, ours_raw, strict=True):
        if sim.termination_reason == TerminationReason.INFRASTRUCTURE_ERROR:
            continue
        ours = raw["reward_info"]
        recorded = ours.get("nl_assertions")
        graded = recorded is not None

        def replay_nl(full_trajectory: Any, nl_assertions: Any, recorded: Any = recorded) -> list[Any]:
            return [NLAssertionCheck(**c) for c in recorded or []]

        NLAssertionsEvaluator.evaluate_nl_assertions = classmethod(lambda cls, t, a: replay_nl(t, a))  # type: ignore[method-assign]
        theirs = evaluate_simulation(sim, tasks[sim.task_id], EvaluationType.ALL, False, domain_name)
        mine = type(theirs).model_validate(ours).model_dump(mode="json")
        want = theirs.model_dump(mode="json")
        task = tasks[sim.task_id]
        nl_in_basis = task.evaluation_criteria is not None and "NL_ASSERTION" in [
            str(getattr(b, "value", b)) for b in task.evaluation_criteria.reward_basis
        ]
        if nl_in_basis and not graded:  # we skipped the NL grades: compare the rest
            for side in (mine, want):
                side["reward"] = None
                side["nl_assertions"] = None
                (side.get("reward_breakdown") or {}).pop("NL_ASSERTION", None)
                if isinstance(side.get("info"), dict):
                    side["info"].pop("nl", None)
                    side["info"].pop("skipped", None)
        elif isinstance(mine.get("info"), dict):
            mine["info"].pop("skipped", None)
        compared += 1
        if mine == want:
            same += 1
        elif len(diffs) < 5:
            keys = [k for k in want if mine.get(k) != want.get(k)]
            diffs.append(
                f"{sim.task_id}/trial {sim.trial}: differs in {keys}: ours {[mine[k] for k in keys]} "
                f"tau2 {[want[k] for k in keys]}"
            )
    del tau2_evaluator
    print(f"RewardInfo equal to tau2's evaluate_simulation: {same}/{compared}")
    for d in diffs:
        print("  ", d[:1500])
    if bad:
        print("non-finite metrics:", bad)
    return 0 if not bad and same == compared else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("--domain", required=True)
    m.add_argument("--data-dir", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--max-tasks", type=int, default=None)
    m.add_argument("--trials", type=int, default=2)
    c = sub.add_parser("check")
    c.add_argument("path")
    c.add_argument("--domain", required=True)
    args = parser.parse_args(argv)
    if args.command == "make":
        return make(args.domain, args.data_dir, args.out, args.max_tasks, args.trials)
    return check(args.path, args.domain)


if __name__ == "__main__":
    raise SystemExit(main())
