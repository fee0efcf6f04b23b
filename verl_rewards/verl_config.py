"""verl 0.9.1's trainer config composed in-process, exactly as ``main_ppo`` composes it (no GPU needed)."""

from __future__ import annotations

import os
from typing import Any


def verl_config_dir() -> str:
    """The folder of verl's Hydra configs (``ppo_trainer.yaml`` ...)."""
    import verl

    return os.path.join(os.path.dirname(verl.__file__), "trainer", "config")


def compose_config(overrides: list[str]) -> Any:
    """verl's ``ppo_trainer`` config with Hydra ``overrides`` applied (validated like the command line)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=verl_config_dir(), version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)
