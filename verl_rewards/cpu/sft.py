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

One addition to verl's config: ``+trainer.target_loss=L`` (with ``+trainer.target_loss_window=W``, default 10) ends
the training at the first step where the mean train loss of the last ``W`` steps is at most ``L``, at most
``trainer.total_training_steps``; that step is saved as verl saves a last step (``global_step_<step>`` and
``latest_checkpointed_iteration.txt``). Runs from different weights then stop equally trained rather than after
equally many steps (``verl-rewards learn --sft-target-loss``).
"""

from __future__ import annotations

import os
import socket
from collections import deque
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


#: the train-loss window of ``+trainer.target_loss`` when ``+trainer.target_loss_window`` is not given
TARGET_LOSS_WINDOW = 10


class LossTarget:
    """Stop at the first step whose mean train loss over the last ``window`` steps is at most ``target``."""

    def __init__(self, target: float, window: int = TARGET_LOSS_WINDOW):
        if not target > 0:
            raise ValueError(f"trainer.target_loss must be a positive number, got {target!r}")
        if window < 1:
            raise ValueError(f"trainer.target_loss_window must be at least 1, got {window!r}")
        self.target, self.window = float(target), int(window)
        self.losses: deque[float] = deque(maxlen=self.window)
        self.stopped_at: int | None = None

    def __call__(self, step: int, loss: float) -> bool:
        self.losses.append(loss)
        if len(self.losses) == self.window and sum(self.losses) / self.window <= self.target:
            self.stopped_at = step
            return True
        return False


def loss_target(config: Any) -> LossTarget | None:
    """``trainer.target_loss`` / ``trainer.target_loss_window`` taken out of verl's config (verl knows neither)."""
    from omegaconf import open_dict

    with open_dict(config):
        target = config.trainer.pop("target_loss", None)
        window = config.trainer.pop("target_loss_window", TARGET_LOSS_WINDOW)
    if target is None:
        return None
    try:
        return LossTarget(float(target), int(window))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{exc} (trainer.target_loss={target!r}, trainer.target_loss_window={window!r})") from None


def run_sft_cpu(config: Any) -> None:
    """verl's ``run_sft`` with a gloo process group: ``SFTTrainer(config).fit()`` on the CPU, ended early at
    ``trainer.target_loss`` when it is set."""
    import torch
    from omegaconf import open_dict
    from verl.trainer.sft_trainer import SFTTrainer
    from verl.utils.distributed import destroy_global_process_group

    from ..verl_compat import end_sft_when
    from .training import init_gloo_process_group

    target = loss_target(config)
    with open_dict(config):
        config.trainer.device = "cpu"
    torch.set_num_threads(max(1, int(os.environ.get("VERL_REWARDS_TRAIN_THREADS", "1"))))
    init_gloo_process_group()
    try:
        trainer = SFTTrainer(config=config)
        if target is not None:
            end_sft_when(trainer, target)
        trainer.fit()
        if target is not None:
            reached = f"at step {target.stopped_at}" if target.stopped_at else "not reached: ran every step"
            print(f"verl_rewards.cpu.sft: target loss {target.target:g} (mean of {target.window} steps) {reached}")
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
