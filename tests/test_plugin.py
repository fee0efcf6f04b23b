"""The verl plugin entry point: post-import hooks run once a watched module is imported, and a failing hook
is logged as an error and reported by doctor's STATUS (verl itself would hide it at debug level)."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest


def test_failing_hook_is_logged_loudly_and_recorded(caplog):
    from verl_rewards import plugin

    def broken(module):
        raise RuntimeError("hook exploded")

    with caplog.at_level(logging.ERROR, logger="verl_rewards"):
        plugin.when_imported("json", "test_broken_hook", broken)  # json is imported: runs now
    assert plugin.STATUS["test_broken_hook"].startswith("error: RuntimeError: hook exploded")
    assert any("test_broken_hook" in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)


@pytest.mark.slow
def test_hooks_run_after_the_watched_module_is_imported_in_a_fresh_process():
    code = textwrap.dedent(
        """
        import sys
        import verl  # runs the entry point
        assert "verl.trainer.ppo.metric_utils" not in sys.modules
        from verl_rewards import plugin
        assert plugin.STATUS["metrics_legacy_trainer"] == "pending"
        from verl.trainer.ppo import metric_utils
        assert plugin.STATUS["metrics_legacy_trainer"] == "ok"
        assert metric_utils.compute_data_metrics.__verl_rewards_hook__
        from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls
        print(get_reward_manager_cls("contribution").__name__)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ContributionRewardManager")


@pytest.mark.slow
def test_every_hook_installs_when_our_manager_module_is_imported_before_verl():
    """Importing the manager first makes verl's reward loop load inside it; the start-up check must still install."""
    code = textwrap.dedent(
        """
        from verl_rewards.manager import reward_manager  # imports verl's reward loop from inside our module
        from verl_rewards import plugin
        bad = {k: v for k, v in plugin.STATUS.items() if v.startswith("error")}
        assert not bad, bad
        assert plugin.STATUS["manager_startup_check"] == "ok", plugin.STATUS
        from verl.experimental.reward_loop.reward_loop import RewardLoopManager
        assert RewardLoopManager.__init__._verl_rewards_startup_check
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


def test_star_import_of_every_package_works():
    """Every name a package lists in ``__all__`` exists (``from package import *`` never raises)."""
    import pkgutil

    import verl_rewards

    packages = [m.name for m in pkgutil.walk_packages(verl_rewards.__path__, "verl_rewards.") if m.ispkg]
    assert "verl_rewards.tau2.normal" in packages
    for name in ["verl_rewards", *packages]:
        namespace: dict[str, object] = {}
        exec(f"from {name} import *", namespace)  # noqa: S102 - a fixed package name, the point of the test
        module = sys.modules[name]
        for exported in getattr(module, "__all__", ()):
            assert exported in namespace, (name, exported)
