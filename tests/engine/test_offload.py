"""Environment steps run off the event loop with a time bound: a slow tool call of one conversation never stalls
another on the same loop, and a call past its bound ends its conversation as ``infrastructure_error``.

The tests wait on events (a tool that blocks until the test releases it), never on clocks; the generous bounds on
those waits only keep a broken build from hanging the suite."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from verl_rewards.engine.conversation import Conversation, Reply
from verl_rewards.engine.environment import Environment
from verl_rewards.engine.simulate import ScriptedAgent
from verl_rewards.engine.state import BaseDB, DBState
from verl_rewards.engine.toolkit import READ, Toolkit, tool
from verl_rewards.engine.users import ScriptedUser
from verl_rewards.engine.verl_tools import ENDED_OBSERVATION, TIMEOUT_FLAG, EpisodeSession, EpisodeTool

from agent_loop_support import _agent_data

WAIT_S = 60.0


class _Env:
    """What the engine needs of an environment; ``step`` answers at once."""

    done = False

    def __init__(self) -> None:
        self.actions: list[dict[str, Any]] = []

    def sync(self) -> None:
        pass

    def step(self, name: str, arguments: Any, requestor: str = "assistant") -> str:
        self.actions.append({"name": name, "error": False})
        return f"ran {name}"


class _GatedEnv(_Env):
    """``step`` blocks until ``gate`` is set (``entered`` says it is blocking)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.entered = threading.Event(), threading.Event()

    def step(self, name: str, arguments: Any, requestor: str = "assistant") -> str:
        self.entered.set()
        released = self.gate.wait(WAIT_S)
        self.actions.append({"name": name, "error": False})
        return "released" if released else "never released"


def _conversation(env: Any, **kwargs: Any) -> Conversation:
    return Conversation(env, ScriptedUser(["I need help.", "Thanks ###STOP###"]), user_system_prompt="u", **kwargs)


def _agent() -> ScriptedAgent:
    return ScriptedAgent([Reply(tool_calls=[{"name": "search", "arguments": {"query": "x"}}]), Reply(content="Done.")])


def test_a_slow_tool_call_does_not_stall_another_conversation():
    slow_env = _GatedEnv()
    slow, fast = _conversation(slow_env), _conversation(_Env())

    async def go() -> bool:
        running = asyncio.create_task(slow.run(_agent()))
        assert await asyncio.to_thread(slow_env.entered.wait, WAIT_S)  # the slow call is in progress
        await fast.run(_agent())  # the other conversation plays to its end meanwhile
        finished_while_blocked = not slow_env.gate.is_set()
        slow_env.gate.set()
        await running
        return finished_while_blocked

    assert asyncio.run(go())
    assert fast.termination == "user_stop" and slow.termination == "user_stop"
    slow_tool = next(m for m in slow.trajectory if m["role"] == "tool")
    assert slow_tool["content"] == "released"  # it waited for the gate, not for a timeout


def test_a_tool_call_past_its_bound_ends_the_run_as_infrastructure_error():
    env = _GatedEnv()
    conv = _conversation(env, step_timeout_s=0.2)
    try:
        asyncio.run(asyncio.wait_for(conv.run(_agent()), WAIT_S))
    finally:
        env.gate.set()  # free the step thread
    assert conv.termination == "infrastructure_error"
    assert conv.cause == "the tool call 'search' did not finish within 0.2 s"
    assert [m["role"] for m in conv.trajectory] == ["assistant", "user", "assistant"]  # no answer recorded


# ------------------------------------------------------------------------------------------- verl tools
class _GatedKit(Toolkit):
    """A toolkit whose ``search`` blocks until the test opens ``gate``."""

    gate = threading.Event()
    entered = threading.Event()

    @tool(READ)
    def search(self, query: str) -> str:
        """Search (blocks until released)."""
        type(self).entered.set()
        return "released" if type(self).gate.wait(WAIT_S) else "never released"

    @tool(READ)
    def now(self) -> str:
        """The time."""
        return "12:00"


