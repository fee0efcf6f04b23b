"""The conversation a sample played, carried as one text extra (``reward.reward_kwargs.record_trajectory=true``).

verl's validation dump (``trainer.validation_data_dir``: ``_write_generations`` in ``verl/trainer/ppo/ray_trainer.py``
and ``verl/trainer/ppo/v1/trainer_base.py``) holds the decoded prompt and response (``input``, ``output``) and
every ``reward_extra_info`` key; decoded text has no roles, no tool calls and no tool results. With
``record_trajectory`` on, every sample reports :data:`TRAJECTORY_KEY`: JSON text of

``{"data_source", "task_id", "split", "mode", "termination", "messages"}``

where ``messages`` is what the agent loop recorded (``tool_extra_fields["messages"]``: our tau2 / tau-bench loops
and tools record it), so ``verl-rewards export-sft results DUMP.jsonl`` rebuilds the chat messages. A sample without
recorded messages, or whose text would exceed :data:`MAX_TRAJECTORY_CHARS`, reports ``""`` (a text key; it is listed
in ``reward_extra_absent``; the metrics skip text anyway). A sample whose messages cannot be written as JSON (a
custom loop's values) reports ``""`` too, and :data:`TRAJECTORY_ERROR_KEY` ``1`` (``0`` otherwise). Every sample
of a batch carries this text through Ray, so turn it on for validation or evaluation runs, not for long training
runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from .sample import Sample

logger = logging.getLogger("verl_rewards")

#: the extra key holding the recorded conversation (JSON text)
TRAJECTORY_KEY = "trajectory_json"
#: the flag of a sample whose recorded messages cannot be written as JSON (0 or 1)
TRAJECTORY_ERROR_KEY = "trajectory_error"
#: the extra keys ``record_trajectory`` adds (the first is text)
RECORDED_KEYS = (TRAJECTORY_KEY, TRAJECTORY_ERROR_KEY)
#: longest recorded text (characters); a longer conversation is not recorded (logged once per process)
MAX_TRAJECTORY_CHARS = 262_144
_over_logged = False
_error_logged = False


def _messages(value: Any) -> list[dict[str, Any]] | None:
    if hasattr(value, "tolist") and not isinstance(value, list | dict):
        value = value.tolist()
    if isinstance(value, list) and value and all(isinstance(m, Mapping) for m in value):
        return [dict(m) for m in value]
    return None


def _text_or_empty(value: Any) -> str:
    return "" if value is None else str(value)


def recorded_extras(sample: Sample) -> dict[str, Any]:
    """The sample's :data:`RECORDED_KEYS`: its conversation as text (None: nothing recorded, or too long) and
    :data:`TRAJECTORY_ERROR_KEY`, 1 when the recorded messages cannot be written as JSON (a custom loop's
    non-JSON values: keys that are not text, a message that contains itself); only that sample loses its text."""
    global _error_logged
    try:
        return {TRAJECTORY_KEY: trajectory_text(sample), TRAJECTORY_ERROR_KEY: 0}
    except Exception as exc:  # noqa: BLE001 - json.dumps(default=str) runs the messages' own __str__
        if not _error_logged:
            _error_logged = True
            logger.warning(
                "verl-rewards: record_trajectory: the messages of sample %s cannot be written as JSON (%s: %.200s); "
                "such samples report %s=1 and no %s (logged once)",
                sample.sample_id,
                type(exc).__name__,
                exc,
                TRAJECTORY_ERROR_KEY,
                TRAJECTORY_KEY,
            )
        return {TRAJECTORY_KEY: None, TRAJECTORY_ERROR_KEY: 1}


def trajectory_text(sample: Sample) -> str | None:
    """The sample's conversation as :data:`TRAJECTORY_KEY` text, or None (no recorded messages, or too long);
    raises what ``json.dumps`` raises for messages that are not JSON values."""
    global _over_logged
    messages = _messages(sample.tool_extra.get("messages"))
    if messages is None:
        return None
    extra = sample.extra_info
    mode = extra.get("mode") or ("solo" if extra.get("solo_mode") else "")
    payload = {
        "data_source": sample.data_source,
        "task_id": _text_or_empty(extra.get("task_id")),
        "split": _text_or_empty(extra.get("split")),
        "mode": _text_or_empty(mode),
        "termination": _text_or_empty(sample.tool_extra.get("termination", extra.get("termination"))),
        "messages": messages,
    }
    text = json.dumps(payload, ensure_ascii=False, default=str)
    if len(text) > MAX_TRAJECTORY_CHARS:
        if not _over_logged:
            _over_logged = True
            logger.warning(
                "verl-rewards: record_trajectory: a conversation of %d characters (task %r) exceeds %d and is not "
                "recorded; such samples list %s in reward_extra_absent",
                len(text),
                payload["task_id"],
                MAX_TRAJECTORY_CHARS,
                TRAJECTORY_KEY,
            )
        return None
    return text


def read_trajectory_text(text: Any) -> dict[str, Any] | None:
    """A :data:`TRAJECTORY_KEY` value back as a dict with a message list; None when the sample recorded nothing
    (``""``, or a non-text absent value); :class:`ValueError` saying why for text that is not such a record."""
    if not isinstance(text, str) or not text:
        return None
    if len(text) > MAX_TRAJECTORY_CHARS:
        raise ValueError(f"longer than {MAX_TRAJECTORY_CHARS} characters (a recorded conversation never is)")
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not valid JSON ({type(exc).__name__})") from None
    if not isinstance(payload, dict):
        raise ValueError(f"expected a JSON object, got {type(payload).__name__}")
    if _messages(payload.get("messages")) is None:
        raise ValueError("messages: expected a non-empty list of message objects")
    return payload
