"""Retrieval for ``banking_knowledge``: the knowledge base, its indexes, the retrieval tools and the policy text.

tau2-bench 1.0.1 runs this domain under a *retrieval configuration* (``src/tau2/domains/banking_knowledge/
retrieval.py`` and ``src/tau2/knowledge/``). The offline ones are reproduced here with tau2's tools, scores and
output texts: ``no_knowledge``, ``full_kb``, ``golden_retrieval`` (no retrieval tool; the prompt carries nothing,
the whole KB, or the task's required documents), ``bm25`` (``KB_search``), ``bm25_grep`` (``KB_search`` +
``grep``) and ``grep_only`` (``grep``). ``openai_embeddings`` / ``openai_embeddings_grep`` run ``KB_search`` as
dense retrieval against any OpenAI-compatible ``/embeddings`` endpoint (options ``embeddings_base_url`` and
``embeddings_model``; every answer validated, the document vectors cached on disk: :mod:`.dense`). tau2's ``shell``
(sandboxed shell, configs ``terminal_use*`` and ``alltools``) and its LLM rerankers are not provided.

Documents are in tau2's order by default: the order the file system lists the folder in, which may differ between
machines and copies of the data and decides BM25 ties, grep's result order and the ``full_kb`` prompt; the load
option ``document_order="id"`` sorts them by id, the same everywhere. Every index is built once per process, data
folder and order, and shared by every environment of the worker.

* BM25: ``rank_bm25.BM25Okapi`` (k1=1.5, b=0.75, epsilon=0.25) over ``content.lower().split()`` of each document;
  the query is tokenised the same way; all documents are ranked by score (stable, descending: ties keep document
  order) and the first ``top_k`` (10) are returned even when their score is 0; a blank query returns nothing.
  Scores come from an inverted index over the library's fitted statistics, term by term in query order with the
  library's own float64 expression, so they equal ``BM25Okapi.get_scores`` bit for bit at a fraction of its cost.
* grep: tau2's rules, each pattern matched in a child process with a time bound (:mod:`.grep`).
* Output: ``"<i>. <title>\\n   ID: <id>\\n   Score: <score:.4f>\\n   Content: <content>\\n"`` per result, joined
  with ``\\n``; ``KB_search`` appends tau2's ``[Timing: ...]`` line (wall-clock milliseconds, as tau2 does).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....engine.toolkit import READ, tool
from ...errors import DataFileError, DataNotFoundError
from .grep import GrepIndex
from .knowledge import (
    DEFAULT_TOP_K,
    DOCUMENT_ORDERS,
    Document,
    KnowledgeBase,
    RetrievalConfigError,
    build_once,
    knowledge_base,
)

if TYPE_CHECKING:  # numpy (~0.15 s) is imported when an index is first built, not when the domain loads
    import numpy as np

__all__ = ["Document", "GrepIndex", "KnowledgeBase", "RetrievalConfigError", "knowledge_base"]


# ------------------------------------------------------------------------------------------------- BM25
class BM25Index:
    """tau2's BM25 retriever over a KB; see the module doc for the scoring rules."""

    def __init__(self, kb: KnowledgeBase):
        import numpy as np
        from rank_bm25 import BM25Okapi

        self.kb = kb
        self.ids = [d.id for d in kb.documents]
        self.model = BM25Okapi([d.content.lower().split() for d in kb.documents])
        model = self.model
        doc_len = np.array(model.doc_len)
        # the per-document part of the library's denominator, computed with its own expression
        self._norm = model.k1 * (1 - model.b + model.b * doc_len / model.avgdl)
        self._k1p1 = model.k1 + 1
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, freqs in enumerate(model.doc_freqs):
            for term, tf in freqs.items():
                slot = postings.setdefault(term, ([], []))
                slot[0].append(i)
                slot[1].append(tf)
        self._postings = {
            t: (np.array(d, dtype=np.intp), np.array(f, dtype=np.float64)) for t, (d, f) in postings.items()
        }

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document (float64, document order); equals ``BM25Okapi.get_scores``."""
        import numpy as np

        out = np.zeros(len(self.ids))
        idf = self.model.idf
        for term in query.lower().split():
            hit = self._postings.get(term)
            weight = idf.get(term) or 0
            if hit is None or not weight:
                continue
            docs, tf = hit
            out[docs] += weight * (tf * self._k1p1 / (tf + self._norm[docs]))
        return out

    def search(self, query: Any, top_k: int = DEFAULT_TOP_K) -> list[tuple[str, float]]:
        """tau2's BM25 results: ``[(doc id, score)]``, at most ``top_k``."""
        if not query or not query.strip():  # a non-string query raises here, as in tau2
            return []
        import numpy as np

        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")[: min(top_k, len(self.ids))]
        return [(self.ids[i], float(scores[i])) for i in order]


