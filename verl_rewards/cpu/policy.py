"""Rollout policies for smoke runs: ``sample`` (the model generates) and ``script`` (scripted responses).

``script`` plays a scripted assistant: by default the task's gold trajectory
(``verl_rewards.gold:gold_assistant_turns(row)``, OpenAI-style assistant messages), each turn rendered in the
model's own chat template and tool-call format, so the tool calls really run in the environments, the rewards
are the gold rewards even for a random model, and the update is still real: the ``hf_cpu`` server scores the
scripted tokens under its current weights and returns their log-probs (:data:`~.rollout.FORCED_RESPONSE_KEY`).

:class:`PolicyAgentLoop` wraps the row's own agent loop (``tool_agent``, ``tau2_agent``, ...), instantiated from
verl's agent-loop registry with a :class:`ScriptedServer` in place of the server client. Only the agent's turns
are scripted: requests without verl's ``logprobs`` sampling key (the ``policy`` user simulator of normal mode)
go to the model. ``script_ratio`` mixes the two policies inside every group of rollouts of one prompt
(:func:`scripted_session`): with 0.5 and two rollouts per prompt, one is scripted and one sampled, so the group's
rewards differ and GRPO's advantage is not zero.

Sampling is seeded per request (:func:`sample_seed`: verl's ``rollout.seed``, the split, the training step, the
row's ``index``, the rollout's ``session_id`` and the call's number in the trajectory), which the ``hf_cpu``
server honours, so a run does not depend on the order in which requests reach the server. Validation seeds leave
the step out: every validation draws the same random numbers, and validations at different steps differ only by
the weights. A loop's own ``seed`` replaces ``rollout.seed`` in its keys, so a run can fix its validation draws
apart from its rollouts' (``learn --val-seed``).
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput

from ..verl_compat import agent_loop_registry
from .rollout import FORCED_RESPONSE_KEY

DEFAULT_SCRIPT_SOURCE = "verl_rewards.gold:gold_assistant_turns"
#: what a scripted agent says once its script is used up
FINAL_MESSAGE = "Thank you, that is all."
POLICIES = ("sample", "script")
#: the splits a wrapped loop serves (each gets its own loop name in the smoke's agent-loop YAML)
SPLITS = ("train", "val")


def load_script_source(spec: str) -> Callable[[Mapping[str, Any]], Sequence[Mapping[str, Any]]]:
    """``"module:function"`` -> the function giving a row's assistant turns."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"script source must be 'module:function', got {spec!r}")
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"the script policy needs {spec} ({type(exc).__name__}: {exc})") from exc
    if not callable(fn):
        raise TypeError(f"{spec} is not callable")
    return fn


def render_assistant_turn(tokenizer: Any, turn: Mapping[str, Any]) -> list[int]:
    """Token ids of one assistant message as the model would generate it: the chat template's rendering of the
    message after the generation prompt, up to and including the end-of-turn token."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.get("content") or ""}
    calls = []
    for call in turn.get("tool_calls") or ():
        fn = call.get("function", call)
        calls.append({"type": "function", "function": {"name": fn["name"], "arguments": fn.get("arguments") or {}}})
    if calls:
        message["tool_calls"] = calls
    head = [{"role": "user", "content": "."}]
    prefix = tokenizer.apply_chat_template(head, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template(head + [message], tokenize=False)
    if not full.startswith(prefix):
        raise ValueError("the chat template does not render an assistant turn after its generation prompt")
    text = full[len(prefix) :]
    eos = tokenizer.eos_token or ""
    if eos and eos in text:
        text = text[: text.rindex(eos) + len(eos)]
    return list(tokenizer.encode(text, add_special_tokens=False))


def row_view(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The agent loop's per-sample kwargs as a row of ``prepare`` output (``prompt`` is verl's ``raw_prompt``)."""
    row = dict(kwargs)
    if "prompt" not in row and "raw_prompt" in row:
        row["prompt"] = row["raw_prompt"]
    return row


class ScriptedServer:
    """Stands in for verl's server client in one trajectory: the agent's turns come from the script, scored by
    the ``hf_cpu`` server under its current weights; every other request goes to the model."""

    def __init__(self, server: Any, tokenizer: Any, turns: Sequence[Mapping[str, Any]]):
        self._server = server
        self._tokenizer = tokenizer
        self._turns = list(turns)
        self.played = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict, **kwargs: Any) -> Any:
        if "logprobs" not in sampling_params:  # not an agent turn (verl's agent loops always set it)
            return await self._server.generate(
                request_id=request_id, prompt_ids=prompt_ids, sampling_params=sampling_params, **kwargs
            )
        turn = self._turns[self.played] if self.played < len(self._turns) else {"content": FINAL_MESSAGE}
        self.played += 1
        forced = render_assistant_turn(self._tokenizer, turn)
        params = {**sampling_params, FORCED_RESPONSE_KEY: forced}
        return await self._server.generate(
            request_id=request_id, prompt_ids=prompt_ids, sampling_params=params, **kwargs
        )


