"""Rewards defined with the layer API, loaded by the tests through reward.reward_kwargs.modules."""

from __future__ import annotations

import asyncio
import math
import time

from verl_rewards import BaseReward, reward


@reward(name="t_len")
def t_len(final_response: str, length_penalty: bool, max_length: int) -> float:
    if length_penalty and len(final_response) > int(max_length):
        return 0.0
    return 1.0


@reward(name="t_fields", extra_keys=("step_seen", "n_messages", "traj_id", "source"))
def t_fields(final_response: str, ground_truth: str, step: int, id: str, trajectory: list, data_source: str) -> dict:
    return {
        "reward": float(final_response.strip() == ground_truth),
        "step_seen": step,
        "n_messages": len(trajectory),
        "traj_id": id,
        "source": data_source,
    }


class TClass(BaseReward):
    name = "t_class"
    extra_keys = ("cls_calls",)

    def __init__(self) -> None:
        self.calls = 0

    async def call(self, final_response: str) -> dict:
        self.calls += 1
        await asyncio.sleep(0)
        return {"reward": 0.5, "cls_calls": self.calls}


class CounterEnv:
    created = 0

    def __init__(self, start: int = 0) -> None:
        CounterEnv.created += 1
        self.value = start
        self.resets = 0

    def reset(self) -> None:
        self.value = 0
        self.resets += 1


@reward(name="t_env", env_cls=CounterEnv, env_kwargs={"start": 0}, pool_size=2, extra_keys=("env_resets",))
async def t_env(final_response: str, env: CounterEnv, id: str) -> dict:
    env.value += len(final_response)
    await asyncio.sleep(0.01)
    return {"reward": float(env.value), "env_resets": env.resets}


@reward(name="t_int")
def t_int(final_response: str) -> int:
    return 1


@reward(name="t_str")
def t_str(final_response: str) -> str:
    return "great"


@reward(name="t_no_reward_key")
def t_no_reward_key(final_response: str) -> dict:
    return {"f1": 1.0}


@reward(name="t_raise")
def t_raise(final_response: str) -> float:
    raise ValueError("bad reward")


@reward(name="t_nan")
def t_nan(final_response: str) -> float:
    return math.nan


@reward(name="t_hang")
def t_hang(final_response: str) -> float:
    time.sleep(30)
    return 1.0


@reward(name="t_missing")
def t_missing(final_response: str, golden_answer: str) -> float:
    return 1.0


def plain_score(data_source, solution_str, ground_truth, extra_info=None):
    """A plain verl-style function living next to @reward ones."""
    return 0.25
