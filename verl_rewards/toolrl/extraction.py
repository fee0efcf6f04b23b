"""Cutting the model's prediction (the last assistant turn) out of a decoded prompt+response string.

ToolRL decodes prompt and response together with special tokens kept, then takes the text after the
**last** assistant header, cut at the first end-of-turn token after it, stripped. The markers:

============  ================================================  ==============
template      assistant header                                  end of turn
============  ================================================  ==============
``qwen``      ``<|im_start|>assistant``                         ``<|im_end|>``
``llama``     ``<|start_header_id|>assistant<|end_header_id|>``  ``<|eot_id|>``
============  ================================================  ==============

``"qwen"`` and ``"llama"`` reproduce ToolRL's string splits exactly (so without a header the text before
the first end-of-turn token is used). ``"auto"`` looks for both headers and uses whichever occurs last;
when neither occurs, the whole string (stripped) is the prediction.

Model output is untrusted: the prediction is truncated to :data:`MAX_PREDICTION_CHARS` characters before
any parsing. Real responses (a few thousand tokens) are far below the cap; it only bounds the work spent
on degenerate outputs. All operations here are linear in the input length.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from .options import ChatTemplate

#: Cap on the characters of the extracted prediction that are scored (64 KiB of text); the rest is dropped.
MAX_PREDICTION_CHARS = 64 * 1024

QWEN_HEADER = "<|im_start|>assistant"
QWEN_END = "<|im_end|>"
LLAMA_HEADER = "<|start_header_id|>assistant<|end_header_id|>"
LLAMA_END = "<|eot_id|>"

MARKERS: dict[str, tuple[str, str]] = {
    "qwen": (QWEN_HEADER, QWEN_END),
    "llama": (LLAMA_HEADER, LLAMA_END),
}


def _after_last_header(text: str, header: str, end: str) -> str:
    """ToolRL's ``text.split(header)[-1].split(end)[0]`` without building the split lists."""
    pos = text.rfind(header)
    start = 0 if pos < 0 else pos + len(header)
    stop = text.find(end, start)
    return text[start:] if stop < 0 else text[start:stop]


def extract_prediction(solution_str: str, chat_template: ChatTemplate = "auto") -> str:
    """The stripped assistant turn of ``solution_str``, truncated to :data:`MAX_PREDICTION_CHARS`."""
    if not isinstance(solution_str, str):
        raise TypeError(f"solution_str must be a str, got {type(solution_str).__name__}")
    if chat_template in MARKERS:
        header, end = MARKERS[chat_template]
        pred = _after_last_header(solution_str, header, end)
    elif chat_template == "auto":
        best: tuple[int, str, str] | None = None
        for header, end in MARKERS.values():
            pos = solution_str.rfind(header)
            if pos >= 0 and (best is None or pos > best[0]):
                best = (pos, header, end)
        if best is None:
            pred = solution_str
        else:
            pos, header, end = best
            start = pos + len(header)
            stop = solution_str.find(end, start)
            pred = solution_str[start:] if stop < 0 else solution_str[start:stop]
    else:
        raise ValueError(f"chat_template must be 'auto', 'qwen' or 'llama', got {chat_template!r}")
    return pred.strip()[:MAX_PREDICTION_CHARS]


def detect_chat_template(tokenizer_or_template_str: Any) -> Literal["qwen", "llama"]:
    """Tell "qwen" (ChatML) from "llama" (Llama 3) by the special tokens a chat template uses.

    Accepts a template string or a tokenizer with a ``chat_template`` attribute (a string, or a mapping of
    named templates as some tokenizers have). Raises ``ValueError`` when the template uses neither set of
    markers, or both.
    """
    if isinstance(tokenizer_or_template_str, str):
        template: Any = tokenizer_or_template_str
    else:
        template = getattr(tokenizer_or_template_str, "chat_template", None)
        if template is None:
            raise ValueError(
                f"{type(tokenizer_or_template_str).__name__} has no chat_template; pass chat_template="
                "'qwen' or 'llama' explicitly"
            )
    if isinstance(template, Mapping):
        template = "\n".join(str(v) for v in template.values())
    elif isinstance(template, list):  # [{"name": ..., "template": ...}] as stored in some tokenizer configs
        template = "\n".join(str(t.get("template", "")) if isinstance(t, Mapping) else str(t) for t in template)
    if not isinstance(template, str):
        raise ValueError(f"chat_template must be a string, got {type(template).__name__}")
    is_qwen = "<|im_start|>" in template and "<|im_end|>" in template
    is_llama = "<|start_header_id|>" in template and "<|eot_id|>" in template
    if is_qwen and not is_llama:
        return "qwen"
    if is_llama and not is_qwen:
        return "llama"
    why = "uses both ChatML and Llama 3 markers" if is_qwen else "uses neither ChatML nor Llama 3 markers"
    raise ValueError(
        f"unknown chat template ({why}); supported: Qwen/ChatML (<|im_start|>, <|im_end|>) and Llama 3 "
        "(<|start_header_id|>, <|eot_id|>). Set chat_template='qwen' or 'llama' explicitly, or 'auto'."
    )
