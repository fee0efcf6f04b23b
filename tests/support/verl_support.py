"""verl's real configuration for tests: ``ppo_trainer.yaml`` composed with overrides (no GPU needed)."""

from __future__ import annotations

from typing import Any


def compose_verl_config(overrides: list[str]) -> Any:
    """verl's real ``ppo_trainer`` config with ``overrides`` applied (Hydra compose)."""
    from verl_rewards.verl_config import compose_config

    return compose_config(overrides)
