"""Importing user reward modules named in config: module names (``my_pkg.rewards``) or file paths.

A file is imported once per process under a stable module name derived from its resolved path, so loading
it again (e.g. through both ``reward.reward_kwargs.modules`` and ``reward.custom_reward_function.path``) does
not re-register its rewards.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from types import ModuleType


class RewardModuleError(ImportError):
    """A configured reward module could not be imported."""


def _file_module_name(path: str) -> str:
    digest = hashlib.sha1(path.encode("utf-8")).hexdigest()[:12]
    stem = os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    return f"verl_rewards_user.{stem}_{digest}"


def load_module(spec: str) -> ModuleType:
    """Import one module given by dotted name, ``pkg://dotted.name``, a ``.py`` path or ``file://path``."""
    spec = str(spec).strip()
    if spec.startswith("pkg://"):
        spec = spec[len("pkg://") :]
    elif spec.startswith("file://"):
        spec = spec[len("file://") :]
    if spec.endswith(".py") or os.sep in spec or spec.startswith("."):
        path = os.path.realpath(os.path.expanduser(spec))
        if not os.path.isfile(path):
            raise RewardModuleError(f"reward module file not found: {spec}")
        name = _file_module_name(path)
        if name in sys.modules:
            return sys.modules[name]
        if "verl_rewards_user" not in sys.modules:
            pkg = ModuleType("verl_rewards_user")
            pkg.__path__ = []  # namespace for user files
            sys.modules["verl_rewards_user"] = pkg
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise RewardModuleError(f"cannot import reward module file {path}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            sys.modules.pop(name, None)
            raise RewardModuleError(f"error while importing reward module {path}: {_reason(exc)}") from exc
        return module
    try:
        return importlib.import_module(spec)
    except (Exception, SystemExit) as exc:
        raise RewardModuleError(f"cannot import reward module {spec!r}: {_reason(exc)}") from exc


def _reason(exc: BaseException) -> str:
    """Why an import failed: the exception's text, or the ``sys.exit`` a module called at import (which would
    otherwise end the process that loads it, a reward worker or ``verl-rewards check``, without a word)."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}) at import"
    return str(exc)


def load_modules(specs: Iterable[str] | str | None) -> list[ModuleType]:
    """Import every module in ``specs`` (a list, or one string; comma-separated strings are split)."""
    if specs is None:
        return []
    if isinstance(specs, str):
        specs = [s for s in specs.split(",") if s.strip()]
    return [load_module(s) for s in specs]
