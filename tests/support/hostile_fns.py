"""Scoring functions that behave badly on purpose: numbers out of range, mutated inputs, giant key names.

Loaded by path (``reward.custom_reward_function.path`` or ``reward.reward_kwargs.modules``), never imported.
"""

from __future__ import annotations

from verl_rewards import reward

_BAD = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "huge": 10**400, "f32max": 3e38}


def bad_component(solution_str, ground_truth):
    """Score 1.0 for the right answer; the declared component ``quality`` is what the response names (``nan``,
    ``inf``, ``huge`` = a 400-digit integer, ``f32max`` = 3e38), else the score."""
    score = float(solution_str.strip() == str(ground_truth).strip())
    text = solution_str.strip()
    return {"score": score, "quality": _BAD.get(text, score), "steps": 2}


bad_component.extra_keys = ("quality", "steps")


def long_key(solution_str):
    """An undeclared component whose name is 5 million characters long, next to a normal one."""
    return {"score": 1.0, "k" * 5_000_000: 1.0, "fine": 2.0}


def mutates_step_dict(cur_step_dict, prev_step_dict):
    """Raises the value estimate it was given (would farm its own C-1 term), then scores 0.0."""
    for step in cur_step_dict if isinstance(cur_step_dict, list) else [cur_step_dict]:
        step["value_est"] = 100.0
    prev_step_dict.clear()
    return 0.0


def pops_ground_truth(ground_truth, extra_info):
    """Takes the answer out of ``ground_truth`` (a dict) and the tags out of ``extra_info``: 1.0 when both were
    still there, so a sibling that shares those objects with an earlier sample scores 0.0."""
    answer = ground_truth.pop("answer", None)
    tags = extra_info["tags"]
    had_tag = bool(tags) and tags.pop() == "t"
    return float(answer == "42" and had_tag)


def recorded_trajectory(trajectory, id, termination):
    """1.0 when the trajectory is the one the agent loop recorded (three messages ending in "done") and the id
    is the recorded trajectory id."""
    return float(len(trajectory) == 3 and trajectory[-1]["content"] == "done" and id == "traj-7" and bool(termination))


@reward(name="hostile_one")
def hostile_one(final_response: str) -> float:
    """A registered reward a row can name in its ``reward_fn`` field."""
    return 1.0
