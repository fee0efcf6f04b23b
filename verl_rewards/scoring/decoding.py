"""Decoding rollouts to text, batched across the samples a reward worker scores at the same time.

verl's reward worker gathers one ``run_single`` per sample on one event loop. Decoding is the largest cost of a
rule-based reward step (1-2k tokens per rollout), and a tokenizer decodes one sequence at a time under the GIL.
:class:`DecodeBatcher` collects the decode requests made on an event loop during one pass of the loop and hands
them to the fast tokenizer's Rust backend in one ``decode_batch`` call on a thread: the backend releases the GIL
and decodes in parallel, and the loop keeps running meanwhile.

The text is exactly ``tokenizer.decode(ids, skip_special_tokens=...)``: a fast tokenizer's ``decode`` is its
backend's ``decode`` followed by ``clean_up_tokenization`` when ``clean_up_tokenization_spaces`` is set, which
the batcher applies the same way. Tokenizers without a Rust backend (slow tokenizers, test doubles) are decoded
one by one with their own ``decode``.

One undecodable sequence (a negative token id, or one beyond the backend's 32-bit range) makes the backend reject
the whole batch; the batch is then decoded one sequence at a time, so only the samples whose own ids are bad fail
(their reward call raises: fallback score, ``reward_error=1``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

#: most sequences decoded by one backend call (bounds the latency a sample waits for its batch)
MAX_BATCH = 256


def backend_of(tokenizer: Any) -> Any | None:
    """The Rust ``tokenizers.Tokenizer`` behind a fast Hugging Face tokenizer, else None."""
    backend = getattr(tokenizer, "_tokenizer", None)
    return backend if backend is not None and hasattr(backend, "decode_batch") else None


class DecodeBatcher:
    """Decodes token id lists for coroutines of one process, batching the requests of each loop pass."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        self._backend = backend_of(tokenizer)
        self._clean_up = bool(getattr(tokenizer, "clean_up_tokenization_spaces", False))
        self._pending: dict[int, list[tuple[list[int], bool, asyncio.Future]]] = {}
        self._lock = threading.Lock()

    def decode_now(self, ids: Sequence[int], skip_special_tokens: bool) -> str:
        """Decode one sequence in the calling thread (same text as the batched path)."""
        if self._backend is None:
            return self.tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)
        return self._finish(self._backend.decode(list(ids), skip_special_tokens=skip_special_tokens))

    async def decode(self, ids: Sequence[int], skip_special_tokens: bool) -> str:
        """Decode ``ids``; requests made in the same loop pass share one backend call off the loop."""
        if self._backend is None:
            return await asyncio.to_thread(self.decode_now, ids, skip_special_tokens)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future = loop.create_future()
        key = id(loop)
        with self._lock:
            batch = self._pending.get(key)
            if batch is None:
                batch = self._pending[key] = []
                loop.call_soon(self._flush, loop)
            batch.append((list(ids), skip_special_tokens, fut))
            if len(batch) >= MAX_BATCH:
                del self._pending[key]
                self._start(loop, batch)
        return await fut

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            batch = self._pending.pop(id(loop), None)
        if batch:
            self._start(loop, batch)

    def _start(self, loop: asyncio.AbstractEventLoop, batch: list[tuple[list[int], bool, asyncio.Future]]) -> None:
        task = loop.run_in_executor(None, self._decode_batch, batch)
        task.add_done_callback(lambda done: _deliver(batch, done))

    def _decode_batch(self, batch: list[tuple[list[int], bool, asyncio.Future]]) -> list[str | Exception]:
        """Each request's text, or the exception decoding its own ids raised (see the module doc)."""
        backend = self._backend
        assert backend is not None  # only batched when there is a backend
        out: list[str | Exception] = [""] * len(batch)
        for skip in (True, False):  # one backend call per setting present
            idx = [i for i, (_, s, _) in enumerate(batch) if s is skip]
            if not idx:
                continue
            try:
                texts = backend.decode_batch([batch[i][0] for i in idx], skip_special_tokens=skip)
            except Exception:  # noqa: BLE001 - one bad sequence: decode one by one, fail only the bad ones
                for i in idx:
                    try:
                        out[i] = self._finish(backend.decode(batch[i][0], skip_special_tokens=skip))
                    except Exception as exc:  # noqa: BLE001 - delivered to that sample's caller
                        out[i] = exc
                continue
            for i, text in zip(idx, texts, strict=True):
                out[i] = self._finish(text)
        return out

    def _finish(self, text: str) -> str:
        return self.tokenizer.clean_up_tokenization(text) if self._clean_up else text


def _deliver(batch: list[tuple[list[int], bool, asyncio.Future]], done: asyncio.Future) -> None:
    exc = done.exception() if not done.cancelled() else asyncio.CancelledError()
    texts = None if exc is not None else done.result()
    for i, (_, _, fut) in enumerate(batch):
        if fut.done():  # its caller gave up (timeout)
            continue
        outcome = exc if exc is not None else texts[i]  # type: ignore[index]
        if isinstance(outcome, BaseException):
            fut.set_exception(outcome)
        else:
            fut.set_result(outcome)
