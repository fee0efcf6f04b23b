"""COMMUNICATE component: did the agent tell the user every ``communicate_info`` string?

A string is met iff some assistant message with non-blank text contains it after lower-casing both and removing
commas **from the message only** (so ``"1,234.56"`` in a message matches ``"1234.56"``, while an info string that
itself contains a comma can never match). No other normalisation: ``"625.60"`` does not match ``"625.6"``.
User and tool messages, and text inside tool-call arguments, never count. Empty or missing list: 1.0.
The same rule is tau-bench's ``outputs`` check (:mod:`verl_rewards.tau2.tau_bench`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ...engine.trajectory import Message
from .common import ComponentResult

if TYPE_CHECKING:
    from ..tasks import Task


def assistant_texts(messages: Iterable[Message]) -> list[str]:
    """Normalised (lower-cased, comma-free) text of every assistant message with non-blank text."""
    return [m.content.lower().replace(",", "") for m in messages if m.role == "assistant" and m.has_text()]  # type: ignore[union-attr]


def info_met(info: str, texts: Iterable[str]) -> bool:
    """True if ``info`` (lower-cased) is a substring of one of the normalised ``texts``."""
    needle = info.lower()
    return any(needle in t for t in texts)


def check_communicate(task: Task, messages: Sequence[Message]) -> ComponentResult:
    """Reward 1.0 iff every ``communicate_info`` string is met; one check per string."""
    criteria = task.evaluation_criteria
    infos = (criteria.communicate_info or ()) if criteria is not None else ()
    if not infos:
        return ComponentResult(reward=1.0)
    texts = assistant_texts(messages)
    checks = [{"info": s, "met": info_met(s, texts)} for s in infos]
    return ComponentResult(reward=1.0 if all(c["met"] for c in checks) else 0.0, checks=checks)
