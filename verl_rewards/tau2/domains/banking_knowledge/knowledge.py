"""The banking_knowledge knowledge base (its documents, in tau2's order or sorted by id) and the process-wide store of
what is built once per process and shared by every environment of a worker (the KB, its indexes, the grep
workers)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import DataFileError, DataNotFoundError

DEFAULT_TOP_K = 10
#: the documents' order (load option ``document_order``): ``folder``, tau2's, is the order the file system lists the
#: folder in (``Path.glob``, as tau2's ``KnowledgeBase.load``), which may differ between machines and copies of the
#: data; ``id`` sorts them by id, the same everywhere. It decides BM25 ties, grep's result order and the ``full_kb``
#: prompt.
DOCUMENT_ORDERS = ("folder", "id")
DEFAULT_DOCUMENT_ORDER = "folder"


class RetrievalConfigError(ValueError):
    """A retrieval configuration that cannot be built (unknown name, bad option, unreachable endpoint)."""


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    content: str


class KnowledgeBase:
    """The domain's documents in ``order`` (:data:`DOCUMENT_ORDERS`). As tau2 keys them by id, a later file with an
    id already read replaces that document where it stands. Built once per folder and order
    (see :func:`knowledge_base`)."""

    def __init__(self, folder: Path, order: str = DEFAULT_DOCUMENT_ORDER):
        if order not in DOCUMENT_ORDERS:
            raise RetrievalConfigError(f"document_order must be one of {list(DOCUMENT_ORDERS)}, got {order!r}")
        if not folder.is_dir():
            raise DataNotFoundError(f"banking_knowledge documents folder not found: {folder}")
        by_id: dict[str, Document] = {}
        for path in folder.glob("*.json"):
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
                doc = Document(id=str(raw["id"]), title=str(raw["title"]), content=str(raw["content"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise DataFileError(f"banking_knowledge document {path} is not a valid document ({exc})") from None
            by_id[doc.id] = doc
        docs = sorted(by_id.values(), key=lambda d: d.id) if order == "id" else list(by_id.values())
        self.folder = folder
        self.order = order
        self.documents: tuple[Document, ...] = tuple(docs)
        self.by_id: dict[str, Document] = {d.id: d for d in docs}
        self.by_title: dict[str, Document] = {d.title: d for d in docs}  # a repeated title keeps the last (tau2)

    @property
    def key(self) -> tuple[str, str]:
        """What the indexes built over this KB are cached by: its folder and its order."""
        return str(self.folder), self.order

    def __len__(self) -> int:
        return len(self.documents)

    def render(self, docs: list[Document] | tuple[Document, ...]) -> str:
        """``## <title>\\n\\n<content>`` of each document, joined with ``\\n\\n---\\n\\n`` (tau2's prompt form)."""
        return "\n\n---\n\n".join(f"## {d.title}\n\n{d.content}" for d in docs)


_shared: dict[tuple[Any, ...], Any] = {}
_shared_lock = threading.Lock()


def build_once(key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    """The process-wide value of ``key``, built by ``build`` the first time (one builder at a time)."""
    with _shared_lock:
        hit = _shared.get(key)
        if hit is None:
            hit = build()
            _shared[key] = hit
        return hit


def knowledge_base(data_dir: Path, order: str | None = None) -> KnowledgeBase:
    """The KB of a domain folder (``<data_dir>/documents``) in ``order`` (default: tau2's), loaded once per process
    and order."""
    folder = (Path(data_dir) / "documents").resolve()
    order = order or DEFAULT_DOCUMENT_ORDER
    return build_once(("kb", str(folder), order), lambda: KnowledgeBase(folder, order))
