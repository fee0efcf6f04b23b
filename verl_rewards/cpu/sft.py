"""verl's SFT trainer on the CPU: ``python -m verl_rewards.cpu.sft [Hydra overrides of sft_trainer_engine]``.

verl's entry point (``python -m verl.trainer.sft_trainer``, ``verl/trainer/sft_trainer.py``) opens the process
group in ``run_sft`` with ``initialize_global_process_group()``, whose backend is ``cpu:gloo,<device>:<backend>``
(``verl/utils/distributed.py``): ``cpu:gloo,cpu:gloo`` on the CPU platform, which torch rejects. This entry point
composes the very same Hydra config (``verl/trainer/config/sft_trainer_engine.yaml``), selects the CPU platform
(``VERL_PLATFORM=cpu``: the ``cpu`` platform and the CPU FSDP engine of :mod:`verl_rewards.cpu`), opens a plain
``gloo`` group (which verl's ``TrainingWorker`` then finds initialised and keeps) and runs verl's own public
``SFTTrainer`` (dataset, engine, loss, checkpoints): only the process-group line differs from ``run_sft``.

Run it as one process (``python -m``; ``torchrun --nproc_per_node=1`` works too): without ``torchrun`` it sets
``RANK=0``, ``WORLD_SIZE=1``, ``LOCAL_RANK=0`` and a free local ``MASTER_PORT``.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from .names import PLATFORM_ENV

#: verl's SFT config (``verl/trainer/config/sft_trainer_engine.yaml``)
CONFIG_PATH = "pkg://verl.trainer.config"
CONFIG_NAME = "sft_trainer_engine"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def single_process_env(environ: dict[str, str] | os._Environ[str] = os.environ) -> None:
    """The variables ``torchrun`` would set for one local process, where they are missing."""
    environ.setdefault("RANK", "0")
    environ.setdefault("LOCAL_RANK", "0")
    environ.setdefault("WORLD_SIZE", "1")
    environ.setdefault("LOCAL_WORLD_SIZE", "1")
    environ.setdefault("MASTER_ADDR", "127.0.0.1")
    environ.setdefault("MASTER_PORT", str(_free_port()))


def run_sft_cpu(config: Any) -> None:
    """verl's ``run_sft`` with a gloo process group: ``SFTTrainer(config).fit()`` on the CPU."""
    import torch
    from omegaconf import open_dict
    from verl.trainer.sft_trainer import SFTTrainer
    from verl.utils.distributed import destroy_global_process_group

    from .training import init_gloo_process_group

    with open_dict(config):
        config.trainer.device = "cpu"
    torch.set_num_threads(max(1, int(os.environ.get("VERL_REWARDS_TRAIN_THREADS", "1"))))
    init_gloo_process_group()
    try:
        SFTTrainer(config=config).fit()
    finally:
        destroy_global_process_group()


def main() -> None:
    """Compose verl's SFT config from the command line (Hydra) and train on the CPU."""
    import hydra

    os.environ[PLATFORM_ENV] = "cpu"  # before verl is imported: the plugin arms the CPU backend then
    single_process_env()

    @hydra.main(config_path=CONFIG_PATH, config_name=CONFIG_NAME, version_base=None)
    def _main(config: Any) -> None:
        run_sft_cpu(config)

    _main()


if __name__ == "__main__":
    main()
