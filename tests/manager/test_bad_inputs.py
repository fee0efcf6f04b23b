"""Bad configuration fails at build naming the key; bad rows are flagged or named, never a crash or a silent 0."""

from __future__ import annotations

import json

import pytest

from verl_rewards.manager import ManagerConfig, ManagerConfigError

from manager_support import build_manager, make_batch
from repo_paths import SUPPORT


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"extra_keys": 5}, "extra_keys must be a list of names"),
        ({"modules": 5}, "modules must be a module name"),
        ({"tau2": 5}, "tau2 must be a mapping"),
        ({"toolrl": "x"}, "toolrl must be a mapping"),
        ({"reward_fn_by_source": ["a"]}, "reward_fn_by_source must be a mapping"),
        ({"reward_fn": 3}, "reward_fn must be a registered reward name"),
        ({"timeout_s": 3e6}, "timeout_s: expected a number <= 604800"),
        ({"decode": {"include_prompt": "maybe"}}, "decode.include_prompt: expected a boolean"),
        ({"extra_keys": ["a,b"]}, "invalid extra key 'a,b'"),
    ],
)
def test_bad_config_values_are_clear_errors_at_build(kwargs, message):
    from verl_rewards.manager.core import ScoringCore
    from verl_rewards.manager.routing import Router

    with pytest.raises(ManagerConfigError, match=message):
        config = ManagerConfig.from_reward_kwargs(kwargs, environ={})
        ScoringCore(None, config, Router(config, custom=None, default=None))


@pytest.mark.parametrize(
    ("tau2", "message"),
    [
        ({"default_termination": "agent_stp"}, "default_termination must be one of"),
        ({"data_dir": "/nonexistent/tau2"}, "data_dir '/nonexistent/tau2' is not a directory"),
        ({"nl_policy": "require"}, r"nl_policy=require needs reward.reward_kwargs.tau2.judge"),  # else reward_error
    ],
)
def test_tau2_options_are_validated_when_the_manager_is_built(small_tokenizer_dir, small_tokenizer, tau2, message):
    with pytest.raises(ManagerConfigError, match=message):
        build_manager(small_tokenizer_dir, small_tokenizer, kwargs={f"tau2.{k}": v for k, v in tau2.items()})


@pytest.mark.parametrize(
    ("value", "enabled"),
    [("1", True), ("true", True), ("YES", True), ("on", True), ("0", False), ("false", False), ("off", False)],
)
def test_contribution_switch_accepts_the_usual_spellings(value, enabled):
    config = ManagerConfig.from_reward_kwargs({}, environ={"CONTRIBUTION": value, "CONTRIB_TYPE": "C1"})
    assert config.contribution.type == ("C1" if enabled else "none")


def test_contribution_switch_rejects_other_values():
    with pytest.raises(ManagerConfigError, match="CONTRIBUTION='enable' is not a switch"):
        ManagerConfig.from_reward_kwargs({}, environ={"CONTRIBUTION": "enable"})


def test_deeply_nested_step_dict_is_flagged_not_a_crash(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"contribution.type": "C0"})
    deep = "[" * 100_000 + "]" * 100_000
    batch = make_batch(
        tok,
        ["q", "q", "q"],
        ["42", "42", "42"],
        prev_step_dict=[deep, "{not json", json.dumps({"bb_hash": "a"})],
        cur_step_dict=[json.dumps({"bb_hash": "b"})] * 3,
    )
    out = mgr(batch, return_dict=True)
    assert out["reward_extra_info"]["step_dict_error"] == [1, 1, 0]
    assert out["reward_extra_info"]["reward_error"] == [0, 0, 0]
    assert out["reward_extra_info"]["contrib_c0"] == [1.0, 1.0, 1.0]  # the defaults ("{}") differ from "b"


def test_short_non_tensor_column_names_the_column(small_tokenizer_dir, small_tokenizer):
    import numpy as np

    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match")
    batch = make_batch(tok, ["q", "q"], ["42", "7"])
    batch.non_tensor_batch["cur_step_dict"] = np.array([{}], dtype=object)
    with pytest.raises(ValueError, match=r"cur_step_dict.*one value per row \(batch of 2 rows\)"):
        mgr(batch, return_dict=True)


def test_score_beyond_float32_is_an_invalid_score(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "huge_score")
    out = mgr(make_batch(tok, ["q", "q"], ["huge", "fine"]), return_dict=True)
    assert out["reward_extra_info"]["reward_error"] == [1, 0]
    assert out["reward_tensor"].sum(-1).tolist() == [0.0, 1.0]  # fallback, never inf


def test_rebuilt_cores_share_one_process_pool(small_tokenizer_dir, small_tokenizer):
    import gc

    from verl_rewards.scoring.executors import process

    tok = small_tokenizer
    module = SUPPORT / "reward_fns_process.py"
    kwargs = ["reward_fn=proc_test_trivial", "executor=process", f"modules=[{module}]"]
    before = {id(r) for r in process._RUNNERS if not r._closed}
    managers = [
        build_manager(small_tokenizer_dir, tok, extra=[f"+reward.reward_kwargs.{k}" for k in kwargs]) for _ in range(3)
    ]
    for mgr in managers:
        mgr(make_batch(tok, ["q"], ["abc"]), return_dict=True)
    runners = {id(r) for r in process._RUNNERS if not r._closed} - before
    assert len(runners) == 1  # three cores, one pool of worker processes
    del managers, mgr
    gc.collect()
    assert not ({id(r) for r in process._RUNNERS if not r._closed} - before)  # closed with its last owner


@pytest.mark.parametrize("key", ["solution_str", "ground_truth"])
def test_a_score_kwargs_key_named_like_a_per_sample_input_is_refused_at_build(
    small_tokenizer_dir, small_tokenizer, key
):
    """A ``**kwargs`` reward (verl's style) got the constant instead of every sample's own input: a score_kwargs
    ``ground_truth: a`` scored the response ``a`` 1.0 against its real ground truth ``b``."""
    with pytest.raises(ManagerConfigError, match=rf"score_kwargs\.{key}: \['{key}'\] are per-sample inputs"):
        build_manager(small_tokenizer_dir, small_tokenizer, "exact_match", kwargs={f"score_kwargs.{key}": "a"})


def test_score_kwargs_constants_reach_the_reward_s_other_parameters(small_tokenizer_dir, small_tokenizer):
    kwargs = {"score_kwargs.golden_answer": "b"}  # no row field provides needs_missing's golden_answer: the constant
    mgr = build_manager(small_tokenizer_dir, small_tokenizer, "needs_missing", kwargs={**kwargs, "on_error": "raise"})
    out = mgr(make_batch(small_tokenizer, ["q", "q"], ["a", "b"]), return_dict=True)
    assert out["reward_tensor"].sum(-1).tolist() == [1.0, 1.0]
