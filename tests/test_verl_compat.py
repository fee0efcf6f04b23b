"""Each verl private that verl-rewards relies on (verl_rewards.verl_compat.PRIVATES) is still there, and behaves as
the CPU backend assumes; a failure names the private and its verl file."""

from __future__ import annotations

import asyncio
import importlib
import inspect

import pytest

from verl_rewards import verl_compat
from verl_rewards.verl_compat import PRIVATES


@pytest.mark.parametrize("module_name,attr,where,why", PRIVATES, ids=[p[1] for p in PRIVATES])
def test_each_verl_private_is_still_there(module_name, attr, where, why):
    module = importlib.import_module(module_name)
    if attr == "trainer_mode section":
        source = inspect.getsource(module.PPOTrainer.__init__)
        assert "self.config.trainer.v1.get(self.trainer_mode" in source, (
            f"{where}: the V1 trainer no longer reads trainer.v1.<trainer_mode> ({why})"
        )
        return
    if attr == "SFTTrainer.fit last step":
        fit = inspect.getsource(module.SFTTrainer.fit)
        step = fit.index("self.training_client.train_batch(")
        last = fit.index("is_last_step = global_step >= self.total_training_steps")
        assert step < last < fit.index("save_checkpoint(step=global_step)") < fit.index("return", last), (
            f"{where}: SFTTrainer.fit no longer ends at the step that reaches total_training_steps ({why})"
        )
        return
    if attr.startswith("trainer_mode"):
        source = inspect.getsource(module)
        assert 'self.trainer_mode == "sync"' in source or 'self.trainer_mode != "sync"' in source, (
            f"{where}: the V1 trainer no longer compares trainer_mode with 'sync' ({why})"
        )
        return
    head, _, tail = attr.partition(".")
    obj = getattr(module, head, None)
    assert obj is not None, f"{where}: {head} is gone ({why})"
    if tail == "role_worker_mapping":
        source = inspect.getsource(obj._init_resource_pool_mgr)
        assert "self.role_worker_mapping[" in source and "ActorRolloutRefWorker" in source, (
            f"{where}: PPOTrainer._init_resource_pool_mgr no longer maps roles to ActorRolloutRefWorker ({why})"
        )
    elif head == "PPOTrainerSeparateAsync":
        source = inspect.getsource(obj._init_resource_pool_mgr)
        assert "self.role_worker_mapping[" in source and "DetachActorWorker" in source, (
            f"{where}: {attr} no longer maps roles to DetachActorWorker ({why})"
        )
    elif tail in ("_server_handle", "_server_address"):
        prop = getattr(obj, tail.lstrip("_"), None)
        assert isinstance(prop, property) and f"self.{tail}" in inspect.getsource(prop.fget), (
            f"{where}: RolloutReplica.{tail.lstrip('_')} no longer reads {tail} ({why})"
        )
        assert f"self.{tail}" in inspect.getsource(obj.__init__), f"{where}: {attr} is gone ({why})"
    elif tail:
        assert callable(getattr(obj, tail, None)), f"{where}: {attr} is gone ({why})"


def test_check_privates_finds_nothing_missing():
    assert verl_compat.check_privates() == []


def test_the_rollout_adapter_table_takes_an_entry():
    table = verl_compat.rollout_adapter_table()
    assert table[("vllm", "async")].endswith("ServerAdapter")
    verl_compat.register_rollout_adapter("verl_rewards_test_rollout", "x.Y")
    try:
        from verl.workers.rollout.base import get_rollout_class

        with pytest.raises(ModuleNotFoundError):
            get_rollout_class("verl_rewards_test_rollout")  # found in verl's table, then imported
    finally:
        table.pop(("verl_rewards_test_rollout", "async"))


def test_agent_loop_registry_is_verls_table():
    from verl.experimental.agent_loop.agent_loop import register

    registry = verl_compat.agent_loop_registry()

    class _Loop:  # noqa: B903 - only its name matters
        pass

    try:
        register("verl_rewards_test_loop")(_Loop)
    except AssertionError:  # verl checks the class type in some releases
        pytest.skip("verl's register() needs an AgentLoopBase")
    try:
        assert registry["verl_rewards_test_loop"]["_target_"].endswith("_Loop")
    finally:
        registry.pop("verl_rewards_test_loop", None)


def test_fsdp_engine_still_builds_its_module_in_one_method():
    cls = verl_compat.fsdp_lm_engine_class()
    source = inspect.getsource(cls._build_fsdp_module)
    assert "CPUOffloadPolicy(pin_memory=True)" in source and "forward_only" in source, (
        "verl/workers/engine/fsdp/transformer_impl.py: _build_fsdp_module no longer pins forward-only models; "
        "revisit the CPU engine (verl_rewards/cpu/training.py)"
    )


