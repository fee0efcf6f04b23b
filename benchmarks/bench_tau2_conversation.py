"""Throughput of the tau2 normal-mode conversation engine (:mod:`verl_rewards.engine.conversation`).

Three measurements, each printed with the ratio it supports:

1. **Engine overhead per turn, instant user.** ``--conversations`` airline conversations (task 19: a read, a
   confirmation question, a write, a closing message; the user answers instantly from a script), each played
   through :class:`Conversation` on a real environment. Reports the engine's own time per agent turn and per
   user turn (views, role flipping, tool execution on the environment, ``sync_tools``, limit checks).
2. **User-turn plumbing vs the user model's latency.** The same conversations with the ``openai`` user backend
   against a chat-completions server on 127.0.0.1 that answers after ``--latency-ms``: the wall time of a user
   turn minus that latency is what the plumbing adds (HTTP client, JSON, engine), as a share of the latency.
   Goal: under 5 %.
3. **Concurrency.** ``--concurrent`` conversations start at once against a server that answers each user call
   after ``--slow-latency-s``; all of them wait on the user endpoint together (one shared client, its
   ``max_concurrency`` slots). Wall time of that first user turn ≈ one call's latency, not N of them.

Usage: ``python benchmarks/bench_tau2_conversation.py [--conversations 200] [--latency-ms 50] [--concurrent 32]
[--slow-latency-s 0.5] [--data-dir DIR]`` (tau2 data from ``--data-dir`` or ``TAU2_DATA_DIR``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from verl_rewards.engine.client import Endpoint, shared_client
from verl_rewards.engine.conversation import Conversation, Reply
from verl_rewards.engine.users import OpenAIUser, ScriptedUser
from verl_rewards.tau2 import load_domain  # noqa: E402
from verl_rewards.tau2.normal.prompts import (  # noqa: E402
    agent_system_prompt,
    user_scenario_text,
    user_system_prompt,
    user_tool_schemas,
)

from chat_server import ChatServer  # noqa: E402

TASK = "19"
AGENT = [
    Reply(tool_calls=[{"name": "get_reservation_details", "arguments": {"reservation_id": "Z7GOZK"}}]),
    Reply(content="Z7GOZK can be cancelled. Do you confirm (yes/no)?"),
    Reply(tool_calls=[{"name": "cancel_reservation", "arguments": {"reservation_id": "Z7GOZK"}}]),
    Reply(content="Your reservation Z7GOZK is cancelled."),
]
USER = ["I want to cancel reservation Z7GOZK.", "Yes, go ahead.", "Thanks! ###STOP###"]


class TimedUser:
    """Wraps a user player and records the wall time of each of its turns."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.times: list[float] = []

    async def reply(self, request: Any) -> Reply:
        t0 = time.perf_counter()
        try:
            return await self.inner.reply(request)
        finally:
            self.times.append(time.perf_counter() - t0)


class InstantAgent:
    def __init__(self) -> None:
        self.replies = list(AGENT)

    async def reply(self, messages: list[dict[str, Any]]) -> Reply:
        return self.replies.pop(0) if self.replies else Reply(content="Anything else?")


def conversation(domain: Any, user: Any, prompts: tuple[str, str]) -> Conversation:
    return Conversation(
        domain.make_env(TASK),
        user,
        user_system_prompt=prompts[0],
        user_tools=user_tool_schemas(domain),
        agent_system_prompt=prompts[1],
    )


async def engine_only(domain: Any, prompts: tuple[str, str], n: int) -> tuple[float, int, int, float]:
    """Total engine time (user time excluded), agent turns, user turns, user time."""
    total, agent_turns, user_turns, user_time = 0.0, 0, 0, 0.0
    for _ in range(n):
        user = TimedUser(ScriptedUser(USER))
        conv = conversation(domain, user, prompts)
        t0 = time.perf_counter()
        await conv.run(InstantAgent())
        total += time.perf_counter() - t0
        assert conv.termination == "user_stop", conv.termination
        agent_turns += len(AGENT)
        user_turns += len(user.times)
        user_time += sum(user.times)
    return total - user_time, agent_turns, user_turns, user_time


def user_script_responder(latency_s: float) -> Any:
    def respond(body: dict[str, Any], n: int) -> Any:
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return ("sleep", latency_s, {"content": USER[min(turn, len(USER) - 1)]})

    return respond


async def over_http(domain: Any, prompts: tuple[str, str], n: int, server: ChatServer) -> list[float]:
    endpoint = Endpoint(base_url=server.base_url, model="user", timeout_s=30, retries=0, max_concurrency=64)
    times: list[float] = []
    for _ in range(n):
        user = TimedUser(OpenAIUser(shared_client(endpoint)))
        conv = conversation(domain, user, prompts)
        await conv.run(InstantAgent())
        assert conv.termination == "user_stop", (conv.termination, conv.cause)
        times += user.times
    return times


async def concurrent_first_turn(domain: Any, prompts: tuple[str, str], n: int, server: ChatServer) -> float:
    endpoint = Endpoint(base_url=server.base_url, model="user", timeout_s=60, retries=0, max_concurrency=n)
    convs = [conversation(domain, OpenAIUser(shared_client(endpoint)), prompts) for _ in range(n)]
    t0 = time.perf_counter()
    turns = await asyncio.gather(*(c.start() for c in convs))
    wall = time.perf_counter() - t0
    failed = [c.cause for c, t in zip(convs, turns, strict=True) if t.done]
    assert not failed, failed[:3]
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--http-conversations", type=int, default=20)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrent", type=int, default=32)
    parser.add_argument("--slow-latency-s", type=float, default=0.5)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()

    domain = load_domain("airline", args.data_dir)
    task = domain.task(TASK)
    prompts = (user_system_prompt(domain, user_scenario_text(task)), agent_system_prompt(domain))

    asyncio.run(engine_only(domain, prompts, 5))  # warm-up: caches, imports
    engine, agent_turns, user_turns, _ = asyncio.run(engine_only(domain, prompts, args.conversations))
    per_turn = engine / (agent_turns + user_turns)
    print(
        f"[1] engine only, instant user: {args.conversations} conversations, {agent_turns} agent + {user_turns} "
        f"user turns, {engine * 1e3:.1f} ms engine time -> {per_turn * 1e6:.0f} us per turn "
        f"({args.conversations / engine:.0f} conversations/s)"
    )

    latency = args.latency_ms / 1000
    with ChatServer(user_script_responder(latency)) as server:
        asyncio.run(over_http(domain, prompts, 2, server))  # warm-up: connection pool, server threads
        times = asyncio.run(over_http(domain, prompts, args.http_conversations, server))
    median = statistics.median(times)
    extra = median - latency
    print(
        f"[2] openai user over loopback HTTP, server latency {args.latency_ms:.0f} ms: {len(times)} user turns, "
        f"median wall {median * 1e3:.2f} ms -> plumbing adds {extra * 1e3:.2f} ms = {100 * extra / latency:.2f} % "
        f"of the user model's latency (goal < 5 %)"
    )

    with ChatServer(user_script_responder(args.slow_latency_s)) as server:
        wall = asyncio.run(concurrent_first_turn(domain, prompts, args.concurrent, server))
    print(
        f"[3] {args.concurrent} conversations waiting on the user endpoint at once (latency "
        f"{args.slow_latency_s:.2f} s each): wall {wall:.3f} s = {wall / args.slow_latency_s:.2f} x one call "
        f"(sequential would be {args.concurrent} x)"
    )


if __name__ == "__main__":
    main()
