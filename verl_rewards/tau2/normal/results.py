"""tau2-bench's results file, as its runner writes it (``Results.model_dump_json`` of ``src/tau2/data_model/
simulation.py``, ``tasks.py``, ``message.py``): every field of its models, defaults included, so that a file
``simulate`` writes and one ``tau2 run`` writes for the same run differ only in timings, ids and costs
(``tests/tau2/test_tau2_runs_parity.py`` compares them on recorded ``tau2 run`` runs).

* :func:`results_info`: the run's ``info`` (``Info``: models with their ``llm_args``, ``api_base`` included, the
  user guidelines tau2 records, which are its text for users without tools, the retrieval configuration, the
  voice and persona fields null).
* :func:`task_dump`: a task as tau2's ``Task`` model dumps it (defaults filled: ``requestor``, ``reward_basis``,
  ``assert_value``, null keys; keys its models do not have left out).
* :func:`message_dumps`: a trajectory as tau2's messages (``turn_idx``, ``raw_data`` and ``usage`` as litellm and
  tau2 record them, :mod:`.raw_data`).
* :func:`simulation_record` / :func:`failed_record`: one ``SimulationRun``, and the record tau2's runner writes for
  a simulation that failed (no messages, the error in ``info``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ...engine.client import Endpoint
from ..domain import Domain
from .prompts import guidelines_path
from .raw_data import raw_data, response_usage

_MESSAGE_DEFAULTS: dict[str, Any] = {
    "audio_format": None,
    "audio_path": None,
    "audio_script_gold": None,
    "speech_effects": None,
    "source_effects": None,
    "channel_effects": None,
    "turn_taking_action": None,
    "utterance_ids": None,
    "chunk_id": None,
    "is_final_chunk": True,
    "source": None,
    "contains_speech": True,
}
_RUN_DEFAULTS: dict[str, Any] = {
    "ticks": None,
    "mode": "half_duplex",
    "speech_environment": None,
    "review": None,
    "user_only_review": None,
    "info": None,
    "auth_classification": None,
    "hallucination_retries_used": 0,
    "hallucination_check": None,
    "provider_session_id": None,
    "policy": None,
    "effect_timeline": None,
}


# ------------------------------------------------------------------------------------------------ info
def llm_args(endpoint: Endpoint) -> dict[str, Any]:
    """What tau2 records as a model's ``llm_args``: its sampling arguments and where it is served (``api_base``)."""
    return {**dict(endpoint.sampling), "api_base": endpoint.base_url}


def results_info(
    domain: Domain, agent: Endpoint, user: Endpoint, *, num_trials: int, max_steps: int, max_errors: int, seed: int
) -> dict[str, Any]:
    """The results file's ``info``, as tau2's ``get_info`` writes it."""
    options = dict(domain.options)  # the load options as given (banking_knowledge: --retrieval and its settings)
    retrieval = options.pop("retrieval", None)
    return {
        "git_commit": "unknown",  # tau2's value when it cannot read a git commit
        "num_trials": num_trials,
        "max_steps": max_steps,
        "max_errors": max_errors,
        "user_info": {
            "implementation": "user_simulator",
            "llm": user.model,
            "llm_args": llm_args(user),
            # tau2 records its guidelines for users without tools, whatever the domain's users have
            "global_simulation_guidelines": guidelines_path(domain, with_tools=False).read_text(encoding="utf-8"),
            "voice_settings": None,
            "persona_config": None,
        },
        "agent_info": {
            "implementation": "llm_agent",
            "llm": agent.model,
            "llm_args": llm_args(agent),
            "voice_settings": None,
        },
        "environment_info": {"domain_name": domain.name, "policy": domain.policy_for(solo=False), "tool_defs": None},
        "seed": seed,
        "text_streaming_config": {"chunk_by": "words", "chunk_size": 1},
        "speech_complexity": None,
        "audio_native_config": None,
        "retrieval_config": retrieval,
        "retrieval_config_kwargs": options or None,
    }


