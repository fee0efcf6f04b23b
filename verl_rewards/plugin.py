"""verl plugin entry point (``verl.plugins`` group): loaded on every ``import verl``, in every process.

It stays cheap: nothing heavy is imported here. Instead it arms post-import hooks, so that

* when verl's reward-loop registry is imported, the ``contribution`` manager registers itself;
* when verl's reward-loop module is imported, ``RewardLoopManager`` (built in the task runner) first checks a
  ``contribution`` manager's ``reward.reward_kwargs``, so a bad value stops the run at start-up rather than inside
  every reward worker;
* when verl's agent-loop module is imported, the ``tau2_agent`` loop (tau2 normal mode) and the
  ``tau_bench_agent`` loop (tau-bench v1 normal mode) join its registry (entries naming our classes; a class is
  imported only when a row selects it);
* when ``verl.trainer.ppo.metric_utils`` is imported, the legacy-trainer ``reward_extra/*`` hook wraps
  ``compute_data_metrics`` and the validation hook wraps ``process_validation_metrics``;
* when ``verl.trainer.ppo.v1.trainer_base`` is imported, the V1 trainer's ``_compute_metrics`` and GDPO input
  are patched (every built-in ``trainer_mode`` keeps its verl class; see :mod:`verl_rewards.metrics`);
* when either trainer module is imported, its ``_val_metrics_update`` also logs pass^k and tau2's per-source
  statistics (:mod:`verl_rewards.evaluation.validation`);
* with ``VERL_PLATFORM=cpu`` only: the CPU backend registers its platform, rollout, trainer mode and engine as
  the verl modules holding those registries are imported (:mod:`verl_rewards.cpu`).

verl swallows plugin import errors at debug level, so every failure here is logged as an error with its
traceback and kept in :data:`STATUS` for ``verl-rewards doctor``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import logging
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

logger = logging.getLogger("verl_rewards")

#: hook name -> "ok" | "pending" | "error: ..."
STATUS: dict[str, str] = {}
_HOOKS: dict[str, list[tuple[str, Callable[[ModuleType], Any]]]] = {}
_LOCK = threading.RLock()


def _run(name: str, fn: Callable[[ModuleType], Any], module: ModuleType) -> None:
    try:
        fn(module)
        STATUS[name] = "ok"
    except Exception as exc:  # noqa: BLE001 - reported loudly, never breaks `import verl`
        STATUS[name] = f"error: {type(exc).__name__}: {exc}"
        logger.error("verl-rewards: hook %s failed; this part of the plugin is inactive", name, exc_info=True)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Runs registered callbacks right after a watched module finishes executing."""

    def __init__(self) -> None:
        self._busy: set[str] = set()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in _HOOKS or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._busy.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        original_exec = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original_exec(module)
            for name, fn in list(_HOOKS.get(fullname, [])):
                _run(name, fn, module)

        spec.loader = _LoaderProxy(loader, exec_module)
        return spec


class _LoaderProxy(importlib.abc.Loader):
    def __init__(self, loader: Any, exec_module: Callable[[ModuleType], None]):
        self._loader = loader
        self.exec_module = exec_module  # type: ignore[method-assign, assignment]

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def __getattr__(self, item: str) -> Any:
        return getattr(self._loader, item)


_FINDER = _PostImportFinder()


def when_imported(module_name: str, name: str, fn: Callable[[ModuleType], Any]) -> None:
    """Call ``fn(module)`` once ``module_name`` is imported (now, if it already is)."""
    with _LOCK:
        STATUS.setdefault(name, "pending")
        module = sys.modules.get(module_name)
        if module is not None and getattr(module, "__spec__", None) is not None and not _initialising(module):
            _run(name, fn, module)
            return
        _HOOKS.setdefault(module_name, []).append((name, fn))
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)


def _initialising(module: ModuleType) -> bool:
    spec = getattr(module, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def _register_manager(_: ModuleType) -> None:
    importlib.import_module("verl_rewards.manager.reward_manager")


def _startup_check(module: ModuleType) -> None:
    from .manager.config import install_startup_check  # not reward_manager: that module imports this one of verl's

    install_startup_check(module.RewardLoopManager)


def _register_agent_loop(module: ModuleType) -> None:
    from .tau2.normal import AGENT_LOOP_NAME, AGENT_LOOP_TARGET
    from .tau_bench.normal import AGENT_LOOP_NAME as TB_NAME
    from .tau_bench.normal import AGENT_LOOP_TARGET as TB_TARGET
    from .verl_compat import agent_loop_registry

    registry = agent_loop_registry(module)
    registry.setdefault(AGENT_LOOP_NAME, {"_target_": AGENT_LOOP_TARGET})
    registry.setdefault(TB_NAME, {"_target_": TB_TARGET})


def _hook_metrics(module: ModuleType) -> None:
    from .metrics import install_compute_data_metrics_hook, install_validation_hook

    install_compute_data_metrics_hook(module)
    install_validation_hook(module)


def _hook_v1_trainer(module: ModuleType) -> None:
    from .metrics import install_v1_hooks

    install_v1_hooks(module)


def _hook_validation_legacy(module: ModuleType) -> None:
    from .evaluation.validation import install_legacy_trainer_hook

    install_legacy_trainer_hook(module)


def _hook_validation_v1(module: ModuleType) -> None:
    from .evaluation.validation import install_v1_trainer_hook

    install_v1_trainer_hook(module)


def install() -> None:
    """Arm every hook (idempotent)."""
    if STATUS.get("installed") == "ok":
        return
    when_imported("verl.experimental.reward_loop.reward_manager", "manager", _register_manager)
    when_imported("verl.experimental.reward_loop.reward_loop", "manager_startup_check", _startup_check)
    when_imported("verl.experimental.agent_loop.agent_loop", "agent_loop", _register_agent_loop)
    when_imported("verl.trainer.ppo.metric_utils", "metrics_legacy_trainer", _hook_metrics)
    when_imported("verl.trainer.ppo.v1.trainer_base", "metrics_v1_trainer", _hook_v1_trainer)
    when_imported("verl.trainer.ppo.ray_trainer", "validation_legacy_trainer", _hook_validation_legacy)
    when_imported("verl.trainer.ppo.v1.trainer_base", "validation_v1_trainer", _hook_validation_v1)
    from . import cpu

    if cpu.selected():  # VERL_PLATFORM=cpu: the CPU backend (verl_rewards.cpu)
        for module_name, name, fn in cpu.HOOKS:
            when_imported(module_name, name, fn)
    STATUS["installed"] = "ok"


try:
    install()
except Exception:  # noqa: BLE001 - verl would hide this at debug level
    STATUS["installed"] = "error"
    logger.error("verl-rewards: plugin failed to install; the contribution manager is unavailable", exc_info=True)
