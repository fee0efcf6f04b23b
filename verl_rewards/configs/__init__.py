"""Hydra config group ``verl_rewards``: ``hydra.searchpath=[pkg://verl_rewards.configs] +verl_rewards=...``."""
