"""An OpenAI-compatible chat-completions client (httpx, async) for the simulated user, the offline agent and the
NL-assertion judge: per-call timeout, retries with exponential backoff, a concurrency limit shared by every
caller of the same endpoint in one event loop (one verl agent-loop worker), a bounded response size.

A call that cannot produce a message raises :class:`~.conversation.PlayerError` with the cause: the endpoint
refuses connections, every attempt timed out or answered 408 / 409 / 429 / 5xx (retried), a 4xx answer (not
retried), or a reply that is not a chat completion (no ``choices``, not JSON, a tool call without a name).
The worst-case time of a call is ``(retries + 1) * timeout_s`` plus the backoff pauses (``backoff_s * 2**i``,
at most 30 s each), plus the wait for a free slot.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import ssl
import sys
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .conversation import PlayerError, Reply

# httpx's __init__ imports its command-line client (click, rich, pygments: ~100 modules, 40-130 ms of every start-up)
# when those happen to be installed, and falls back to a stub when they are not: take the fallback, only while httpx
# itself is first imported (``httpx._main`` stays importable afterwards)
_SKIP_CLI = "httpx" not in sys.modules and "httpx._main" not in sys.modules
if _SKIP_CLI:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]
try:
    import httpx
finally:
    if _SKIP_CLI and sys.modules.get("httpx._main", ...) is None:
        del sys.modules["httpx._main"]

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
MAX_BACKOFF_S = 30.0
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
ENDPOINT_KEYS = frozenset(
    (
        "base_url",
        "model",
        "api_key_env",
        "temperature",
        "sampling",
        "timeout_s",
        "retries",
        "backoff_s",
        "max_concurrency",
    )
)
"""The config keys of an endpoint (:meth:`Endpoint.from_mapping`)."""


@dataclass(frozen=True)
class Endpoint:
    """Where and how to call a chat-completions endpoint.

    ``base_url`` ends before ``/chat/completions`` (e.g. ``http://127.0.0.1:8000/v1``); the API key is read from
    the environment variable ``api_key_env`` at call time (no ``Authorization`` header when it is unset: local
    vLLM / SGLang servers need none). ``sampling`` is sent with every request (``temperature`` 0.0 by default,
    as tau2 does); ``timeout_s`` bounds each attempt, ``retries`` more attempts follow a failed one.
    """

    base_url: str
    model: str
    api_key_env: str = DEFAULT_API_KEY_ENV
    sampling: tuple[tuple[str, Any], ...] = (("temperature", 0.0),)
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 1.0
    max_concurrency: int = 32

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {self.base_url!r}")
        if not isinstance(self.model, str) or not self.model:
            raise ValueError("model must be a non-empty string")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {self.timeout_s!r}")
        if int(self.retries) < 0 or int(self.max_concurrency) < 1 or self.backoff_s < 0:
            raise ValueError("retries must be >= 0, max_concurrency >= 1, backoff_s >= 0")

    @classmethod
    def from_mapping(cls, section: Mapping[str, Any], where: str) -> Endpoint:
        """Build from a config section (``base_url``, ``model``, ``api_key_env``, ``temperature``, ``sampling``,
        ``timeout_s``, ``retries``, ``backoff_s``, ``max_concurrency``); errors name ``where``."""
        section = {k: v for k, v in section.items() if k in ENDPOINT_KEYS and v is not None}
        for key in ("base_url", "model"):
            if not section.get(key):
                raise ValueError(f"{where}.{key} is required")
        sampling = dict(section.get("sampling") or {})
        sampling.setdefault("temperature", float(section.get("temperature", 0.0)))
        try:
            return cls(
                base_url=str(section["base_url"]).rstrip("/"),
                model=str(section["model"]),
                api_key_env=str(section.get("api_key_env", DEFAULT_API_KEY_ENV)),
                sampling=tuple(sorted(sampling.items())),
                timeout_s=float(section.get("timeout_s", 60.0)),
                retries=int(section.get("retries", 3)),
                backoff_s=float(section.get("backoff_s", 1.0)),
                max_concurrency=int(section.get("max_concurrency", 32)),
            )
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env, "")
        return {"Authorization": f"Bearer {key}"} if key else {}


@dataclass
class ChatClient:
    """Calls one :class:`Endpoint` from one event loop; get the shared instance with :func:`shared_client`."""

    endpoint: Endpoint
    _http: httpx.AsyncClient | None = None
    _slots: asyncio.Semaphore | None = None
    stats: dict[str, int] = field(default_factory=lambda: {"calls": 0, "attempts": 0, "failures": 0})

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            limits = httpx.Limits(max_connections=self.endpoint.max_concurrency)
            timeout = httpx.Timeout(self.endpoint.timeout_s)
            self._http = httpx.AsyncClient(timeout=timeout, limits=limits, verify=client_tls(self.endpoint.url))
            self._slots = asyncio.Semaphore(self.endpoint.max_concurrency)
        return self._http

    def body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        seed: int | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """The request body: model, messages, tools with ``tool_choice: auto`` (omitted without tools), seed,
        the endpoint's sampling arguments, then ``extra``."""
        body: dict[str, Any] = {"model": wire_model(self.endpoint.model), "messages": messages}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        if seed is not None:
            body["seed"] = int(seed)
        body.update(dict(self.endpoint.sampling))
        body.update(extra)
        return body

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        seed: int | None = None,
        **extra: Any,
    ) -> Reply:
        """One chat completion as a :class:`Reply` (PlayerError when none can be had, see the module doc)."""
        data = await self.request(self.body(messages, tools, seed, **extra))
        return parse_completion(data)

    async def request(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` with retries; the decoded JSON answer."""
        http = self._client()
        assert self._slots is not None
        self.stats["calls"] += 1
        ep = self.endpoint
        last = "no attempt"
        async with self._slots:
            for attempt in range(ep.retries + 1):
                if attempt:
                    await asyncio.sleep(min(MAX_BACKOFF_S, ep.backoff_s * 2 ** (attempt - 1)))
                self.stats["attempts"] += 1
                try:
                    status, raw = await asyncio.wait_for(self._post(http, body), ep.timeout_s)
                except (asyncio.TimeoutError, httpx.TimeoutException):
                    last = f"timed out after {ep.timeout_s:g} s"
                    continue
                except httpx.HTTPError as exc:
                    last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                    continue
                except _TooLarge:
                    self.stats["failures"] += 1
                    raise PlayerError(f"{ep.url}: reply larger than {MAX_RESPONSE_BYTES} bytes") from None
                if status in RETRY_STATUS:
                    last = f"HTTP {status}: {_snippet(raw)}"
                    continue
                if status >= 400:
                    self.stats["failures"] += 1
                    raise PlayerError(f"{ep.url}: HTTP {status}: {_snippet(raw)}")
                try:
                    return json.loads(raw)
                except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than the parser goes
                    self.stats["failures"] += 1
                    raise PlayerError(f"{ep.url}: reply is not JSON: {_snippet(raw)}") from None
        self.stats["failures"] += 1
        raise PlayerError(f"{ep.url}: {ep.retries + 1} attempt(s) failed; last: {last}")

    async def _post(self, http: httpx.AsyncClient, body: dict[str, Any]) -> tuple[int, bytes]:
        async with http.stream("POST", self.endpoint.url, json=body, headers=self.endpoint.headers()) as resp:
            chunks, size = [], 0
            async for chunk in resp.aiter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise _TooLarge()
                chunks.append(chunk)
            return resp.status_code, b"".join(chunks)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None


class _TooLarge(Exception):
    pass


def _snippet(raw: bytes, limit: int = 200) -> str:
    text = raw[: limit * 4].decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "..."


def parse_completion(data: Any) -> Reply:
    """The first choice's message of a chat-completions answer (PlayerError naming what is missing)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise PlayerError(f"malformed reply: no choices ({_snippet(json.dumps(data, default=str).encode())})")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise PlayerError("malformed reply: choices[0].message is missing")
    content = message.get("content")
    if isinstance(content, list):
        texts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        content = "\n".join(texts)
    elif content is not None and not isinstance(content, str):
        raise PlayerError(f"malformed reply: content is {type(content).__name__}")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise PlayerError(f"malformed reply: tool_calls is {type(raw_calls).__name__}, not a list")
    calls = []
    for i, call in enumerate(raw_calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise PlayerError(f"malformed reply: tool_calls[{i}] has no function name")
        arguments = fn.get("arguments")
        if arguments is not None and not isinstance(arguments, str | dict):
            raise PlayerError(f"malformed reply: tool_calls[{i}].function.arguments is {type(arguments).__name__}")
        calls.append({"id": call.get("id"), "name": fn["name"], "arguments": arguments})
    return Reply(content=content, tool_calls=calls, usage=completion_usage(data), raw=data)


def completion_usage(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The answer's token counts as tau2 records them per message (``{"completion_tokens", "prompt_tokens"}``;
    None when the endpoint reports no ``usage``)."""
    usage = data.get("usage")
    if not isinstance(usage, Mapping):
        return None
    out = {}
    for key in ("completion_tokens", "prompt_tokens"):
        value = usage.get(key)
        out[key] = value if isinstance(value, int) and not isinstance(value, bool) else None
    return out


PROVIDER_PREFIXES = ("openai/", "hosted_vllm/")


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (its CA bundle; ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` honoured), built once per
    process and shared by every client: building one reads the CA bundle (tens of ms), and each client built its own."""
    return httpx.create_ssl_context()


@functools.cache
def _trusting_no_one() -> ssl.SSLContext:
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies certificates and host names, and trusts no CA


def client_tls(url: str) -> ssl.SSLContext:
    """The TLS context of a client that sends only to ``url`` (redirects are not followed): :func:`tls_context` for
    https; for http, one that trusts no certificate authority, built without reading a CA bundle (a local server
    costs no CA loading at start-up): such a client makes no TLS connection, and would refuse one."""
    return tls_context() if url.lower().startswith("https://") else _trusting_no_one()


def asyncio_only_http() -> None:
    """Import httpcore (httpx's transport) without trio, which it imports when installed (~90 ms) to run on trio's
    event loop: for a process whose HTTP runs on asyncio only, such as a ``verl-rewards`` command, called before its
    first request. Nothing happens when httpcore or trio is already imported."""
    if "httpcore" in sys.modules or "trio" in sys.modules:
        return
    sys.modules["trio"] = None  # type: ignore[assignment]
    try:
        import httpcore  # noqa: F401
    finally:
        if sys.modules.get("trio", ...) is None:
            del sys.modules["trio"]


def wire_model(model: str) -> str:
    """The model name sent to the endpoint: a model configured with litellm's provider prefix for OpenAI-compatible
    servers (``openai/my-model``, ``hosted_vllm/my-model``, as tau2's ``--agent-llm`` takes it) is sent without it,
    as litellm does; result files record the name as configured."""
    for prefix in PROVIDER_PREFIXES:
        if model.startswith(prefix) and len(model) > len(prefix):
            return model[len(prefix) :]
    return model


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Endpoint, ChatClient]] = weakref.WeakKeyDictionary()


def shared_client(endpoint: Endpoint) -> ChatClient:
    """The client of ``endpoint`` for the running event loop: every trajectory of a worker shares its connection
    pool and its ``max_concurrency`` slots."""
    loop = asyncio.get_running_loop()
    per_loop = _SHARED.setdefault(loop, {})
    client = per_loop.get(endpoint)
    if client is None:
        client = per_loop[endpoint] = ChatClient(endpoint)
    return client
