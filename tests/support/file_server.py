"""A static file server on 127.0.0.1 for the ``verl-rewards data get`` tests (stdlib HTTP server in a thread; real
sockets, real HTTP): ``files`` maps URL paths (without the leading ``/``) to bytes.

* byte ranges (``Range: bytes=N-``) are answered with 206 unless ``ranges`` is False (then the whole file, 200);
* ``cut`` maps a path to a byte count: that answer announces the whole length, sends that many bytes and closes the
  connection (an interrupted download);
* every request is kept in ``requests`` as ``(path, Range header or None)``.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FileServer:
    def __init__(self, files: dict[str, bytes], *, ranges: bool = True):
        self.files = dict(files)
        self.ranges = ranges
        self.cut: dict[str, int] = {}
        self.requests: list[tuple[str, str | None]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def paths(self) -> list[str]:
        with self._lock:
            return [path for path, _ in self.requests]

    def __enter__(self) -> FileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                path = self.path.lstrip("/")
                asked = self.headers.get("Range")
                with server._lock:
                    server.requests.append((path, asked))
                body = server.files.get(path)
                if body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                start = 0
                if asked and server.ranges:
                    start = int(asked.removeprefix("bytes=").split("-")[0])
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                rest = body[start:]
                self.send_header("Content-Length", str(len(rest)))
                self.end_headers()
                cut = server.cut.get(path)
                if cut is not None:
                    self.wfile.write(rest[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(rest)

        return Handler


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
