"""ContributionRewardManager built by verl's own loader: decoding, scoring-function calls, contribution,
token placement on padded batches, stable extras, failures, and config validation at build time."""

from __future__ import annotations

import asyncio
import json

import pytest
import torch

from verl_rewards.batching import streaming_item

from manager_support import build_manager, enc, make_batch


def test_manager_is_registered_under_contribution():
    from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls

    from verl_rewards.manager import ContributionRewardManager

    assert get_reward_manager_cls("contribution") is ContributionRewardManager


def test_legacy_batch_places_total_on_last_valid_token(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"contribution.type": "C0", "contribution.beta": 0.5})
    responses = ["42", "answer is 41", "", "42"]
    batch = make_batch(
        tok,
        ["what is 6*7?", "q", "short", "a much longer prompt than the others here"],
        responses,
        prev_step_dict=[{"bb_hash": "a"}, {"bb_hash": "a"}, {}, json.dumps({"bb_hash": "x"})],
        cur_step_dict=[{"bb_hash": "b"}, {"bb_hash": "a"}, {"bb_hash": "z"}, json.dumps({"bb_hash": "x"})],
    )
    out = mgr(batch, return_dict=True)
    tensor = out["reward_tensor"]
    assert tensor.dtype == torch.float32 and tensor.shape == batch.batch["responses"].shape
    expected = [1.0 + 0.5, 0.0, 0.0 + 0.5, 1.0]
    for i, r in enumerate(responses):
        n = len(enc(tok, r))
        row = tensor[i]
        if n == 0:  # an empty response must not wrap around to the last padded position
            assert torch.count_nonzero(row) == 0
        else:
            assert row[n - 1].item() == pytest.approx(expected[i])
            assert torch.count_nonzero(row) == (1 if expected[i] else 0)
    extra = out["reward_extra_info"]
    assert extra["base_score"] == [1.0, 0.0, 0.0, 1.0]
    assert extra["contrib_c0"] == [1.0, 0.0, 1.0, 0.0]  # R before beta
    assert extra["contrib"] == [0.5, 0.0, 0.5, 0.0] and extra["beta_c0"] == [0.5] * 4  # the bonus beta * R
    assert extra["reward_error"] == [0, 0, 0, 0]
    assert set(extra) >= {"base_score", "contrib", "reward_error", "reward_timeout", "acc"}


def test_run_single_reads_streaming_layout_and_tool_extra_fields(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"contribution.type": "C1", "contribution.beta": 2.0})
    item = streaming_item(
        enc(tok, "what is 6*7?"),
        enc(tok, "42"),
        {
            "data_source": "test",
            "reward_model": {"ground_truth": "42"},
            "extra_info": {"index": 3},
            "tool_extra_fields": {"prev_step_dict": {"value_est": 0.25}, "cur_step_dict": {"value_est": 0.75}},
        },
    )
    out = asyncio.run(mgr.run_single(item))
    assert out["reward_score"] == pytest.approx(1.0 + 2.0 * 0.5)
    assert out["reward_extra_info"]["contrib_c1"] == pytest.approx(0.5)
    assert out["reward_extra_info"]["contrib"] == pytest.approx(2.0 * 0.5)
    assert out["reward_extra_info"]["base_score"] == 1.0


def test_step_dicts_found_in_extra_info_and_as_json_strings(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"contribution.type": "C0", "contribution.beta": 1.0})
    item = streaming_item(
        enc(tok, "q"),
        enc(tok, "nope"),
        {
            "data_source": "test",
            "reward_model": {"ground_truth": "42"},
            "extra_info": {"prev_step_dict": '{"bb_hash": "h1"}', "cur_step_dict": '{"bb_hash": "h2"}'},
        },
    )
    out = asyncio.run(mgr.run_single(item))
    assert out["reward_score"] == 1.0 and out["reward_extra_info"]["contrib_c0"] == 1.0


def test_toolrl_style_function_gets_step_and_step_dicts_and_tuple_components(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "toolrl_style")
    batch = make_batch(tok, ["q", "q"], ["<think> x </think> 42", "no"], global_steps=[7, 7])
    out = mgr(batch, return_dict=True)
    extra = out["reward_extra_info"]
    assert extra["base_score"] == pytest.approx([2.007, -0.993])
    assert extra["format"] == [1.0, 0.0] and extra["correctness"] == [1.0, -1.0] and extra["length"] == [0.0, 0.0]


def test_prompt_plus_response_decoding_keeps_special_tokens(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(
        small_tokenizer_dir,
        tok,
        "exact_match_dict",
        {"decode.include_prompt": "true", "decode.skip_special_tokens": "false", "extra_keys": "[pred,resp_chars]"},
    )
    prompt = tok.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False)
    batch = make_batch(tok, [prompt], ["42<|im_end|>"])
    out = mgr(batch, return_dict=True)
    assert out["reward_extra_info"]["pred"][0].startswith("<|im_start|>user")
    assert out["reward_extra_info"]["resp_chars"][0] == len(prompt + "42<|im_end|>")


def test_async_function_and_reward_key(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "async_score")
    out = mgr(make_batch(tok, ["q", "q"], ["the 42", "x"]), return_dict=True)
    assert out["reward_extra_info"]["base_score"] == [1.0, 0.0]
    assert out["reward_extra_info"]["async_ok"] == [1, 1]