def bm25_index(kb: KnowledgeBase) -> BM25Index:
    return build_once(("bm25", *kb.key), lambda: BM25Index(kb))


# --------------------------------------------------------------------------------------------- output
def format_results(kb: KnowledgeBase, results: list[tuple[str, float]]) -> str:
    """tau2's result list (``KB_search`` and ``grep``)."""
    parts = []
    for i, (doc_id, score) in enumerate(results, 1):
        doc = kb.by_id.get(doc_id)
        title = (doc.title if doc else "") or "Untitled"
        content = doc.content if doc else ""
        parts.append(f"{i}. {title}\n   ID: {doc_id}\n   Score: {score:.4f}\n   Content: {content}\n")
    return "\n".join(parts)


def timed_search(kb: KnowledgeBase, search: Callable[[], list[tuple[str, float]]]) -> str:
    """``KB_search`` output: results (or ``No relevant documents found.``) and tau2's timing line."""
    start = time.perf_counter()
    results = search()
    retrieval_ms = (time.perf_counter() - start) * 1000
    post_start = time.perf_counter()
    body = format_results(kb, results) if results else "No relevant documents found."
    post_ms = (time.perf_counter() - post_start) * 1000
    suffix = f"\n\n[Timing: retrieval={retrieval_ms:.0f}ms"
    if post_ms > 0:
        suffix += f", reranking={post_ms:.0f}ms"
    return body + suffix + f", total={retrieval_ms + post_ms:.0f}ms]"


TIMING_RE = re.compile(r"\n\n\[Timing: retrieval=\d+ms(?:, reranking=\d+ms)?, total=\d+ms\]$")
"""The wall-clock suffix of ``KB_search`` outputs; strip it to compare outputs."""


# ---------------------------------------------------------------------------------------------- tools
class KBSearchMixin:
    """``KB_search`` (BM25 or dense, per configuration). The variant class sets ``_kb`` and ``_kb_search``."""

    _kb: KnowledgeBase
    _kb_search: Any

    @tool(READ)
    def KB_search(self, query: str) -> str:  # noqa: N802 - tau2's tool name
        """Search the knowledge base for relevant documents.

        Args:
            query: The search query to find relevant documents

        Returns:
            Relevant document excerpts matching the query
        """
        if isinstance(self._kb_search, _BM25Search):
            self._kb_search.index()  # built before the clock starts: tau2 builds it with the environment
        return timed_search(self._kb, lambda: self._kb_search.search(query))


class GrepMixin:
    """``grep`` over the KB. The variant class sets ``_kb`` and ``_grep``."""

    _kb: KnowledgeBase
    _grep: GrepIndex

    @tool(READ)
    def grep(self, pattern: str) -> str:
        """Search for a regex pattern in all knowledge base documents.

        Returns documents ranked by number of matches, with full content.

        Args:
            pattern: The regex pattern to search for (e.g., 'credit.*card', 'fee|charge')

        Returns:
            Matching documents ranked by relevance (match count)
        """
        results = self._grep.search(pattern)
        if not results:
            return f"No matches found for pattern: {pattern}"
        return format_results(self._kb, results)


# -------------------------------------------------------------------------------------- configurations
@dataclass(frozen=True)
class RetrievalConfig:
    """One retrieval configuration: its prompt template, retrieval tools and how the prompt is filled."""

    name: str
    template: str
    kb_search: str | None = None  # "bm25" | "dense" | None
    grep: bool = False
    prompt: str = "standard"  # "standard" | "full_kb" | "golden"


