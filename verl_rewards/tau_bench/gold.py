"""tau-bench's gold policy: the assistant messages a perfect agent sends for a row of ``prepare tau_bench``, and
those turns played in the row's loop (:mod:`verl_rewards.engine.gold`).

* **instruction** (``tool_agent``): the gold actions (``respond`` left out), then a text reply with every required
  output (the reply ends the episode); a final ``transfer_to_human_agents`` ends it instead.
* **normal** (``tau_bench_agent``): two texts, matching the default scripted user (the instruction,
  ``Yes, please go ahead.``, a goodbye with ``###STOP###``): the reads, a confirmation request listing the writes,
  the writes and later reads, a final text with the required outputs; a final transfer replaces the final text. A
  task without writes answers with its outputs, then closes with them again.

One turn per tool call (every loop we have runs it; tau-bench runs only the first call of a message anyway).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..benchmark import GoldError, RowInfo, row_domain
from ..engine.gold import (
    NORMAL_DONE_TEXT,
    TRAJECTORY_ID,
    Played,
    assistant,
    dumps_args,
    info_text,
    play_conversation,
    play_tool_agent,
    tool_call,
)
from .domain import TauBenchDomain, load_domain


def _domain(info: RowInfo) -> TauBenchDomain:
    domain = row_domain(load_domain, info)
    assert isinstance(domain, TauBenchDomain)
    return domain


def _confirm_text(writes: Sequence[Mapping[str, Any]]) -> str:
    steps = "; ".join(f"{a['name']} {dumps_args(a.get('kwargs') or {})}" for a in writes)
    return f"Before I make any change, please confirm that I should do the following: {steps}. Shall I proceed?"


def gold_turns(info: RowInfo) -> list[dict[str, Any]]:
    """The gold assistant messages of a tau-bench row (see the module doc)."""
    from .environment import RESPOND_ACTION

    domain = _domain(info)
    task = domain.task(info.task_id)
    actions = [dict(a) for a in task.actions if a["name"] != RESPOND_ACTION]
    outputs = [str(o) for o in task.outputs]
    transfer = None
    if actions and actions[-1]["name"] in domain.terminate_tools:
        transfer = actions.pop()
    calls = [assistant("", [tool_call(a["name"], a.get("kwargs") or {})]) for a in actions]
    end = [assistant("", [tool_call(transfer["name"], transfer.get("kwargs") or {})])] if transfer else []
    final = assistant(info_text(outputs, NORMAL_DONE_TEXT))
    if info.mode == "instruction":
        return [*calls, *(end or [final])]
    if info.mode != "normal":
        raise GoldError(f"{info.data_source} row with unknown extra_info.mode {info.mode!r} (normal or instruction)")
    kinds = domain.tool_kinds()
    first_write = next((i for i, a in enumerate(actions) if kinds.get(a["name"]) == "write"), None)
    if first_write is None:
        if end:
            return [*calls, *end]
        return [*calls, assistant(info_text(outputs, "I found what you asked for.")), final]
    writes = [a for a in actions if kinds.get(a["name"]) == "write"]
    confirm = assistant(_confirm_text(writes))
    return [*calls[:first_write], confirm, *calls[first_write:], *(end or [final])]


async def play(info: RowInfo, turns: list[dict[str, Any]], user: Any, seed: int) -> Played:
    """Play a tau-bench row's gold turns: on a :class:`~verl_rewards.tau_bench.verl_tools.TauBenchSession`
    (instruction), or in a conversation with ``user`` (normal; default the scripted user)."""
    domain = _domain(info)
    if info.mode == "instruction":
        from .verl_tools import TauBenchSession

        return play_tool_agent(TauBenchSession(domain, info.task_id, {}, [], TRAJECTORY_ID), info.prompt, turns)
    from ..engine.users import ScriptedUser
    from .normal import default_script, open_conversation

    system = next((m.get("content") for m in info.prompt if m.get("role") == "system"), None)
    task = domain.task(info.task_id)
    if user is None:
        user = ScriptedUser(default_script(task))
    conv = open_conversation(domain, task.id, user, seed=seed, agent_system_prompt=False)
    if system is not None:
        conv.agent_view.insert(0, {"role": "system", "content": system})
    return await play_conversation(conv, turns)
