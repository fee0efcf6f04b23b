"""The banking_knowledge knowledge base (its documents, sorted by id) and the process-wide store of what is built
once per process and shared by every environment of a worker (the KB, its indexes, the grep workers)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import DataFileError, DataNotFoundError

DEFAULT_TOP_K = 10


class RetrievalConfigError(ValueError):
    """A retrieval configuration that cannot be built (unknown name, bad option, unreachable endpoint)."""


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    content: str


class KnowledgeBase:
    """The domain's documents, sorted by id. Built once per folder (see :func:`knowledge_base`)."""

    def __init__(self, folder: Path):
        if not folder.is_dir():
            raise DataNotFoundError(f"banking_knowledge documents folder not found: {folder}")
        docs: list[Document] = []
        for path in folder.glob("*.json"):
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
                docs.append(Document(id=str(raw["id"]), title=str(raw["title"]), content=str(raw["content"])))
            except (ValueError, KeyError, TypeError) as exc:
                raise DataFileError(f"banking_knowledge document {path} is not a valid document ({exc})") from None
        docs.sort(key=lambda d: d.id)
        self.folder = folder
        self.documents: tuple[Document, ...] = tuple(docs)
        self.by_id: dict[str, Document] = {d.id: d for d in docs}
        self.by_title: dict[str, Document] = {d.title: d for d in docs}  # a repeated title keeps the last (tau2)

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


def knowledge_base(data_dir: Path) -> KnowledgeBase:
    """The KB of a domain folder (``<data_dir>/documents``), loaded once per process."""
    folder = (Path(data_dir) / "documents").resolve()
    return build_once(("kb", str(folder)), lambda: KnowledgeBase(folder))
