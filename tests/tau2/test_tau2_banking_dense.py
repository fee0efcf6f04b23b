"""banking_knowledge's dense ``KB_search`` against an ``/embeddings`` server on 127.0.0.1 that the tests make
misbehave: every answer is validated before it is used or cached, the caches are keyed by everything that changes
them and bounded, a hanging endpoint is bounded by the request timeout, a corrupted cache file is named and rebuilt.
"""

from __future__ import annotations

import io
import logging
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.domains.banking_knowledge import retrieval
from verl_rewards.tau2.domains.banking_knowledge.dense import DenseIndex
from verl_rewards.tau2.domains.banking_knowledge.retrieval import RetrievalConfigError

from embeddings_server import EmbeddingsServer, bag_of_words
from tau2_support import require_data

QUERY = "close debit card"


@pytest.fixture(scope="module")
def root() -> Path:
    return require_data("banking_knowledge")


@pytest.fixture(scope="module")
def kb(root: Path) -> Any:
    return retrieval.knowledge_base(root / "banking_knowledge")


def dense(root: Path, server: EmbeddingsServer, cache: Path, **options: Any) -> Any:
    return load_domain(
        "banking_knowledge",
        root,
        retrieval="openai_embeddings",
        embeddings_base_url=server.base_url,
        embeddings_model=options.pop("model", "bow"),
        embeddings_cache_dir=str(cache),
        **options,
    )


def index(kb: Any, server: EmbeddingsServer, cache: Path, **kwargs: Any) -> DenseIndex:
    return DenseIndex(kb=kb, base_url=server.base_url, model=kwargs.pop("model", "bow"), cache_dir=cache, **kwargs)


def is_query(body: dict[str, Any]) -> bool:
    return body["input"] == [QUERY] or any("Query:" in t for t in body["input"])


def bad_documents(value: float) -> Any:
    """An endpoint answering the document batches (not the dimension probe) with ``value`` in one vector."""

    def answer(body: dict[str, Any], data: list[dict[str, Any]]) -> Any:
        if len(data) > 1:
            data[1]["embedding"][3] = value
        return {"data": data}

    return answer


# ------------------------------------------------------------------------------------------- what is cached
def test_dense_retrieval_without_an_endpoint_fails_at_start(root: Path, tmp_path: Path) -> None:
    with EmbeddingsServer(status=503) as server:
        with pytest.raises(RetrievalConfigError, match="did not return embeddings"):
            load_domain(
                "banking_knowledge",
                root,
                retrieval="openai_embeddings",
                embeddings_base_url=server.base_url,
                embeddings_model="down",
                embeddings_cache_dir=str(tmp_path),
            )
    with pytest.raises(RetrievalConfigError, match="did not return embeddings"):
        load_domain(
            "banking_knowledge",
            root,
            retrieval="openai_embeddings",
            embeddings_base_url="http://127.0.0.1:9/v1",
            embeddings_model="none",
            embeddings_cache_dir=str(tmp_path),
        )


def test_the_document_cache_is_one_file_per_endpoint_model_dimension_and_document_set(root, kb, tmp_path):
    cache = tmp_path / "cache"
    with EmbeddingsServer() as server:
        dom = dense(root, server, cache)
        batches = math.ceil(len(kb) / 64)
        assert len(server.requests) == 1 + batches  # the dimension probe, then the documents
        (stored,) = cache.glob("*.npz")
        out = dom.make_env().step("KB_search", {"query": QUERY})
        assert out.startswith("1. ") and "   Score: " in out and retrieval.TIMING_RE.search(out)
        assert len(server.requests) == 2 + batches  # one query embedding
        again = index(kb, server, cache)  # another process's index over the same cache: only the probe
        assert len(server.requests) == 3 + batches
        assert again.search(QUERY)[0][0] == out.split("   ID: ")[1].split("\n")[0]
        expected = np.stack([bag_of_words(d.content, 64) for d in kb.documents])
        with np.load(stored) as saved:
            assert np.array_equal(saved["matrix"], expected)
    with EmbeddingsServer() as moved:  # the same model elsewhere is another endpoint: embedded again
        index(kb, moved, cache)
        assert len(moved.requests) == 1 + batches and len(list(cache.glob("*.npz"))) == 2


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e308], ids=["nan", "inf", "-inf", "1e308"])
def test_non_finite_document_vectors_are_refused_and_never_cached(root, kb, tmp_path, value):
    with EmbeddingsServer(answer=bad_documents(value)) as server:
        with pytest.raises(RetrievalConfigError, match=r"input 1 with values that are not finite"):
            dense(root, server, tmp_path / "cache", model=f"bad-{value}")
    assert not list((tmp_path / "cache").rglob("*.np*"))


