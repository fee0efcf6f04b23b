"""Fixtures of the gold / SFT export tests."""

from __future__ import annotations

import pytest

from sft_support import tool_tokenizer_dir


@pytest.fixture(scope="module")
def tool_tokenizer(qwen_tokenizer_dir, tmp_path_factory):
    """The locally built Qwen tokenizer with a tool-aware chat template (:data:`sft_support.TOOL_TEMPLATE`)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tool_tokenizer_dir(qwen_tokenizer_dir, tmp_path_factory.mktemp("tok_tools")))
