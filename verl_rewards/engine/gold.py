"""What every benchmark's gold policy shares: the message builders of the gold turns, and playing those turns the
way each loop would.

* :func:`play_tool_agent` (verl's ``tool_agent``: tau2 solo, tau-bench instruction): each turn's calls run on the
  trajectory's session (the very object our verl tools drive); a text-only turn ends the episode, and the trajectory
  is what the session recorded (frozen at the stop tool or a transfer);
* :func:`play_conversation` (normal mode): the conversation engine of :mod:`verl_rewards.engine.conversation` with
  the gold turns as the agent.

Each returns a :class:`Played`; the benchmark's own gold module (``tau2/gold.py``, ``tau_bench/gold.py``) chooses
the session or the conversation and the scripted user.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: the trajectory id of a gold episode (its session's and its scoring row's)
TRAJECTORY_ID = "gold"
SOLO_DONE_TEXT = "The ticket is fully handled."
NORMAL_DONE_TEXT = "Everything you asked for is taken care of. Is there anything else I can help you with?"
INFO_LEAD = "Here is the information you asked for: "


@dataclass(frozen=True)
class Played:
    """A played gold episode: the agent's side (``messages``, the SFT conversation), what the reward reads
    (``trajectory``; normal mode: with the greeting, the user's tool calls and their results), the loop's
    termination reason (None for one-turn rows and instruction replies) and the loop's extra fields."""

    messages: list[dict[str, Any]]
    trajectory: list[dict[str, Any]]
    termination: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def tool_call(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """One OpenAI-style tool call (arguments as an object)."""
    return {"type": "function", "function": {"name": name, "arguments": dict(arguments)}}


def assistant(content: str = "", calls: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """An assistant message; ``tool_calls`` only when there are calls."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [dict(c) for c in calls]
    return message


def info_text(infos: Sequence[str], fallback: str) -> str:
    """A message stating every string of ``infos`` (each verbatim, so the substring rule finds it)."""
    if not infos:
        return fallback
    return INFO_LEAD + "; ".join(str(s) for s in infos) + ". " + fallback


def dumps_args(arguments: Mapping[str, Any]) -> str:
    """Arguments as compact JSON text (for messages shown to a user)."""
    return json.dumps(dict(arguments), ensure_ascii=False, sort_keys=True)


class GoldAgent:
    """Plays the gold turns in order, whatever it is shown; an empty message once they are used up (the engine
    ends the run as ``agent_error``: the gold turns and the user did not line up)."""

    def __init__(self, turns: Sequence[dict[str, Any]]):
        self.turns = list(turns)

    async def reply(self, messages: list[dict[str, Any]]) -> Any:
        from .conversation import Reply

        if not self.turns:
            return Reply(content="")
        turn = self.turns.pop(0)
        calls = [
            {"name": c["function"]["name"], "arguments": dict(c["function"]["arguments"])}
            for c in turn.get("tool_calls") or ()
        ]
        return Reply(content=turn.get("content") or None, tool_calls=calls)


def clean(message: Mapping[str, Any]) -> dict[str, Any]:
    """A chat message without the engine's annotations (``requestor``, ``error``), arguments as objects."""
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content")}
    if message["role"] == "tool":
        out["tool_call_id"] = message.get("tool_call_id")
        return out
    if out["content"] is None:
        out["content"] = ""
    calls = []
    for c in message.get("tool_calls") or ():
        args = c["function"]["arguments"]
        if isinstance(args, str):
            args = json.loads(args) if args.strip() else {}
        calls.append(
            {"id": c.get("id"), "type": "function", "function": {"name": c["function"]["name"], "arguments": args}}
        )
    if calls:
        out["tool_calls"] = calls
    return out


def play_tool_agent(session: Any, prompt: Sequence[Mapping[str, Any]], turns: Sequence[dict[str, Any]]) -> Played:
    """Play ``turns`` as verl's ``tool_agent`` loop would, on ``session`` (an
    :class:`~verl_rewards.rollout.verl_tools.EpisodeSession`), after ``prompt``."""
    messages: list[dict[str, Any]] = [dict(m) for m in prompt]
    session.extra["messages"] = messages
    for k, turn in enumerate(turns):
        calls: list[dict[str, Any]] = [
            {"id": f"call_{k}_{i}", "type": "function", "function": dict(c["function"])}
            for i, c in enumerate(turn.get("tool_calls") or ())
        ]
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("content") or ""}
        if calls:
            message["tool_calls"] = calls
        messages.append(message)
        if not calls:
            break  # verl's tool_agent loop: a reply without tool calls ends the episode
        answers = []
        for call in calls:
            fn: dict[str, Any] = call["function"]
            observation = session.call(fn["name"], dict(fn["arguments"]), messages)
            answers.append({"role": "tool", "tool_call_id": call["id"], "content": observation})
        messages.extend(answers)
        if session.ended is not None:
            break
    return Played(
        [clean(m) for m in messages],
        [clean(m) for m in session.extra["messages"]],
        termination=session.extra.get("termination"),
        extra={"action_log": session.extra.get("action_log", [])},
    )


async def play_conversation(conversation: Any, turns: Sequence[dict[str, Any]]) -> Played:
    """Run ``conversation`` (a :class:`~verl_rewards.engine.conversation.Conversation`) with the gold turns as
    the agent."""
    await conversation.run(GoldAgent(turns))
    return Played(
        [clean(m) for m in conversation.agent_view],
        [clean(m) for m in conversation.trajectory],
        termination=conversation.termination,
        extra=conversation.extra_fields() | {"messages": None},
    )
