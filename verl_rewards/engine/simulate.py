"""What both ``verl-rewards simulate`` commands share (tau2's, :mod:`verl_rewards.tau2.normal.simulate`, and
tau-bench's, :mod:`verl_rewards.tau_bench.simulate`): the run's common settings, the agent under test at an
OpenAI-compatible endpoint, the start-up probe of every endpoint, the results file (one writer at a time, resumed
only with the same settings) and the concurrent run of a plan of (task, trial) pairs with a progress bar."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import OutputPathError, WriterLockError, check_output_path, writer_lock
from .client import Endpoint, client_tls, httpx, parse_completion, shared_client, wire_model  # httpx: as it imports it
from .conversation import PlayerError, Reply
from .termination import TerminationReason

SAVE_EVERY_S = 2.0
"""How often a run rewrites its results file at most (and once at the end)."""
REACHABLE_TIMEOUT_S = 5.0
#: the one-token chat completion sent to every endpoint and model at start (a wrong model name fails there)
PROBE_TEXT = "ping"
MAX_PROBE_BYTES = 1 << 20


class SimulateError(ValueError):
    """A configuration error (unknown domain or task, unreachable endpoint, an --out from other settings)."""


@dataclass
class RunConfig:
    """The settings every simulate run has: the domain, where the agent and the user are served, the results file,
    the data folder, which tasks (``task_ids``, else a ``split``), trials and the run seed."""

    domain: str
    agent: Endpoint
    user: Endpoint
    out: str
    data_dir: str | None = None
    task_ids: Sequence[str] | None = None
    split: str | None = None
    num_trials: int = 1
    seed: int = 300


class OpenAIAgent:
    """The agent under test: its system prompt and view, the agent tools, the trial seed."""

    def __init__(self, endpoint: Endpoint, tools: list[dict[str, Any]], seed: int | None):
        self.endpoint = endpoint
        self.tools = tools
        self.seed = seed

    async def reply(self, messages: list[dict[str, Any]]) -> Reply:
        return await shared_client(self.endpoint).complete(messages, self.tools, self.seed)


def results_path(out: str) -> Path:
    """The checked ``--out`` file of a run (:class:`SimulateError` when it cannot be written)."""
    try:
        return check_output_path(out, "--out")
    except OutputPathError as exc:
        raise SimulateError(str(exc)) from None


@contextlib.contextmanager
def only_writer(out: Path) -> Iterator[None]:
    """Be the only run writing ``out`` for the whole body (:func:`~verl_rewards.files.writer_lock`): a second run
    on the same file is a :class:`SimulateError` naming the holder, before it reads or runs anything."""
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(writer_lock(out, "--out"))
    except WriterLockError as exc:
        raise SimulateError(str(exc)) from None
    with stack:
        yield


#: settings that say where something is served or kept, not what runs (a key ending in one of these): a resumed
#: run may change them, and they are not recorded with the simulations
WHERE_KEYS = ("api_base", "base_url", "api_key", "api_key_env", "cache_dir")
#: a setting the results file does not hold (compared as absent, shown as "not recorded")
NOT_RECORDED: Any = object()


def is_where_key(key: Any) -> bool:
    """Whether a setting's name is one of :data:`WHERE_KEYS` (or ends in one: ``embeddings_base_url``)."""
    return str(key).endswith(WHERE_KEYS)


def setting_differences(old: Any, new: Any, name: str = "") -> list[str]:
    """The settings (dotted names, with both values) that differ between a results file's ``old`` and this run's
    ``new``: nested objects are compared key by key, keys in :data:`WHERE_KEYS` are skipped."""
    if isinstance(new, Mapping) and old is NOT_RECORDED:
        old = {}
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out: list[str] = []
        for key in dict.fromkeys([*old, *new]):
            if is_where_key(key):
                continue
            out += setting_differences(
                old.get(key, NOT_RECORDED), new.get(key, NOT_RECORDED), f"{name}.{key}" if name else str(key)
            )
        return out
    if old == new and isinstance(old, bool) == isinstance(new, bool):
        return []
    return [f"{name or 'settings'} (file: {_shown(old)}, this run: {_shown(new)})"]


def _shown(value: Any, limit: int = 60) -> str:
    if value is NOT_RECORDED:
        return "not recorded"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else f"a text of {len(text)} characters"


def check_same_settings(
    out: Path, info: tuple[Any, Any] | None, recorded: Sequence[tuple[str, Any]], run: Mapping[str, Any]
) -> None:
    """:class:`SimulateError` listing the differing settings (:func:`setting_differences`) when the run in ``out``
    was made with other settings than this one: ``info`` is ``(the file's, this run's)`` run-wide record (tau2's
    ``info``) or None; ``recorded``: ``(name, settings)`` of every kept simulation, each compared with ``run``
    (the first that differs is listed)."""
    as_file = json.loads(json.dumps(run, default=str))  # as the file would hold it (tuples as lists)
    differences = [] if info is None else setting_differences(info[0], json.loads(json.dumps(info[1], default=str)))
    for name, settings in recorded:
        found = setting_differences(settings, as_file, name)
        if found:
            differences += found
            break
    if differences:
        shown = "; ".join(differences[:12]) + (f"; and {len(differences) - 12} more" if len(differences) > 12 else "")
        raise SimulateError(
            f"--out {out} holds a run with other settings: {shown}; resume with the same settings or use another --out"
        )


