"""What tau2's results file keeps of each model answer: litellm's response object as its ``to_dict()`` writes it (the
message's ``raw_data``) and tau2's ``usage`` of it (``get_response_usage``).

tau2 calls every model through litellm, which rebuilds the endpoint's chat completion into its own response object:
known fields in a fixed layout with their defaults (``system_fingerprint``, ``service_tier``, ``metadata``,
``moderation``, ``function_call``, message ``provider_specific_fields`` with ``refusal``, token counts 0 when the
endpoint reports none, the details objects with litellm's own fields), fields it does not know kept (at the top
level, or under the message's and the choice's ``provider_specific_fields``). :func:`raw_data` writes the same from
the answer our client received; ``tests/data/reference/tau2_runs.json`` holds what litellm 1.82.6 wrote for the
answers of a vLLM, an OpenAI and a reasoning server and for unknown fields (``litellm_responses``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any

_TOP = ("id", "created", "model", "object", "system_fingerprint", "choices", "usage", "service_tier")
_CHOICE = ("finish_reason", "index", "message", "logprobs")
_MESSAGE = ("content", "role", "tool_calls", "function_call", "refusal", "reasoning_content", "annotations")
_USAGE = ("completion_tokens", "prompt_tokens", "total_tokens", "completion_tokens_details", "prompt_tokens_details")
_DETAILS = {
    "completion_tokens_details": (
        "accepted_prediction_tokens",
        "audio_tokens",
        "reasoning_tokens",
        "rejected_prediction_tokens",
        "text_tokens",
    ),
    "prompt_tokens_details": ("audio_tokens", "cache_write_tokens", "cached_tokens", "image_tokens", "text_tokens"),
}


def raw_data(answer: Mapping[str, Any]) -> dict[str, Any]:
    """litellm's ``ModelResponse.to_dict()`` of a chat-completions ``answer`` (see the module doc)."""
    found = answer.get("choices")
    choices: list[Any] = found if isinstance(found, list) else []
    out: dict[str, Any] = {
        "id": answer.get("id") or f"chatcmpl-{uuid.uuid4()}",
        "created": answer.get("created") or int(time.time()),
        "model": answer.get("model"),
        "object": answer.get("object") or "chat.completion",
        "system_fingerprint": answer.get("system_fingerprint"),
        "choices": [_choice(c, i) for i, c in enumerate(choices) if isinstance(c, Mapping)],
        "usage": _usage(answer.get("usage")),
        "metadata": None,
        "moderation": None,
        "service_tier": answer.get("service_tier"),
    }
    out.update({k: v for k, v in answer.items() if k not in _TOP})
    return out


def response_usage(answer: Mapping[str, Any]) -> dict[str, Any]:
    """tau2's ``usage`` of a message: the answer's completion and prompt tokens (0 when it reports none)."""
    usage = _usage(answer.get("usage"))
    return {"completion_tokens": usage["completion_tokens"], "prompt_tokens": usage["prompt_tokens"]}


def _choice(choice: Mapping[str, Any], i: int) -> dict[str, Any]:
    found = choice.get("message")
    message: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    out: dict[str, Any] = {
        "finish_reason": choice.get("finish_reason") or "stop",
        "index": choice.get("index", i),
        "message": _message(message),
    }
    if choice.get("logprobs") is not None:
        out["logprobs"] = choice["logprobs"]
    out["provider_specific_fields"] = {k: v for k, v in choice.items() if k not in _CHOICE}
    return out


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    calls = message.get("tool_calls")
    out: dict[str, Any] = {
        "content": message.get("content"),
        "role": message.get("role") or "assistant",
        "tool_calls": [_call(c) for c in calls if isinstance(c, Mapping)] if calls else None,
        "function_call": message.get("function_call"),
    }
    fields: dict[str, Any] = {"refusal": message.get("refusal")}
    reasoning = message.get("reasoning_content")
    if reasoning is not None:
        out["reasoning_content"] = fields["reasoning_content"] = reasoning
    fields.update({k: v for k, v in message.items() if k not in _MESSAGE})
    out["provider_specific_fields"] = fields
    if "annotations" in message:
        out["annotations"] = message["annotations"]
    return out


def _call(call: Mapping[str, Any]) -> dict[str, Any]:
    found = call.get("function")
    fn: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    return {
        "function": {"arguments": fn.get("arguments"), "name": fn.get("name")},
        "id": call.get("id"),
        "type": call.get("type") or "function",
    }


def _usage(usage: Any) -> dict[str, Any]:
    usage = usage if isinstance(usage, Mapping) else {}
    out: dict[str, Any] = {key: usage.get(key) or 0 for key in _USAGE[:3]}
    for key, fields in _DETAILS.items():
        details = usage.get(key)
        out[key] = {f: details.get(f) for f in fields} if isinstance(details, Mapping) else None
    out.update({k: v for k, v in usage.items() if k not in _USAGE})
    return out
