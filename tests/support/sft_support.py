"""Helpers for the SFT export tests: a tool-aware chat template in the layout of Qwen2.5's (tools listed in the
system turn inside ``<tools></tools>``, assistant calls as ``<tool_call>`` JSON, tool results as a user turn of
``<tool_response>`` blocks) on the locally built Qwen tokenizer, and verl's SFT dataset config."""

from __future__ import annotations

import shutil
from pathlib import Path

TOOL_TEMPLATE = (
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}"
    "{%- else %}{{- 'You are a helpful assistant.' }}{%- endif %}"
    "{{- '\\n\\n# Tools\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}"
    "{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags.<|im_end|>\\n' }}"
    "{%- else %}"
    "{%- if messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- else %}{{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{%- endif %}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if (message.role == 'user') or (message.role == 'system' and not loop.first) "
    "or (message.role == 'assistant' and not message.tool_calls) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- elif message.role == 'assistant' %}"
    "{{- '<|im_start|>' + message.role }}"
    "{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}"
    "{%- for tool_call in message.tool_calls %}"
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    '{{- \'\\n<tool_call>\\n{"name": "\' }}{{- tool_call.name }}{{- \'", "arguments": \' }}'
    "{{- tool_call.arguments | tojson }}{{- '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message.role == 'tool' %}"
    "{%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != 'tool') %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' }}{{- message.content }}{{- '\\n</tool_response>' }}"
    "{%- if loop.last or (messages[loop.index0 + 1].role != 'tool') %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def tool_tokenizer_dir(qwen_dir: str, out: Path) -> str:
    """A copy of the local Qwen tokenizer with :data:`TOOL_TEMPLATE` as its chat template."""
    from transformers import AutoTokenizer

    shutil.copytree(qwen_dir, out, dirs_exist_ok=True)
    tok = AutoTokenizer.from_pretrained(str(out))
    tok.chat_template = TOOL_TEMPLATE
    tok.save_pretrained(str(out))
    return str(out)


def sft_data_config(max_length: int = 200_000):
    """verl's SFT data settings (``data.*`` of ``sft_trainer_engine.yaml``) for a test dataset."""
    from omegaconf import OmegaConf

    return OmegaConf.create(
        {
            "pad_mode": "no_padding",
            "truncation": "error",
            "max_length": max_length,
            "messages_key": "messages",
            "tools_key": "tools",
        }  # fmt: skip
    )


def loss_spans(mask) -> list[tuple[int, int]]:
    """Contiguous spans of 1s in a 0/1 loss mask: the trained stretches of a sample."""
    spans, start = [], None
    values = [int(v) for v in mask]
    for i, v in enumerate([*values, 0]):
        if v and start is None:
            start = i
        elif not v and start is not None:
            spans.append((start, i))
            start = None
    return spans
