"""User backends of the conversation engine (tau2's normal mode, tau-bench's simulated user), and their configuration.

* ``openai`` (:class:`OpenAIUser`): any OpenAI-compatible chat-completions endpoint plays the user (a vLLM /
  SGLang server for the user model, or a hosted API); its tool calls are the user's tool calls.
* ``policy``: the policy's own rollout server plays the user (self-play, built by the verl agent loop, which owns
  the server: :mod:`verl_rewards.rollout.agent_loop`).
* ``scripted`` (:class:`ScriptedUser`): deterministic per-task scripts of user turns, for tests, demos and smoke
  runs.

Configuration (:class:`UserConfig`, one mapping; in training
``actor_rollout_ref.rollout.custom.<tau2|tau_bench>.user``):

=====================  ===========================================================================================
``backend``            ``openai`` | ``policy`` | ``scripted`` (required)
``base_url``, ``model`` ``openai``: the endpoint (``.../v1``) and the model name
``api_key_env``        environment variable holding the API key (default ``OPENAI_API_KEY``; unset: no key sent)
``temperature``        0.0 (tau2's default); ``sampling``: more request fields (``top_p``, ``max_tokens``, ...)
``timeout_s``          per attempt (60); ``retries`` (3, as tau2); ``backoff_s`` (1.0, doubled per retry)
``max_concurrency``    user calls in flight per worker (32), shared by all its trajectories
``seed``               run seed (300); each trial's user seed is derived from it as tau2 does
``scripts``            ``scripted``: a JSON / YAML file ``{task_id: [turn, ...]}``; a turn is a string (text) or
                       ``{"content": str, "tool_calls": [{"name", "arguments"}]}``; tasks without a script get
                       the benchmark's default script
``max_tokens``         ``policy``: tokens per user turn (512)
=====================  ===========================================================================================
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .client import ENDPOINT_KEYS, ChatClient, Endpoint
from .conversation import DEFAULT_SEED, Reply, UserRequest
from .rules import STOP_TOKEN

BACKENDS = ("openai", "policy", "scripted")
_KEYS = {"backend", "seed", "scripts", "max_tokens", *ENDPOINT_KEYS}
FINAL_TURN = "Thank you, that is all I needed. " + STOP_TOKEN


@dataclass(frozen=True)
class UserConfig:
    """A validated user-backend configuration (see the module doc)."""

    backend: str
    endpoint: Endpoint | None = None
    seed: int = DEFAULT_SEED
    scripts: Mapping[str, tuple[Reply, ...]] = field(default_factory=dict)
    max_tokens: int = 512
    sampling: tuple[tuple[str, Any], ...] = (("temperature", 0.0),)

    @classmethod
    def from_mapping(cls, section: Mapping[str, Any] | None, where: str = "user") -> UserConfig:
        if not section:
            raise ValueError(f"{where}.backend is required: one of {list(BACKENDS)}")
        section = dict(section)
        unknown = sorted(set(section) - _KEYS)
        if unknown:
            raise ValueError(f"unknown key(s) {unknown} in {where}; valid: {sorted(_KEYS)}")
        backend = str(section.get("backend") or "")
        if backend not in BACKENDS:
            raise ValueError(f"{where}.backend must be one of {list(BACKENDS)}, got {backend!r}")
        try:
            seed = int(section.get("seed", DEFAULT_SEED))
            max_tokens = int(section.get("max_tokens", 512))
        except (TypeError, ValueError):
            raise ValueError(f"{where}.seed and {where}.max_tokens must be integers") from None
        sampling = dict(section.get("sampling") or {})
        sampling.setdefault("temperature", float(section.get("temperature", 0.0)))
        endpoint = Endpoint.from_mapping(section, where) if backend == "openai" else None
        scripts = load_scripts(section["scripts"]) if backend == "scripted" and section.get("scripts") else {}
        return cls(
            backend=backend,
            endpoint=endpoint,
            seed=seed,
            scripts=scripts,
            max_tokens=max_tokens,
            sampling=tuple(sorted(sampling.items())),
        )


def as_reply(turn: Any, where: str = "turn") -> Reply:
    """A script turn (text, or ``{"content", "tool_calls"}``) as a :class:`Reply`."""
    if isinstance(turn, Reply):
        return turn
    if isinstance(turn, str):
        return Reply(content=turn)
    if isinstance(turn, Mapping):
        calls = turn.get("tool_calls") or []
        if not isinstance(calls, list) or not all(isinstance(c, Mapping) and c.get("name") for c in calls):
            raise ValueError(f"{where}: tool_calls must be a list of {{name, arguments}}")
        content = turn.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"{where}: content must be a string")
        return Reply(content=content, tool_calls=[dict(c) for c in calls])
    raise ValueError(f"{where}: a turn is a string or an object with content / tool_calls")


def load_scripts(path: str | Path) -> dict[str, tuple[Reply, ...]]:
    """``{task_id: turns}`` from a JSON or YAML file (ValueError naming the file and the task)."""
    path = Path(path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"user scripts file {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # noqa: BLE001 - any parse error is a config error naming the file
        raise ValueError(f"user scripts file {path}: cannot parse ({exc})") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"user scripts file {path}: expected an object {{task_id: [turns]}}")
    out = {}
    for task_id, turns in data.items():
        if not isinstance(turns, list):
            raise ValueError(f"user scripts file {path}: task {task_id!r}: expected a list of turns")
        out[str(task_id)] = tuple(as_reply(t, f"{path}: task {task_id!r} turn {i}") for i, t in enumerate(turns))
    return out


class ScriptedUser:
    """Plays ``turns`` in order, one per request; once they are used up it answers :data:`FINAL_TURN`.

    ``requests`` keeps every request it got (what the user model would have received)."""

    def __init__(self, turns: Iterable[Any]):
        self.turns = [as_reply(t, f"turn {i}") for i, t in enumerate(turns)]
        self.requests: list[UserRequest] = []

    async def reply(self, request: UserRequest) -> Reply:
        self.requests.append(request)
        if not self.turns:
            return Reply(content=FINAL_TURN)
        turn = self.turns.pop(0)
        return Reply(content=turn.content, tool_calls=[dict(c) for c in turn.tool_calls])


class OpenAIUser:
    """The user played by a chat-completions endpoint (system prompt + role-flipped view; user tools only for
    domains that have them)."""

    def __init__(self, client: ChatClient):
        self.client = client

    async def reply(self, request: UserRequest) -> Reply:
        return await self.client.complete(request.chat_messages(), request.tools, request.seed)


def positive_setting(section: Mapping[str, Any], key: str, default: int, config_path: str) -> int:
    """The positive integer ``section[key]`` (``default`` when absent) of a loop's settings; a clear error naming
    ``config_path.key`` otherwise."""
    try:
        value = int(section.get(key, default))
    except (TypeError, ValueError):
        raise ValueError(f"{config_path}.{key} must be an integer") from None
    if value <= 0:
        raise ValueError(f"{config_path}.{key} must be positive")
    return value


def user_settings(section: Any, config_path: str, loop_name: str, valid_keys: Collection[str]) -> UserConfig:
    """The ``user`` backend of a normal-mode loop's settings section; a missing section or an unknown key is a
    clear error naming ``config_path``."""
    if not isinstance(section, Mapping) or not section:
        raise ValueError(
            f"the {loop_name} loop needs {config_path}.user.backend (openai | policy | scripted), e.g. "
            f"+{config_path}.user.backend=openai +{config_path}.user.base_url=http://host:8000/v1 "
            f"+{config_path}.user.model=NAME"
        )
    unknown = sorted(set(section) - set(valid_keys))
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} in {config_path}; valid: {sorted(valid_keys)}")
    return UserConfig.from_mapping(section.get("user"), f"{config_path}.user")
