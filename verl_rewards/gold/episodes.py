"""Play the gold turns in our environments and score the result with our own reward.

:func:`play_gold` runs a row's :func:`~verl_rewards.gold.policy.gold_assistant_turns` the way its loop would, through
the row's benchmark record (:class:`verl_rewards.benchmark.GoldPlay`; what the loops share is
:mod:`verl_rewards.engine.gold`):

* solo tau2 and tau-bench instruction rows (verl's ``tool_agent``): each turn's calls run on the trajectory's
  session (:class:`~verl_rewards.tau2.verl_tools.Tau2Session` / ``TauBenchSession``, the very objects our verl
  tools drive), a text-only turn ends the episode, and the trajectory is what the session recorded (frozen at
  ``done`` or a transfer);
* normal-mode rows (``tau2_agent``, ``tau_bench_agent``): the conversation engine of
  :mod:`verl_rewards.engine.conversation` with the gold turns as the agent and a user backend (by default
  the loop's scripted user, :func:`~verl_rewards.tau2.normal.users.default_script` /
  :func:`~verl_rewards.tau_bench.normal.default_script`);
* one-turn rows (ToolRL, a benchmark without ``play``): the prompt and the gold answer.

:func:`score_episodes` scores episodes through the manager's scoring core (:func:`verl_rewards.offline.score_samples`:
the same routing, reward functions and options as in training), so "gold" means gold under our reward.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.gold import TRAJECTORY_ID
from .policy import gold_assistant_turns
from .rows import RowInfo, benchmark_of_info, plain, row_info


@dataclass
class GoldEpisode:
    """One played gold episode.

    ``messages`` is the agent's side (its system prompt, what it was shown, what it sent: the SFT conversation);
    ``trajectory`` is what the reward reads (normal mode: with the greeting, the user's tool calls and their
    results); ``termination`` is the loop's termination reason (None for one-turn rows and instruction replies).
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
    from ..engine.conversation import DEFAULT_SEED, trial_seeds

    plain_row: dict[str, Any] = plain(row)
    info = row_info(plain_row, data_dir)
    turns = gold_assistant_turns(plain_row, data_dir)
    gold = benchmark_of_info(info).gold
    assert gold is not None  # row_info() only reads rows of benchmarks with a gold policy
    if gold.play is None:
        messages = [*info.prompt, *turns]
        return GoldEpisode(info, plain_row, turns, messages, messages)
    seed = trial_seeds(DEFAULT_SEED, 1)[0] if seed is None else seed
    played = await gold.play(info, turns, user, seed)
    return GoldEpisode(
        info, plain_row, turns, played.messages, played.trajectory, termination=played.termination, extra=played.extra
    )


def gold_conversation(row: Mapping[str, Any], user: Any = None, *, data_dir: str | None = None) -> list[dict[str, Any]]:
    """The agent's full message list (system, user, assistant, tool observations with tool-call ids) when the gold
    turns of ``row`` are played in our environments (normal mode: against ``user``, default the scripted user)."""
    return play_gold(row, user, data_dir=data_dir).messages


# ---------------------------------------------------------------------------------------------- scoring
def reward_kwargs_for(data_dir: str | None = None, family: str | None = None) -> dict[str, Any]:
    """``reward.reward_kwargs`` for scoring gold episodes of benchmark ``family`` (its data folder, when given)."""
    from ..catalog import benchmark_named

    found = benchmark_named(family) if family else None
    return found.reward_kwargs(data_dir) if found is not None else {}


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
    """The reward a gold episode of this row must score (its benchmark's :attr:`GoldPlay.reward`: 1.0 for tau2 and
    tau-bench, ToolRL's maximum of the row for ToolRL)."""
    gold = benchmark_of_info(info).gold
    assert gold is not None
    return gold.reward(info)