@pytest.mark.parametrize(("fn", "flag"), [("raises", "reward_error"), ("returns_nan", "reward_error")])
def test_failures_give_fallback_and_flag(small_tokenizer_dir, small_tokenizer, fn, flag):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, fn, {"fallback_reward": -0.5})
    out = mgr(make_batch(tok, ["q"], ["x"]), return_dict=True)
    assert out["reward_extra_info"][flag] == [1]
    assert out["reward_extra_info"]["base_score"] == [-0.5]
    assert out["reward_tensor"].sum().item() == -0.5


def test_hung_function_is_cut_at_timeout(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "hangs", {"timeout_s": 0.5})
    out = mgr(make_batch(tok, ["q"] * 4, ["x"] * 4), return_dict=True)  # returns only because each call was cut
    assert out["reward_extra_info"]["reward_timeout"] == [1, 1, 1, 1]
    assert out["reward_extra_info"]["base_score"] == [0.0] * 4


def test_on_error_raise_surfaces_the_exception(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "raises", {"on_error": "raise"})
    with pytest.raises(RuntimeError, match="boom"):
        mgr(make_batch(tok, ["q"], ["x"]))


def test_missing_required_parameter_is_a_clear_error(small_tokenizer_dir, small_tokenizer):
    from verl_rewards.manager import RewardInputError

    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "needs_missing")
    with pytest.raises(RewardInputError, match=r"golden_answer.*available fields"):
        mgr(make_batch(tok, ["q"], ["x"]))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"contribution.type": "C9"}, "unknown contribution type"),
        ({"contribution.beta": "abc"}, "contribution.beta: expected a number"),
        ({"contribution.beta": "nan"}, "contribution.beta: expected a finite number"),
        ({"on_error": "ignore"}, "on_error must be one of"),
        ({"timeout_s": 0}, "timeout_s: expected a positive number"),
        ({"contribtion.type": "C0"}, "unknown key(s) ['contribtion']"),
    ],
)
def test_bad_config_fails_when_manager_is_built(small_tokenizer_dir, small_tokenizer, kwargs, message):
    from verl_rewards.manager import ManagerConfigError

    with pytest.raises(ManagerConfigError) as info:
        build_manager(small_tokenizer_dir, small_tokenizer, "exact_match", kwargs)
    assert message in str(info.value)


def test_env_fallback_and_explicit_config_precedence(small_tokenizer_dir, small_tokenizer, monkeypatch):
    monkeypatch.setenv("CONTRIBUTION", "1")
    monkeypatch.setenv("CONTRIB_TYPE", "C1")
    monkeypatch.setenv("BETA", "0.25")
    mgr = build_manager(small_tokenizer_dir, small_tokenizer, "exact_match")
    assert (mgr.settings.contribution.type, mgr.settings.contribution.terms[0].schedule.beta) == ("C1", 0.25)
    mgr = build_manager(small_tokenizer_dir, small_tokenizer, "exact_match", {"contribution.type": "none"})
    assert mgr.settings.contribution.type == "none" and not mgr.settings.contribution.terms


def test_every_sample_gets_the_same_extra_keys_across_calls(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"extra_keys": "[judge_score]"})
    first = asyncio.run(
        mgr.run_single(
            streaming_item(enc(tok, "q"), enc(tok, "42"), {"data_source": "a", "reward_model": {"ground_truth": "42"}})
        )
    )
    keys = list(first["reward_extra_info"])
    assert keys[:4] == ["base_score", "contrib", "reward_error", "reward_timeout"]
    assert first["reward_extra_info"]["judge_score"] == 0.0  # declared, filled
    second = asyncio.run(
        mgr.run_single(
            streaming_item(enc(tok, "q"), enc(tok, "1"), {"data_source": "b", "reward_model": {"ground_truth": "42"}})
        )
    )
    assert list(second["reward_extra_info"]) == keys


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tau2.reward": "bogus"}, "tau2.reward must be tau2 or tau_bench, got 'bogus'"),
        ({"tau2.judge": "nomodule:fn"}, "tau2.judge 'nomodule:fn'"),
        ({"toolrl.with_length": "maybe"}, "toolrl: ToolRL option 'with_length' must be a boolean"),
        ({"tau_bench.data_dir": "/nonexistent"}, "tau_bench.data_dir '/nonexistent' is not a directory"),
    ],
)
@pytest.mark.parametrize("selection", ["custom_function", "reward_fn", "families"])
def test_every_family_section_is_validated_at_build_whatever_scores_the_rows(
    small_tokenizer_dir, small_tokenizer, kwargs, message, selection
):
    """A family's section is checked when the manager is built, also when a custom function or ``reward_fn``
    scores every row (a typo there would otherwise surface only when a row reaches the family, or never)."""
    from verl_rewards.manager import ManagerConfigError

    fn_name = "exact_match" if selection == "custom_function" else None
    kwargs = {**kwargs, **({"reward_fn": "qa_em"} if selection == "reward_fn" else {})}
    with pytest.raises(ManagerConfigError) as info:
        build_manager(small_tokenizer_dir, small_tokenizer, fn_name, kwargs)
    assert message in str(info.value)