@pytest.mark.parametrize("value", [math.nan, math.inf, 1e308], ids=["nan", "inf", "1e308"])
def test_a_non_finite_query_vector_is_an_error_observation_and_not_cached(kb, tmp_path, value):
    healed = threading.Event()

    def answer(body: dict[str, Any], data: list[dict[str, Any]]) -> Any:
        if is_query(body) and not healed.is_set():
            data[0]["embedding"][0] = value
        return {"data": data}

    with EmbeddingsServer(answer=answer) as server:
        dense_index = index(kb, server, tmp_path)
        with pytest.raises(RetrievalConfigError, match="not finite"):
            dense_index.search(QUERY)
        assert dense_index.cached_queries() == 0
        healed.set()
        assert dense_index.search(QUERY)  # asked again, now answered properly
        assert all(math.isfinite(score) for _, score in dense_index.search(QUERY))


def test_an_endpoint_that_changed_its_dimension_gets_a_cache_of_its_own(root, kb, tmp_path):
    cache = tmp_path / "cache"
    with EmbeddingsServer(dim=64) as server:
        first = index(kb, server, cache)
        server.dim = 32  # the endpoint now serves another model under the same name
        second = index(kb, server, cache)
        assert first.dimension == 64 and second.dimension == 32
        assert len(list(cache.glob("*.npz"))) == 2
        assert second.search(QUERY)[0][1] > 0  # no matmul error: documents and queries agree
        with pytest.raises(RetrievalConfigError, match="returned a vector of 32 values for input 0; expected 64"):
            first.search("another query")  # an index whose endpoint changed under it says so


@pytest.mark.parametrize(
    ("rewrite", "message"),
    [
        (lambda d: [dict(x, index=str(x["index"])) for x in d], r"gave data\[0\] the index \"0\", not an integer"),
        (lambda d: [dict(x, index=float(x["index"])) for x in d], r"the index 0.0, not an integer"),
        (lambda d: [dict(x, index=True) for x in d], r"the index true, not an integer"),
        (lambda d: [dict(x, index=0) for x in d], r"gave the index 0 twice"),
        (lambda d: [dict(x, index=x["index"] + 1) for x in d], r"the index 64, not an integer in \[0, 64\)"),
        (lambda d: [{k: v for k, v in x.items() if k != "index"} for x in d], r"the index null"),
        (lambda d: d[:-1], r"returned 63 vectors for 64 inputs"),
        (lambda d: [dict(x, embedding=x["embedding"][:-1]) if x["index"] == 5 else x for x in d], "input 5; expected"),
        (lambda d: [dict(x, embedding=["1"] * 64) for x in d], "not a list of numbers"),
        (lambda d: [dict(x, embedding=[10**400] * 64) for x in d], "not finite"),
    ],
    ids=["text", "float", "bool", "repeated", "shifted", "missing", "short", "ragged", "strings", "huge-int"],
)
def test_indices_must_be_integers_covering_the_batch_exactly(kb, tmp_path, rewrite, message):
    def answer(body: dict[str, Any], data: list[dict[str, Any]]) -> Any:
        return {"data": rewrite(data)} if len(data) == 64 else None

    with EmbeddingsServer(answer=answer) as server, pytest.raises(RetrievalConfigError, match=message):
        index(kb, server, tmp_path)
    assert not list(tmp_path.glob("*.npz"))


def test_shuffled_answers_are_put_back_in_input_order(kb, tmp_path):
    def answer(body: dict[str, Any], data: list[dict[str, Any]]) -> Any:
        return {"data": list(reversed(data))}

    with EmbeddingsServer(answer=answer) as server:
        shuffled = index(kb, server, tmp_path / "a")
    with EmbeddingsServer() as server:
        ordered = index(kb, server, tmp_path / "b")
    assert np.array_equal(shuffled._docs, ordered._docs)


