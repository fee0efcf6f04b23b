"""Shared by the benchmarks: several of verl's RewardLoopManagers side by side in one local Ray cluster."""

from __future__ import annotations

from typing import Any


def start_manager(prefix: str, overrides: list[str], tok_dir: str, workers: int, warm: Any) -> Any:
    """verl's RewardLoopManager with actor names prefixed (so managers coexist), started and warmed up."""
    import ray
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    from verl_rewards.verl_config import compose_config

    class Manager(RewardLoopManager):
        def _init_reward_loop_workers(self) -> None:
            self.reward_loop_workers = [
                self.reward_loop_workers_class.options(name=f"{prefix}_reward_loop_worker_{i}").remote(
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
