"""ToolRL through the contribution manager: routing by data source, prompt+response decoding with special
tokens, options from reward.reward_kwargs.toolrl, contribution on top, components as extras."""

from __future__ import annotations

import json

import pytest

from verl_rewards.batching import padded_batch

from verl_support import compose_verl_config

GT = (
    "<think> I should use the appropriate tool with proper parameters to respond to the user's need. </think>\n"
    '<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}\n</tool_call>'
)
GOOD = '<think> The user wants the weather. </think>\n<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}\n</tool_call>'  # noqa: E501
HALF = '<think> hmm </think>\n<tool_call>\n{"name": "get_weather", "parameters": {"city": "Rome", "days": 3}}\n</tool_call>'  # noqa: E501
BROKEN = "<think> hmm </think> <tool_call>\n{not json}\n</tool_call>"


def _manager(tokenizer_dir, tok, kwargs=()):
    from verl.trainer.ppo.reward import load_reward_manager

    overrides = [f"actor_rollout_ref.model.path={tokenizer_dir}", "reward.reward_manager.name=contribution", *kwargs]
    return load_reward_manager(compose_verl_config(overrides), tok)


def _batch(tok, responses, **fields):
    prompt = tok.apply_chat_template(
        [{"role": "system", "content": "You can call tools."}, {"role": "user", "content": "Weather in Paris?"}],
        add_generation_prompt=True,
        tokenize=False,
    )
    n = len(responses)
    return padded_batch(
        [tok.encode(prompt, add_special_tokens=False)] * n,
        [tok.encode(r + "<|im_end|>", add_special_tokens=False) for r in responses],
        {"data_source": ["rlla"] * n, "reward_model": [{"ground_truth": GT}] * n, **fields},
        pad_token_id=tok.pad_token_id,
    )


def test_rlla_rows_are_scored_by_toolrl_with_components(qwen_tokenizer_dir, qwen_tokenizer):
    tok = qwen_tokenizer
    mgr = _manager(qwen_tokenizer_dir, tok, ["+reward.reward_kwargs.contribution.type=C0"])
    out = mgr(
        _batch(
            tok,
            [GOOD, HALF, BROKEN],
            prev_step_dict=[json.dumps({"bb_hash": "a"})] * 3,
            cur_step_dict=[json.dumps({"bb_hash": "b"}), json.dumps({"bb_hash": "a"}), "{}"],
        ),
        return_dict=True,
    )
    extra = out["reward_extra_info"]
    assert extra["format"] == [1.0, 1.0, 0.0]
    assert extra["correctness"][0] == 3.0 and extra["correctness"][2] == -3.0
    assert -3.0 < extra["correctness"][1] < 3.0
    assert extra["length"] == [0.0, 0.0, 0.0]
    assert extra["contrib_c0"] == [1.0, 0.0, 1.0]
    totals = out["reward_tensor"].sum(-1).tolist()
    assert totals[0] == pytest.approx(4.0 + 0.05)
    assert totals[2] == pytest.approx(-3.0 + 0.05)


def test_toolrl_options_from_hydra_keys(qwen_tokenizer_dir, qwen_tokenizer):
    tok = qwen_tokenizer
    mgr = _manager(
        qwen_tokenizer_dir,
        tok,
        ["+reward.reward_kwargs.toolrl.correct_max1=true", "+reward.reward_kwargs.toolrl.with_length=true"],
    )
    out = mgr(_batch(tok, [GOOD], global_steps=[10]), return_dict=True)
    extra = out["reward_extra_info"]
    assert extra["correctness"] == [1.0]
    assert 0.0 < extra["length"][0] < 0.1  # 5 think words of 512


def test_bad_toolrl_option_fails_at_build(qwen_tokenizer_dir, qwen_tokenizer):
    from verl_rewards.manager import ManagerConfigError

    with pytest.raises(ManagerConfigError, match="toolrl"):
        _manager(qwen_tokenizer_dir, qwen_tokenizer, ["+reward.reward_kwargs.toolrl.with_lenght=true"])


def test_unknown_chat_template_is_an_error_at_build(small_tokenizer_dir, small_tokenizer):
    import copy

    from verl_rewards.manager import ManagerConfigError

    tok = copy.deepcopy(small_tokenizer)
    tok.chat_template = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
    with pytest.raises(ManagerConfigError, match="unknown chat template"):
        _manager(small_tokenizer_dir, tok, ["+reward.reward_kwargs.toolrl.with_length=false"])
    llama = copy.deepcopy(small_tokenizer)
    llama.chat_template = "<|start_header_id|>{{ role }}<|end_header_id|>{{ content }}<|eot_id|>"
    mgr = _manager(small_tokenizer_dir, llama, ["+reward.reward_kwargs.toolrl.with_length=false"])
    text = "<|start_header_id|>assistant<|end_header_id|>" + GOOD + "<|eot_id|>"
    score = mgr.router._families["toolrl"].spec.func(solution_str=text, ground_truth=GT, step=0)
    assert score["score"] == 4.0  # the Llama 3 markers were picked from the tokenizer's template
