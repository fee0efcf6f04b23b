"""tau2's gold policy: the assistant messages a perfect agent sends for a row of ``prepare tau2``, and those turns
played in the row's loop (:mod:`verl_rewards.engine.gold`).

* **solo** (``tool_agent``, no user): every gold action, the user-requested ones included (the solo agent performs
  them with the customer's tools), then ``done`` in a message whose text states every ``communicate_info`` string
  (the text of a message that calls tools counts for COMMUNICATE). When the last gold action is a terminate tool
  (``transfer_to_human_agents``), that call ends the episode, so it carries the text instead of a ``done``.
* **normal** (``tau2_agent``, a simulated user): the gold actions the agent makes, then one text message stating
  the ``communicate_info`` strings. The user's own gold actions are the user's: the default scripted user
  (:func:`verl_rewards.tau2.normal.users.default_script`) answers that text with them, then ``###STOP###``. One
  text message only: each agent text hands the turn to the user, whose script then runs to its end.
"""

from __future__ import annotations

from typing import Any

from ..benchmark import GoldError, RowInfo, row_domain
from ..engine.gold import (
    NORMAL_DONE_TEXT,
    SOLO_DONE_TEXT,
    TRAJECTORY_ID,
    Played,
    assistant,
    info_text,
    play_conversation,
    play_tool_agent,
    tool_call,
)
from .domain import Domain, load_domain


def _domain(info: RowInfo) -> Domain:
    domain = row_domain(load_domain, info)
    assert isinstance(domain, Domain)
    return domain


def gold_turns(info: RowInfo) -> list[dict[str, Any]]:
    """The gold assistant messages of a tau2 row (see the module doc)."""
    from .data import DONE_TOOL

    domain = _domain(info)
    task = domain.task(info.task_id)
    criteria = task.evaluation_criteria
    actions = list(criteria.actions or ()) if criteria is not None else []
    infos = list(criteria.communicate_info or ()) if criteria is not None else []
    if info.mode == "solo":
        turns = [assistant("", [tool_call(a.name, a.arguments)]) for a in actions]
        text = info_text(infos, SOLO_DONE_TEXT)
        if actions and actions[-1].name in domain.terminate_tools:
            turns[-1]["content"] = text  # the transfer ends the episode: it carries the required text
        else:
            turns.append(assistant(text, [tool_call(DONE_TOOL, {})]))
        return turns
    if info.mode != "normal":
        raise GoldError(f"{info.data_source} row with unknown extra_info.mode {info.mode!r} (solo or normal)")
    turns = [assistant("", [tool_call(a.name, a.arguments)]) for a in actions if a.requestor != "user"]
    turns.append(assistant(info_text(infos, NORMAL_DONE_TEXT)))
    return turns


async def play(info: RowInfo, turns: list[dict[str, Any]], user: Any, seed: int) -> Played:
    """Play a tau2 row's gold turns: on a :class:`~verl_rewards.tau2.verl_tools.Tau2Session` (solo), or in a
    conversation with ``user`` (normal; default the task's scripted user)."""
    domain = _domain(info)
    if info.mode == "solo":
        from .verl_tools import Tau2Session

        return play_tool_agent(Tau2Session(domain, info.task_id, {}, [], TRAJECTORY_ID), info.prompt, turns)
    from ..engine.conversation import Conversation
    from ..engine.users import ScriptedUser, UserConfig
    from .normal.prompts import user_scenario_text, user_system_prompt, user_tool_schemas
    from .normal.users import script_for

    task = domain.task(info.task_id)
    if task.history:
        raise GoldError(f"{info.data_source} task {task.id!r} starts from a message history (not in normal mode)")
    if user is None:
        user = ScriptedUser(script_for(UserConfig(backend="scripted"), domain, task))
    system = next((m.get("content") for m in info.prompt if m.get("role") == "system"), None)
    scenario = info.extra_info.get("user_scenario") or user_scenario_text(task)
    conv = Conversation(
        domain.make_env(task.id),
        user,
        user_system_prompt=user_system_prompt(domain, scenario),
        user_tools=user_tool_schemas(domain),
        agent_system_prompt=system,
        seed=seed,
    )
    return await play_conversation(conv, turns)
