"""banking_knowledge's documents are in tau2's order by default: the order the file system lists the documents folder
in (tau2-bench ``src/tau2/domains/banking_knowledge/data_model.py``, ``KnowledgeBase.load``: ``Path.glob("*.json")``
into a dict keyed by id); ``document_order="id"`` sorts them by id, the same on every machine. The order decides
BM25 ties, grep's result order and the ``full_kb`` prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.domains.banking_knowledge import retrieval
from verl_rewards.tau2.domains.banking_knowledge.retrieval import RetrievalConfigError

from tau2_support import require_data


def _folder(tmp_path: Path, names: list[str]) -> Path:
    """A documents folder whose file names run opposite to their ids (file ``a`` holds the last id), so neither
    sorting by name nor by id gives the other order."""
    docs = tmp_path / "bk" / "documents"
    docs.mkdir(parents=True)
    for name, doc_id in zip(names, reversed(names), strict=True):
        (docs / f"{name}.json").write_text(json.dumps({"id": f"doc_{doc_id}", "title": doc_id, "content": name}))
    return docs.parent


def test_the_default_is_the_folder_listing_and_id_sorts(tmp_path: Path) -> None:
    names = [f"{c}{i}" for i, c in enumerate("abcdefghijkl")]
    root = _folder(tmp_path, names)
    listed = [json.loads(p.read_text())["id"] for p in (root / "documents").glob("*.json")]  # tau2's loop
    assert listed != sorted(listed)  # 12 files: the listing is not the id order (else the test shows nothing)
    assert [d.id for d in retrieval.knowledge_base(root).documents] == listed
    assert [d.id for d in retrieval.knowledge_base(root, "id").documents] == sorted(listed)


def test_a_repeated_id_keeps_its_first_place_and_its_last_content(tmp_path: Path) -> None:
    root = _folder(tmp_path, ["a", "b"])
    (root / "documents" / "c.json").write_text(json.dumps({"id": "doc_b", "title": "again", "content": "new"}))
    read = [json.loads(p.read_text()) for p in (root / "documents").glob("*.json")]
    kb = retrieval.knowledge_base(root)
    # as tau2's dict: the first place of an id, the content of its last file
    assert [d.id for d in kb.documents] == list(dict.fromkeys(r["id"] for r in read))
    assert kb.by_id["doc_b"].content == [r["content"] for r in read if r["id"] == "doc_b"][-1]
    assert len(kb) == 2


def test_the_option_is_validated_and_the_domain_passes_it_on() -> None:
    root = require_data("banking_knowledge")
    with pytest.raises(RetrievalConfigError, match="document_order must be one of"):
        load_domain("banking_knowledge", root, document_order="name")
    listed = [json.loads(p.read_text())["id"] for p in (root / "banking_knowledge" / "documents").glob("*.json")]
    for order, expected in ((None, listed), ("folder", listed), ("id", sorted(listed))):
        options = {} if order is None else {"document_order": order}
        dom = load_domain("banking_knowledge", root, retrieval="full_kb", **options)
        policy = dom.policy_for(task_id="task_001")
        titles = {d.id: d.title for d in retrieval.knowledge_base(root / "banking_knowledge").documents}
        at = [policy.index(f"## {titles[i]}\n\n") for i in expected[:5]]
        assert at == sorted(at), order  # the full_kb prompt lists the documents in that order


def test_loading_imports_no_numpy_and_the_first_search_does() -> None:
    """numpy (~0.15 s) is what the BM25 and dense indexes need: a run pays for it at its first search, not at start-up
    (a fresh interpreter)."""
    import os
    import subprocess
    import sys

    root = require_data("banking_knowledge")
    code = (
        "import sys\n"
        "from verl_rewards.tau2 import load_domain\n"
        f"env = load_domain('banking_knowledge', {str(root)!r}).make_env('task_001')\n"
        "before = 'numpy' in sys.modules\n"
        "out, error = env.execute('KB_search', {'query': 'annual fee'}, 'assistant')\n"
        "print(before, 'numpy' in sys.modules, error, out.startswith('1. '))\n"
    )
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == ["False", "True", "False", "True"]
