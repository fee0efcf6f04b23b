"""A small OpenAI-compatible ``/embeddings`` server on 127.0.0.1 for tests and benchmarks (stdlib HTTP server in a
thread; real sockets, real HTTP).

Each text is embedded as a deterministic bag of words: every lower-cased whitespace token adds 1 to dimension
``sha256(token) % dim``. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def bag_of_words(text: str, dim: int) -> list[float]:
    vec = [0.0] * dim
    for token in text.lower().split():
        vec[int(hashlib.sha256(token.encode()).hexdigest(), 16) % dim] += 1.0
    return vec


class EmbeddingsServer:
    """``with EmbeddingsServer() as server: server.base_url ...``; ``status`` answers every request with that
    HTTP status instead (an endpoint that fails)."""

    def __init__(self, dim: int = 64, status: int = 200):
        self.dim = dim
        self.status = status
        self.requests: list[dict[str, Any]] = []
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
                if outer.status != 200 or not self.path.endswith("/embeddings"):
                    self._send(outer.status if outer.status != 200 else 404, {"error": {"message": "no"}})
                    return
                texts = body.get("input") or []
                data = [
                    {"object": "embedding", "index": i, "embedding": bag_of_words(t, outer.dim)}
                    for i, t in enumerate(texts)
                ]
                self._send(200, {"object": "list", "data": data, "model": body.get("model")})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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
