"""banking_knowledge's dense ``KB_search``: cosine retrieval over embeddings from an OpenAI-compatible
``/embeddings`` endpoint, validated before anything is kept.

Every answer is checked before it is used or cached: one vector per input, each with an integer ``index``, the
indices covering the batch exactly once; every vector of the index's dimension, its values finite and its norm
finite (``NaN``, ``inf`` and ``1e308`` are refused). A bad answer is a :class:`RetrievalConfigError` naming the
endpoint, the model and what was wrong: at build time the domain does not load, at query time the ``KB_search``
call is an error observation. Each request waits at most ``timeout_s`` (option ``embeddings_timeout_s``).

The document vectors are cached on disk, one file per endpoint, model, vector dimension and document set
(``<cache_dir>/<key>.npz``, the key the sha256 of the four; the documents are embedded without the query
instruction, so it is no part of the file's key). Building an index asks the endpoint for the dimension of its
vectors (one short request), so an endpoint that now answers with another dimension gets a file of its own. A
cache file that cannot be read or does not hold what its name promises is reported with its path and rebuilt.
Query vectors are kept in memory in a least-recently-used cache bounded by :data:`QUERY_CACHE_BYTES`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ....files import atomic_path
from .knowledge import DEFAULT_TOP_K, KnowledgeBase, RetrievalConfigError

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0
"""Seconds one ``/embeddings`` request may take (option ``embeddings_timeout_s``)."""
QUERY_CACHE_BYTES = 16 << 20
"""Memory the cached query vectors of one index may take; the least recently used go first."""
PROBE_TEXT = "dimension probe"
CACHE_FORMAT = 1


def document_set_hash(kb: KnowledgeBase) -> str:
    """sha256 over the documents' ids and contents, in index order."""
    digest = hashlib.sha256()
    for doc in kb.documents:
        for part in (doc.id, doc.content):
            data = part.encode()
            digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()