# ------------------------------------------------------------------------------------------------ tasks
def _fields(raw: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``raw``'s values of a model's fields (``defaults``: every field in order, with its default)."""
    raw = raw if isinstance(raw, Mapping) else {}
    return {key: raw.get(key, default) for key, default in defaults.items()}


def _each(raw: Any, dump: Any) -> list[Any] | None:
    return None if raw is None else [dump(item) for item in raw]


def _tool_call(raw: Mapping[str, Any]) -> dict[str, Any]:
    return _fields(raw, {"id": "", "name": None, "arguments": None, "requestor": "assistant"})


def _history_message(raw: Mapping[str, Any], timestamp: str) -> dict[str, Any]:
    if raw.get("role") == "tool":
        out = _fields(raw, {"id": None, "role": "tool", "content": None, "requestor": "assistant", "error": False})
        return {**out, "turn_idx": raw.get("turn_idx"), "timestamp": raw.get("timestamp") or timestamp}
    out = _fields(raw, {"role": None, "content": None})
    out["tool_calls"] = _each(raw.get("tool_calls"), _tool_call)
    out.update(is_audio=bool(raw.get("is_audio", False)), turn_idx=raw.get("turn_idx"))
    out["timestamp"] = raw.get("timestamp") or timestamp
    out.update(_fields(raw, {"cost": None, "usage": None, "raw_data": None, "generation_time_seconds": None}))
    out.update(_fields(raw, _MESSAGE_DEFAULTS))
    return out


def _instructions(raw: Any) -> Any:
    if not isinstance(raw, Mapping):
        return raw
    keys = ("domain", "reason_for_call", "known_info", "unknown_info", "task_instructions")
    return _fields(raw, dict.fromkeys(keys))


def _call(raw: Mapping[str, Any], assertion: bool = False) -> dict[str, Any]:
    out = _fields(raw, {"env_type": None, "func_name": None, "arguments": None})
    if assertion:
        out.update(_fields(raw, {"assert_value": True, "message": None}))
    return out


def task_dump(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A task's JSON as tau2's ``Task.model_dump(mode="json")`` writes it."""
    now = datetime.now().isoformat()
    description = raw.get("description")
    scenario = raw.get("user_scenario") or {}
    state = raw.get("initial_state")
    criteria = raw.get("evaluation_criteria")
    out: dict[str, Any] = {
        "id": raw.get("id"),
        "description": None
        if description is None
        else _fields(description, dict.fromkeys(("purpose", "relevant_policies", "notes"))),
        "user_scenario": {
            "persona": scenario.get("persona"),
            "instructions": _instructions(scenario.get("instructions")),
        },
        "ticket": raw.get("ticket"),
        "initial_state": None,
        "evaluation_criteria": None,
    }
    if state is not None:
        data = state.get("initialization_data")
        out["initial_state"] = {
            "initialization_data": None if data is None else _fields(data, {"agent_data": None, "user_data": None}),
            "initialization_actions": _each(state.get("initialization_actions"), _call),
            "message_history": _each(state.get("message_history"), lambda m: _history_message(m, now)),
        }
    if criteria is not None:
        action_fields = {"action_id": None, "requestor": "assistant", "name": None, "arguments": None}
        out["evaluation_criteria"] = {
            "actions": _each(
                criteria.get("actions"),
                lambda a: _fields(a, {**action_fields, "info": None, "compare_args": None}),
            ),
            "env_assertions": _each(criteria.get("env_assertions"), lambda a: _call(a, assertion=True)),
            "communicate_info": criteria.get("communicate_info"),
            "nl_assertions": criteria.get("nl_assertions"),
            "reward_basis": criteria.get("reward_basis", ["DB", "COMMUNICATE"]),
        }
    issue = dict.fromkeys(("id", "title", "description")) | {"status": "open"}
    issue |= dict.fromkeys(("resolution", "created_at", "resolved_at", "author_email", "pr_link", "simulation_file"))
    out["issues"] = _each(raw.get("issues"), lambda i: _fields(i, issue))
    out["required_documents"] = raw.get("required_documents")
    out["user_tools"] = raw.get("user_tools")
    return out


# -------------------------------------------------------------------------------------------- messages
def message_dumps(
    trajectory: Sequence[dict[str, Any]], message_info: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Our trajectory as tau2's messages: tool calls flat with object arguments and a requestor, tool messages with
    ``id`` / ``requestor`` / ``error``, ``turn_idx`` in order, each message's ``timestamp`` (when it was played);
    on model messages tau2's ``cost`` (0.0: not priced), ``usage``, ``raw_data`` (litellm's record of the answer)
    and ``generation_time_seconds``; a message of a task's initial history has none of them."""
    out = []
    for i, m in enumerate(trajectory):
        meta = message_info[i] if i < len(message_info) else {}
        base = {"role": m["role"], "content": m.get("content")}
        if m["role"] == "tool":
            out.append(
                {
                    "id": m.get("tool_call_id") or "",
                    **base,
                    "requestor": m.get("requestor", "assistant"),
                    "error": bool(m.get("error")),
                    "turn_idx": i,
                    "timestamp": meta.get("timestamp"),
                }
            )
            continue
        calls = [
            {
                "id": c["id"],
                "name": c["function"]["name"],
                "arguments": _arguments(c["function"]["arguments"]),
                "requestor": m["role"],
            }
            for c in m.get("tool_calls") or ()
        ]
        answer = meta.get("raw")
        history = meta.get("history", False)
        usage = response_usage(answer) if isinstance(answer, Mapping) else meta.get("usage")
        out.append(
            {
                **base,
                "tool_calls": calls or None,
                "is_audio": False,
                "turn_idx": i,
                "timestamp": meta.get("timestamp"),
                "cost": None if history else 0.0,
                "usage": usage,
                "raw_data": raw_data(answer) if isinstance(answer, Mapping) else None,
                "generation_time_seconds": meta.get("generation_time_seconds"),
                **_MESSAGE_DEFAULTS,
            }
        )
    return out


def _arguments(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text) if isinstance(text, str) and text.strip() else {}
    except (ValueError, RecursionError):
        return {"_unparsed_arguments": str(text)[:2000]}
    return value if isinstance(value, dict) else {"_unparsed_arguments": str(text)[:2000]}


# ------------------------------------------------------------------------------------------ simulations
def simulation_record(
    task_id: str,
    trial: int,
    seed: int,
    termination: str,
    *,
    start: str,
    duration: float,
    reward_info: dict[str, Any] | None,
    messages: list[dict[str, Any]],
    policy: str | None,
) -> dict[str, Any]:
    """One ``SimulationRun`` as tau2 writes it (costs 0.0: tau2 prices a self-served model at 0.0)."""
    end = datetime.now().isoformat()
    return {
        "id": str(uuid.uuid4()),
        "task_id": task_id,
        "timestamp": end,
        "start_time": start,
        "end_time": end,
        "duration": duration,
        "termination_reason": str(termination),
        "agent_cost": 0.0,
        "user_cost": 0.0,
        "agent_usage": None,
        "reward_info": reward_info,
        "messages": messages,
        "trial": trial,
        "seed": seed,
        **_RUN_DEFAULTS,
        "policy": policy,
    }


def failed_record(task_id: str, trial: int, seed: int, error: str, error_type: str, attempts: int) -> dict[str, Any]:
    """The record tau2's runner writes for a simulation that failed every attempt (``infrastructure_error``: no
    messages, no reward, the last error in ``info``)."""
    record = simulation_record(
        task_id, trial, seed, "infrastructure_error", start="", duration=0.0, reward_info=None, messages=[], policy=None
    )
    record["start_time"] = record["end_time"]
    record["info"] = {
        "error": error,
        "error_type": error_type,
        "error_traceback": "",
        "failed_after_attempts": attempts,
    }
    return record
