"""Batched decoding gives exactly ``tokenizer.decode``'s text, for concurrent samples on one event loop."""

from __future__ import annotations

import asyncio
import random

import pytest

from verl_rewards.scoring.decoding import MAX_BATCH, DecodeBatcher, backend_of


def _samples(tok, n: int, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    special = list(tok.all_special_ids)
    vocab = len(tok)
    out = []
    for _ in range(n):
        ids = [rng.randrange(vocab) for _ in range(rng.randint(0, 300))]
        for _ in range(rng.randint(0, 3)):  # special tokens anywhere
            ids.insert(rng.randint(0, len(ids)), rng.choice(special))
        out.append(ids)
    return out


@pytest.mark.parametrize("which", ["small_tokenizer", "qwen_tokenizer"])
@pytest.mark.parametrize("skip", [True, False])
def test_batched_decode_equals_tokenizer_decode(request, which, skip):
    tok = request.getfixturevalue(which)
    assert backend_of(tok) is not None  # the batched path is the one under test
    batcher = DecodeBatcher(tok)
    ids = _samples(tok, MAX_BATCH + 40)  # more than one batch

    async def all_texts() -> list[str]:
        return await asyncio.gather(*(batcher.decode(x, skip) for x in ids))

    texts = asyncio.run(all_texts())
    assert texts == [tok.decode(x, skip_special_tokens=skip) for x in ids]
    assert [batcher.decode_now(x, skip) for x in ids[:20]] == texts[:20]


def test_mixed_settings_in_one_pass_keep_their_own_setting(qwen_tokenizer):
    tok = qwen_tokenizer
    batcher = DecodeBatcher(tok)
    ids = tok.encode("<|im_start|>assistant\nhello<|im_end|>", add_special_tokens=False)

    async def both() -> list[str]:
        return await asyncio.gather(batcher.decode(ids, True), batcher.decode(ids, False))

    kept_out, kept_in = asyncio.run(both())
    assert kept_out == "assistant\nhello" and kept_in == "<|im_start|>assistant\nhello<|im_end|>"


def test_tokenizer_without_backend_decodes_with_its_own_decode():
    class Plain:
        def decode(self, ids, skip_special_tokens=True):
            return "-".join(map(str, ids)) + ("!" if skip_special_tokens else "?")

    batcher = DecodeBatcher(Plain())
    assert asyncio.run(batcher.decode([1, 2], False)) == "1-2?"
