"""The normal-mode conversation engine: every rule of tau2's half-duplex conversation, played with scripted players
on real domain environments, and scored with our tau2 evaluator."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from verl_rewards.engine.conversation import Conversation, PlayerError, Reply, trial_seeds
from verl_rewards.engine.rules import GREETING, STOP_TOKENS
from verl_rewards.engine.simulate import ScriptedAgent
from verl_rewards.engine.users import ScriptedUser
from verl_rewards.tau2 import evaluate_trajectory
from verl_rewards.tau2.normal.prompts import (
    agent_system_prompt,
    user_scenario_text,
    user_system_prompt,
    user_tool_schemas,
)
from verl_rewards.tau2.normal.users import default_script

from tau2_support import require_domain

TELECOM_TASK = "[service_issue]airplane_mode_on[PERSONA:None]"


def call(name: str, args: dict[str, Any] | None = None, cid: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "arguments": args or {}}
    if cid:
        out["id"] = cid
    return out


class FailingUser:
    def __init__(self, after: int = 0):
        self.after = after

    async def reply(self, request) -> Reply:
        if self.after:
            self.after -= 1
            return Reply(content="hello")
        raise PlayerError("connection refused")


def play(domain_name: str, task_id: str, user_turns: list[Any], agent_replies: list[Reply], **kwargs: Any):
    domain = require_domain(domain_name)
    task = domain.task(task_id)
    user = ScriptedUser(user_turns)
    conv = Conversation(
        domain.make_env(task_id),
        user,
        user_system_prompt=user_system_prompt(domain, user_scenario_text(task)),
        user_tools=user_tool_schemas(domain),
        agent_system_prompt=agent_system_prompt(domain),
        **kwargs,
    )
    agent = ScriptedAgent(agent_replies)
    asyncio.run(conv.run(agent))
    return conv, user, agent, domain


def score(domain, task_id: str, conv: Conversation) -> float:
    result = evaluate_trajectory(domain, task_id, conv.trajectory, termination=conv.termination, nl_policy="skip")
    return result.reward


# ---------------------------------------------------------------------------------------------- rewards
def test_airline_cancellation_with_confirmation_turn_scores_one():
    agent = [
        Reply(tool_calls=[call("get_reservation_details", {"reservation_id": "Z7GOZK"})]),
        Reply(content="Reservation Z7GOZK can be cancelled. Do you confirm the cancellation (yes/no)?"),
        Reply(tool_calls=[call("cancel_reservation", {"reservation_id": "Z7GOZK"})]),
        Reply(content="Your reservation Z7GOZK is cancelled."),
    ]
    user = ["I want to cancel reservation Z7GOZK.", "Yes, please cancel it.", "Thanks! ###STOP###"]
    conv, _, _, domain = play("airline", "19", user, agent)
    assert conv.termination == "user_stop" and conv.errors == 0
    roles = [m["role"] for m in conv.trajectory]
    assert roles == [
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert conv.steps == len(conv.trajectory) - 1  # every message after the greeting is one step
    assert score(domain, "19", conv) == 1.0
    # the same conversation without the write scores 0 (the DB never changed)
    conv2, _, _, _ = play("airline", "19", user[:1] + ["No, keep it. ###STOP###"], agent[:2])
    assert conv2.termination == "user_stop" and score(domain, "19", conv2) == 0.0


def test_retail_wrong_write_scores_zero_by_db():
    wrong = {
        "user_id": "ivan_khan_7475",
        "address1": "2 Wrong Way",
        "address2": "",
        "city": "Nowhere",
        "state": "NV",
        "country": "USA",
        "zip": "00001",
    }
    agent = [Reply(tool_calls=[call("modify_user_address", wrong)]), Reply(content="Address updated.")]
    conv, _, _, domain = play("retail", "72", ["Change my address please.", "###STOP###"], agent)
    assert conv.termination == "user_stop" and conv.errors == 0
    result = evaluate_trajectory(domain, "72", conv.trajectory, termination=conv.termination, nl_policy="skip")
    assert result.reward == 0.0 and result.breakdown["DB"] == 0.0 and result.db_match is False


@pytest.mark.parametrize("toggles", [True, False])
def test_telecom_user_toggles_airplane_mode_on_the_agents_instruction(toggles):
    agent = [Reply(content="Please turn off airplane mode on your phone and tell me when it is done.")]
    user = [
        "My phone has no service.",
        *([{"tool_calls": [call("toggle_airplane_mode")]}] if toggles else []),
        "Done, it works now. ###STOP###",
    ]
    conv, scripted, _, domain = play("telecom", TELECOM_TASK, user, agent)
    assert conv.termination == "user_stop"
    assert score(domain, TELECOM_TASK, conv) == (1.0 if toggles else 0.0)
    if toggles:
        call_msg = next(m for m in conv.trajectory if m["role"] == "user" and m.get("tool_calls"))
        result = conv.trajectory[conv.trajectory.index(call_msg) + 1]
        assert result["role"] == "tool" and result["requestor"] == "user" and not result["error"]
        assert "Airplane Mode" in result["content"] or "airplane" in result["content"].lower()
        # the result went back to the user only, who then spoke to the agent
        last_request = scripted.requests[-1].messages
        assert last_request[-1] == {
            "role": "tool",
            "tool_call_id": call_msg["tool_calls"][0]["id"],
            "content": result["content"],
        }
        assert last_request[-2]["role"] == "assistant" and last_request[-2]["tool_calls"]
        assert not any(m["role"] == "tool" for m in conv.agent_view)


def test_default_script_plays_the_gold_user_actions():
    domain = require_domain("telecom")
    turns = default_script(domain, domain.task(TELECOM_TASK))
    assert turns[1].tool_calls == [{"name": "toggle_airplane_mode", "arguments": {}}]
    assert STOP_TOKENS[0] in turns[-1].content
    conv, _, _, _ = play("telecom", TELECOM_TASK, list(turns), [Reply(content="Please turn off airplane mode.")])
    assert score(domain, TELECOM_TASK, conv) == 1.0


# ------------------------------------------------------------------------------------------ what each side sees
def test_views_greeting_roles_and_no_cross_visible_tool_calls():
    agent = [
        Reply(tool_calls=[call("get_customer_by_phone", {"phone_number": "555-123-2002"})]),
        Reply(content="Please check your status bar."),
    ]
    user = ["No service on my phone.", {"tool_calls": [call("check_status_bar")]}, "It shows airplane mode. ###STOP###"]
    conv, scripted, agent_player, domain = play("telecom", TELECOM_TASK, user, agent)
    first = scripted.requests[0]
    assert first.chat_messages()[0]["role"] == "system" and "<scenario>" in first.system_prompt
    assert first.messages == [{"role": "user", "content": GREETING}]
    assert first.tools and {t["function"]["name"] for t in first.tools} >= {"toggle_airplane_mode"}
    # the agent's first view: system, greeting as assistant, the user's text
    view = agent_player.views[0]
    assert [m["role"] for m in view] == ["system", "assistant", "user"]
    assert view[1] == {"role": "assistant", "content": GREETING} and view[0]["content"].startswith("<instructions>")
    # the user never sees the agent's tool call or its result; the agent never sees the user's
    for request in scripted.requests:
        for m in request.messages:
            assert m["role"] != "tool" or m["tool_call_id"] != conv.trajectory[2]["tool_calls"][0]["id"]
            assert "get_customer_by_phone" not in json.dumps(m)
    assert all("check_status_bar" not in json.dumps(m) for m in conv.agent_view[1:])  # [0]: the policy
    # role flipping: the agent's text is a user message, the user's own text an assistant message
    last = scripted.requests[-1].messages
    assert {"role": "user", "content": "Please check your status bar."} in last
    assert {"role": "assistant", "content": "No service on my phone."} in last


def test_airline_user_gets_no_tools():
    conv, scripted, _, _ = play("airline", "19", ["Hi ###STOP###"], [])
    assert scripted.requests[0].tools is None
    # a user that calls tools although it has none is a user error
    conv, _, _, _ = play("airline", "19", [{"tool_calls": [call("toggle_airplane_mode")]}], [])
    assert conv.termination == "user_error" and "no tools" in conv.cause


# ---------------------------------------------------------------------------------------------- termination
@pytest.mark.parametrize("token", STOP_TOKENS)
def test_user_stop_by_each_token_as_substring(token):
    agent = [Reply(content="How can I help further?")]
    conv, _, agent_player, _ = play("airline", "19", ["I need help.", f"Great, thanks {token} bye"], agent)
    assert conv.termination == "user_stop"
    assert conv.trajectory[-1] == {"role": "user", "content": f"Great, thanks {token} bye"}
    assert all(token not in json.dumps(v) for v in agent_player.views)  # never sent to the agent


def test_stop_token_with_user_tool_calls_is_not_a_stop():
    user = ["No service.", {"content": "###STOP###", "tool_calls": [call("check_status_bar")]}, "ok ###STOP###"]
    conv, _, _, _ = play("telecom", TELECOM_TASK, user, [Reply(content="Check your phone.")])
    assert conv.termination == "user_stop" and conv.trajectory[-1]["content"] == "ok ###STOP###"
    assert any(m["role"] == "tool" and m["requestor"] == "user" for m in conv.trajectory)


def test_max_steps_ends_one_step_late_when_a_call_is_pending():
    # steps: 1 user text, 2 agent call (pending: no check), 3 tool results -> limit 2 ends at step 3
    agent = [Reply(tool_calls=[call("get_reservation_details", {"reservation_id": "Z7GOZK"})])]
    conv, _, _, _ = play("airline", "19", ["hi"], agent, max_steps=2)
    assert conv.termination == "max_steps" and conv.steps == 3
    assert conv.trajectory[-1]["role"] == "tool"
    # without a pending call the limit ends the run on the step that reaches it
    conv, user, _, _ = play("airline", "19", ["hi", "more"], [Reply(content="Hello")], max_steps=2)
    assert conv.termination == "max_steps" and conv.steps == 2 and len(user.requests) == 1


def test_limit_reached_on_a_user_stop_records_the_limit_as_tau2_does():
    conv, _, _, _ = play("airline", "19", ["hi", "bye ###STOP###"], [Reply(content="Hello")], max_steps=3)
    assert conv.steps == 3 and conv.termination == "max_steps"


def test_too_many_errors_counts_every_call_of_a_batch():
    bad = Reply(tool_calls=[call("no_such_tool"), call("get_reservation_details", {"reservation_id": "NOPE"})])
    conv, _, _, _ = play("airline", "19", ["hi"], [bad, bad], max_errors=3)
    assert conv.termination == "too_many_errors" and conv.errors == 4
    assert [m["error"] for m in conv.trajectory if m["role"] == "tool"] == [True] * 4


def test_mixed_agent_message_runs_its_calls_by_default_and_is_an_agent_error_when_enforced():
    mixed = Reply(
        content="Let me look that up.", tool_calls=[call("get_reservation_details", {"reservation_id": "Z7GOZK"})]
    )
    agent = [mixed, Reply(content="Found it.")]
    conv, user, agent_player, _ = play("airline", "19", ["hi", "thanks ###STOP###"], agent)
    assert conv.termination == "user_stop"
    assert conv.trajectory[2]["content"] == "Let me look that up." and conv.trajectory[3]["role"] == "tool"
    assert "Z7GOZK" in conv.trajectory[3]["content"] and not conv.trajectory[3]["error"]
    assert agent_player.views[1][-2]["content"] == "Let me look that up."  # in the agent's own history
    assert all("Let me look that up." not in json.dumps(r.messages) for r in user.requests)  # never to the user

    conv, _, _, _ = play("airline", "19", ["hi"], agent, enforce_communication_protocol=True)
    assert conv.termination == "agent_error" and conv.trajectory[-1]["role"] == "assistant"
    assert not any(m["role"] == "tool" for m in conv.trajectory) and conv.env.actions == []


def test_mixed_user_message_is_a_user_error_only_when_enforced():
    user = ["No service.", {"content": "checking", "tool_calls": [call("check_status_bar")]}, "bye ###STOP###"]
    conv, _, _, _ = play("telecom", TELECOM_TASK, user, [Reply(content="Check.")], enforce_communication_protocol=True)
    assert conv.termination == "user_error" and not any(m["role"] == "tool" for m in conv.trajectory)


def test_empty_agent_message_is_an_agent_error():
    conv, _, _, domain = play("airline", "19", ["hi"], [Reply(content="  ")])
    assert conv.termination == "agent_error" and "empty" in conv.cause
    assert score(domain, "19", conv) == 0.0


def test_user_failure_is_a_user_error_with_its_cause():
    domain = require_domain("airline")
    for after in (0, 1):
        conv = Conversation(domain.make_env("19"), FailingUser(after), user_system_prompt="u")
        asyncio.run(conv.run(ScriptedAgent([Reply(content="Hello")])))
        assert conv.termination == "user_error" and "connection refused" in conv.cause
        extra = conv.extra_fields()
        assert extra["user_error"] == 1.0 and extra["termination"] == "user_error"


def test_sync_tools_runs_after_every_step():
    domain = require_domain("telecom")
    calls = []
    env = domain.make_env(TELECOM_TASK)
    original = env.sync
    env.sync = lambda: (calls.append(1), original())[1]
    conv = Conversation(env, ScriptedUser(["hi", "bye ###STOP###"]), user_system_prompt="u", user_tools=[{}])
    asyncio.run(conv.run(ScriptedAgent([Reply(content="Hello")])))
    assert conv.steps == 3 and len(calls) == 3


def test_trial_seeds_follow_tau2():
    assert trial_seeds(300, 4) == [626729, 373753, 361454, 1567]  # random.seed(300); randint(0, 1_000_000) x 4


# ------------------------------------------------------------------------ starting from a message history
def _history_call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


HISTORY_OPEN = [
    {"role": "user", "content": "Create a task for me."},
    {"role": "assistant", "content": None, "tool_calls": [_history_call("h1", "get_users", {})]},
    {"role": "tool", "tool_call_id": "h1", "content": "[]", "requestor": "assistant", "error": False},
]


@pytest.mark.parametrize(
    ("last", "agent_first", "user_asked", "steps", "termination"),
    [
        ({"role": "assistant", "content": "Anything else?"}, ["user"], 1, 0, None),
        (
            {"role": "assistant", "content": None, "tool_calls": [_history_call("h2", "get_users", {})]},
            ["tool"],
            0,
            1,
            None,
        ),
        ({"role": "user", "content": "And list the users."}, [], 0, 0, None),
        ({"role": "user", "content": "Bye ###STOP###"}, [], 0, 0, "user_stop"),
    ],
    ids=["agent-text", "pending-agent-call", "user-text", "user-stop"],
)
def test_a_conversation_continues_from_its_history_as_tau2s_orchestrator(
    last, agent_first, user_asked, steps, termination
):
    """tau2 (``Orchestrator.initialize``): the history opens the trajectory without a greeting and costs no step;
    its last message goes on: agent text to the user, a pending agent call to the environment (a step), user text
    to the agent, a user stop ends the run at once."""
    mock = require_domain("mock")
    user = ScriptedUser([Reply(content="Please do.")])
    history = [*HISTORY_OPEN, last]
    conv = Conversation(mock.make_env("create_task_1"), user, user_system_prompt="u", history=history)
    turn = asyncio.run(conv.start())
    assert conv.trajectory[: len(history)] == history and GREETING not in json.dumps(conv.trajectory)
    assert [m["role"] for m in turn.messages] == agent_first and conv.user_calls == user_asked
    assert conv.steps == steps + user_asked and conv.termination == termination and turn.done == bool(termination)
    # the agent sees its calls and their results, the user's text; never a user call
    assert [m["role"] for m in conv.agent_view[:4]] == ["user", "assistant", "tool", last["role"]]
    # the user sees only text (its own as "assistant"), never the agent's calls or their results
    assert all(m["role"] in ("user", "assistant") and not m.get("tool_calls") for m in conv.user_view[:2])