CONFIGS: dict[str, RetrievalConfig] = {
    c.name: c
    for c in (
        RetrievalConfig("no_knowledge", "no_knowledge.md"),
        RetrievalConfig("full_kb", "full_kb.md", prompt="full_kb"),
        RetrievalConfig("golden_retrieval", "required_docs.md", prompt="golden"),
        RetrievalConfig("bm25", "classic_rag_bm25_no_grep.md", kb_search="bm25"),
        RetrievalConfig("bm25_grep", "classic_rag_bm25.md", kb_search="bm25", grep=True),
        RetrievalConfig("grep_only", "grep_only.md", grep=True),
        RetrievalConfig("openai_embeddings", "classic_rag_openai_no_grep.md", kb_search="dense"),
        RetrievalConfig("openai_embeddings_grep", "classic_rag_openai.md", kb_search="dense", grep=True),
    )
}
UNSUPPORTED = {
    "terminal_use": "tau2's sandboxed shell is not provided",
    "terminal_use_write": "tau2's sandboxed shell is not provided",
    "alltools": "it needs tau2's sandboxed shell, which is not provided",
    "alltools-qwen": "it needs tau2's sandboxed shell, which is not provided",
    "AllTools": "it needs tau2's sandboxed shell, which is not provided",
}
DEFAULT_CONFIG = "bm25"
OPTION_NAMES = (
    "retrieval",
    "document_order",
    "top_k",
    "grep_top_k",
    "case_sensitive",
    "embeddings_base_url",
    "embeddings_model",
    "embeddings_api_key_env",
    "embeddings_cache_dir",
    "embeddings_timeout_s",
    "query_instruction",
)


def resolve_config(name: Any) -> RetrievalConfig:
    if name is None:
        name = DEFAULT_CONFIG
    if not isinstance(name, str):
        raise RetrievalConfigError(f"retrieval must be a configuration name, got {type(name).__name__}")
    if name in UNSUPPORTED:
        raise RetrievalConfigError(f"retrieval {name!r} is not supported: {UNSUPPORTED[name]}")
    if name in ("bm25_reranker", "bm25_reranker_grep") or "reranker" in name:
        raise RetrievalConfigError(f"retrieval {name!r} is not supported: tau2's LLM rerankers are not provided")
    if name not in CONFIGS:
        raise RetrievalConfigError(f"unknown retrieval {name!r}; available: {sorted(CONFIGS)}")
    return CONFIGS[name]


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "verl_rewards" / "tau2_embeddings"


def check_options(options: dict[str, Any]) -> dict[str, Any]:
    """Validated retrieval options (``retrieval`` plus tau2's overrides and the dense endpoint)."""
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise RetrievalConfigError(f"unknown banking_knowledge options {unknown}; known: {list(OPTION_NAMES)}")
    out = dict(options)
    config = resolve_config(out.get("retrieval"))
    out["retrieval"] = config.name
    for key in ("top_k", "grep_top_k"):
        if key in out and out[key] is not None:
            value = out[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RetrievalConfigError(f"{key} must be a positive integer, got {value!r}")
    if "case_sensitive" in out and not isinstance(out["case_sensitive"], bool):
        raise RetrievalConfigError("case_sensitive must be true or false")
    if out.get("document_order") is not None and out["document_order"] not in DOCUMENT_ORDERS:
        raise RetrievalConfigError(
            f"document_order must be one of {list(DOCUMENT_ORDERS)}, got {out['document_order']!r}"
        )
    timeout = out.get("embeddings_timeout_s")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < float("inf")
    ):
        raise RetrievalConfigError(f"embeddings_timeout_s must be a positive number of seconds, got {timeout!r}")
    dense_keys = [k for k in OPTION_NAMES if k.startswith("embeddings_") or k == "query_instruction"]
    if config.kb_search == "dense":
        for key in ("embeddings_base_url", "embeddings_model"):
            if not isinstance(out.get(key), str) or not out[key]:
                raise RetrievalConfigError(
                    f"retrieval {config.name!r} needs {key} (an OpenAI-compatible embeddings endpoint and its model)"
                )
    else:
        given = [k for k in dense_keys if out.get(k) is not None]
        if given:
            raise RetrievalConfigError(f"{given} apply only to a dense retrieval configuration, not {config.name!r}")
    return out