# ------------------------------------------------------------------------------------------- time bounds
def test_a_hanging_endpoint_is_bounded_by_the_request_timeout_option(root, tmp_path):
    """The query is held by the server until the test ends; the call ends as an error observation naming the
    option (waited on with a generous bound, not timed)."""
    release = threading.Event()

    def answer(body: dict[str, Any], data: list[dict[str, Any]]) -> Any:
        return ("hold", release) if is_query(body) else None

    with EmbeddingsServer(answer=answer) as server:
        env = dense(root, server, tmp_path, embeddings_timeout_s=0.5).make_env()
        result: list[str] = []
        caller = threading.Thread(target=lambda: result.append(env.step("KB_search", {"query": QUERY})))
        caller.start()
        caller.join(120)
        release.set()
    assert result and result[0].startswith("Error: embeddings endpoint ")
    assert "did not answer within 0.5 s (embeddings_timeout_s)" in result[0]
    assert env.actions[-1]["error"] is True
    with pytest.raises(RetrievalConfigError, match="embeddings_timeout_s must be a positive number"):
        load_domain("banking_knowledge", root, retrieval="openai_embeddings", embeddings_timeout_s=0, **_endpoint())


def _endpoint() -> dict[str, str]:
    return {"embeddings_base_url": "http://127.0.0.1:9/v1", "embeddings_model": "m"}


# -------------------------------------------------------------------------------------- in-process index
def test_each_query_instruction_and_api_key_gets_its_own_index(root, tmp_path, monkeypatch):
    monkeypatch.setenv("KEY_A", "secret-a")
    monkeypatch.setenv("KEY_B", "secret-b")
    with EmbeddingsServer() as server:
        a = dense(root, server, tmp_path, query_instruction="Find banking policy", embeddings_api_key_env="KEY_A")
        b = dense(root, server, tmp_path, query_instruction="Find fees", embeddings_api_key_env="KEY_B")
        start = len(server.requests)
        a.make_env().step("KB_search", {"query": QUERY})
        b.make_env().step("KB_search", {"query": QUERY})
        sent = server.requests[start:]
        keys = server.keys[start:]
    assert [r["input"] for r in sent] == [
        [f"Instruct: Find banking policy\nQuery:{QUERY}"],
        [f"Instruct: Find fees\nQuery:{QUERY}"],
    ]
    assert keys == ["Bearer secret-a", "Bearer secret-b"]


def test_the_query_cache_is_a_bounded_lru(kb, tmp_path):
    with EmbeddingsServer() as server:
        dense_index = index(kb, server, tmp_path, query_cache_bytes=100 * 64 * 8)  # 100 vectors of 64 floats
        for i in range(400):
            dense_index.search(f"query {i}")
            if i % 50 == 0:
                dense_index.search("query 0")  # kept in use: never the least recently used
        assert dense_index.cached_queries() == 100
        before = len(server.requests)
        dense_index.search("query 0")
        dense_index.search("query 399")
        assert len(server.requests) == before  # both cached
        dense_index.search("query 1")
        assert len(server.requests) == before + 1  # evicted long ago: asked again


# ------------------------------------------------------------------------------------------ cache files
@pytest.mark.parametrize(
    "damage",
    [b"", b"garbage", b"PK\x03\x04 truncated zip", "other"],
    ids=["empty", "garbage", "truncated-zip", "another-index"],
)
def test_a_corrupted_cache_file_is_named_and_rebuilt(kb, tmp_path, caplog, damage):
    with EmbeddingsServer() as server:
        built = index(kb, server, tmp_path)
        (stored,) = tmp_path.glob("*.npz")
        good = stored.read_bytes()
        if damage == "other":  # a sound file of another document set under this name
            with np.load(stored) as saved:
                np.savez(stored, matrix=saved["matrix"][:-1], meta=saved["meta"])
        else:
            stored.write_bytes(damage)
        requests = len(server.requests)
        with caplog.at_level(logging.WARNING):
            rebuilt = index(kb, server, tmp_path)
        assert len(server.requests) > requests + 1  # the documents were embedded again
        assert rebuilt.search(QUERY) == built.search(QUERY)
    assert f"embeddings cache file {stored} is corrupted" in caplog.text and "rebuilding it" in caplog.text
    with np.load(stored) as saved, np.load(io.BytesIO(good)) as original:
        assert np.array_equal(saved["matrix"], original["matrix"])
