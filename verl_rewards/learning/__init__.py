"""``verl-rewards learn``: a tiny model taught by our reward on the CPU (verl's SFT trainer, then GRPO through
``main_ppo`` on sampled rollouts), measured before SFT, after SFT and after GRPO on fixed validation rows."""