async def check_endpoints(agent: Endpoint, user: Endpoint, judge: Endpoint | None = None) -> None:
    """:func:`check_reachable` for the agent, the user and (when there is one) the judge, in that order."""
    await check_reachable(agent, "agent")
    await check_reachable(user, "user")
    if judge is not None:
        await check_reachable(judge, "judge")


class ScriptedAgent:
    """An agent player answering with fixed ``replies`` in order, then ``final`` text; ``views`` keeps every view
    it was shown (tests, demos)."""

    def __init__(self, replies: Sequence[Reply], final: str = "Anything else?"):
        self.replies = list(replies)
        self.final = final
        self.views: list[list[dict[str, Any]]] = []

    async def reply(self, messages: list[dict[str, Any]]) -> Reply:
        self.views.append(messages)
        return self.replies.pop(0) if self.replies else Reply(content=self.final)


async def check_reachable(endpoint: Endpoint, role: str) -> None:
    """One cheap request (a one-token chat completion of :data:`PROBE_TEXT`) to ``endpoint`` for its model, named as
    the conversation's requests name it (litellm's provider prefix dropped, :func:`~.client.wire_model`). A
    configuration error quoting the endpoint's own message unless the answer is a chat completion: no answer, an
    HTTP error (a model name the endpoint does not serve: vLLM and OpenAI answer 404), a redirect (3xx: the base URL
    is probably wrong) or a 200 that is not a chat completion (an HTML page)."""
    model = wire_model(endpoint.model)
    body = {"model": model, "messages": [{"role": "user", "content": PROBE_TEXT}], "max_tokens": 1}
    timeout = max(REACHABLE_TIMEOUT_S, endpoint.timeout_s)
    where = f"the {role} endpoint {endpoint.base_url}"
    try:
        async with httpx.AsyncClient(timeout=timeout, verify=client_tls(endpoint.url)) as client:
            resp = await client.post(endpoint.url, json=body, headers=endpoint.headers())
    except httpx.TimeoutException:
        raise SimulateError(
            f"{where} did not answer a one-token request for model {model!r} within {timeout:g} s"
        ) from None
    except httpx.HTTPError as exc:
        raise SimulateError(f"{where} is unreachable: {type(exc).__name__}: {exc}") from None
    if resp.status_code >= 400:
        raise SimulateError(f"{where} refused model {model!r}: HTTP {resp.status_code}: {_error_message(resp.content)}")
    if resp.status_code != 200:
        location = resp.headers.get("location")
        moved = f" to {location}" if location else ""
        raise SimulateError(
            f"{where} answered a one-token request for model {model!r} with HTTP {resp.status_code}{moved}, not a "
            "chat completion; check the base URL (it ends before /chat/completions, e.g. http://host:8000/v1)"
        )
    try:
        parse_completion(json.loads(resp.content[:MAX_PROBE_BYTES]))
    except (ValueError, RecursionError, PlayerError):
        raise SimulateError(
            f"{where} answered a one-token request for model {model!r} with something that is not a chat "
            f"completion ({_error_message(resp.content)}); check the base URL (it ends before /chat/completions)"
        ) from None


def _error_message(raw: bytes, limit: int = 300) -> str:
    """The ``message`` of an OpenAI-style error body (``{"error": {"message"}}`` or vLLM's ``{"message"}``), else
    the start of the body."""
    try:
        data = json.loads(raw[:65536])
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        inner = data.get("error")
        message = inner.get("message") if isinstance(inner, dict) else data.get("message")
        if isinstance(message, str) and message:
            return " ".join(message.split())[:limit]
    return " ".join(raw[:limit].decode("utf-8", errors="replace").split())


def all_failed(outcomes: Sequence[tuple[Any, Any]]) -> str | None:
    """When every simulation of a run ended at an endpoint (``(termination, cause)`` pairs, each
    ``infrastructure_error`` or ``user_error``), a one-line message with the first cause; else None."""
    if not outcomes or any(
        t not in (TerminationReason.INFRASTRUCTURE_ERROR, TerminationReason.USER_ERROR) for t, _ in outcomes
    ):
        return None
    termination, cause = outcomes[0]
    return (
        f"every simulation ({len(outcomes)}) ended in user_error / infrastructure_error; "
        f"first cause ({termination}): {' '.join(str(cause or 'unknown').split())[:500]}"
    )


async def run_plan(
    plan: Sequence[tuple[str, int]],
    play: Callable[[str, int], Awaitable[dict[str, Any]]],
    finished: Callable[[dict[str, Any], bool], None],
    *,
    concurrency: int,
    done: int = 0,
    progress: bool = True,
    desc: str = "",
) -> None:
    """Play every ``(task_id, trial)`` of ``plan``, ``concurrency`` at a time, with a progress bar; each result goes
    to ``finished(sim, False)`` as it comes, and ``finished({}, True)`` runs once at the end, even when interrupted
    (the caller saves there)."""
    from tqdm import tqdm

    slots = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(plan) + done, initial=done, unit="sim", disable=not progress, desc=desc)

    async def one(task_id: str, trial: int) -> None:
        async with slots:
            sim = await play(task_id, trial)
        finished(sim, False)
        bar.update(1)

    try:
        await asyncio.gather(*(one(t, k) for t, k in plan))
    finally:
        bar.close()
        finished({}, True)
