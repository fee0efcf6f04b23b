"""The names renamed in 0.2.0 still work for one release: each old path gives the new object and warns
(CHANGELOG.md, "Deprecated"). One test per alias; plus the one rule every registry follows for a taken name."""

from __future__ import annotations

import importlib
import logging
import sys

import pytest


def _import_fresh(name: str):
    """Import ``name`` as a first import would (its deprecation warning is emitted once per import)."""
    for key in [k for k in sys.modules if k == name or k.startswith(f"{name}.")]:
        del sys.modules[key]
    return importlib.import_module(name)


def test_builtins_module_is_now_catalog():
    from verl_rewards import catalog

    with pytest.warns(DeprecationWarning, match="verl_rewards.builtins is deprecated; use verl_rewards.catalog"):
        old = _import_fresh("verl_rewards.builtins")
    assert old.BUILTIN_FAMILIES is catalog.BUILTIN_FAMILIES and old.MODULE == "verl_rewards.catalog"
    with pytest.warns(DeprecationWarning, match=r"register_builtins\(\)"):
        old.load()


def test_rewards_registry_module_is_now_rewards_decorators():
    from verl_rewards.rewards import decorators

    with pytest.warns(DeprecationWarning, match="use verl_rewards.rewards.decorators"):
        old = _import_fresh("verl_rewards.rewards.registry")
    assert old is decorators and old.reward is decorators.reward and old.BaseReward is decorators.BaseReward


def test_rewards_builtin_module_is_now_rewards_text():
    from verl_rewards.rewards import text

    with pytest.warns(DeprecationWarning, match="use verl_rewards.rewards.text"):
        old = _import_fresh("verl_rewards.rewards.builtin")
    assert old is text and old.qa_scores("Paris", "paris")["em"] == 1.0


def test_tau2_rewards_package_is_now_tau2_evaluators():
    from verl_rewards.tau2.evaluators import action, common

    with pytest.warns(DeprecationWarning, match="use verl_rewards.tau2.evaluators"):
        _import_fresh("verl_rewards.tau2.rewards")
    old_action = importlib.import_module("verl_rewards.tau2.rewards.action")
    from verl_rewards.tau2.rewards.common import ComponentResult

    assert old_action is action and old_action.compare_action is action.compare_action
    assert ComponentResult is common.ComponentResult


@pytest.mark.parametrize(
    "old,new",
    [
        ("verl_rewards.rewards.process", "verl_rewards.scoring.executors.process"),
        ("verl_rewards.scoring.threads", "verl_rewards.scoring.executors.threads"),
    ],
)
def test_executor_modules_moved_to_scoring_executors(old, new):
    moved = importlib.import_module(new)
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated; use {new}"):
        assert _import_fresh(old) is moved


def test_tau2_tau_bench_reward_function_was_tau_bench_reward():
    import verl_rewards.tau2 as tau2
    from verl_rewards.tau2 import tau_bench as module

    with pytest.warns(DeprecationWarning, match="use verl_rewards.tau2.tau2_tau_bench_reward"):
        assert tau2.tau_bench_reward is tau2.tau2_tau_bench_reward
    with pytest.warns(DeprecationWarning, match="use verl_rewards.tau2.tau_bench.tau2_tau_bench_reward"):
        assert module.tau_bench_reward is module.tau2_tau_bench_reward
    assert "tau_bench_reward" not in tau2.__all__
    with pytest.raises(AttributeError):
        _ = tau2.no_such_name


def test_reward_name_tau_bench_resolves_to_tau2_tau_bench_and_warns_once(caplog):
    from verl_rewards import catalog
    from verl_rewards.scoring import spec as registry

    catalog.register_builtins()
    registry._ALIASES_WARNED.discard("tau_bench")
    with caplog.at_level(logging.WARNING, logger="verl_rewards.scoring.spec"):
        first = registry.get_reward("tau_bench")
        again = registry.get_reward("TAU_BENCH")
    assert first is again is registry.get_reward("tau2_tau_bench")
    assert first.name == "tau2_tau_bench" and first.extra_keys == (
        "tb_r_actions",
        "tb_r_outputs",
        "row_options_refused",
    )
    warned = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert warned == ["reward name 'tau_bench' is deprecated (removed in 0.3.0); use 'tau2_tau_bench'"]
    assert "tau_bench" not in registry.registered_names()  # the tau-bench v1 reward is tau_bench_v1
    with pytest.raises(registry.RewardRegistryError, match="'tau_bench' is a deprecated alias of 'tau2_tau_bench'"):
        registry.register(registry.RewardSpec(name="tau_bench", func=lambda: 0.0, origin="elsewhere:f"))


# ------------------------------------------------------------------------- one rule for a taken name
def test_every_registry_accepts_the_same_entry_again_and_refuses_a_different_one():
    import dataclasses

    from verl_rewards import catalog
    from verl_rewards.scoring import spec as registry
    from verl_rewards.scoring.families import families, register_family
    from verl_rewards.tau2 import register
    from verl_rewards.tau2.domains import mock

    tau2_family = catalog.BUILTIN_FAMILIES[1]
    order = [f.name for f in families()]
    assert register_family(tau2_family) is tau2_family and [f.name for f in families()] == order
    with pytest.raises(ValueError, match="reward family 'tau2' is already registered; a different one cannot"):
        register_family(dataclasses.replace(tau2_family))
    assert register(mock.SPEC) is mock.SPEC
    with pytest.raises(ValueError, match="tau2 domain 'mock' is already registered; a different one cannot"):
        register(dataclasses.replace(mock.SPEC))
    qa = registry.get_reward("qa_em")
    assert registry.register(dataclasses.replace(qa)).origin == qa.origin  # the same definition, imported again
    registry.register(qa)
    with pytest.raises(registry.RewardRegistryError, match="reward 'qa_em' is already registered by .*text.py"):
        registry.register(dataclasses.replace(qa, origin="other.py:qa_em"))
    assert registry.get_reward("qa_em") is qa
