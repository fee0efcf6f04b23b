"""The CPU backend's parts, without Ray: the cpu platform, the hf_cpu server (sampling parameters, log-probs, weight
updates, scripted scoring), the policy's rendering of scripted turns (read back by verl's hermes parser)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
import torch

from verl_rewards.cpu.model import build_tiny_qwen2
from verl_rewards.cpu.policy import ScriptedServer, render_assistant_turn, row_view
from verl_rewards.cpu.rollout import FORCED_RESPONSE_KEY, HFCpuServer, token_log_probs

TEXTS = ["Find the order and cancel it.", '{"name": "cancel_order", "arguments": {"order_id": "#W1"}}'] * 20


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_qwen2(tmp_path_factory.mktemp("tiny"), TEXTS)


@pytest.fixture(scope="module")
def tokenizer(model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir)


def _server(model_dir, **config):
    cfg = SimpleNamespace(prompt_length=64, response_length=16, max_model_len=None, engine_kwargs={}, **config)
    return HFCpuServer(cfg, SimpleNamespace(local_path=model_dir, path=model_dir))


def _gen(server, prompt, **params):
    return asyncio.run(server.generate(prompt_ids=prompt, sampling_params=params, request_id="r"))


def _forward_log_probs(server, prompt, response, temperature=1.0):
    with torch.no_grad():
        ids = torch.tensor([prompt + response])
        logits = server.model(input_ids=ids).logits[0, len(prompt) - 1 : len(prompt) - 1 + len(response)]
    return token_log_probs(logits, torch.tensor(response), temperature)


def test_the_tiny_model_is_a_two_layer_qwen2(model_dir):
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(model_dir)
    assert (cfg.model_type, cfg.num_hidden_layers, cfg.hidden_size) == ("qwen2", 2, 64)


def test_greedy_generation_returns_its_tokens_log_probs(model_dir):
    server = _server(model_dir)
    prompt = [5, 6, 7, 8]
    out = _gen(server, prompt, temperature=0, ignore_eos=True, max_tokens=5)
    assert len(out.token_ids) == 5 and len(out.log_probs) == 5
    assert out.extra_fields["global_steps"] == 0
    expected = _forward_log_probs(server, prompt, out.token_ids)
    assert out.log_probs == pytest.approx(expected, abs=1e-4)
    # greedy: every token is the argmax of its position
    with torch.no_grad():
        logits = server.model(input_ids=torch.tensor([prompt + out.token_ids])).logits[0]
    argmax = logits[len(prompt) - 1 : -1].argmax(-1).tolist()
    assert out.token_ids == argmax


def test_sampling_honours_temperature_top_k_seed_and_the_length(model_dir):
    server = _server(model_dir)
    prompt = [5, 6, 7]
    a = _gen(server, prompt, temperature=2.0, top_k=3, top_p=1.0, seed=7, ignore_eos=True, max_tokens=6)
    b = _gen(server, prompt, temperature=2.0, top_k=3, top_p=1.0, seed=7, ignore_eos=True, max_tokens=6)
    assert a.token_ids == b.token_ids and len(a.token_ids) == 6
    assert a.log_probs == pytest.approx(_forward_log_probs(server, prompt, a.token_ids, 2.0), abs=1e-4)
    with torch.no_grad():
        logits = server.model(input_ids=torch.tensor([prompt + a.token_ids])).logits[0]
    top3 = logits[len(prompt) - 1 : -1].topk(3, dim=-1).indices.tolist()
    assert all(t in allowed for t, allowed in zip(a.token_ids, top3, strict=True))
    # without max_tokens the configured response length bounds the turn; engine_kwargs.hf_cpu caps sampling
    assert len(_gen(server, prompt, temperature=1.0, ignore_eos=True).token_ids) == 16
    capped = _server(model_dir)
    capped.config.engine_kwargs = {"hf_cpu": {"max_new_tokens": 3}}
    assert len(_gen(capped, prompt, temperature=1.0, ignore_eos=True).token_ids) == 3


def test_a_forced_response_is_scored_under_the_current_weights(model_dir):
    server = _server(model_dir)
    prompt, forced = [5, 6, 7], [9, 10, 11, 12]
    out = _gen(server, prompt, temperature=1.0, **{FORCED_RESPONSE_KEY: forced})
    assert out.token_ids == forced
    assert out.log_probs == pytest.approx(_forward_log_probs(server, prompt, forced), abs=1e-5)
    # new weights: the same tokens get the log-probs of the new model
    named = [(k, v + 0.05 * torch.randn_like(v)) for k, v in server.model.state_dict().items()]
    assert server.update_weights(named, global_steps=3) == len(named)
    again = _gen(server, prompt, temperature=1.0, **{FORCED_RESPONSE_KEY: forced})
    assert again.extra_fields["global_steps"] == 3
    assert again.log_probs != pytest.approx(out.log_probs, abs=1e-4)
    assert again.log_probs == pytest.approx(_forward_log_probs(server, prompt, forced), abs=1e-5)
    with pytest.raises(KeyError, match="does not have"):
        server.update_weights([("not.a.weight", torch.zeros(1))])


def test_a_scripted_turn_renders_as_a_hermes_tool_call_verl_parses(tokenizer):
    from verl.experimental.agent_loop.tool_parser import HermesToolParser

    turn = {
        "role": "assistant",
        "content": "Let me cancel it.",
        "tool_calls": [{"type": "function", "function": {"name": "cancel_order", "arguments": {"order_id": "#W1"}}}],
    }
    ids = render_assistant_turn(tokenizer, turn)
    assert ids[-1] == tokenizer.eos_token_id
    content, calls = asyncio.run(HermesToolParser(tokenizer).extract_tool_calls(ids))
    assert [(c.name, c.arguments) for c in calls] == [("cancel_order", '{"order_id": "#W1"}')]
    assert content.startswith("Let me cancel it.")


class _Recorder:
    def __init__(self):
        self.calls = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        self.calls.append(dict(sampling_params))
        return sampling_params.get(FORCED_RESPONSE_KEY)


def test_the_scripted_server_scripts_agent_turns_only(tokenizer):
    real = _Recorder()
    scripted = ScriptedServer(real, tokenizer, [{"content": "one"}, {"content": "two"}])
    agent = {"temperature": 1.0, "logprobs": True}

    async def play():
        first = await scripted.generate("a", prompt_ids=[1], sampling_params=agent)
        user = await scripted.generate("u", prompt_ids=[1], sampling_params={"temperature": 1.0})
        second = await scripted.generate("a", prompt_ids=[1], sampling_params=agent)
        after = await scripted.generate("a", prompt_ids=[1], sampling_params=agent)
        return first, user, second, after

    first, user, second, after = asyncio.run(play())
    assert tokenizer.decode(first) == "one<|im_end|>" and tokenizer.decode(second) == "two<|im_end|>"
    assert user is None  # the user simulator's request went to the model unchanged
    assert tokenizer.decode(after).endswith("<|im_end|>") and scripted.played == 3
    assert row_view({"raw_prompt": [{"role": "user", "content": "x"}]})["prompt"][0]["content"] == "x"


def test_the_cpu_platform_reports_the_cpu():
    from verl_rewards.cpu.platform import PlatformCPU

    platform = PlatformCPU()
    assert platform.device_name == "cpu" and platform.current_device() == "cpu"
    assert platform.communication_backend_name() == "gloo"
    assert not platform.is_platform_available(use_smi_check=True)  # never auto-detected
    module = platform.device_module
    module.empty_cache()
    assert module.max_memory_allocated() == 0 and module.current_device() == "cpu"
    free, total = module.mem_get_info()
    assert total >= free >= 0
