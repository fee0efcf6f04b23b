"""The gold policy: for a row of our ``prepare`` output, the assistant messages a perfect agent sends.

:func:`gold_assistant_turns` returns them in order, OpenAI style (``{"role": "assistant", "content": str,
"tool_calls": [{"type": "function", "function": {"name", "arguments": {...}}}]}``, ``tool_calls`` left out when
none), built so that the conversation they produce scores the gold reward with our own reward. One turn per tool
call (every loop we have runs it; tau-bench runs only the first call of a message anyway).

* **ToolRL** (single turn): the ground truth itself, in ToolRL's own response format (``<think>``,
  ``<tool_call>`` JSON lines, ``<response>``) as the message text; no structured ``tool_calls``.
* **tau2, solo** (``tool_agent``, no user): every gold action, the user-requested ones included (the solo agent
  performs them with the customer's tools), then ``done`` in a message whose text states every
  ``communicate_info`` string (the text of a message that calls tools counts for COMMUNICATE). When the last gold
  action is a terminate tool (``transfer_to_human_agents``), that call ends the episode, so it carries the text
  instead of a ``done``.
* **tau2, normal** (``tau2_agent``, a simulated user): the gold actions the agent makes, then one text message
  stating the ``communicate_info`` strings. The user's own gold actions are the user's: the default scripted user
  (:func:`verl_rewards.tau2.normal.users.default_script`) answers that text with them, then ``###STOP###``. One
  text message only: each agent text hands the turn to the user, whose script then runs to its end.
* **tau-bench, instruction** (``tool_agent``): the gold actions (``respond`` left out), then a text reply with
  every required output (the reply ends the episode); a final ``transfer_to_human_agents`` ends it instead.
* **tau-bench, normal** (``tau_bench_agent``): two texts, matching the default scripted user (the instruction,
  ``Yes, please go ahead.``, a goodbye with ``###STOP###``): the reads, a confirmation request listing the
  writes, the writes and later reads, a final text with the required outputs; a final transfer replaces the
  final text. A task without writes answers with its outputs, then closes with them again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .rows import TAU2, TAU_BENCH, TOOLRL, GoldError, RowInfo, dumps_args, row_info

SOLO_DONE_TEXT = "The ticket is fully handled."
NORMAL_DONE_TEXT = "Everything you asked for is taken care of. Is there anything else I can help you with?"
INFO_LEAD = "Here is the information you asked for: "


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


def gold_assistant_turns(row: Mapping[str, Any], data_dir: str | None = None) -> list[dict[str, Any]]:
    """The gold agent's assistant messages for ``row`` (see the module doc). ``data_dir``: the family's data
    folder (else ``TAU2_DATA_DIR`` / ``TAU_BENCH_DATA_DIR``, else the path recorded in the row)."""
    info = row_info(row, data_dir)
    if info.family == TOOLRL:
        return [assistant(str(info.ground_truth).strip())]
    if info.family == TAU2:
        return _tau2_turns(info)
    if info.family == TAU_BENCH:
        return _tau_bench_turns(info)
    raise GoldError(f"no gold policy for family {info.family!r}")  # pragma: no cover - family_of() checked it


def _load(info: RowInfo, load_domain: Any) -> Any:
    """The row's domain from ``load_domain``, its task checked (GoldError with the reason when either fails)."""
    from ..tau2.errors import Tau2Error

    try:
        domain = load_domain(info.domain, info.data_dir)
        domain.task(info.task_id)
    except (Tau2Error, KeyError, ValueError) as exc:
        raise GoldError(f"{info.data_source} task {info.task_id!r}: {exc}") from None
    return domain


# --------------------------------------------------------------------------------------------------- tau2
def load_tau2(info: RowInfo) -> Any:
    """The tau2 domain of a row (GoldError with the reason when it cannot be loaded)."""
    from ..tau2.domain import load_domain

    return _load(info, load_domain)


def _tau2_turns(info: RowInfo) -> list[dict[str, Any]]:
    from ..tau2.data import DONE_TOOL

    domain = load_tau2(info)
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


# ---------------------------------------------------------------------------------------------- tau-bench
def load_tau_bench(info: RowInfo) -> Any:
    """The tau-bench domain of a row (GoldError with the reason when it cannot be loaded)."""
    from ..tau_bench.domain import load_domain

    return _load(info, load_domain)


def _confirm_text(writes: Sequence[Mapping[str, Any]]) -> str:
    steps = "; ".join(f"{a['name']} {dumps_args(a.get('kwargs') or {})}" for a in writes)
    return f"Before I make any change, please confirm that I should do the following: {steps}. Shall I proceed?"


def _tau_bench_turns(info: RowInfo) -> list[dict[str, Any]]:
    from ..tau_bench.environment import RESPOND_ACTION

    domain = load_tau_bench(info)
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
