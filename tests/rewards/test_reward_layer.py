"""The reward-function layer: registration, inputs by parameter name, returns, selection per data source,
pooled environments, fault isolation, stable extra keys — through the real contribution manager."""

from __future__ import annotations

import asyncio

import pytest

from verl_rewards.batching import padded_batch

from repo_paths import SUPPORT
from verl_support import compose_verl_config

LAYER = str(SUPPORT / "reward_fns_layer.py")


def _manager(tokenizer_dir, tok, kwargs=(), extra=()):
    from verl.trainer.ppo.reward import load_reward_manager

    overrides = [
        f"actor_rollout_ref.model.path={tokenizer_dir}",
        "reward.reward_manager.name=contribution",
        f"+reward.reward_kwargs.modules=[{LAYER}]",
        *[f"+reward.reward_kwargs.{k}" for k in kwargs],
        *extra,
    ]
    return load_reward_manager(compose_verl_config(overrides), tok)


def _batch(tok, responses, sources=None, **fields):
    n = len(responses)
    return padded_batch(
        [tok.encode(f"question {i}", add_special_tokens=False) for i in range(n)],
        [tok.encode(r, add_special_tokens=False) for r in responses],
        {
            "data_source": sources or ["qa"] * n,
            "reward_model": [{"ground_truth": "42"}] * n,
            "extra_info": [{"index": i} for i in range(n)],
            "uid": [f"u{i}" for i in range(n)],
            **fields,
        },
        pad_token_id=tok.pad_token_id,
        meta_info={"global_steps": 5},
    )


def test_decorator_and_class_register_by_case_insensitive_name():
    from verl_rewards.rewards import get_reward

    import reward_fns_layer  # noqa: F401 - registers on import

    assert get_reward("T_LEN").name == "t_len"
    assert get_reward("t_class").is_async
    assert get_reward("t_env").pool_size == 2
    assert get_reward("t_fields").extra_keys == ("step_seen", "n_messages", "traj_id", "source")


def test_duplicate_name_is_a_clear_error():
    from verl_rewards import reward
    from verl_rewards.rewards import RewardRegistryError

    import reward_fns_layer  # noqa: F401 - registers t_len

    with pytest.raises(RewardRegistryError, match="already registered"):

        @reward(name="T_len")
        def other(final_response: str) -> float:
            return 0.0


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
    tau2_tau_bench = registry.get_reward("TAU2_TAU_BENCH")  # tau-bench's formula on tau2 tasks
    assert tau2_tau_bench.extra_keys == ("tb_r_actions", "tb_r_outputs", "row_options_refused")
    assert "tau_bench" not in registry.registered_names()  # the tau-bench v1 reward is tau_bench_v1


def test_env_parameter_without_pool_and_class_without_call_are_errors():
    from verl_rewards import BaseReward, reward
    from verl_rewards.rewards import RewardRegistryError

    with pytest.raises(RewardRegistryError, match="declares no env_cls"):

        @reward(name="t_env_missing", auto_register=False)
        def needs_env(final_response: str, env) -> float:
            return 0.0

    with pytest.raises(RewardRegistryError, match="must define call"):

        class NoCall(BaseReward):
            name = "t_no_call"


