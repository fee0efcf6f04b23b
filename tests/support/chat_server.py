"""A small OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks (stdlib HTTP server in
a thread; real sockets, real HTTP). ``responder(body, n)`` decides each answer:

* a dict ``{"content", "tool_calls": [{"name", "arguments"}]}`` -> a 200 chat completion (``arguments`` given as
  text are sent as they are, e.g. malformed JSON; an ``usage`` entry is sent as the completion's ``usage``);
* ``("status", code)`` -> that HTTP status; ``("sleep", seconds, answer)`` -> the answer after a pause;
* ``"drop"`` -> the connection is closed without an answer;
* ``("raw", bytes)`` -> a 200 answer with exactly that body (malformed replies); ``("html", bytes)`` -> the same as
  ``text/html``; ``("redirect", url)`` -> a 302 to ``url``.

Every request body is kept in ``requests`` (in arrival order), except the start-up probes of ``simulate``
(:data:`~verl_rewards.engine.simulate.PROBE_TEXT`), which go to ``probes`` and are answered by the server itself
(with ``probe``, an answer as above, when given).
With ``models`` given, a request for any other model gets vLLM's 404 answer (``The model `X` does not exist.``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from verl_rewards.engine.simulate import PROBE_TEXT

Responder = Callable[[dict[str, Any], int], Any]


def completion(answer: dict[str, Any], n: int) -> dict[str, Any]:
    calls = [
        {
            "id": f"srv_{n}_{i}",
            "type": "function",
            "function": {
                "name": c["name"],
                "arguments": c["arguments"]
                if isinstance(c.get("arguments"), str)
                else json.dumps(c.get("arguments") or {}),
            },
        }
        for i, c in enumerate(answer.get("tool_calls") or ())
    ]
    message: dict[str, Any] = {"role": "assistant", "content": answer.get("content")}
    if calls:
        message["tool_calls"] = calls
    out = {
        "id": f"cmpl-{n}",
        "object": "chat.completion",
        "model": "test",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
    }
    if "usage" in answer:
        out["usage"] = answer["usage"]
    return out


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the stdlib's 5 resets concurrent connects


class ChatServer:
    """Start with ``with ChatServer(responder) as server: server.base_url ...``."""

    def __init__(
        self,
        responder: Responder,
        models: set[str] | None = None,
        probe: Any = None,
        on_request: Callable[[dict[str, Any]], None] | None = None,
    ):
        self.responder = responder
        self.on_request = on_request  # called with every request body as it arrives (probes included)
        self.models = models
        self.probe = probe
        self.requests: list[dict[str, Any]] = []
        self.probes: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)  # notified whenever a request is recorded
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": "test", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if outer.on_request is not None:
                    outer.on_request(body)
                if outer.models is not None and body.get("model") not in outer.models:
                    message = f"The model `{body.get('model')}` does not exist."
                    self._send(404, {"object": "error", "message": message, "type": "NotFoundError", "code": 404})
                    return
                if body.get("messages") == [{"role": "user", "content": PROBE_TEXT}]:
                    with outer._lock:
                        outer.probes.append(body)
                    action: Any = outer.probe if outer.probe is not None else {"content": "p"}
                    n = 0
                else:
                    with outer._lock:
                        n = len(outer.requests)
                        outer.requests.append(body)
                        outer._arrived.notify_all()
                    action = outer.responder(body, n)
                if isinstance(action, tuple) and action[0] in ("raw", "html"):
                    self._send_raw(200, action[1], "text/html" if action[0] == "html" else "application/json")
                    return
                if isinstance(action, tuple) and action[0] == "redirect":
                    self._send_raw(302, b"", headers={"Location": action[1]})
                    return
                if isinstance(action, tuple) and action[0] == "sleep":
                    time.sleep(action[1])
                    action = action[2]
                if action == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if isinstance(action, tuple) and action[0] == "status":
                    self._send(action[1], {"error": {"message": "scripted failure"}})
                    return
                self._send(200, completion(action, n))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_raw(status, json.dumps(payload).encode())

            def _send_raw(
                self,
                status: int,
                data: bytes,
                content_type: str = "application/json",
                headers: dict[str, str] | None = None,
            ) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def wait_for_requests(self, n: int, timeout: float) -> bool:
        """Block until ``n`` conversation requests were recorded (or ``timeout`` seconds passed); whether they were."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self.requests) >= n, timeout)

    def start(self) -> ChatServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop answering and close the listening socket (later connections are refused)."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        if self.thread.is_alive():
            self.stop()


def scripted(scripts: dict[str, list[Any]], *, skip_assistant: int = 0) -> Responder:
    """A responder playing per-conversation scripts: the script is the one whose key occurs in the request's
    first three messages; the turn is the number of ``assistant`` messages already in the request (minus
    ``skip_assistant``: 1 for the agent, whose view starts with the greeting). Past the end: ``###STOP###``."""

    def respond(body: dict[str, Any], n: int) -> Any:
        head = json.dumps(body.get("messages", [])[:3])
        key = next((k for k in scripts if k in head), None)
        if key is None:
            return ("status", 400)
        turn = sum(1 for m in body["messages"] if m.get("role") == "assistant") - skip_assistant
        turns = scripts[key]
        return turns[turn] if 0 <= turn < len(turns) else {"content": "###STOP###"}

    return respond


def simulate_argv(
    server: ChatServer,
    out: Any,
    domain: str,
    data_dir: Any,
    task: str,
    *extra: str,
    timeout_s: str = "30",
    agent_model: str = "agent-model",
    user_model: str = "user-model",
) -> list[str]:
    """``verl-rewards simulate`` arguments for one ``task`` with the agent and the user served by ``server`` (no
    retries); ``extra`` goes last."""
    return [
        "simulate",
        *("--domain", domain, "--data-dir", str(data_dir), "--task-ids", task),
        *("--agent-base-url", server.base_url, "--agent-model", agent_model),
        *("--user-base-url", server.base_url, "--user-model", user_model),
        *("--timeout-s", timeout_s, "--retries", "0", "--out", str(out)),
        *extra,
    ]
