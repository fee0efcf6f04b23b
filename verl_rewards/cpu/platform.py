"""The ``cpu`` platform for verl's ``PlatformRegistry`` (selected with ``VERL_PLATFORM=cpu``).

verl 0.9.1 has no CPU platform: detection falls back to ``nvidia`` (``verl/plugin/platform/platform_manager.py``)
and ``auto_set_device`` then rewrites ``trainer.device=cpu`` to ``cuda`` (``verl/utils/device.py``). This platform
reports ``cpu`` everywhere. Its device module is ``torch.cpu`` plus the calls verl makes on an accelerator module
(``empty_cache``, ``max_memory_allocated``, ``mem_get_info``, RNG state, ...), all no-ops or host values; its
``current_device()`` is ``"cpu"``, because an int is read as an accelerator index (``verl/utils/fsdp_utils.py``).
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from verl.plugin.platform import PlatformBase, PlatformRegistry

PLATFORM_NAME = "cpu"


def _host_memory() -> tuple[int, int]:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in fh if line.strip()}
        return info.get("MemAvailable", 0), info.get("MemTotal", 0)
    except (OSError, ValueError, IndexError):
        return 0, 0


def _device_module() -> types.ModuleType:
    """``torch.cpu`` with the accelerator calls verl makes filled in."""
    mod = types.ModuleType("verl_rewards_cpu_device")
    for name in dir(torch.cpu):
        if not name.startswith("_"):
            setattr(mod, name, getattr(torch.cpu, name))

    def zero(*_: Any, **__: Any) -> int:
        return 0

    def nothing(*_: Any, **__: Any) -> None:
        return None

    extra: dict[str, Any] = {
        "current_device": lambda: "cpu",
        "device_count": lambda: 1,
        "is_available": lambda: True,
        "set_device": nothing,
        "synchronize": nothing,
        "empty_cache": nothing,
        "ipc_collect": nothing,
        "reset_peak_memory_stats": nothing,
        "set_per_process_memory_fraction": nothing,
        "memory_allocated": zero,
        "memory_reserved": zero,
        "max_memory_allocated": zero,
        "max_memory_reserved": zero,
        "mem_get_info": lambda *_: _host_memory(),
        "get_device_name": lambda *_: "cpu",
        "get_rng_state": lambda *_: torch.get_rng_state(),
        "set_rng_state": lambda state, *_: torch.set_rng_state(state),
        "manual_seed": lambda seed: torch.manual_seed(seed),
        "manual_seed_all": lambda seed: torch.manual_seed(seed),
    }
    for name, fn in extra.items():
        setattr(mod, name, fn)
    return mod


_DEVICE = _device_module()


@PlatformRegistry.register(platform=PLATFORM_NAME)
class PlatformCPU(PlatformBase):
    """CPU only: gloo for collectives, no accelerator, no profiler. Never auto-detected (``VERL_PLATFORM=cpu``)."""

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> types.ModuleType:
        return _DEVICE

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        return False  # only by name: a machine with an accelerator must never pick the CPU by accident

    def current_device(self) -> Any:  # verl reads an int as an accelerator index
        return "cpu"

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"

    @contextmanager
    def nvtx_range(self, msg: str) -> Iterator[None]:
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "GPU"  # verl's resource pools always ask Ray for accelerators: smoke runs declare logical GPUs

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None
