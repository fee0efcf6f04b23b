"""Step dicts in both training modes: a gold conversation through verl's real ``AgentLoopWorker`` in normal mode
(``tau2_agent``, ``tau_bench_agent``) and the same task's gold episode in solo / instruction mode (``tool_agent``
with our tools), each scored by verl's real ``RewardLoopWorker`` (built without Ray) with the ``contribution``
manager: the step dicts are there (``contrib_missing`` 0), C-0 counts the agent turns that changed the DB (counted
here by replaying the gold calls on a fresh environment), and both modes give the same C-0 and C-1."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.gold import gold_assistant_turns

from agent_loop_support import hermes, make_worker, run_row
from verl_support import compose_verl_config

BETA = 0.1
TERMS = "[{type: C0, beta: 0.1}, {type: C1, beta: 0.1}]"
# (family, domain, task, normal mode, solo mode): tasks with several writes among reads
CASES = {
    "tau2": ("tau2", "airline", "29", "normal", "solo"),
    "tau_bench": ("tau_bench", "retail", "test/22", "normal", "instruction"),
}


class _Handle:
    """What verl's agent loop awaits of a reward worker's Ray handle (``handle.compute_score.remote(data)``), over
    verl's real ``RewardLoopWorker`` object in this process."""

    def __init__(self, worker: Any):
        self.compute_score = self
        self._worker = worker

    def remote(self, data: Any) -> Any:
        return self._worker.compute_score(data)


def _domain(family: str, name: str) -> Any:
    if family == "tau2":
        from tau2_support import require_domain as tau2_domain

        return tau2_domain(name)
    from tau_bench_support import require_domain as tau_bench_domain

    return tau_bench_domain(name)


def _row_and_tools(family: str, domain: Any, task_id: str, mode: str, out: Path) -> tuple[dict[str, Any], str]:
    """The dataset row of ``task_id`` in ``mode`` and its tool config, as ``prepare`` writes them."""
    path = out / f"{family}_{mode}.yaml"
    if family == "tau2":
        from verl_rewards.tau2.data import task_row, write_tool_config

        write_tool_config(domain, path, mode=mode)
        row = task_row(domain, domain.task(task_id), 0, "test", str(domain.data_dir.parent), mode=mode)
        return row, str(path)
    from verl_rewards.tau_bench.data import task_row as tb_row
    from verl_rewards.tau_bench.data import tool_config_text

    path.write_text(tool_config_text(domain))
    return tb_row(domain, domain.task(task_id), 0, str(domain.data_dir.parent), mode), str(path)


def _reward_handle(family: str, root: Path, tokenizer_dir: str) -> _Handle:
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={tokenizer_dir}",
            "reward.reward_manager.name=contribution",
            f"+reward.reward_kwargs.contribution.terms={TERMS}",
            f"+reward.reward_kwargs.{family}.data_dir={root}",
            *(["+reward.reward_kwargs.tau2.default_termination=max_steps"] if family == "tau2" else []),
        ]
    )
    return _Handle(RewardLoopWorker(config))


