"""The gold policy (``verl_rewards.gold``): for rows of our own ``prepare`` output, the gold turns played in our
environments score the gold reward under our own reward (the manager's scoring core), for every task of mock,
airline and retail (solo and normal mode), a sample of telecom, every tau-bench retail and airline task
(instruction and normal mode), and the ToolRL sample rows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from verl_rewards.gold import (
    GoldError,
    gold_assistant_turns,
    gold_conversation,
    gold_reward,
    play_gold,
    row_info,
    score_episodes,
)
from verl_rewards.gold.episodes import reward_kwargs_for

import tau2_support
import tau_bench_support

#: mock tasks whose gold actions cannot satisfy their own env assertions (tau2's gold replay fails them too):
#: the notification is dismissed by the user in the scenario, not by a gold action; the history task's status
#: change is not among its gold actions
MOCK_NOT_GOLD = {"update_task_with_user_tools", "update_task_with_history_and_env_assertions"}


def _tau2_rows(name: str, mode: str, every: int = 1) -> tuple[list[dict], str]:
    from verl_rewards.tau2.data import task_row

    domain = tau2_support.require_domain(name)
    root = str(domain.data_dir.parent)
    if mode == "normal" and Path(root) == tau2_support.VENDORED:  # the copy has no user simulator guidelines
        pytest.skip(tau2_support._SKIP + " [normal mode needs tau2-bench's data/tau2/user_simulator/]")
    rows = []
    for i, task_id in enumerate(list(domain.tasks)[::every]):
        task = domain.task(task_id)
        if mode == "normal" and task.history:
            continue  # prepare refuses these in normal mode
        rows.append(task_row(domain, task, i, "all", root, None, mode))
    return rows, root


def _tau_bench_rows(name: str, mode: str) -> tuple[list[dict], str]:
    from verl_rewards.tau_bench.data import task_row

    domain = tau_bench_support.require_domain(name)
    root = str(domain.data_dir.parent)
    return [task_row(domain, domain.task(t), i, root, mode) for i, t in enumerate(domain.tasks)], root


def _scores(rows: list[dict], family: str, root: str) -> dict[str, float]:
    episodes = [play_gold(row, data_dir=root) for row in rows]
    results = score_episodes(episodes, reward_kwargs_for(root, family))
    return {e.info.task_id: r["reward"] for e, r in zip(episodes, results, strict=True)}


def _not_gold(scores: dict[str, float]) -> set[str]:
    return {task_id for task_id, reward in scores.items() if reward != 1.0}


@pytest.mark.parametrize("mode", ["solo", "normal"])
@pytest.mark.parametrize("name", ["mock", "airline", "retail"])
def test_every_tau2_task_scores_gold(name, mode):
    rows, root = _tau2_rows(name, mode)
    scores = _scores(rows, "tau2", root)
    expected = MOCK_NOT_GOLD & set(scores) if name == "mock" else set()
    assert _not_gold(scores) == expected
    assert len(scores) == {"mock": 10 if mode == "solo" else 8, "airline": 50, "retail": 114}[name]


@pytest.mark.parametrize("mode", ["solo", "normal"])
def test_a_sample_of_telecom_scores_gold(mode):
    rows, root = _tau2_rows("telecom", mode, every=23)  # 100 of 2,285 tasks, transfer tasks included
    scores = _scores(rows, "tau2", root)
    assert len(scores) == 100 and _not_gold(scores) == set()


@pytest.mark.parametrize("mode", ["instruction", "normal"])
@pytest.mark.parametrize("name", ["retail", "airline"])
def test_every_tau_bench_task_scores_gold(name, mode):
    rows, root = _tau_bench_rows(name, mode)
    scores = _scores(rows, "tau_bench", root)
    assert len(scores) == {"retail": 635, "airline": 50}[name]
    assert _not_gold(scores) == set()


def test_toolrl_rows_score_the_max(tmp_path):
    from verl_rewards.toolrl.data import prepare_toolrl

    sample = Path(__file__).parents[2] / "verl_rewards" / "toolrl" / "sample_data" / "toolrl_sample.jsonl"
    prepare_toolrl(sample, tmp_path, show_progress=False)
    rows = pd.read_parquet(tmp_path / "train.parquet").to_dict("records")
    episodes = [play_gold(row) for row in rows]
    rewards = [r["reward"] for r in score_episodes(episodes)]
    expected = [gold_reward(row_info(row)) for row in rows]
    assert rewards == expected
    assert sorted(set(expected)) == [1.0, 4.0]  # response-only ground truths score no correctness in ToolRL
    turn = gold_assistant_turns(rows[0])
    assert turn == [{"role": "assistant", "content": rows[0]["reward_model"]["ground_truth"].strip()}]


# ------------------------------------------------------------------------------------------------ turn shapes
def test_solo_turns_are_one_call_each_and_end_with_done_carrying_the_information():
    rows, root = _tau2_rows("airline", "solo")
    row = next(r for r in rows if r["extra_info"]["task_id"] == "2")  # a task with communicate_info
    domain = tau2_support.require_domain("airline")
    criteria = domain.task("2").evaluation_criteria
    turns = gold_assistant_turns(row, data_dir=root)
    assert [len(t["tool_calls"]) for t in turns] == [1] * len(turns)
    assert [t["tool_calls"][0]["function"]["name"] for t in turns[:-1]] == [a.name for a in criteria.actions]
    assert turns[-1]["tool_calls"][0]["function"] == {"name": "done", "arguments": {}}
    for info in criteria.communicate_info:
        assert info.lower() in turns[-1]["content"].lower().replace(",", "")
    call = turns[0]["tool_calls"][0]
    assert call["type"] == "function" and isinstance(call["function"]["arguments"], dict)


def test_normal_mode_turns_leave_user_actions_to_the_user_and_end_with_one_text():
    rows, root = _tau2_rows("telecom", "normal", every=23)
    domain = tau2_support.require_domain("telecom")
    for row in rows[:20]:
        task = domain.task(row["extra_info"]["task_id"])
        turns = gold_assistant_turns(row, data_dir=root)
        agent_actions = [a.name for a in task.evaluation_criteria.actions or () if a.requestor != "user"]
        assert [t["tool_calls"][0]["function"]["name"] for t in turns[:-1]] == agent_actions
        assert "tool_calls" not in turns[-1] and turns[-1]["content"]


def test_tau_bench_normal_turns_hold_two_texts_for_the_scripted_user():
    """The default scripted user says the instruction, "Yes, please go ahead.", then goodbye: two agent texts (or a
    final transfer, which ends the episode itself)."""
    rows, root = _tau_bench_rows("airline", "normal")
    transfers = 0
    for row in rows:
        turns = gold_assistant_turns(row, data_dir=root)
        texts = [t for t in turns if "tool_calls" not in t]
        last = turns[-1].get("tool_calls") or [{"function": {"name": None}}]
        if last[0]["function"]["name"] == "transfer_to_human_agents":
            transfers += 1
            assert len(texts) <= 1
        else:
            assert len(texts) == 2 and "tool_calls" not in turns[-1]
    assert transfers == 4


# ---------------------------------------------------------------------------------------------- conversations
def test_gold_conversation_pairs_every_call_with_its_observation(tmp_path):
    from verl_rewards.cli import main

    root = tau2_support.require_data("retail")
    assert main(["prepare", "tau2", "--data-dir", str(root), "--domain", "retail", "--mode", "solo",
                 "--split", "test", "--out", str(tmp_path)]) == 0  # fmt: skip
    row = pd.read_parquet(tmp_path / "test.parquet").iloc[0].to_dict()  # numpy arrays inside: a real parquet row
    messages = gold_conversation(row, data_dir=str(root))
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    assert messages[0]["content"] == row["prompt"][0]["content"]
    pending: list[str] = []
    for message in messages[2:]:
        if message["role"] == "assistant":
            assert not pending
            pending = [c["id"] for c in message["tool_calls"]]
        else:
            assert message["role"] == "tool" and message["tool_call_id"] == pending.pop(0)
    assert messages[-2]["tool_calls"][0]["function"]["name"] == "done"
    assert messages[-1]["content"] == "Episode finished. Do not call any more tools."
    assert json.loads(json.dumps(messages)) == messages  # plain JSON all the way down


def test_normal_mode_conversation_is_the_agent_view_and_the_trajectory_has_the_user_side():
    rows, root = _tau2_rows("telecom", "normal", every=23)
    domain = tau2_support.require_domain("telecom")
    row = next(
        r
        for r in rows
        if any(a.requestor == "user" for a in domain.task(r["extra_info"]["task_id"]).evaluation_criteria.actions or ())
    )
    episode = play_gold(row, data_dir=root)
    assert episode.termination == "user_stop"
    assert [m["role"] for m in episode.messages[:3]] == ["system", "assistant", "user"]  # greeting, first message
    assert not any(m["role"] == "user" and m.get("tool_calls") for m in episode.messages)  # user calls stay hidden
    assert any(m["role"] == "user" and m.get("tool_calls") for m in episode.trajectory)
    assert episode.messages[-1]["role"] == "assistant" and "tool_calls" not in episode.messages[-1]


def test_a_user_that_does_not_follow_the_script_is_visible_not_gold():
    from verl_rewards.tau2.normal.conversation import Reply

    class Chatty:
        async def reply(self, request):
            return Reply(content="Tell me more, please.")  # never stops

    rows, root = _tau2_rows("airline", "normal")
    episode = play_gold(rows[0], Chatty(), data_dir=root)
    assert episode.termination == "agent_error"  # the gold turns ran out: the engine's empty-message rule
    assert score_episodes([episode], reward_kwargs_for(root, "tau2"))[0]["reward"] == 0.0


def test_rows_without_a_gold_policy_are_clear_errors():
    with pytest.raises(GoldError, match="no gold policy for data_source 'gsm8k'"):
        gold_assistant_turns({"data_source": "gsm8k"})
    with pytest.raises(GoldError, match="without extra_info.task_id"):
        gold_assistant_turns({"data_source": "tau2/airline", "extra_info": {}})
    root = tau2_support.require_data("airline")
    with pytest.raises(GoldError, match="task 'nope'"):
        gold_assistant_turns({"data_source": "tau2/airline", "extra_info": {"task_id": "nope"}}, data_dir=str(root))
