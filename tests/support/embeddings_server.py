"""A small OpenAI-compatible ``/embeddings`` server on 127.0.0.1 for tests and benchmarks (stdlib HTTP server in a
thread; real sockets, real HTTP).

Each text is embedded as a deterministic bag of words: every lower-cased whitespace token adds 1 to dimension
``sha256(token) % dim``. Every request body is kept in ``requests``.

To misbehave, ``answer(body, data)`` (settable at any time) gets the request and the ``data`` list the server would
send and returns what to do instead: a payload (sent as JSON; ``NaN`` / ``Infinity`` as Python's json writes them),
``("raw", bytes)``, or ``("hold", event)``: the answer waits until ``event`` is set (``holding`` is set meanwhile,
so a test can wait for it); None sends the normal answer. ``dim`` may be changed between requests too.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def bag_of_words(text: str, dim: int) -> list[float]:
    vec = [0.0] * dim
    for token in text.lower().split():
        vec[_token_hash(token) % dim] += 1.0
    return vec


@functools.lru_cache(maxsize=1 << 16)
def _token_hash(token: str) -> int:
    return int(hashlib.sha256(token.encode()).hexdigest(), 16)


class EmbeddingsServer:
    """``with EmbeddingsServer() as server: server.base_url ...``; ``status`` answers every request with that
    HTTP status instead (an endpoint that fails)."""

    def __init__(self, dim: int = 64, status: int = 200, answer: Any = None):
        self.dim = dim
        self.status = status
        self.answer = answer
        self.holding = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.keys: list[str | None] = []  # each request's Authorization header
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append(body)
                    outer.keys.append(self.headers.get("Authorization"))
                if outer.status != 200 or not self.path.endswith("/embeddings"):
                    self._send(outer.status if outer.status != 200 else 404, {"error": {"message": "no"}})
                    return
                texts = body.get("input") or []
                data = [
                    {"object": "embedding", "index": i, "embedding": bag_of_words(t, outer.dim)}
                    for i, t in enumerate(texts)
                ]
                action = outer.answer(body, data) if outer.answer is not None else None
                if isinstance(action, tuple) and action[0] == "hold":
                    outer.holding.set()
                    action[1].wait(300)
                    action = None
                if isinstance(action, tuple) and action[0] == "raw":
                    self._send_raw(200, action[1])
                    return
                payload = action if action is not None else {"object": "list", "data": data, "model": body.get("model")}
                self._send(200, payload)

            def _send(self, status: int, payload: Any) -> None:
                self._send_raw(status, json.dumps(payload).encode())

            def _send_raw(self, status: int, data: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (its timeout)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> EmbeddingsServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