def _agent_calls(turns: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for turn in turns:
        for call in turn.get("tool_calls") or ():
            calls.append((call["function"]["name"], dict(call["function"]["arguments"])))
    return calls


def db_changing_turns(domain: Any, task_id: str, calls: list[tuple[str, dict[str, Any]]]) -> int:
    """How many of the gold agent's tool turns (one call each) change the environment's DB hash."""
    env = domain.make_env(task_id)
    changed, before = 0, env.get_data_hash()
    for name, args in calls:
        if name == "done":
            continue
        env.step(name, args)
        after = env.get_data_hash()
        changed += int(after != before)
        before = after
    return changed


@pytest.fixture(scope="module", params=list(CASES))
def rollouts(request, small_tokenizer, small_tokenizer_dir, tmp_path_factory) -> dict[str, Any]:
    family, domain_name, task_id, normal, solo = CASES[request.param]
    domain = _domain(family, domain_name)
    root = domain.data_dir.parent
    out = tmp_path_factory.mktemp(f"steps_{family}")
    handle = _reward_handle(family, root, small_tokenizer_dir)
    got: dict[str, Any] = {"family": family, "domain": domain, "task_id": task_id}

    async def go() -> None:
        for mode in (normal, solo):
            row, tools = _row_and_tools(family, domain, task_id, mode, out)
            turns = gold_assistant_turns(row, str(root))
            section = "tau2" if family == "tau2" else "tau_bench"
            worker = make_worker(tools, small_tokenizer, small_tokenizer_dir, {"backend": "scripted"}, section=section)
            worker.reward_loop_worker_handles = [handle]
            worker.llm_client.queue.append([hermes(t.get("content") or "", _agent_calls([t])) for t in turns])
            got[mode] = await run_row(worker, row, f"{family}-{mode}")
            got[f"{mode}_calls"] = _agent_calls(turns)

    asyncio.run(go())
    got["modes"] = (normal, solo)
    return got


def test_normal_mode_records_step_dicts_that_the_manager_scores(rollouts):
    normal, _ = rollouts["modes"]
    out = rollouts[normal]
    info = out.extra_fields["reward_extra_info"]
    calls = rollouts[f"{normal}_calls"]
    prev, cur = out.extra_fields["prev_step_dict"], out.extra_fields["cur_step_dict"]
    assert len(prev) == len(cur) == len(calls)  # one step per agent turn that ran tools (gold: one call each)
    assert [s["turn"] for s in prev] == [s["turn"] for s in cur] == list(range(len(calls)))
    assert [(p["bb_hash"], p["value_est"]) for p in prev[1:]] == [(c["bb_hash"], c["value_est"]) for c in cur[:-1]]
    assert info["reward_error"] == 0 and info["base_score"] == 1.0, info
    assert info["contrib_missing"] == 0
    expected_c0 = db_changing_turns(rollouts["domain"], rollouts["task_id"], calls)
    assert expected_c0 >= 2
    assert info["contrib_c0"] == expected_c0
    assert info["contrib_c1"] == pytest.approx(1.0)  # the gold agent matches every gold write
    assert out.reward_score == pytest.approx(1.0 + BETA * (expected_c0 + 1.0))


def test_solo_and_normal_mode_give_the_same_contribution(rollouts):
    normal, solo = rollouts["modes"]
    a = rollouts[normal].extra_fields["reward_extra_info"]
    b = rollouts[solo].extra_fields["reward_extra_info"]
    assert b["reward_error"] == 0 and b["base_score"] == 1.0 and b["contrib_missing"] == 0, b
    assert (a["contrib_c0"], a["contrib_c1"]) == (b["contrib_c0"], b["contrib_c1"])
    # the same DB states after each DB-changing turn
    changed = [c["bb_hash"] for p, c in zip(*_steps(rollouts[normal]), strict=True) if p["bb_hash"] != c["bb_hash"]]
    solo_changed = [c["bb_hash"] for p, c in zip(*_steps(rollouts[solo]), strict=True) if p["bb_hash"] != c["bb_hash"]]
    assert changed == solo_changed


def _steps(out: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return out.extra_fields["prev_step_dict"], out.extra_fields["cur_step_dict"]


def test_the_users_own_changes_are_not_credited_to_the_agent():
    """Normal mode on telecom: the customer's fix on the phone (a user tool call, a gold action) lands between the
    agent's turns, so the agent's next tool turn starts from it: no C-0, no C-1 for the agent."""
    from verl_rewards.contribution import compute_contribution
    from verl_rewards.engine.conversation import Conversation, Reply
    from verl_rewards.engine.users import ScriptedUser
    from verl_rewards.tau2.normal.prompts import user_tool_schemas
    from verl_rewards.tau2.verl_tools import progress

    domain = _domain("tau2", "telecom")
    task = domain.task("[service_issue]airplane_mode_on[PERSONA:None]")
    user = ScriptedUser(
        [
            "My phone has no service.",
            {"tool_calls": [{"name": "toggle_airplane_mode", "arguments": {}}]},
            "I turned it off.",
            "Thanks ###STOP###",
        ]
    )
    env = domain.make_env(task.id)
    conv = Conversation(
        env, user, user_system_prompt="", user_tools=user_tool_schemas(domain, task), progress=progress(domain, task)
    )
    start = conv.recorder.step()

    async def play() -> None:
        await conv.start()
        await conv.agent_turn(Reply(content="Please turn off airplane mode."))
        await conv.agent_turn(
            Reply(tool_calls=[{"name": "get_customer_by_phone", "arguments": {"phone_number": "555-123-2002"}}])
        )

    asyncio.run(play())
    fields = conv.extra_fields()
    prev, cur = fields["prev_step_dict"], fields["cur_step_dict"]
    assert len(prev) == len(cur) == 1
    assert prev[0]["bb_hash"] != start["bb_hash"] and prev[0]["value_est"] == 1.0  # the user's fix, before the turn
    assert cur[0] == prev[0]
    assert compute_contribution("C0", prev, cur) == 0 and compute_contribution("C1", prev, cur) == 0.0
