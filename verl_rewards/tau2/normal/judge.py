"""The ``openai`` NL-assertion judge: tau2's NL_ASSERTION component graded by a chat-completions endpoint, over the
same client as the simulated user (timeouts, retries, concurrency limit).

As tau2-bench's judge (``src/tau2/evaluator/evaluator_nl_assertions.py``): one call per trajectory with all of the
task's assertions; the trajectory is given as one ``"<role>: <content>"`` line per message (tool calls are not
rendered), the assertions as a Python list; the answer is a JSON object ``{"results": [{"expectedOutcome",
"reasoning", "metExpectation"}]}``; the component is 1.0 only when every assertion is met. The system and user
prompts are tau2's, character for character (its eight-space indentation included). The default model upstream is
``gpt-4.1-2025-04-14`` at temperature 0.

Two readings of the reply. ``simulate`` reads it as tau2 does (:func:`tau2_judgements`: the results as given, an
empty list scores 1.0; a reply tau2 cannot read fails the attempt). The reward manager (training) is stricter: a
reply that is not that JSON object, or that does not grade every assertion, raises :class:`JudgeError`, which the
reward layer turns into a flagged reward error (``reward_error=1``, fallback score), never a silent 1.0.

In the reward manager: ``reward.reward_kwargs.tau2.judge={backend: openai, base_url: ..., model: ...}`` (plus the
endpoint keys of :class:`~.client.Endpoint`); offline: ``verl-rewards simulate --judge-model``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ...engine.client import ChatClient, Endpoint, shared_client
from ...engine.conversation import PlayerError

_INDENT = " " * 8  # tau2 writes its judge prompts as indented triple-quoted strings and sends them unstripped
_SYSTEM_LINES: tuple[str | None, ...] = (  # None: an empty line without the indentation, as in tau2's source
    None,
    "TASK",
    "- You will be given a list of expected outcomes and a conversation that was collected during a test case run.",
    "- The conversation is between an agent and a customer.",
    "- Your job is to evaluate whether the agent satisfies each of the expected outcomes.",
    "- Grade each expected outcome individually.",
    None,
    "FORMAT",
    "- Your response should be a JSON object with the following fields:",
    "- `reasoning`: a short explanation for your classification",
    "- `metExpectation`: `true` if the agent satisfies the expected outcomes, `false` otherwise",
    "- `expectedOutcome`: repeat the expectation from the input that you are grading",
    "",
    "Example response structure:",
    "{",
    '    "results": [',
    "        {",
    '            "expectedOutcome": "<one of the expected outcomes from the input>",',
    '            "reasoning": "<reasoning trace>",',
    '            "metExpectation": <false or true>,',
    "        }",
    "    ]",
    "}",
    "",
)
SYSTEM_PROMPT = "\n".join("" if line is None else _INDENT + line for line in _SYSTEM_LINES)
"""tau2's judge system prompt, character for character (``src/tau2/evaluator/evaluator_nl_assertions.py``)."""


MAX_REASONING_CHARS = 4000


class JudgeError(ValueError):
    """The judge's reply cannot be read as a grade of every assertion."""


def render_trajectory(messages: Sequence[Mapping[str, Any]]) -> str:
    """One ``"<role>: <content>"`` line per message (tool calls not rendered)."""
    return "\n".join(f"{m.get('role')}: {m.get('content')}" for m in messages)


def judge_user_prompt(messages: Sequence[Mapping[str, Any]], assertions: Sequence[str]) -> str:
    """tau2's judge user prompt: the rendered trajectory and the Python list of the assertions, indented as tau2
    sends them."""
    i = _INDENT
    return (
        f"\n{i}conversation:\n{i}{render_trajectory(messages)}\n{i}\n{i}expectedOutcomes:\n{i}{list(assertions)}\n{i}"
    )


