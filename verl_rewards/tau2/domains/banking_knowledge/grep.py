"""banking_knowledge's ``grep``: tau2's grep retriever, with a time bound on every pattern.

A pattern is model-written, and Python's ``re`` backtracks without bound (``(\\w+\\s?)*#`` runs for minutes on the
knowledge base) while holding the GIL, so neither a thread nor a timeout around it can stop it. The patterns are
therefore matched in child processes (:mod:`._grep_child`, a stdlib-only script) with the same ``re`` and tau2's
rules, so every answer is tau2's, byte for byte, including the texts of tau2's own errors; a pattern still matching
after :data:`GREP_TIMEOUT_S` gets its child killed (a new one starts on the next call) and the call ends as the
tool error :data:`TIMEOUT_MESSAGE` instead. The waiting caller blocks on a pipe, not on the GIL.

tau2's rules: the pattern as a case-insensitive regex (the escaped literal if it does not compile); score = the
number of non-overlapping matches; documents without a match are dropped; stable descending; first ``top_k``.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from ....engine.toolkit import ToolError
from .knowledge import DEFAULT_TOP_K, KnowledgeBase, build_once

GREP_TIMEOUT_S = 0.75
"""Seconds one pattern may take over the whole knowledge base (the slowest sensible pattern, ``a*``, takes about
0.3 s on a loaded CPU); past it the call is an error observation, well within a second."""
TIMEOUT_MESSAGE = (
    "the pattern {pattern!r} did not finish matching within {seconds:g} s (a regex that backtracks without bound); "
    "use a simpler pattern"
)
MAX_CHILDREN = 4
_CHILD = Path(__file__).with_name("_grep_child.py")


class GrepTimeout(ToolError):
    """A pattern ran past :data:`GREP_TIMEOUT_S`; its child process was killed."""


class GrepChildError(ToolError):
    """Compiling or matching raised in the child (the message is the exception's own text, as tau2 shows it)."""


class _Child:
    """One child process with the documents loaded."""

    def __init__(self, documents_json: bytes):
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(_CHILD)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
        self._buffer = b""
        self._write(documents_json)

    def _write(self, line: bytes) -> None:
        stdin: IO[bytes] | None = self.proc.stdin
        assert stdin is not None
        stdin.write(line + b"\n")
        stdin.flush()

    def ask(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and wait at most ``timeout_s`` for its answer (:class:`TimeoutError` past it)."""
        self._write(json.dumps(request).encode())
        deadline = time.monotonic() + timeout_s
        stdout = self.proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise ChildProcessError(f"the grep worker exited (status {self.proc.poll()})")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait()
        except OSError:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


class GrepWorkers:
    """Up to :data:`MAX_CHILDREN` child processes matching patterns over one knowledge base, started on demand and
    shared by every environment of the process (:func:`grep_workers`)."""

    def __init__(self, kb: KnowledgeBase, timeout_s: float = GREP_TIMEOUT_S, max_children: int = MAX_CHILDREN):
        self._documents = json.dumps([d.content for d in kb.documents]).encode()
        self.timeout_s = timeout_s
        self.max_children = max_children
        self._idle: list[_Child] = []
        self._running = 0
        self._pid = os.getpid()
        self._cond = threading.Condition()
        atexit.register(self.close)

    def counts(self, pattern: str, flags: int) -> list[tuple[int, int]]:
        """``[(document index, matches)]`` of the documents ``pattern`` matches (tau2's rules; see the module)."""
        child = self._take()
        try:
            reply = child.ask({"pattern": pattern, "flags": flags}, self.timeout_s)
        except TimeoutError:
            self._discard(child)
            raise GrepTimeout(TIMEOUT_MESSAGE.format(pattern=_shown(pattern), seconds=self.timeout_s)) from None
        except BaseException:
            self._discard(child)
            raise
        self._give(child)
        if "error" in reply:
            raise GrepChildError(reply["error"])
        return [(int(i), int(n)) for i, n in reply["counts"]]

    def _take(self) -> _Child:
        with self._cond:
            if os.getpid() != self._pid:  # a forked copy: the parent's children are not ours to use
                self._idle, self._running, self._pid = [], 0, os.getpid()
            while not self._idle and self._running >= self.max_children:
                self._cond.wait()
            self._running += 1
            if self._idle:
                return self._idle.pop()
        try:
            return _Child(self._documents)
        except BaseException:
            with self._cond:
                self._running -= 1
                self._cond.notify()
            raise

    def _give(self, child: _Child) -> None:
        with self._cond:
            self._running -= 1
            self._idle.append(child)
            self._cond.notify()

    def _discard(self, child: _Child) -> None:
        child.kill()
        with self._cond:
            self._running -= 1
            self._cond.notify()

    def close(self) -> None:
        """Stop the idle children (at exit; busy ones end with their caller)."""
        with self._cond:
            idle, self._idle = self._idle, []
        for child in idle:
            child.kill()


def _shown(pattern: str, limit: int = 80) -> str:
    return pattern if len(pattern) <= limit else pattern[:limit] + "..."


def grep_workers(kb: KnowledgeBase) -> GrepWorkers:
    """The process's grep workers of ``kb``."""
    return build_once(("grep", *kb.key), lambda: GrepWorkers(kb))


class GrepIndex:
    """tau2's grep retriever over a KB (see the module doc), matched by :func:`grep_workers`."""

    def __init__(self, kb: KnowledgeBase, *, top_k: int = DEFAULT_TOP_K, case_sensitive: bool = False):
        self.kb = kb
        self.top_k = top_k
        self.flags = 0 if case_sensitive else int(re.IGNORECASE)

    def search(self, pattern: str) -> list[tuple[str, float]]:
        if not pattern.strip():  # a non-string pattern raises here, as in tau2
            return []
        found = grep_workers(self.kb).counts(pattern, self.flags)
        results = [(self.kb.documents[i].id, float(n)) for i, n in found]
        results.sort(key=lambda r: r[1], reverse=True)
        return results[: self.top_k]
