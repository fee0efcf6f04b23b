"""``verl-rewards doctor``: is the plugin active here? The installed versions, the entry point, verl's plugin policy,
and whether the manager, the agent loops and the metrics hooks are registered the way a verl run would have them."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
from typing import Any

HELP = "check that the reward manager, the agent loops and the metrics hooks are active in this environment"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``doctor`` subcommand to the ``verl-rewards`` subparsers."""
    return sub.add_parser("doctor", help=HELP, description=HELP + "; exit code 0 when all are, 1 otherwise")


def run(args: argparse.Namespace) -> int:
    """0 when every check passes, 1 otherwise."""
    return doctor()


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def doctor() -> int:
    """Print whether the manager and both metrics hooks are installed in this environment; 0 if all are."""
    checks: list[tuple[str, bool, str]] = []
    print("verl-rewards doctor")
    for dist in ("verl-rewards", "verl", "torch", "ray", "transformers", "TransferQueue"):
        print(f"  {dist:<14} {_version(dist)}")
    eps = [ep for ep in importlib.metadata.entry_points(group="verl.plugins") if ep.value.startswith("verl_rewards")]
    checks.append(("entry point verl.plugins", bool(eps), eps[0].value if eps else "missing: reinstall the package"))
    raw_policy = os.getenv("VERL_USE_EXTERNAL_PLUGINS", "auto")
    policy = raw_policy.strip().lower()  # as verl/__init__.py reads it
    ep_name = eps[0].name if eps else "verl_rewards"
    allowed = policy == "auto" or (policy != "none" and ep_name in {p.strip() for p in policy.split(",")})
    fix = (
        f"unset VERL_USE_EXTERNAL_PLUGINS (or set it to auto, or add {ep_name} to its list) in every process of the run"
    )
    checks.append(("VERL_USE_EXTERNAL_PLUGINS", allowed, raw_policy if allowed else f"{raw_policy} (fix: {fix})"))

    import verl  # noqa: F401 - runs the entry points

    loaded = "verl_rewards.plugin" in sys.modules
    if loaded:
        detail = "yes"
    elif not allowed:
        detail = "no: VERL_USE_EXTERNAL_PLUGINS keeps verl from loading it"
    elif not eps:
        detail = "no: the entry point is missing (reinstall the package)"
    else:
        detail = "no: loading it failed; verl logs why at debug level (VERL_LOGGING_LEVEL=DEBUG)"
    checks.append(("plugin loaded by `import verl`", loaded, detail))
    from .. import plugin

    plugin.install()  # what follows checks our code; without verl loading the plugin, a run would have none of it
    first_plugin_check = len(checks)
    try:
        from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls

        cls = get_reward_manager_cls("contribution")
        checks.append(("reward manager 'contribution'", True, f"{cls.__module__}.{cls.__name__}"))
    except Exception as exc:  # noqa: BLE001 - report, don't crash
        checks.append(("reward manager 'contribution'", False, f"{type(exc).__name__}: {exc}"))
    try:
        from ..verl_compat import agent_loop_registry

        for loop_name in ("tau2_agent", "tau_bench_agent"):
            entry = agent_loop_registry().get(loop_name)
            checks.append(
                (f"agent loop '{loop_name}'", entry is not None, (entry or {}).get("_target_", "not registered"))
            )
    except Exception as exc:  # noqa: BLE001 - report, don't crash
        checks.append(("agent loop 'tau2_agent'", False, f"{type(exc).__name__}: {exc}"))
    try:
        from ..metrics import compute_data_metrics_hooked

        hooked = compute_data_metrics_hooked()
        checks.append(("metrics hook, legacy trainer (use_v1=False)", hooked, "compute_data_metrics wrapped"))
        from ..metrics import validation_hooked

        checks.append(("metrics hook, validation", validation_hooked(), "process_validation_metrics wrapped"))
    except Exception as exc:  # noqa: BLE001
        checks.append(("metrics hook, legacy trainer (use_v1=False)", False, f"{type(exc).__name__}: {exc}"))
    try:
        from ..metrics import v1_hooked

        hooked = v1_hooked()
        checks.append(("metrics hook, V1 trainer", hooked, "PPOTrainer._compute_metrics wrapped (every trainer_mode)"))
    except ImportError as exc:
        checks.append(("metrics hook, V1 trainer", False, f"{exc} (install verl[verl-core] for the V1 trainer)"))
    except Exception as exc:  # noqa: BLE001
        checks.append(("metrics hook, V1 trainer", False, f"{type(exc).__name__}: {exc}"))
    for name, status in sorted(plugin.STATUS.items()):
        if status.startswith("error"):
            checks.append((f"plugin hook {name}", False, status))
    if not loaded:  # doctor installed these itself; `main_ppo` would not have them
        checks[first_plugin_check:] = [
            (name, False, f"{detail}; only in this process (doctor loaded the plugin itself), not in a verl run")
            for name, _, detail in checks[first_plugin_check:]
        ]
    ok = all(passed for _, passed, _ in checks)
    for name, passed, detail in checks:
        print(f"  [{'ok' if passed else 'FAIL'}] {name}: {detail}")
    print("all good" if ok else "problems found")
    return 0 if ok else 1
