"""The smoke run's model: a tiny random Qwen2 (2 layers, hidden 64) and a tokenizer trained on this machine.

Nothing is downloaded. The tokenizer is a byte-level BPE trained on the run's own texts (prompts, tool schemas,
scripted responses) plus :mod:`verl_rewards.local_tokenizer`'s corpus, so long tau2 prompts stay short in tokens;
its chat template is Qwen2.5's (system prompt with ``<tools>``, ``<tool_call>`` JSON in assistant turns,
``<tool_response>`` in user turns), which verl's ``hermes`` tool parser reads.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from ..local_tokenizer import _CORPUS, train_bpe_tokenizer

#: Qwen2.5's chat template (tools, tool calls, tool responses), as Qwen ships it, with ``arguments`` given either
#: as an object or as a JSON string
QWEN25_TEMPLATE = (
    "{%- if tools %}{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}"
    "{%- else %}{{- 'You are a helpful assistant.' }}{%- endif %}"
    '{{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided '
    'with function signatures within <tools></tools> XML tags:\\n<tools>" }}'
    '{%- for tool in tools %}{{- "\\n" }}{{- tool | tojson }}{%- endfor %}'
    '{{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within '
    '<tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": '
    '<args-json-object>}\\n</tool_call><|im_end|>\\n" }}'
    "{%- else %}{%- if messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + (messages[0]['content'] or '') + '<|im_end|>\\n' }}{%- endif %}{%- endif %}"
    "{%- for message in messages %}"
    '{%- if (message.role == "user") or (message.role == "system" and not loop.first) or '
    '(message.role == "assistant" and not message.tool_calls) %}'
    "{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>' + '\\n' }}"
    "{%- elif message.role == \"assistant\" %}{{- '<|im_start|>' + message.role }}"
    "{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}"
    "{%- for tool_call in message.tool_calls %}"
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    '{{- \'\\n<tool_call>\\n{"name": "\' }}{{- tool_call.name }}{{- \'", "arguments": \' }}'
    "{%- if tool_call.arguments is string %}{{- tool_call.arguments }}"
    "{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}"
    "{{- '}\\n</tool_call>' }}{%- endfor %}{{- '<|im_end|>\\n' }}"
    '{%- elif message.role == "tool" %}'
    "{%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != \"tool\") %}{{- '<|im_start|>user' }}"
    "{%- endif %}{{- '\\n<tool_response>\\n' }}{{- message.content }}{{- '\\n</tool_response>' }}"
    "{%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

TINY_LAYERS = 2
TINY_HIDDEN = 64


def build_tokenizer(out_dir: str | os.PathLike, texts: Iterable[str], vocab_size: int = 4096) -> str:
    """Train a byte-level BPE on ``texts`` (+ a small built-in corpus) with ChatML specials and Qwen2.5's template."""
    corpus = list(_CORPUS) * 5 + [t for t in texts if t]
    return train_bpe_tokenizer(out_dir, corpus, vocab_size, chat_template=QWEN25_TEMPLATE)


def build_tiny_qwen2(
    out_dir: str | os.PathLike,
    texts: Iterable[str],
    seed: int = 0,
    max_positions: int = 32768,
    *,
    layers: int = TINY_LAYERS,
    hidden: int = TINY_HIDDEN,
) -> str:
    """Save a random Qwen2 (2 layers, hidden 64 unless told) with its tokenizer in ``out_dir`` (a model path verl
    loads); ``seed`` draws the weights."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    build_tokenizer(out, texts)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(out))
    eos = int(tok.convert_tokens_to_ids("<|im_end|>"))  # type: ignore[arg-type]
    pad = int(tok.convert_tokens_to_ids("<|endoftext|>"))  # type: ignore[arg-type]
    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        tie_word_embeddings=False,
        bos_token_id=pad,
        eos_token_id=eos,
        pad_token_id=pad,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.save_pretrained(str(out), safe_serialization=True)
    GenerationConfig(eos_token_id=eos, pad_token_id=pad, bos_token_id=pad).save_pretrained(str(out))
    (out / "verl_rewards_smoke_model.json").write_text(
        json.dumps({"layers": layers, "hidden": hidden, "vocab": len(tok), "seed": seed}) + "\n"
    )
    return str(out)
