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


def test_star_import_of_every_package_and_module_works():
    """``from x import *`` works for every package and every module that lists ``__all__``: each listed name
    exists, once."""
    import ast

    from repo_paths import REPO

    names = ["verl_rewards"]
    for path in sorted((REPO / "verl_rewards").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lists_all = any(
            isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)
            for node in tree.body
        )
        if name != "verl_rewards" and (is_package or lists_all):
            names.append(name)
        folder = ".".join(parts[:-1])
        if not (path.parent / "__init__.py").exists() and folder not in names:  # a namespace package
            names.append(folder)
    assert {"verl_rewards.tau2.normal", "verl_rewards.scoring", "verl_rewards.scoring.executors.process"} <= set(names)
    for name in names:
        namespace: dict[str, object] = {}
        exec(f"from {name} import *", namespace)  # noqa: S102 - a fixed module name, the point of the test
        exported = list(getattr(sys.modules[name], "__all__", ()))
        assert len(exported) == len(set(exported)), (name, exported)
        for item in exported:
            assert item in namespace, (name, item)
