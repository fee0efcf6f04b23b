"""The CPU backend's names, in one place (imported by every part; imports nothing)."""

PLATFORM_ENV = "VERL_PLATFORM"
ROLLOUT_NAME = "hf_cpu"
TRAINER_MODE = "cpu_sync"
ADAPTER_TARGET = "verl_rewards.cpu.rollout.HFCpuServerAdapter"