class _Domain:
    """The two things an :class:`EpisodeSession` asks of a domain."""

    def task(self, task_id: str) -> Any:
        return SimpleNamespace(id=task_id)

    def make_env(self, task_id: str) -> Environment:
        return Environment(_GatedKit(DBState(BaseDB({"records": {}}))))


class _Tool(EpisodeTool):
    label = "test"

    def open_session(self, create: Any, agent_data: Any) -> EpisodeSession:
        return EpisodeSession(_Domain(), "t", agent_data.extra_fields, agent_data.messages, str(agent_data.request_id))


def _tools(**config: Any) -> dict[str, _Tool]:
    schemas = {
        n: {"type": "function", "function": {"name": n, "description": n, "parameters": {}}} for n in ("search", "now")
    }
    return {name: _Tool({"openai_schema": schema, **config}) for name, schema in schemas.items()}


def _calling(request_id: str, name: str) -> Any:
    """verl's AgentData of a trajectory whose last message calls ``name``."""
    agent_data = _agent_data(
        {"prompt": [{"role": "user", "content": "hi"}], "extra_info": {"tools_kwargs": {}}}, request_id
    )
    call = {"id": "c0", "type": "function", "function": {"name": name, "arguments": "{}"}}
    agent_data.messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
    return agent_data


async def _execute(tool: EpisodeTool, agent_data: Any, arguments: dict[str, Any]) -> str:
    instance_id, _ = await tool.create()
    response, _, _ = await tool.execute(instance_id, arguments, agent_data=agent_data)
    return str(response.text)


def _fresh_gate() -> None:
    _GatedKit.gate, _GatedKit.entered = threading.Event(), threading.Event()


def test_a_slow_verl_tool_call_does_not_stall_other_trajectories():
    _fresh_gate()
    tools = _tools()

    async def go() -> tuple[str, str, bool]:
        slow = asyncio.create_task(_execute(tools["search"], _calling("a", "search"), {"query": "x"}))
        assert await asyncio.to_thread(_GatedKit.entered.wait, WAIT_S)
        fast = await _execute(tools["now"], _calling("b", "now"), {})
        answered_while_blocked = not _GatedKit.gate.is_set()
        _GatedKit.gate.set()
        return await slow, fast, answered_while_blocked

    slow, fast, answered_while_blocked = asyncio.run(go())
    assert answered_while_blocked and fast == "12:00" and slow == "released"


def test_the_calls_of_one_verl_trajectory_run_one_at_a_time_in_order():
    """verl runs a message's calls concurrently (``asyncio.gather``); the environment sees them in call order."""
    _fresh_gate()
    _GatedKit.gate.set()
    tools = _tools()
    agent_data = _calling("order", "search")
    queries = [f"q{i}" for i in range(8)]

    async def go() -> list[str]:
        return list(await asyncio.gather(*(_execute(tools["search"], agent_data, {"query": q}) for q in queries)))

    assert asyncio.run(go()) == ["released"] * len(queries)
    assert [a["arguments"]["query"] for a in agent_data.extra_fields["action_log"]] == queries


def test_a_verl_tool_call_past_its_bound_ends_the_trajectory_visibly():
    _fresh_gate()
    tools = _tools(step_timeout_s=0.2)
    agent_data = _calling("t", "search")
    try:
        text = asyncio.run(asyncio.wait_for(_execute(tools["search"], agent_data, {"query": "x"}), WAIT_S))
    finally:
        _GatedKit.gate.set()
    assert text == "Error: the test tool call 'search' did not finish within 0.2 s"
    assert agent_data.extra_fields["termination"] == "infrastructure_error"
    assert agent_data.extra_fields[TIMEOUT_FLAG] is True
    assert asyncio.run(_execute(tools["now"], agent_data, {})) == ENDED_OBSERVATION
    with pytest.raises(ValueError, match="step_timeout_s must be a positive number"):
        _tools(step_timeout_s=0)