def test_inputs_by_parameter_name_from_columns_extra_info_and_predefined(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = _manager(small_tokenizer_dir, tok, ["reward_fn=t_len"])
    batch = _batch(
        tok,
        ["short", "a much longer answer", "a much longer answer"],
        length_penalty=[True, True, False],  # a parquet column
        extra_info=[{"max_length": 10}, {"max_length": 10}, {"max_length": 10}],  # extra_info keys
    )
    out = mgr(batch, return_dict=True)
    assert out["reward_extra_info"]["base_score"] == [1.0, 0.0, 1.0]
    mgr = _manager(small_tokenizer_dir, tok, ["reward_fn=t_fields"])
    out = mgr(_batch(tok, ["42", "41"], raw_prompt=[[{"role": "user", "content": "q"}]] * 2), return_dict=True)
    extra = out["reward_extra_info"]
    assert extra["base_score"] == [1.0, 0.0]
    assert extra["step_seen"] == [5, 5] and extra["n_messages"] == [2, 2]
    assert extra["traj_id"] == ["u0/0", "u1/1"] and extra["source"] == ["qa", "qa"]
    assert "acc" not in extra  # with reward_fn set, only registered rewards are reachable: no verl-default `acc`


def test_missing_parameter_names_the_parameter_and_available_fields(small_tokenizer_dir, small_tokenizer):
    from verl_rewards.manager import RewardInputError

    mgr = _manager(small_tokenizer_dir, small_tokenizer, ["reward_fn=t_missing"])
    with pytest.raises(RewardInputError) as info:
        mgr(_batch(small_tokenizer, ["x"]))
    assert "golden_answer" in str(info.value) and "final_response" in str(info.value)
    assert "uid" in str(info.value)


@pytest.mark.parametrize(
    ("name", "score", "flag"),
    [("t_int", 1.0, 0), ("t_str", 0.0, 1), ("t_no_reward_key", 0.0, 1), ("t_raise", 0.0, 1), ("t_nan", 0.0, 1)],
)
def test_return_rules_and_failures(small_tokenizer_dir, small_tokenizer, name, score, flag):
    mgr = _manager(small_tokenizer_dir, small_tokenizer, [f"reward_fn={name}"])
    out = mgr(_batch(small_tokenizer, ["x"]), return_dict=True)
    assert out["reward_extra_info"]["base_score"] == [score]
    assert out["reward_extra_info"]["reward_error"] == [flag]


def test_hung_reward_bounded_by_timeout(small_tokenizer_dir, small_tokenizer):
    mgr = _manager(small_tokenizer_dir, small_tokenizer, ["reward_fn=t_hang", "timeout_s=0.5", "fallback_reward=-1"])
    out = mgr(_batch(small_tokenizer, ["x", "y", "z"]), return_dict=True)
    assert out["reward_extra_info"]["reward_timeout"] == [1, 1, 1]
    assert out["reward_extra_info"]["base_score"] == [-1.0, -1.0, -1.0]


def test_selection_by_source_row_field_and_default_with_stable_keys(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = _manager(
        small_tokenizer_dir,
        tok,
        ["reward_fn=qa_em", "reward_fn_by_source={lengthy: t_len, cls: t_class}"],
    )
    batch = _batch(
        tok,
        ["42", "42", "way too long here", "x", "42"],
        sources=["qa", "cls", "lengthy", "qa", "qa"],
        length_penalty=[True] * 5,
        max_length=[5] * 5,
        reward_fn=[None, None, None, None, "t_int"],
    )
    out = mgr(batch, return_dict=True)
    extra = out["reward_extra_info"]
    assert extra["base_score"] == [1.0, 0.5, 0.0, 0.0, 1.0]
    # every sample carries every key: qa_em's f1/em/precision/recall, t_class's cls_calls, the flags
    for key in ("f1", "em", "precision", "recall", "cls_calls", "reward_error", "contrib"):
        assert len(extra[key]) == 5
    assert extra["em"] == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert extra["cls_calls"][1] >= 1 and extra["cls_calls"][0] == 0.0


def test_pooled_env_same_id_same_env_and_reset_after(small_tokenizer_dir, small_tokenizer):
    from verl_rewards.rewards import get_reward

    tok = small_tokenizer
    mgr = _manager(small_tokenizer_dir, tok, ["reward_fn=t_env"])
    env_cls = get_reward("t_env").env_cls  # the class of the module the manager loaded
    before = env_cls.created
    out = mgr(_batch(tok, ["abc", "abcdef", "a", "ab", "abcd"]), return_dict=True)
    # each call starts from a reset env (value = len(response)); at most pool_size=2 envs were created
    assert out["reward_extra_info"]["base_score"] == [3.0, 6.0, 1.0, 2.0, 4.0]
    assert 1 <= env_cls.created - before <= 2
    assert max(out["reward_extra_info"]["env_resets"]) >= 1  # 5 calls on at most 2 envs: reused after reset

    from verl_rewards.scoring.pools import EnvPool

    async def shared() -> tuple:
        pool = EnvPool(env_cls, 1)
        a = await pool.acquire("traj-1")
        b = await pool.acquire("traj-1")  # same trajectory id: same env, no deadlock with size 1
        a.value = 7
        await pool.release("traj-1")
        await pool.release("traj-1")
        c = await pool.acquire("traj-2")
        return a is b, c is a, c.value, c.resets

    assert asyncio.run(shared()) == (True, True, 0, 1)


def test_unknown_reward_name_and_bad_executor_fail_at_build(small_tokenizer_dir, small_tokenizer):
    from verl_rewards.manager import ManagerConfigError

    with pytest.raises(ManagerConfigError, match="no reward named 'nope'"):
        _manager(small_tokenizer_dir, small_tokenizer, ["reward_fn=nope"])
    # tau-bench's formula on tau2 tasks is ``tau2_tau_bench`` (``tau_bench`` is the tau-bench v1 family, not a reward)
    with pytest.raises(ManagerConfigError, match=r"no reward named 'tau_bench'; registered: \[.*'tau2_tau_bench'"):
        _manager(small_tokenizer_dir, small_tokenizer, ["reward_fn=tau_bench"])
    with pytest.raises(ManagerConfigError, match="executor must be one of"):
        _manager(small_tokenizer_dir, small_tokenizer, ["reward_fn=qa_em", "executor=fork"])
    with pytest.raises(ManagerConfigError, match="not found"):
        _manager(small_tokenizer_dir, small_tokenizer, ["modules=[/nonexistent/rewards.py]"])


def test_custom_reward_function_path_may_name_a_decorated_reward(small_tokenizer_dir, small_tokenizer):
    from verl.trainer.ppo.reward import load_reward_manager

    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={small_tokenizer_dir}",
            "reward.reward_manager.name=contribution",
            f"reward.custom_reward_function.path={LAYER}",
            "reward.custom_reward_function.name=t_fields",
        ]
    )
    mgr = load_reward_manager(config, small_tokenizer)
    out = mgr(_batch(small_tokenizer, ["42"]), return_dict=True)
    assert out["reward_extra_info"]["base_score"] == [1.0]
    assert out["reward_extra_info"]["step_seen"] == [5]


def test_process_executor_runs_rewards_in_worker_processes_and_cuts_hangs(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = _manager(small_tokenizer_dir, tok, ["reward_fn=t_len", "executor=process"])
    try:
        out = mgr(
            _batch(tok, ["short", "far too long"], length_penalty=[True] * 2, max_length=[5] * 2), return_dict=True
        )
        assert out["reward_extra_info"]["base_score"] == [1.0, 0.0]
        runner = mgr.core._runner
        assert runner is not None and runner.worker_pids  # scored in child processes
    finally:
        if mgr.core._runner is not None:
            mgr.core._runner.close()
    mgr = _manager(small_tokenizer_dir, tok, ["reward_fn=t_hang", "executor=process", "timeout_s=1"])
    try:
        out = mgr(_batch(tok, ["x"]), return_dict=True)
        assert out["reward_extra_info"]["reward_timeout"] == [1]  # the worker was killed at the limit
    finally:
        if mgr.core._runner is not None:
            mgr.core._runner.close()