@dataclass
class DenseIndex:
    """Cosine retrieval over a KB's document embeddings (see the module doc). Building it asks the endpoint for
    its dimension and embeds the documents unless their cache file is there and sound; an endpoint that cannot be
    reached, or answers with anything but valid embeddings, raises :class:`RetrievalConfigError` there."""

    kb: KnowledgeBase
    base_url: str
    model: str
    cache_dir: Path
    api_key: str | None = None
    query_instruction: str | None = None
    top_k: int = DEFAULT_TOP_K
    timeout_s: float = DEFAULT_TIMEOUT_S
    batch_size: int = 64
    query_cache_bytes: int = QUERY_CACHE_BYTES
    _queries: OrderedDict[str, np.ndarray] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _client: Any = field(default=None, repr=False)
    _client_pid: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        self.url = self.base_url.rstrip("/") + "/embeddings"
        if not (isinstance(self.timeout_s, int | float) and 0 < self.timeout_s < math.inf):
            raise RetrievalConfigError(f"embeddings_timeout_s must be a positive number, got {self.timeout_s!r}")
        self.dimension = len(self.embed([PROBE_TEXT], None)[0])
        self.cache_path = Path(self.cache_dir) / f"{self._cache_key()}.npz"
        matrix = self._load_cache()
        if matrix is None:
            matrix = self._embed_documents()
            self._save_cache(matrix)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self._docs = matrix / np.where(norms == 0, 1, norms)

    # ------------------------------------------------------------------------------------------ the endpoint
    def embed(self, texts: list[str], dimension: int | None = -1) -> list[np.ndarray]:
        """Validated embeddings of ``texts`` from the endpoint, in input order, each of ``dimension`` values (-1:
        the index's; None: any, the same for all)."""
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = self._http().post(
                self.url, json={"model": self.model, "input": texts}, headers=headers, timeout=self.timeout_s
            )
            response.raise_for_status()
            body = response.json()
        except httpx.TimeoutException:
            raise self._error(f"did not answer within {self.timeout_s:g} s (embeddings_timeout_s)") from None
        except (httpx.HTTPError, ValueError) as exc:
            raise self._error(f"did not return embeddings: {type(exc).__name__}: {exc}") from None
        return self._vectors(body, len(texts), self.dimension if dimension == -1 else dimension)

    def _http(self) -> Any:
        """The index's HTTP client (connections kept between queries; a forked process opens its own)."""
        import httpx

        with self._lock:
            if self._client is None or self._client_pid != os.getpid():
                self._client, self._client_pid = httpx.Client(), os.getpid()
            return self._client

    def _vectors(self, body: Any, count: int, dimension: int | None) -> list[np.ndarray]:
        """The answer's vectors in input order, or :class:`RetrievalConfigError` saying what is wrong."""
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise self._error("did not return embeddings: the answer has no 'data' list")
        if len(data) != count:
            raise self._error(f"returned {len(data)} vectors for {count} inputs")
        slots: list[np.ndarray | None] = [None] * count
        for position, item in enumerate(data):
            index = item.get("index") if isinstance(item, dict) else None
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
                raise self._error(f"gave data[{position}] the index {_shown(index)}, not an integer in [0, {count})")
            if slots[index] is not None:
                raise self._error(f"gave the index {index} twice")
            slots[index] = self._vector(item.get("embedding"), index, dimension)
            dimension = len(slots[index])  # type: ignore[arg-type]
        return [v for v in slots if v is not None]

    def _vector(self, raw: Any, index: int, dimension: int | None) -> np.ndarray:
        if not isinstance(raw, list) or not raw or not all(_is_number(x) for x in raw):
            raise self._error(f"returned a vector for input {index} that is not a list of numbers")
        try:
            vector = np.asarray(raw, dtype=np.float64)
        except OverflowError:  # an integer beyond float range
            vector = np.full(len(raw), np.inf)
        with np.errstate(over="ignore", invalid="ignore"):
            norm = float(np.linalg.norm(vector))
        if not np.isfinite(vector).all() or not math.isfinite(norm):
            raise self._error(f"returned a vector for input {index} with values that are not finite (NaN, inf, 1e308)")
        if dimension is not None and vector.size != dimension:
            raise self._error(f"returned a vector of {vector.size} values for input {index}; expected {dimension}")
        return vector

    def _error(self, what: str) -> RetrievalConfigError:
        return RetrievalConfigError(f"embeddings endpoint {self.url} (model {self.model!r}) {what}")

    # ------------------------------------------------------------------------------------- document cache
    def _cache_key(self) -> str:
        parts = [self.url, self.model, str(self.dimension), document_set_hash(self.kb)]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]

    def _meta(self) -> dict[str, Any]:
        return {
            "format": CACHE_FORMAT,
            "endpoint": self.url,
            "model": self.model,
            "dimension": self.dimension,
            "documents": document_set_hash(self.kb),
        }

    def _load_cache(self) -> np.ndarray | None:
        """The cached document matrix, or None when there is none; a file that cannot be read or does not hold
        this index's vectors is reported (its path named) and rebuilt."""
        path = self.cache_path
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as stored:
                meta = json.loads(str(stored["meta"]))
                matrix = np.array(stored["matrix"], dtype=np.float64)
            if meta != self._meta():
                raise ValueError(f"it holds {meta}, not this index's vectors")
            if matrix.shape != (len(self.kb), self.dimension) or not np.isfinite(matrix).all():
                raise ValueError(f"its matrix of shape {matrix.shape} is not {len(self.kb)} finite vectors")
        except Exception as exc:  # noqa: BLE001 - any unreadable file (EOFError, BadZipFile, ValueError, ...)
            logger.warning(
                "embeddings cache file %s is corrupted (%s: %s); rebuilding it", path, type(exc).__name__, exc
            )
            return None
        return matrix

    def _embed_documents(self) -> np.ndarray:
        texts = [d.content for d in self.kb.documents]
        vectors: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            vectors += self.embed(texts[start : start + self.batch_size])
        return np.stack(vectors) if vectors else np.zeros((0, self.dimension))

    def _save_cache(self, matrix: np.ndarray) -> None:
        try:
            with atomic_path(self.cache_path) as tmp, open(tmp, "wb") as handle:
                np.savez(handle, matrix=matrix, meta=np.array(json.dumps(self._meta())))
        except OSError as exc:  # a cache that cannot be written costs a rebuild next time, never the run
            logger.warning("embeddings cache file %s cannot be written (%s); not cached", self.cache_path, exc)

    # ----------------------------------------------------------------------------------------------- search
    def query_vector(self, text: str) -> np.ndarray:
        """The embedding of a query text, from the LRU cache or the endpoint."""
        with self._lock:
            vec = self._queries.get(text)
            if vec is not None:
                self._queries.move_to_end(text)
                return vec
        vec = self.embed([text])[0]
        with self._lock:
            self._queries[text] = vec
            self._queries.move_to_end(text)
            limit = max(1, self.query_cache_bytes // max(1, vec.nbytes))
            while len(self._queries) > limit:
                self._queries.popitem(last=False)
        return vec

    def cached_queries(self) -> int:
        with self._lock:
            return len(self._queries)

    def search(self, query: Any, top_k: int | None = None) -> list[tuple[str, float]]:
        if not query or not query.strip():  # a non-string query raises here, as in tau2
            return []
        text = f"Instruct: {self.query_instruction}\nQuery:{query}" if self.query_instruction else query
        vec = self.query_vector(text)
        norm = np.linalg.norm(vec)
        scores = np.zeros(len(self._docs)) if norm == 0 else self._docs @ (vec / norm)
        k = min(self.top_k if top_k is None else top_k, len(scores))
        order = np.argsort(scores)[::-1][:k]
        return [(self.kb.documents[i].id, float(scores[i])) for i in order]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shown(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "..."