def retrieval_tools(data_dir: Path, options: dict[str, Any]) -> tuple[tuple[type, ...], dict[str, Any]]:
    """The mixins (in tau2's tool order) and class attributes of a configuration's retrieval tools."""
    config = resolve_config(options.get("retrieval"))
    kb = knowledge_base(data_dir, options.get("document_order"))
    mixins: list[type] = []
    attrs: dict[str, Any] = {"_kb": kb}
    top_k = options.get("top_k") or DEFAULT_TOP_K
    if config.kb_search == "bm25":
        mixins.append(KBSearchMixin)
        attrs["_kb_search"] = _BM25Search(kb, top_k)  # the index is built on the first search (~0.3 s)
    elif config.kb_search == "dense":
        from .dense import DEFAULT_TIMEOUT_S as EMBEDDINGS_TIMEOUT_S
        from .dense import DenseIndex

        mixins.append(KBSearchMixin)
        key_env = options.get("embeddings_api_key_env")
        api_key = os.environ.get(key_env) if key_env else None
        settings = {
            "base_url": options["embeddings_base_url"],
            "model": options["embeddings_model"],
            "cache_dir": Path(options.get("embeddings_cache_dir") or default_cache_dir()),
            "api_key": api_key,
            "query_instruction": options.get("query_instruction"),
            "top_k": top_k,
            "timeout_s": float(options.get("embeddings_timeout_s") or EMBEDDINGS_TIMEOUT_S),
        }
        # one index per process and everything that changes its answers (the key's hash, never the key itself)
        key = [*kb.key, *(str(v) for k, v in settings.items() if k != "api_key")]
        key.append(hashlib.sha256(str(api_key).encode()).hexdigest())
        attrs["_kb_search"] = build_once(("dense", *key), lambda: DenseIndex(kb=kb, **settings))
    if config.grep:
        mixins.append(GrepMixin)
        attrs["_grep"] = GrepIndex(
            kb, top_k=options.get("grep_top_k") or DEFAULT_TOP_K, case_sensitive=bool(options.get("case_sensitive"))
        )
    return tuple(mixins), attrs


@dataclass(frozen=True)
class _BM25Search:
    """``KB_search`` over the KB's BM25 index, built (once per process) when first needed, not when the domain
    loads; ``top_k``: tau2's override."""

    kb: KnowledgeBase
    top_k: int

    def index(self) -> BM25Index:
        return bm25_index(self.kb)

    def search(self, query: Any) -> list[tuple[str, float]]:
        return self.index().search(query, self.top_k)


# --------------------------------------------------------------------------------------------- prompts
_COMPONENT = re.compile(r"\{\{component:(\w+)\}\}")
_FULL_KB = re.compile(r"\{\{full_knowledge_base\}\}")


def _read(path: Path) -> str:
    if not path.is_file():
        raise DataNotFoundError(f"banking_knowledge prompt file not found: {path}")
    return path.read_text(encoding="utf-8")


def policy_text(
    data_dir: Path, config_name: str | None, required_documents: Any = None, document_order: str | None = None
) -> str:
    """The agent policy of a configuration, assembled as tau2's ``build_policy`` does.

    ``required_documents``: the task's ``required_documents`` (``golden_retrieval`` only); ``document_order``: the
    KB's (``full_kb`` lists every document in it).
    """
    config = resolve_config(config_name)
    prompts = Path(data_dir) / "prompts"
    text = _read(prompts / config.template)
    text = _COMPONENT.sub(lambda m: _read(prompts / "components" / f"{m.group(1)}.md"), text)
    kb = knowledge_base(data_dir, document_order) if config.prompt != "standard" else None
    if config.prompt == "full_kb" and kb is not None and _FULL_KB.search(text):
        text = _FULL_KB.sub(kb.render(kb.documents), text)
    if config.prompt == "golden" and kb is not None:
        docs = []
        for ref in required_documents or ():
            doc = kb.by_title.get(ref) or kb.by_id.get(ref)
            if doc is not None:
                docs.append(doc)
        text = text.replace("{{required_documents}}", kb.render(docs) if docs else "(No documents provided)")
    if not text.strip():
        raise DataFileError(f"the banking_knowledge policy of retrieval {config.name!r} is empty")
    return text
