"""Play the gold turns in our environments and score the result with our own reward.

:func:`play_gold` runs a row's :func:`~verl_rewards.gold.policy.gold_assistant_turns` the way its loop would:

* solo tau2 and tau-bench instruction rows (verl's ``tool_agent``): each turn's calls run on the trajectory's
  session (:class:`~verl_rewards.tau2.verl_tools.Tau2Session` / ``TauBenchSession``, the very objects our verl
  tools drive), a text-only turn ends the episode, and the trajectory is what the session recorded (frozen at
  ``done`` or a transfer);
* normal-mode rows (``tau2_agent``, ``tau_bench_agent``): the conversation engine of
  :mod:`verl_rewards.engine.conversation` with the gold turns as the agent and a user backend (by default
  the loop's scripted user, :func:`~verl_rewards.tau2.normal.users.default_script` /
  :func:`~verl_rewards.tau_bench.normal.default_script`);
* ToolRL rows: the prompt and the ground-truth answer.

:func:`score_episodes` scores episodes through the manager's scoring core (:func:`verl_rewards.offline.score_samples`:
the same routing, reward functions and options as in training), so "gold" means gold under our reward.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .policy import gold_assistant_turns, load_tau2, load_tau_bench
from .rows import TAU2, TAU_BENCH, TOOLRL, GoldError, RowInfo, plain, row_info

TRAJECTORY_ID = "gold"


@dataclass
class GoldEpisode:
    """One played gold episode.

    ``messages`` is the agent's side (its system prompt, what it was shown, what it sent: the SFT conversation);
    ``trajectory`` is what the reward reads (normal mode: with the greeting, the user's tool calls and their
    results); ``termination`` is the loop's termination reason (None for ToolRL and instruction replies).
    """

    info: RowInfo
    row: dict[str, Any]
    turns: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    trajectory: list[dict[str, Any]]
    termination: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def scoring_row(self) -> dict[str, Any]:
        """The row the offline scorer reads: the task row, the recorded ``tool_extra_fields`` and the response."""
        extra_info = dict(self.row.get("extra_info") or {})
        tool_extra: dict[str, Any] = {"messages": self.trajectory, "trajectory_id": TRAJECTORY_ID}
        if self.termination is not None:
            tool_extra["termination"] = self.termination
            extra_info["termination"] = self.termination  # the manager merges tool_extra_fields into extra_info
        last: dict[str, Any] = next((m for m in reversed(self.messages) if m.get("role") == "assistant"), {})
        return {
            "data_source": self.info.data_source,
            "reward_model": self.row.get("reward_model"),
            "extra_info": extra_info,
            "tool_extra_fields": tool_extra,
            "raw_prompt": self.info.prompt,
            "response": str(last.get("content") or ""),
        }


class _GoldAgent:
    """Plays the gold turns in order, whatever it is shown; an empty message once they are used up (the engine
    ends the run as ``agent_error``: the gold turns and the user did not line up)."""

    def __init__(self, turns: Sequence[dict[str, Any]]):
        self.turns = list(turns)

    async def reply(self, messages: list[dict[str, Any]]) -> Any:
        from ..engine.conversation import Reply

        if not self.turns:
            return Reply(content="")
        turn = self.turns.pop(0)
        calls = [
            {"name": c["function"]["name"], "arguments": dict(c["function"]["arguments"])}
            for c in turn.get("tool_calls") or ()
        ]
        return Reply(content=turn.get("content") or None, tool_calls=calls)


def _clean(message: Mapping[str, Any]) -> dict[str, Any]:
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


def play_gold(
    row: Mapping[str, Any], user: Any = None, *, data_dir: str | None = None, seed: int | None = None
) -> GoldEpisode:
    """Play ``row``'s gold turns (see the module doc). ``user``: a user player (``async reply(request)``) for
    normal-mode rows, default the scripted user; ``seed``: the user seed (default tau2's first trial seed).
    Runs its own event loop: inside one, await :func:`play_gold_async`."""
    return asyncio.run(play_gold_async(row, user, data_dir=data_dir, seed=seed))


async def play_gold_async(
    row: Mapping[str, Any], user: Any = None, *, data_dir: str | None = None, seed: int | None = None
) -> GoldEpisode:
    """:func:`play_gold` on the caller's event loop."""
    plain_row: dict[str, Any] = plain(row)
    info = row_info(plain_row, data_dir)
    turns = gold_assistant_turns(plain_row, data_dir)
    if info.family == TOOLRL:
        messages = [*info.prompt, *turns]
        return GoldEpisode(info, plain_row, turns, messages, messages)
    if info.mode in ("solo", "instruction"):
        return _play_tool_agent(info, plain_row, turns)
    return await _play_normal(info, plain_row, turns, user, seed)


def gold_conversation(row: Mapping[str, Any], user: Any = None, *, data_dir: str | None = None) -> list[dict[str, Any]]:
    """The agent's full message list (system, user, assistant, tool observations with tool-call ids) when the gold
    turns of ``row`` are played in our environments (normal mode: against ``user``, default the scripted user)."""
    return play_gold(row, user, data_dir=data_dir).messages


# ------------------------------------------------------------------------------------------- tool_agent
def _play_tool_agent(info: RowInfo, row: dict[str, Any], turns: list[dict[str, Any]]) -> GoldEpisode:
    if info.family == TAU2:
        from ..tau2.verl_tools import Tau2Session

        session: Any = Tau2Session(load_tau2(info), info.task_id, {}, [], TRAJECTORY_ID)
    else:
        from ..tau_bench.verl_tools import TauBenchSession

        session = TauBenchSession(load_tau_bench(info), info.task_id, {}, [], TRAJECTORY_ID)
    messages: list[dict[str, Any]] = [dict(m) for m in info.prompt]
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
    trajectory = [_clean(m) for m in session.extra["messages"]]
    return GoldEpisode(
        info,
        row,
        turns,
        [_clean(m) for m in messages],
        trajectory,
        termination=session.extra.get("termination"),
        extra={"action_log": session.extra.get("action_log", [])},
    )


# ------------------------------------------------------------------------------------------- normal mode
async def _play_normal(
    info: RowInfo, row: dict[str, Any], turns: list[dict[str, Any]], user: Any, seed: int | None
) -> GoldEpisode:
    from ..engine.conversation import DEFAULT_SEED, trial_seeds
    from ..engine.users import ScriptedUser

    seed = trial_seeds(DEFAULT_SEED, 1)[0] if seed is None else seed
    system = next((m.get("content") for m in info.prompt if m.get("role") == "system"), None)
    if info.family == TAU2:
        from ..engine.users import UserConfig
        from ..tau2.normal.prompts import user_scenario_text, user_system_prompt, user_tool_schemas
        from ..tau2.normal.users import script_for

        domain = load_tau2(info)
        task = domain.task(info.task_id)
        if task.history:
            raise GoldError(f"{info.data_source} task {task.id!r} starts from a message history (not in normal mode)")
        if user is None:
            user = ScriptedUser(script_for(UserConfig(backend="scripted"), domain, task))
        from ..engine.conversation import Conversation

        scenario = info.extra_info.get("user_scenario") or user_scenario_text(task)
        conv = Conversation(
            domain.make_env(task.id),
            user,
            user_system_prompt=user_system_prompt(domain, scenario),
            user_tools=user_tool_schemas(domain),
            agent_system_prompt=system,
            seed=seed,
        )
    else:
        from ..tau_bench.normal import default_script, open_conversation

        tb_domain = load_tau_bench(info)
        tb_task = tb_domain.task(info.task_id)
        if user is None:
            user = ScriptedUser(default_script(tb_task))
        conv = open_conversation(tb_domain, tb_task.id, user, seed=seed, agent_system_prompt=False)
        if system is not None:
            conv.agent_view.insert(0, {"role": "system", "content": system})
    await conv.run(_GoldAgent(turns))
    return GoldEpisode(
        info,
        row,
        turns,
        [_clean(m) for m in conv.agent_view],
        [_clean(m) for m in conv.trajectory],
        termination=conv.termination,
        extra=conv.extra_fields() | {"messages": None},
    )


# ---------------------------------------------------------------------------------------------- scoring
def reward_kwargs_for(data_dir: str | None = None, family: str | None = None) -> dict[str, Any]:
    """``reward.reward_kwargs`` for scoring gold episodes (the data folder of the family, when given)."""
    if not data_dir or family not in (TAU2, TAU_BENCH):
        return {}
    return {family: {"data_dir": data_dir}}


def score_episodes(
    episodes: Iterable[GoldEpisode], reward_kwargs: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Score episodes with our reward (the manager's scoring core); one ``{"reward", **extras}`` per episode."""
    from ..offline import score_samples
    from ..scoring.sample import Sample

    episodes = list(episodes)
    samples = []
    for episode in episodes:
        srow = episode.scoring_row()
        samples.append(Sample.from_text(srow, response=srow["response"]))
    result = score_samples(samples, dict(reward_kwargs or {}))
    return [{"reward": r, **extra} for r, extra in zip(result.rewards, result.extras, strict=True)]


def gold_reward(info: RowInfo) -> float:
    """The reward a gold episode of this row must score: 1.0 for tau2 / tau-bench; for ToolRL the maximum of the
    row under ToolRL's environment options at step 0: the top of the format range, plus the top of the correctness
    range when the ground truth has a ``<tool_call>`` (ToolRL scores correctness 0 otherwise). The length term,
    when on, depends on the think text and is left out."""
    if info.family == TOOLRL:
        from ..toolrl.options import ToolRLOptions
        from ..toolrl.ranges import correctness_range, format_range

        options = ToolRLOptions.from_config(None)
        top = format_range(options, 0)[1]
        if "<tool_call>" in str(info.ground_truth):
            top += correctness_range(options, 0)[1]
        return float(top)
    return 1.0