class SeededServer:
    """Stands in for verl's server client in one trajectory: every request carries the next seed of the trajectory
    (``sampling_params["seed"]``), which the ``hf_cpu`` server sets before it samples."""

    def __init__(self, server: Any, key: tuple[Any, ...]):
        self._server = server
        self._key = key
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict, **kwargs: Any) -> Any:
        params = {**sampling_params, "seed": sample_seed(*self._key, self.calls)}
        self.calls += 1
        return await self._server.generate(
            request_id=request_id, prompt_ids=prompt_ids, sampling_params=params, **kwargs
        )


def trajectory_key(base: int, split: str, step: int, index: int, session: int) -> tuple[Any, ...]:
    """What a trajectory's seeds are made of: the rollout seed, the split, the training step (0 in validation: every
    validation draws the same numbers), the row's index and the rollout's session; :class:`SeededServer` adds the
    call's number in the trajectory."""
    return (base, split, step if split == "train" else 0, index, session)


def sample_seed(*parts: Any) -> int:
    """A 63-bit seed from ``parts`` (their ``repr``): the same parts give the same seed in every process."""
    digest = hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def scripted_session(ratio: float, session: int, offset: float) -> bool:
    """Whether rollout ``session`` of a group is scripted: systematic sampling at ``ratio`` from ``offset`` in
    [0, 1), so any ``n`` consecutive sessions hold ``floor(n * ratio)`` or ``ceil(n * ratio)`` scripted ones (with
    0.5 and two rollouts, exactly one)."""
    if ratio >= 1.0:
        return True
    if ratio <= 0.0:
        return False
    return math.floor((session + 1) * ratio + offset) - math.floor(session * ratio + offset) == 1


_UNNUMBERED = itertools.count(1 << 32)


def _as_int(value: Any, default: int = 0) -> int:
    """An agent-loop kwarg as an int (a numpy scalar or a 0-d tensor in verl's batches)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


class PolicyAgentLoop(AgentLoopBase):
    """Runs the row's agent loop (``inner_agent``, else verl's ``default_agent_loop``) under ``policy``."""

    def __init__(
        self,
        *,
        inner_agent: str | None = None,
        policy: str = "script",
        script_ratio: float = 1.0,
        script_source: str = DEFAULT_SCRIPT_SOURCE,
        split: str = "train",
        seed: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        if not 0.0 <= float(script_ratio) <= 1.0:
            raise ValueError(f"script_ratio must be within [0, 1], got {script_ratio}")
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        self._kwargs = kwargs
        self.inner_agent = inner_agent or str(self.rollout_config.agent.default_agent_loop)
        self.policy = policy
        self.script_ratio = float(script_ratio) if policy == "script" else 0.0
        self.script_source = script_source
        self.split = split
        self.seed = None if seed is None else int(seed)

    def seed_key(self, kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """What this trajectory's seeds are made of (see the module doc); the call number is added per request.
        The loop's own ``seed``, when set, stands for verl's ``rollout.seed``. Without verl's ``session_id`` (the
        legacy agent loop) each trajectory takes the next number of a counter."""
        base = self.seed if self.seed is not None else _as_int(getattr(self.rollout_config, "seed", 0))
        session = _as_int(kwargs["session_id"]) if "session_id" in kwargs else next(_UNNUMBERED)
        step, index = _as_int(kwargs.get("global_steps")), _as_int(kwargs.get("index"))
        return trajectory_key(base, self.split, step, index, session)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        import hydra

        config = agent_loop_registry().get(self.inner_agent)
        if config is None or self.inner_agent == getattr(self, "name", None):
            raise ValueError(f"policy loop: unknown inner agent loop {self.inner_agent!r}")
        key = self.seed_key(kwargs)
        server: Any = SeededServer(self.server_manager, key)
        offset = sample_seed(*key[:4], "mix") / 2.0**63  # one offset per group: its sessions share it
        if scripted_session(self.script_ratio, key[4], offset):
            turns = load_script_source(self.script_source)(row_view(kwargs))
            if not turns:
                raise ValueError(f"script policy: {self.script_source} gave no turns for this row")
            server = ScriptedServer(server, self.tokenizer, turns)
        inner = hydra.utils.instantiate(config=config, **{**self._kwargs, "server_manager": server})
        return await inner.run(sampling_params, **kwargs)
