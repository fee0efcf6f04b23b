"""Shared by the benchmarks: several of verl's RewardLoopManagers side by side in one local Ray cluster."""

from __future__ import annotations

import statistics
from typing import Any


def start_manager(
    prefix: str, overrides: list[str], tok_dir: str, workers: int, warm: Any, tree: str | None = None
) -> Any:
    """verl's RewardLoopManager with actor names prefixed (so managers coexist), started and warmed up; with
    ``tree``, its reward-loop actors import ``verl_rewards`` from that source tree (``PYTHONPATH``), so two versions
    of the package can be timed in one cluster."""
    import ray
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    from verl_rewards.verl_config import compose_config

    class Manager(RewardLoopManager):
        def _init_reward_loop_workers(self) -> None:
            env = {"runtime_env": {"env_vars": {"PYTHONPATH": tree}}} if tree is not None else {}
            self.reward_loop_workers = [
                self.reward_loop_workers_class.options(name=f"{prefix}_reward_loop_worker_{i}", **env).remote(
                    self.config, self.reward_router_address
                )
                for i in range(self.config.reward.num_workers)
            ]

    config = compose_config([f"actor_rollout_ref.model.path={tok_dir}", f"reward.num_workers={workers}", *overrides])
    manager = Manager(config)
    manager.compute_rm_score(warm)  # actor start-up, imports, tokenizer load
    ray.get([w.__ray_ready__.remote() for w in manager.reward_loop_workers])
    return manager


def stop_manager(manager: Any) -> None:
    """Kill the manager's reward-loop actors."""
    import ray

    for worker in manager.reward_loop_workers:
        ray.kill(worker)


def first_and_repeat(samples: list[Any], seconds: list[float]) -> tuple[float, float]:
    """Median ms of each task's first call, and of the later calls on that same trajectory (a group alternates
    correct and wrong trajectories, whose costs differ: repeats are compared like for like)."""
    first_of: dict[str, int] = {}
    first, repeat = [], []
    for (task_id, messages, *_), s in zip(samples, seconds, strict=True):
        if task_id not in first_of:
            first_of[task_id] = id(messages)
            first.append(s)
        elif first_of[task_id] == id(messages):
            repeat.append(s)
    return statistics.median(first) * 1e3, statistics.median(repeat) * 1e3