def judge_messages(messages: Sequence[Mapping[str, Any]], assertions: Sequence[str]) -> list[dict[str, Any]]:
    """The judge's request messages: tau2's system and user prompts."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": judge_user_prompt(messages, assertions)},
    ]


def parse_judgements(content: str | None, assertions: Sequence[str]) -> list[tuple[bool, str]]:
    """``(metExpectation, reasoning)`` per assertion: matched by ``expectedOutcome`` text, else by position
    (JudgeError when a grade is missing or not a boolean; a missing reasoning is ``""``)."""
    text = (content or "").strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.find("{") :] if "{" in text else text
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise JudgeError(f"judge reply is not JSON: {text[:200]!r}") from None
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise JudgeError("judge reply has no `results` list of objects")
    if len(results) != len(assertions):
        raise JudgeError(f"judge graded {len(results)} outcome(s) for {len(assertions)} assertion(s)")
    by_text = {r.get("expectedOutcome"): r for r in results if isinstance(r.get("expectedOutcome"), str)}
    grades = []
    for i, assertion in enumerate(assertions):
        result: dict[str, Any] = by_text.get(assertion) or results[i]
        met = result.get("metExpectation")
        if not isinstance(met, bool):
            raise JudgeError(f"judge result {i}: metExpectation is {met!r}, not true/false")
        reasoning = result.get("reasoning")
        grades.append((met, reasoning[:MAX_REASONING_CHARS] if isinstance(reasoning, str) else ""))
    return grades


def tau2_judgements(content: str | None) -> list[tuple[str, bool, str]]:
    """``(expectedOutcome, metExpectation, reasoning)`` per result, read as tau2 reads its judge's reply
    (``evaluate_nl_assertions``): the reply's ``results`` as given, however many (none: the component is 1.0), each
    with its three fields; JudgeError where tau2 raises (not JSON, a field missing or of the wrong type)."""
    try:
        data = json.loads(content or "")
        results = data.get("results", [])
        out = []
        for r in results:
            outcome, met, reasoning = r["expectedOutcome"], r["metExpectation"], r["reasoning"]
            if not isinstance(outcome, str) or not isinstance(met, bool) or not isinstance(reasoning, str):
                raise TypeError("expectedOutcome, reasoning must be strings and metExpectation true/false")
            out.append((outcome, met, reasoning[:MAX_REASONING_CHARS]))
    except (ValueError, RecursionError, AttributeError, KeyError, TypeError) as exc:
        raise JudgeError(f"judge reply cannot be read ({type(exc).__name__}: {exc}): {str(content)[:200]!r}") from None
    return out


class OpenAIJudge:
    """``judge(messages, assertions) -> list[bool]`` for :func:`~verl_rewards.tau2.evaluate_trajectory` (sync, for
    the reward layer's threads) and :meth:`grade` (async)."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self._slots = threading.BoundedSemaphore(endpoint.max_concurrency)

    async def grade(
        self, messages: Sequence[Mapping[str, Any]], assertions: Sequence[str], client: ChatClient | None = None
    ) -> list[bool]:
        return [met for met, _ in await self.judgements(messages, assertions, client)]

    async def judgements(
        self, messages: Sequence[Mapping[str, Any]], assertions: Sequence[str], client: ChatClient | None = None
    ) -> list[tuple[bool, str]]:
        """``(met, reasoning)`` per assertion (``simulate`` keeps the reasoning as tau2's justification)."""
        client = client or shared_client(self.endpoint)
        try:
            reply = await client.complete(judge_messages(messages, assertions))
        except PlayerError as exc:
            raise JudgeError(f"NL-assertion judge: {exc}") from exc
        return parse_judgements(reply.content, assertions)

    async def tau2_judgements(
        self, messages: Sequence[Mapping[str, Any]], assertions: Sequence[str]
    ) -> list[tuple[str, bool, str]]:
        """The judge's results read as tau2 reads them (:func:`tau2_judgements`; ``simulate``)."""
        try:
            reply = await shared_client(self.endpoint).complete(judge_messages(messages, assertions))
        except PlayerError as exc:
            raise JudgeError(f"NL-assertion judge: {exc}") from exc
        return tau2_judgements(reply.content)

    def __call__(self, messages: Sequence[Mapping[str, Any]], assertions: Sequence[str]) -> list[bool]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("OpenAIJudge called synchronously inside an event loop; await judge.grade(...)")
        with self._slots:
            return asyncio.run(self._grade_once(messages, assertions))

    async def _grade_once(self, messages: Sequence[Mapping[str, Any]], assertions: Sequence[str]) -> list[bool]:
        client = ChatClient(self.endpoint)
        try:
            return await self.grade(messages, assertions, client)
        finally:
            await client.aclose()


def judge_from_config(section: Mapping[str, Any], where: str) -> OpenAIJudge:
    """An :class:`OpenAIJudge` from ``{backend: openai, base_url, model, ...}`` (ValueError naming ``where``)."""
    section = dict(section)
    backend = section.pop("backend", None)
    if backend != "openai":
        raise ValueError(f"{where}.backend must be 'openai', got {backend!r}")
    return OpenAIJudge(Endpoint.from_mapping(section, where))
