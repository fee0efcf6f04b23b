"""Cutting the assistant turn out of Qwen (ChatML) and Llama 3 transcripts; chat-template detection."""

from __future__ import annotations

import pytest

from verl_rewards.toolrl import (
    ENV_VARS,
    MAX_PREDICTION_CHARS,
    compute_score,
    detect_chat_template,
    extract_prediction,
)

GT = (
    "<think> Forecast for Oslo. </think>\n<tool_call>\n"
    '{"name": "get_weather_forecast", "parameters": {"city": "Oslo", "days": 1}}\n</tool_call>'
)
ANSWER = (
    "<think> The user wants tomorrow's weather in Oslo. </think>\n<tool_call>\n"
    '{"name": "get_weather_forecast", "parameters": {"city": "Oslo", "days": 1}}\n</tool_call>'
)
SYSTEM = "You are a helpful assistant with tools. Answer with <think> </think> then <tool_call> or <response>."
USER = "**Dialogue Records History**\n<user> Weather in Oslo tomorrow? </user>"

QWEN_TRANSCRIPT = (
    f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
    f"<|im_start|>user\n{USER}<|im_end|>\n"
    f"<|im_start|>assistant\n{ANSWER}<|im_end|>"
    "<|endoftext|><|endoftext|>"
)
LLAMA_TRANSCRIPT = (
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
    f"{SYSTEM}<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
    f"{USER}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    f"{ANSWER}<|eot_id|>"
)

