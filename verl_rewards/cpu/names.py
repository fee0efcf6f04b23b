"""The CPU backend's names, in one place (imported by every part; imports nothing)."""

PLATFORM_ENV = "VERL_PLATFORM"
ROLLOUT_NAME = "hf_cpu"
TRAINER_MODE = "cpu_sync"
ADAPTER_TARGET = "verl_rewards.cpu.rollout.HFCpuServerAdapter"
CHECKPOINT_BACKEND = "cpu_gloo"
#: verl's V1 trainer mode -> the CPU backend's trainer of that mode (``smoke --trainer-mode``)
TRAINER_MODES = {"sync": "cpu_sync", "colocate_async": "cpu_colocate_async", "separate_async": "cpu_separate_async"}