#: the parameters verl_compat passes to the agent-loop Continuous Token helpers, by position then keyword
CT_HELPERS = {
    "ct_build_initial_tokens": ["self", "messages", "tools"],
    "ct_merge_assistant_token": [
        "self",
        "runtime_token_ids",
        "assistant_token_ids",
        "response_mask",
        "response_logprobs",
        "assistant_logprobs",
    ],
    "ct_merge_context_msg": [
        "self",
        "previous_messages",
        "updated_messages",
        "runtime_token_ids",
        "response_mask",
        "response_logprobs",
        "tools",
    ],
}


@pytest.mark.parametrize("name", list(CT_HELPERS))
def test_the_continuous_token_helpers_take_what_verl_compat_passes(name):
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase

    method = getattr(AgentLoopBase, name, None)
    assert method is not None, f"verl/experimental/agent_loop/agent_loop.py: AgentLoopBase.{name} is gone"
    params = list(inspect.signature(method).parameters)
    assert params[: len(CT_HELPERS[name])] == CT_HELPERS[name], (
        f"verl/experimental/agent_loop/agent_loop.py: AgentLoopBase.{name} now takes {params}; "
        "update verl_rewards/verl_compat.py"
    )
    if name != "ct_build_initial_tokens":  # both merges return (merge result, response mask, log-probs)
        assert "return merge_result, aligned_response_mask, aligned_response_logprobs" in inspect.getsource(method)


def test_private_methods_are_read_and_replaced_only_when_listed():
    class Trainer:
        def _compute_metrics(self) -> str:
            return "verl"

    original = verl_compat.private_method(Trainer, verl_compat.COMPUTE_METRICS)
    verl_compat.replace_private_method(Trainer, verl_compat.COMPUTE_METRICS, lambda self: "hooked " + original(self))
    assert Trainer()._compute_metrics() == "hooked verl"
    with pytest.raises(
        AttributeError, match=r"verl/trainer/ppo/v1/trainer_base.py: Trainer._compute_advantage is gone"
    ):
        verl_compat.private_method(Trainer, verl_compat.COMPUTE_ADVANTAGE)
    with pytest.raises(ValueError, match="not a verl private listed"):
        verl_compat.private_method(Trainer, "_anything_else")


def test_a_replica_gets_its_server_through_verls_properties():
    from verl.workers.rollout.replica import RolloutReplica

    handle = object()

    class Replica(RolloutReplica):
        async def launch_servers(self) -> None:
            verl_compat.set_replica_server(self, handle, "hf_cpu://replica-0")

    replica = object.__new__(Replica)
    asyncio.run(replica.launch_servers())
    assert replica.server_handle is handle and replica.server_address == "hf_cpu://replica-0"


def test_the_speculative_decoding_counters_are_names():
    keys = verl_compat.spec_decode_extra_keys()
    assert keys and all(isinstance(k, str) and k.startswith("spec_") for k in keys)


#: the parameters the hooks' wrappers take from verl's private methods (metrics.py, evaluation/validation.py)
WRAPPED = {
    ("verl.trainer.ppo.v1.trainer_base", "PPOTrainer", "_compute_metrics"): [
        "self",
        "batch",
        "metrics",
        "timing_raw",
        "global_steps",
        "epoch",
    ],
    ("verl.trainer.ppo.v1.trainer_base", "PPOTrainer", "_compute_advantage"): ["self", "batch", "metrics"],
    ("verl.trainer.ppo.v1.trainer_base", "PPOTrainer", "_val_metrics_update"): [
        "self",
        "data_sources",
        "sample_uids",
        "reward_extra_infos_dict",
        "sample_turns",
    ],
    ("verl.trainer.ppo.ray_trainer", "RayPPOTrainer", "_val_metrics_update"): [
        "self",
        "data_sources",
        "sample_uids",
        "reward_extra_infos_dict",
        "sample_turns",
    ],
}


@pytest.mark.parametrize("where", list(WRAPPED), ids=[f"{c}.{m}" for _, c, m in WRAPPED])
def test_the_wrapped_trainer_methods_take_what_the_wrappers_pass(where):
    module_name, cls, name = where
    method = inspect.unwrap(getattr(getattr(importlib.import_module(module_name), cls), name))
    params = list(inspect.signature(method).parameters)
    assert params[: len(WRAPPED[where])] == WRAPPED[where], (
        f"{module_name.replace('.', '/')}.py: {cls}.{name} now takes {params}; update the hook that wraps it"
    )