# Short chat templates written for these tests: they use each family's special tokens.
QWEN_TEMPLATE = (
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
LLAMA_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' "
    "+ m['content'] | trim + '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)
GEMMA_LIKE_TEMPLATE = (
    "{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}<end_of_turn>\n{% endfor %}"
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in [*ENV_VARS.values(), "EXPERIMENT_NAME"]:
        monkeypatch.delenv(var, raising=False)


class FakeTokenizer:
    def __init__(self, chat_template):
        self.chat_template = chat_template


# ----------------------------------------------------------------------------------- extraction


@pytest.mark.parametrize("template", ["auto", "qwen"])
def test_qwen_transcript(template):
    assert extract_prediction(QWEN_TRANSCRIPT, template) == ANSWER


@pytest.mark.parametrize("template", ["auto", "llama"])
def test_llama_transcript(template):
    assert extract_prediction(LLAMA_TRANSCRIPT, template) == ANSWER


@pytest.mark.parametrize("transcript", [QWEN_TRANSCRIPT, LLAMA_TRANSCRIPT])
def test_full_transcript_scores_max(transcript):
    assert compute_score(transcript, GT) == {"score": 4.0, "format": 1.0, "correctness": 3.0, "length": 0.0}


def test_last_assistant_turn_is_used():
    two_turns = (
        "<|im_start|>assistant\n<think> old </think>\n<response> first </response><|im_end|>\n"
        "<|im_start|>user\nagain<|im_end|>\n"
        f"<|im_start|>assistant\n{ANSWER}<|im_end|>"
    )
    assert extract_prediction(two_turns) == ANSWER
    assert extract_prediction(two_turns, "qwen") == ANSWER


def test_cut_at_first_end_token_after_header():
    text = "<|im_start|>assistant\n  A  <|im_end|> B <|im_end|>"
    assert extract_prediction(text) == "A"


def test_truncated_turn_without_end_token_runs_to_the_end():
    text = f"<|start_header_id|>assistant<|end_header_id|>\n\n{ANSWER}\n"
    assert extract_prediction(text) == ANSWER


def test_auto_uses_the_later_header_of_either_family():
    text = f"<|im_start|>assistant\nX<|im_end|><|start_header_id|>assistant<|end_header_id|>\n\n{ANSWER}<|eot_id|>"
    assert extract_prediction(text) == ANSWER
    text = f"<|start_header_id|>assistant<|end_header_id|>X<|eot_id|><|im_start|>assistant\n{ANSWER}<|im_end|>"
    assert extract_prediction(text) == ANSWER


def test_no_marker_whole_string_stripped():
    assert extract_prediction(f"\n  {ANSWER}  \n") == ANSWER
    assert compute_score(f"  {ANSWER}\n", GT)["score"] == 4.0


def test_auto_without_header_keeps_end_tokens_but_explicit_templates_cut_like_toolrl():
    text = f"{ANSWER}<|im_end|>tail"
    assert extract_prediction(text, "auto") == text
    assert extract_prediction(text, "qwen") == ANSWER  # ToolRL: split(header)[-1].split(end)[0]
    assert extract_prediction(text, "llama") == text


def test_explicit_template_mismatch_keeps_whole_text():
    # Qwen markers selected for a Llama transcript: nothing is cut, so the format check fails.
    assert extract_prediction(LLAMA_TRANSCRIPT, "qwen") == LLAMA_TRANSCRIPT.strip()
    assert compute_score(LLAMA_TRANSCRIPT, GT, chat_template="qwen")["format"] == 0.0


def test_experiment_name_selects_markers(monkeypatch):
    monkeypatch.setenv("EXPERIMENT_NAME", "grpo-qwen-2.5")
    assert compute_score(QWEN_TRANSCRIPT, GT)["score"] == 4.0
    assert compute_score(LLAMA_TRANSCRIPT, GT)["format"] == 0.0
    monkeypatch.setenv("EXPERIMENT_NAME", "qwen-distilled-llama")  # "llama" first
    assert compute_score(LLAMA_TRANSCRIPT, GT)["score"] == 4.0


def test_experiment_name_without_family_word_does_not_raise(monkeypatch):
    monkeypatch.setenv("EXPERIMENT_NAME", "Qwen2.5-3B")  # ToolRL raised NotImplementedError
    assert compute_score(QWEN_TRANSCRIPT, GT)["score"] == 4.0
    assert compute_score(LLAMA_TRANSCRIPT, GT)["score"] == 4.0


def test_explicit_chat_template_beats_experiment_name(monkeypatch):
    monkeypatch.setenv("EXPERIMENT_NAME", "grpo-llama")
    assert compute_score(QWEN_TRANSCRIPT, GT, chat_template="auto")["score"] == 4.0
    assert compute_score(QWEN_TRANSCRIPT, GT)["format"] == 0.0


def test_prediction_is_capped():
    long = "<think>" + "a " * MAX_PREDICTION_CHARS + "</think>"
    pred = extract_prediction(long)
    assert len(pred) == MAX_PREDICTION_CHARS
    assert pred.startswith("<think>") and not pred.endswith("</think>")


def test_extraction_rejects_non_strings_and_bad_template():
    with pytest.raises(TypeError):
        extract_prediction(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chat_template"):
        extract_prediction("x", "mistral")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------- detection


def test_detect_from_template_strings():
    assert detect_chat_template(QWEN_TEMPLATE) == "qwen"
    assert detect_chat_template(LLAMA_TEMPLATE) == "llama"


def test_detect_from_tokenizer_objects():
    assert detect_chat_template(FakeTokenizer(QWEN_TEMPLATE)) == "qwen"
    assert detect_chat_template(FakeTokenizer(LLAMA_TEMPLATE)) == "llama"
    assert detect_chat_template(FakeTokenizer({"default": LLAMA_TEMPLATE, "tool_use": LLAMA_TEMPLATE})) == "llama"
    assert detect_chat_template(FakeTokenizer([{"name": "default", "template": QWEN_TEMPLATE}])) == "qwen"


def test_detected_template_extracts_the_matching_transcript():
    template = detect_chat_template(FakeTokenizer(LLAMA_TEMPLATE))
    assert extract_prediction(LLAMA_TRANSCRIPT, template) == ANSWER


def test_unknown_template_raises_clear_error():
    with pytest.raises(ValueError, match="unknown chat template.*neither"):
        detect_chat_template(GEMMA_LIKE_TEMPLATE)
    with pytest.raises(ValueError, match="unknown chat template.*both"):
        detect_chat_template(QWEN_TEMPLATE + LLAMA_TEMPLATE)
    with pytest.raises(ValueError, match="no chat_template"):
        detect_chat_template(FakeTokenizer(None))
    with pytest.raises(ValueError, match="no chat_template"):
        detect_chat_template(object())
    with pytest.raises(ValueError, match="must be a string"):
        detect_chat_template(FakeTokenizer(42))


# ------------------------------------------------------------------ with a real (locally built) tokenizer


def test_real_tokenizer_round_trip(small_tokenizer):
    """As ToolRL's manager does: render the prompt, append the response, decode with special tokens kept."""
    assert detect_chat_template(small_tokenizer) == "qwen"
    chat = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    prompt = small_tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    prompt_ids = small_tokenizer(prompt, add_special_tokens=False)["input_ids"]
    response_ids = small_tokenizer(ANSWER + "<|im_end|>", add_special_tokens=False)["input_ids"]
    decoded = small_tokenizer.decode(prompt_ids + response_ids, skip_special_tokens=False)
    assert compute_score(decoded, GT) == {"score": 4.0, "format": 1.0, "correctness": 3.0, "length": 0.0}
    assert compute_score(decoded, GT, chat_template=detect_chat_template(small_tokenizer))["score"] == 4.0
