"""The child process of :mod:`.grep` (run as a script, standard library only): it matches grep patterns with Python's
``re`` against the knowledge base's documents, as tau2's grep retriever does, and dies with its parent.

Protocol (JSON lines): the first line on stdin is the list of document texts; then one request per line,
``{"pattern": str, "flags": int}``, answered with one line: ``{"counts": [[document index, matches], ...]}`` for
the documents with at least one match, or ``{"error": str, "type": str}`` when compiling or matching raised (the
exception's own text, which tau2's environment would show).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

#: address space the child may use: a pattern that needs more fails with MemoryError instead of the machine
MEMORY_LIMIT = 4 << 30


def _die_with_parent() -> None:
    """Linux: be killed when the parent dies (even by SIGKILL), so a stuck match never outlives it."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _limit_memory() -> None:
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass


def counts(documents: list[str], pattern: str, flags: int) -> list[list[int]]:
    """tau2's grep: the pattern as a regex (its escaped literal when it does not compile), matches per document."""
    try:
        compiled = re.compile(pattern, flags)
    except re.error:
        compiled = re.compile(re.escape(pattern), flags)
    found = []
    for i, text in enumerate(documents):
        n = len(compiled.findall(text))
        if n:
            found.append([i, n])
    return found


def main() -> None:
    _die_with_parent()
    _limit_memory()
    documents = json.loads(sys.stdin.readline())
    for line in sys.stdin:
        request = json.loads(line)
        reply: dict[str, Any]
        try:
            reply = {"counts": counts(documents, request["pattern"], int(request["flags"]))}
        except Exception as exc:  # noqa: BLE001 - the parent shows it as tau2 would
            reply = {"error": str(exc), "type": type(exc).__name__}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
