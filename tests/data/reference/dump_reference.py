"""Dump what tau2-bench and tau-bench show a model, produced by their own code, as the JSON fixtures of this folder.

Not part of the package and not a test: run it by hand in a throwaway environment that has the reference installed
(see README.md in this folder for the exact commands). It only reads the references' objects; it never sends a
request (the NL judge's ``generate`` is replaced by a function that records the messages it would send, and
tau-bench's ``litellm`` import is satisfied by a stub whose functions raise).

    python dump_reference.py tau2 --out DIR            # needs tau2-bench importable and TAU2_DATA_DIR set
    python dump_reference.py tau_bench --src SRC --out DIR   # SRC: a tau-bench checkout (needs pydantic)
    python dump_reference.py package                   # tau2_tools.json -> verl_rewards/tau2/tool_schemas/*.json
    python dump_reference.py validation --out DIR      # needs tau2-bench importable
    python dump_reference.py trajectories --out DIR    # needs tau2-bench importable and TAU2_DATA_DIR set
    python dump_reference.py runs --tau2 TAU2 --out DIR  # TAU2: tau2-bench's ``tau2`` command; TAU2_DATA_DIR set
    python dump_reference.py grep --out DIR            # needs tau2-bench importable and TAU2_DATA_DIR set

``package`` needs no reference: it splits this folder's ``tau2_tools.json`` into the package's schema files (the
data the package shows the model), so they are written from the reference's output, never by hand.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import types
from pathlib import Path
from typing import Any

TAU2_DOMAINS = ("mock", "airline", "retail", "telecom")
TAU2_TASK_SPLITS = {"mock": None, "airline": None, "retail": None, "telecom": "full"}
SAMPLE_TASKS = {
    "mock": ["create_task_1", "update_task_with_message_history"],
    "airline": ["0", "1"],
    "retail": ["0", "1"],
    "telecom": [
        "[mms_issue]bad_network_preference[PERSONA:None]",
        "[mobile_data_issue]user_abroad_roaming_enabled_off[PERSONA:Easy]",
    ],
}
ADDRESS = ("address1", "address2", "city", "country", "state", "zip")
TAU_BENCH_SAMPLES = {"retail": ("test", [0, 1]), "airline": ("test", [0, 1])}

# Arguments tau2's tools turn into pydantic models (telecom APNSettings, retail UserAddress, mock Task and
# Notification, airline models),
# valid and invalid: what tau2 builds, or the text of the ValidationError the model is shown
VALIDATION_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("telecom", "APNSettings", {"apn_name": "weird"}),
    ("telecom", "APNSettings", {"colour": 1}),
    ("telecom", "APNSettings", {"colour": 1, "apn_name": "weird", "mms_port": "x"}),
    ("telecom", "APNSettings", {"mms_port": 1.5}),
    ("telecom", "APNSettings", {"zz": "y" * 80, "apn_name": "a" * 70}),
    ("telecom", "APNSettings", {"mms_port": 1e30}),
    ("telecom", "APNSettings", {"apn_name": None}),
    ("telecom", "APNSettings", {"reset_at_reboot": "maybe", "mms_apn": 5}),
    ("telecom", "APNSettings", {"mms_port": "1.0", "reset_at_reboot": "YES", "apn_name": "broken"}),
    ("telecom", "APNSettings", {"mms_port": [1], "mms_proxy": {"a": 1}}),
    ("retail", "UserAddress", dict(zip(ADDRESS, ["a", "b", "c", "d", "e", 12345], strict=True))),
    ("retail", "UserAddress", dict(zip(ADDRESS, [1, None, "c", ["x"], "e", "z" * 80], strict=True))),
    ("retail", "UserAddress", dict(zip(ADDRESS, ["a" * 60, 2.5, True, {"k": "v" * 60}, "e", "f"], strict=True))),
    ("retail", "UserAddress", dict(zip(ADDRESS, ["a", "b", "c", "d", "e", "f"], strict=True))),
    ("mock", "Task", {"task_id": "task_3", "title": 5, "description": [1], "status": "pending"}),
    ("mock", "Task", {"task_id": "task_3", "title": "Write", "description": None, "status": "pending"}),
    ("mock", "Notification", {"notification_id": "n1", "message": 3, "status": "unread", "task_id": None}),
    ("airline", "Payment", {"payment_id": "x", "amount": 1.5}),
    ("airline", "Payment", {"payment_id": 3, "amount": " 7 "}),
    ("airline", "Payment", {"amount": "x", "extra": 1}),
    ("airline", "FlightInfo", {"flight_number": "HAT001"}),
    ("airline", "FlightInfo", {"flight_number": "HAT001", "date": 20240501, "cabin": "economy"}),
    ("airline", "Certificate", {"source": "gift_card", "id": "c", "amount": "x"}),
    (
        "airline",
        "Reservation",
        {
            "reservation_id": "R",
            "user_id": "u",
            "origin": "A",
            "destination": "B",
            "flight_type": "multi",
            "cabin": "first",
            "flights": [{"flight_number": "F", "origin": "A", "destination": "B", "date": "d", "price": "1.5"}, "x"],
            "passengers": [],
            "payment_history": [{"payment_id": "p"}],
            "created_at": "t",
            "total_baggages": True,
            "nonfree_baggages": "2",
            "insurance": "maybe",
        },
    ),
]

JUDGE_SAMPLE = {
    "messages": [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": "I'd like to return the water bottle from order #W2378156, please."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "name": "get_order_details", "arguments": {"order_id": "#W2378156"}}],
        },
        {"role": "tool", "id": "c1", "content": '{"order_id": "#W2378156", "status": "delivered"}'},
        {"role": "assistant", "content": "Done: the return is requested, refund to your gift card, $54.04."},
        {"role": "user", "content": "Thanks! ###STOP###"},
    ],
    "assertions": [
        "The agent tells the user the refund amount is $54.04.",
        "The agent does not refund to a credit card.",
    ],
}


def _dump(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dump_tau2(out: Path) -> None:
    """Tools, agent and user system prompts and the NL judge's prompts, from tau2-bench's own objects."""
    import tau2
    from tau2.agent.llm_agent import LLMSoloAgent
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
    from tau2.evaluator import evaluator_nl_assertions
    from tau2.registry import registry
    from tau2.runner.build import build_agent, build_environment, build_user

    tools: dict[str, Any] = {}
    prompts: dict[str, Any] = {}
    for domain in TAU2_DOMAINS:
        env = build_environment(domain)
        agent = build_agent("llm_agent", env, llm="reference-dump")
        tasks = registry.get_tasks_loader(domain)(TAU2_TASK_SPLITS[domain])
        entry: dict[str, Any] = {"agent": [t.openai_schema for t in agent.tools]}
        if env.user_tools is not None:
            entry["user"] = [t.openai_schema for t in env.get_user_tools()]
            ticketed = next(t for t in tasks if t.ticket)
            solo_env = build_environment(domain, solo_mode=True)
            solo = build_agent("llm_agent_solo", solo_env, llm="reference-dump", task=ticketed, solo_mode=True)
            assert isinstance(solo, LLMSoloAgent)
            entry["solo"] = [t.openai_schema for t in solo.tools]
        tools[domain] = entry

        by_id = {t.id: t for t in tasks}
        user_prompts = {}
        for task in tasks:
            user = build_user("user_simulator", env, task, llm="reference-dump")
            user_prompts[task.id] = user.system_prompt
        prompts[domain] = {
            "agent_system_prompt": agent.system_prompt,
            "user_system_prompts": {tid: user_prompts[tid] for tid in SAMPLE_TASKS[domain] if tid in by_id},
            "user_system_prompt_sha256": {tid: _sha256(p) for tid, p in user_prompts.items()},
        }
        if domain == "telecom":
            workflow = build_environment("telecom-workflow")
            prompts[domain]["agent_system_prompt_workflow"] = build_agent(
                "llm_agent", workflow, llm="reference-dump"
            ).system_prompt

    sent: list[Any] = []

    def record(**kwargs: Any) -> Any:
        sent.append([{"role": m.role, "content": m.content} for m in kwargs["messages"]])
        reply = {"results": [{"expectedOutcome": a, "reasoning": "", "metExpectation": True} for a in assertions]}
        return AssistantMessage(role="assistant", content=json.dumps(reply))

    trajectory = []
    for m in JUDGE_SAMPLE["messages"]:
        if m["role"] == "user":
            trajectory.append(UserMessage(role="user", content=m["content"]))
        elif m["role"] == "assistant":
            calls = [ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in m.get("tool_calls", [])]
            trajectory.append(AssistantMessage(role="assistant", content=m["content"], tool_calls=calls or None))
        else:
            trajectory.append(ToolMessage(id=m["id"], role="tool", content=m["content"]))
    assertions = JUDGE_SAMPLE["assertions"]
    evaluator_nl_assertions.generate = record  # type: ignore[attr-defined]  # record instead of calling a model
    evaluator_nl_assertions.NLAssertionsEvaluator.evaluate_nl_assertions(trajectory, assertions)
    judge = {"input": JUDGE_SAMPLE, "messages": sent[0]}

    version = getattr(tau2, "__version__", None)
    _dump(out / "tau2_tools.json", {"_source": _tau2_source(version), **tools})
    _dump(out / "tau2_prompts.json", {"_source": _tau2_source(version), **prompts, "nl_judge": judge})


def dump_validation(out: Path) -> None:
    """Each of :data:`VALIDATION_CASES` built by tau2's own model: the dump, or ``str(ValidationError)`` without the
    "For further information visit ..." lines (they name the pydantic version)."""
    import importlib
    import importlib.metadata
    import re

    import pydantic

    cases = []
    for domain, model, args in VALIDATION_CASES:
        cls = getattr(importlib.import_module(f"tau2.domains.{domain}.data_model"), model, None)
        if cls is None:
            cls = getattr(importlib.import_module(f"tau2.domains.{domain}.user_data_model"), model)
        case: dict[str, Any] = {"domain": domain, "model": model, "args": args}
        try:
            case["dump"] = cls(**args).model_dump(mode="json")
        except pydantic.ValidationError as exc:
            case["error"] = re.sub(r"\n +For further information visit \S+", "", str(exc))
        cases.append(case)
    source = f"{_tau2_source(importlib.metadata.version('tau2'))}, pydantic {pydantic.VERSION}"
    _dump(out / "tau2_validation.json", {"_source": source, "cases": cases})


# Trajectories played on tau2's own environments (tau2_trajectories.json): each scenario is a list of tool calls
# (requestor, name, arguments) played live on the task's environment (tau2's ``get_response`` and the orchestrator's
# ``sync_tools`` after every step); per call tau2's tool message and the DB hashes after it, then tau2's
# ``evaluate_simulation(..., EvaluationType.ALL)`` of the whole trajectory.
TELECOM_TRAJECTORY_TASKS = [
    "[mms_issue]bad_network_preference|user_abroad_roaming_disabled_on[PERSONA:None]",
    "[mms_issue]airplane_mode_on|bad_network_preference|user_abroad_roaming_disabled_on[PERSONA:None]",
    "[mobile_data_issue]user_abroad_roaming_enabled_off[PERSONA:None]",
    "[mobile_data_issue]user_abroad_roaming_disabled_on[PERSONA:Easy]",
    "[mobile_data_issue]data_mode_off[PERSONA:None]",
    "[mobile_data_issue]data_usage_exceeded[PERSONA:Easy]",
    "[service_issue]airplane_mode_on[PERSONA:None]",
    "[service_issue]lock_sim_card_pin[PERSONA:Hard]",
    "[service_issue]overdue_bill_suspension[PERSONA:Easy]",
    "[service_issue]contract_end_suspension[PERSONA:Hard]",
    "[mms_issue]bad_network_preference[PERSONA:None]",
    "[mms_issue]break_apn_mms_setting[PERSONA:Hard]",
]
BANKING_TRAJECTORY_TASKS = ["task_015", "task_026", "task_031", "task_032", "task_036", "task_039"]
# hand-written calls on banking_knowledge task_036 (a user with a credit card): discoverable tools called by their own
# names (agent and user side), with wrong arguments, before and after unlocking / giving, and helpers that are not tools
BANKING_EDGE_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("assistant", "initial_transfer_to_human_agent_0218", {}),
    ("assistant", "get_user_dispute_history_7291", {}),
    ("assistant", "get_user_dispute_history_7291", {"user_id": 7}),
    ("assistant", "get_user_dispute_history_7291", {"user_id": "x", "extra": 1}),
    ("assistant", "list_discoverable_agent_tools", {}),
    ("assistant", "submit_cash_back_dispute_0589", {"user_id": "u", "transaction_id": "t"}),
    ("user", "get_user_dispute_history_7291", {"user_id": "u"}),
    ("user", "get_card_last_4_digits", {"credit_card_account_id": "cc_1"}),
    ("user", "submit_cash_back_dispute_0589", {"user_id": "u", "transaction_id": "t"}),
    ("assistant", "give_discoverable_user_tool", {"discoverable_tool_name": "submit_cash_back_dispute_0589"}),
    ("user", "submit_cash_back_dispute_0589", {"user_id": "u", "transaction_id": "t"}),
    ("user", "submit_cash_back_dispute_0589", {"user_id": "u", "transaction_id": 5}),
    ("user", "submit_cash_back_dispute_0589", {"user_id": "u"}),
    ("assistant", "get_discoverable_tools", {}),
    ("assistant", "set_read_log_allowlist", {"allowlist": []}),
    ("assistant", "query_database", {"database_name": "users"}),
    ("user", "query_database", {"database_name": "users"}),
    ("assistant", "unlock_discoverable_agent_tool", {"agent_tool_name": "get_user_dispute_history_7291"}),
    ("assistant", "get_user_dispute_history_7291", {"user_id": "u"}),
    ("assistant", "list_discoverable_agent_tools", {}),
]


def _text_or_digest(text: str | None, limit: int = 200) -> dict[str, Any]:
    """``{"content": text}``, or for a longer text its first ``limit`` characters and its sha256 (smaller files)."""
    if text is None or len(text) <= limit:
        return {"content": text}
    return {"content_start": text[:limit], "content_sha256": _sha256(text)}


def _banking_variants(task: Any) -> list[tuple[str, list[tuple[str, str, dict[str, Any]]]]]:
    """The gold calls, the same with every discoverable call made by the tool's own name (unlocks dropped), and
    the same with the unlocks kept."""
    gold = [(a.requestor, a.name, dict(a.arguments)) for a in task.evaluation_criteria.actions or []]
    direct, unlocked = [], []
    for requestor, name, args in gold:
        if name in ("call_discoverable_agent_tool", "call_discoverable_user_tool"):
            inner = args.get("agent_tool_name") or args.get("discoverable_tool_name")
            call = (requestor, inner, json.loads(args.get("arguments") or "{}"))
            direct.append(call)
            unlocked.append(call)
        elif name == "unlock_discoverable_agent_tool":
            unlocked.append((requestor, name, args))
        else:
            direct.append((requestor, name, args))
            unlocked.append((requestor, name, args))
    return [("gold", gold), ("direct", direct), ("direct_unlocked", unlocked)]


def dump_trajectories(out: Path) -> None:
    """Calls played live on tau2's environments and tau2's evaluation of them, plus tau2's tool types."""
    from loguru import logger
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.environment.toolkit import MUTATES_STATE_ATTR, TOOL_TYPE_ATTR, get_tool_types
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.registry import registry
    from tau2.runner.build import _derive_read_log_allowlist

    logger.remove()
    tool_types: dict[str, Any] = {}
    for domain in (*TAU2_DOMAINS, "banking_knowledge"):
        kwargs = {"retrieval_variant": "bm25"} if domain == "banking_knowledge" else {}
        env = registry.get_env_constructor(domain)(**kwargs)
        merged = {k: v.value for k, v in get_tool_types(env.tools).items()}
        if env.user_tools is not None:
            merged.update({k: v.value for k, v in get_tool_types(env.user_tools).items()})
        sides = {}
        for side, kit in (("assistant", env.tools), ("user", env.user_tools)):
            if kit is not None:
                sides[side] = {
                    name: {"type": getattr(fn, TOOL_TYPE_ATTR).value, "mutates_state": getattr(fn, MUTATES_STATE_ATTR)}
                    for name, fn in kit.tools.items()
                }
        tool_types[domain] = {"evaluator": merged, "tools": sides}

    def play(domain: str, task: Any, calls: list[tuple[str, str, dict[str, Any]]], kwargs: dict[str, Any]) -> Any:
        env = registry.get_env_constructor(domain)(**kwargs)
        st = task.initial_state
        history = list(st.message_history or []) if st is not None else []
        env.set_state(
            initialization_data=st.initialization_data if st else None,
            initialization_actions=st.initialization_actions if st else None,
            message_history=history,
        )
        messages: list[Any] = list(history) or [
            AssistantMessage(role="assistant", content="Hi! How can I help you today?")
        ]
        steps = []
        for i, (requestor, name, args) in enumerate(calls):
            call = ToolCall(id=f"call_{i}", name=name, arguments=args, requestor=requestor)
            role = AssistantMessage if requestor == "assistant" else UserMessage
            messages.append(role(role=requestor, content=None, tool_calls=[call]))
            answer = env.get_response(call)
            env.sync_tools()  # the orchestrator's sync after every step
            messages.append(answer)
            steps.append(
                {
                    **_text_or_digest(answer.content),
                    "error": answer.error,
                    "db_hash": env.get_db_hash(),
                    "user_db_hash": env.get_user_db_hash(),
                }
            )
        messages.append(UserMessage(role="user", content="Thanks, that's all. ###STOP###"))
        sim = SimulationRun(
            id="reference",
            task_id=task.id,
            start_time="",
            end_time="",
            duration=0.0,
            termination_reason=TerminationReason.USER_STOP,
            messages=messages,
        )
        info = evaluate_simulation(sim, task, EvaluationType.ALL, False, domain, env_kwargs=kwargs)
        return steps, info.model_dump(mode="json")

    scenarios = []

    def add(domain: str, task: Any, variant: str, calls: Any, kwargs: dict[str, Any], options: dict[str, Any]) -> None:
        steps, info = play(domain, task, calls, kwargs)
        scenarios.append(
            {
                "domain": domain,
                "options": options,
                "task_id": task.id,
                "variant": variant,
                "calls": [list(c) for c in calls],
                "steps": steps,
                "reward_info": info,
            }
        )

    for task in registry.get_tasks_loader("mock")(None):
        if task.evaluation_criteria is not None and "NL_ASSERTION" not in task.evaluation_criteria.reward_basis:
            gold = [(a.requestor, a.name, dict(a.arguments)) for a in task.evaluation_criteria.actions or []]
            add("mock", task, "gold", gold, {}, {})
    telecom = {t.id: t for t in registry.get_tasks_loader("telecom")("full")}
    for tid in TELECOM_TRAJECTORY_TASKS:
        gold = [(a.requestor, a.name, dict(a.arguments)) for a in telecom[tid].evaluation_criteria.actions or []]
        add("telecom", telecom[tid], "gold", gold, {}, {})
        add("telecom", telecom[tid], "gold_minus_last", gold[:-1], {}, {})
    banking = {t.id: t for t in registry.get_tasks_loader("banking_knowledge")(None)}

    def bank_kwargs(task: Any) -> dict[str, Any]:
        return {
            "retrieval_variant": "no_knowledge",
            "task": task,
            "read_log_allowlist": _derive_read_log_allowlist(task),
        }

    for tid in BANKING_TRAJECTORY_TASKS:
        for variant, calls in _banking_variants(banking[tid]):
            add(
                "banking_knowledge",
                banking[tid],
                variant,
                calls,
                bank_kwargs(banking[tid]),
                {"retrieval": "no_knowledge"},
            )
    edge = banking["task_036"]
    add("banking_knowledge", edge, "edge_cases", BANKING_EDGE_CALLS, bank_kwargs(edge), {"retrieval": "no_knowledge"})

    import importlib.metadata

    source = _tau2_source(importlib.metadata.version("tau2"))
    _dump(out / "tau2_trajectories.json", {"_source": source, "tool_types": tool_types, "scenarios": scenarios})


# Real ``tau2 run`` runs (tau2_runs.json) against a scripted chat-completions server on 127.0.0.1 that this script
# starts: every request litellm sent (its body exactly as received) and the server's answer, and tau2's results file.
# The server answers from the request alone, so any runner sending the same requests gets the same answers: the
# agent (model "agent-model") plays the task's gold agent actions one per message (trial 1 opens with text and two
# calls in one message, one of an unknown tool), then states its communicate_info; the user ("user-model") opens with
# a line naming the task, plays its gold user actions one per message, then stops; the NL judge (tau2's default model,
# sent to this server through OPENAI_BASE_URL) meets every assertion.
RUNS: dict[str, dict[str, Any]] = {
    "mock": {
        "domain": "mock",
        "task_ids": [
            "create_task_1",
            "update_task_with_user_tools",
            "update_task_with_message_history",
            "update_task_with_history_and_env_assertions",
        ],
        "num_trials": 2,
        "judge": True,
    },
    "retail": {"domain": "retail", "task_ids": ["0", "36"], "num_trials": 1, "judge": True},
    "retail_no_judge": {"domain": "retail", "task_ids": ["36"], "num_trials": 1, "judge": False},
}
# Answers an OpenAI-compatible server may give, for what litellm makes of them (``raw_data``: its response object's
# ``to_dict()``, which tau2 keeps on every model message; ``usage``: tau2's ``get_response_usage``)
LITELLM_ANSWERS: dict[str, Any] = {
    "openai": {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "system_fingerprint": "fp_1",
        "service_tier": "default",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "hi", "refusal": None, "annotations": []},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 5,
            "completion_tokens": 1,
            "total_tokens": 6,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
    },
    "vllm": {
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "created": 2,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "reasoning_content": None,
                    "content": None,
                    "tool_calls": [
                        {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
                "stop_reason": None,
            }
        ],
        "usage": {"prompt_tokens": 10, "total_tokens": 12, "completion_tokens": 2, "prompt_tokens_details": None},
        "prompt_logprobs": None,
        "kv_transfer_params": None,
    },
    "reasoning": {
        "id": "c3",
        "object": "chat.completion",
        "created": 3,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ans", "reasoning_content": "think"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    },
    "unknown_fields": {
        "id": "c4",
        "object": "chat.completion",
        "created": 4,
        "model": "m",
        "foo": "bar",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "a", "bar": 1},
                "finish_reason": "length",
                "baz": 2,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2, "qux": 3},
    },
    "no_usage": {
        "id": "c5",
        "object": "chat.completion",
        "created": 5,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}],
    },
}
RUN_SEED = 300
CREATED = 1767225600  # the ``created`` time of every answer (fixed: answers depend on the request only)
LONG_TEXT = 400  # values whose JSON is longer are stored once, under "shared", and referenced by sha256


class _ScriptedModels:
    """The answers of the scripted server (see above): a function of the request body only."""

    def __init__(self, tasks: list[Any]):
        import random

        self.tasks = {t.id: t for t in tasks}
        self.by_scenario = {str(t.user_scenario): t for t in tasks}
        rng = random.Random(RUN_SEED)
        self.trial_of_seed = {rng.randint(0, 1_000_000): k for k in range(4)}

    def _task_in(self, messages: list[dict[str, Any]]) -> Any:
        for m in messages:
            text = m.get("content") if isinstance(m.get("content"), str) else ""
            for tid in self.tasks:
                if f"[task {tid}]" in text:
                    return self.tasks[tid]
        return None

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]
        if body["model"] == "agent-model":
            message, usage = self._agent(messages, self.trial_of_seed.get(body.get("seed"), 0)), True
        elif body["model"] == "user-model":
            message, usage = self._user(messages), False
        else:
            message, usage = self._judge(messages), True
        calls = [
            {"id": f"call_{key}_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(message.pop("calls", []))
        ]
        out_message: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if calls:
            out_message["tool_calls"] = calls
        answer: dict[str, Any] = {
            "id": f"chatcmpl-{key}",
            "object": "chat.completion",
            "created": CREATED,
            "model": body["model"],
            "choices": [{"index": 0, "message": out_message, "finish_reason": "tool_calls" if calls else "stop"}],
        }
        if usage:
            prompt = len(json.dumps(messages)) // 4
            answer["usage"] = {"prompt_tokens": prompt, "completion_tokens": 9, "total_tokens": prompt + 9}
        return answer

    def _agent(self, messages: list[dict[str, Any]], trial: int) -> dict[str, Any]:
        task = self._task_in(messages)
        if task is None:
            return {"content": "How can I help?"}
        start = next(i for i, m in enumerate(messages) if f"[task {task.id}]" in str(m.get("content")))
        done = sum(1 for m in messages[start:] if m["role"] == "assistant")
        criteria = task.evaluation_criteria
        gold = [a for a in (criteria.actions or []) if a.requestor == "assistant"] if criteria else []
        turns: list[dict[str, Any]] = []
        if trial == 1:
            turns.append({"content": "Let me look that up.", "calls": [("lookup_everything", {"q": "all"})]})
            if gold:
                turns[0]["calls"].append((gold[0].name, dict(gold[0].arguments)))
                gold = gold[1:]
        turns += [{"content": None, "calls": [(a.name, dict(a.arguments))]} for a in gold]
        infos = (criteria.communicate_info or []) if criteria else []
        turns.append({"content": "All done. " + " ".join(f"{i}." for i in infos)})
        return dict(turns[min(done, len(turns) - 1)])

    def _user(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        task = next((t for text, t in self.by_scenario.items() if text in messages[0]["content"]), None)
        if task is None:
            return {"content": "###STOP###"}
        own = [m for m in messages if m["role"] == "assistant"]
        opened = next((i for i, m in enumerate(own) if f"[task {task.id}]" in str(m.get("content"))), None)
        turn = 0 if opened is None else len(own) - opened
        criteria = task.evaluation_criteria
        gold = [a for a in (criteria.actions or []) if a.requestor == "user"] if criteria else []
        turns = [{"content": f"Hi, I need help with my request. [task {task.id}]"}]
        turns += [{"content": None, "calls": [(a.name, dict(a.arguments))]} for a in gold]
        turns.append({"content": "Thanks, that's all. ###STOP###"})
        return dict(turns[min(turn, len(turns) - 1)])

    def _judge(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        task = self._task_in([{"content": m.get("content")} for m in messages])
        assertions = list(task.evaluation_criteria.nl_assertions or []) if task is not None else []
        results = [{"expectedOutcome": a, "reasoning": "Scripted: met.", "metExpectation": True} for a in assertions]
        return {"content": json.dumps({"results": results})}


def _serve(models: _ScriptedModels, exchanges: list[Any]) -> Any:
    """The scripted server on 127.0.0.1 (a free port), recording ``(request body, answer)`` in ``exchanges``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            answer = models.answer(json.loads(json.dumps(body)))
            with lock:
                exchanges.append({"path": self.path, "request": body, "response": answer})
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _shared(value: Any, table: dict[str, Any]) -> Any:
    """``value`` with every string, object or list whose JSON is longer than :data:`LONG_TEXT` stored once in
    ``table`` under its sha256 and replaced by ``{"$ref": sha256}`` (inner values first). A run's requests repeat
    the conversation so far; shared, the file grows with the conversation, not with its square."""
    if isinstance(value, dict):
        value = {k: _shared(v, table) for k, v in value.items()}
    elif isinstance(value, list):
        value = [_shared(v, table) for v in value]
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if len(text) <= LONG_TEXT or not isinstance(value, str | dict | list):
        return value
    digest = _sha256(text)
    table[digest] = value
    return {"$ref": digest}


def dump_runs(out: Path, tau2_command: str) -> None:
    """Each of :data:`RUNS` played by ``tau2 run`` against the scripted server; its exchanges and results file."""
    import os
    import subprocess
    import tempfile

    from tau2.registry import registry

    runs: dict[str, Any] = {}
    table: dict[str, Any] = {}
    for name, run in RUNS.items():
        tasks = [t for t in registry.get_tasks_loader(run["domain"])(None) if t.id in run["task_ids"]]
        exchanges: list[Any] = []
        server = _serve(_ScriptedModels(tasks), exchanges)
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        llm_args = json.dumps({"temperature": 0.0, "api_base": base})
        command = [
            *("run", "--domain", run["domain"], "--task-ids", *run["task_ids"]),
            *("--num-trials", str(run["num_trials"]), "--max-concurrency", "1", "--seed", str(RUN_SEED)),
            *("--agent-llm", "openai/agent-model", "--agent-llm-args", llm_args),
            *("--user-llm", "openai/user-model", "--user-llm-args", llm_args),
        ]
        env = dict(os.environ, OPENAI_API_KEY="sk-reference", LITELLM_LOCAL_MODEL_COST_MAP="True")
        if run["judge"]:  # tau2's judge (its default model) goes to the same server
            env.update(OPENAI_BASE_URL=base, OPENAI_API_BASE=base)
        else:
            for key in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
                env.pop(key, None)
        with tempfile.TemporaryDirectory() as tmp:
            save = Path(tmp) / name
            # run outside any git checkout: tau2 records the commit of its working directory (else "unknown")
            subprocess.run(
                [tau2_command, *command, "--save-to", str(save)], env=env, cwd=tmp, check=True, capture_output=True
            )
            results = json.loads((save / "results.json").read_text(encoding="utf-8"))
        server.shutdown()
        server.server_close()
        shown = [c.replace(base, "http://127.0.0.1:PORT/v1") for c in command]
        record = {"command": ["tau2", *shown], "base_url": base, "requests": len(exchanges), "results": results}
        if run["judge"]:  # the run without a judge is kept for its results only (tau2's retries repeat the requests)
            record["exchanges"] = exchanges
        runs[name] = _shared(record, table)
        print(f"{name}: {len(exchanges)} requests, {len(results['simulations'])} simulations")
    import importlib.metadata

    source = f"{_tau2_source(importlib.metadata.version('tau2'))}, litellm {importlib.metadata.version('litellm')}"
    document = {"_source": source, "runs": runs, "litellm_responses": _litellm_responses(), "shared": table}
    _dump(out / "tau2_runs.json", document)


def _litellm_responses() -> dict[str, Any]:
    """What litellm (as tau2's ``generate`` calls it) makes of each of :data:`LITELLM_ANSWERS`."""
    import os

    import litellm
    from tau2.utils.llm_utils import get_response_usage

    class Canned:
        def answer(self, body: dict[str, Any]) -> dict[str, Any]:
            return LITELLM_ANSWERS[body["messages"][0]["content"]]

    server = _serve(Canned(), [])  # type: ignore[arg-type]
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    out = {}
    for name, answer in LITELLM_ANSWERS.items():
        messages = [{"role": "user", "content": name}]
        response = litellm.completion(model="openai/m", messages=messages, api_base=base, api_key="sk-reference")
        out[name] = {"answer": answer, "raw_data": response.to_dict(), "usage": get_response_usage(response)}
    server.shutdown()
    server.server_close()
    return out


# banking_knowledge grep calls (the arguments a model sends): ordinary patterns, patterns that do not compile
# (tau2 greps their escaped literal), flags, look-arounds, back-references, Unicode case folding, and
# arguments tau2's tool fails on (its own error texts)
GREP_CASES: list[dict[str, Any]] = [
    *(
        {"pattern": p}
        for p in (
            "debit card",
            "fee|charge",
            "credit.*card",
            "[",
            "(unclosed",
            "",
            "   ",
            "xyzzy",
            r"\d{4}",
            "Rho-Bank",
            "^#",
            "a*",
            r"\bcard\b",
            "(?i)ACCOUNT",
            "FEE",
            r"\w+",
            r"(\w+)\s\1",
            r"(?<=the )card",
            r"(?<!debit )card",
            r"\d+(?:\.\d+)?%",
            r"\$\d",
            ".",
            "x{2,}",
            "(a|b)*c",
            r"(?P<n>fee)",
            "fee\ncharge",
            r"\Z",
            "a{99999999999}",
            "[[:alpha:]]",
            "\u0130",
            "\u017f",
            "\u212a",
            "\u00df",
            r"\p{L}",
            r"\N{DIGIT ONE}",
            "\u00e9",
            "(?x) debit   card",
            "(?s)fee.*charge",
            "(?m)^#+ ",
            "\\",
            "*",
            "+fee",
            "?",
            "(?<name",
            "card$",
            "(?-i:Card)",
            "[a-",
            "a{2,1}",
        )
    ),
    {"pattern": 5},
    {"pattern": None},
    {"pattern": ["fee"]},
    {},
    {"pattern": "fee", "extra": 1},
]


def dump_grep(out: Path) -> None:
    """banking_knowledge's ``grep`` tool (``grep_only``) on each of :data:`GREP_CASES`, through tau2's environment
    (``get_response``), the documents loaded sorted by id (tau2 iterates the folder in file-system order): the
    error flag, the output's sha256 and length, and the whole output when it is an error."""
    import importlib.metadata

    from tau2.data_model.message import ToolCall
    from tau2.domains.banking_knowledge import data_model
    from tau2.domains.banking_knowledge.environment import get_environment

    load = data_model.KnowledgeBase.load.__func__  # type: ignore[attr-defined]
    data_model.KnowledgeBase.load = classmethod(
        lambda cls, d: cls(documents=dict(sorted(load(cls, d).documents.items())))
    )
    env = get_environment(retrieval_variant="grep_only")
    cases = []
    for i, arguments in enumerate(GREP_CASES):
        resp = env.get_response(ToolCall(id=f"g{i}", name="grep", arguments=arguments, requestor="assistant"))
        case = {
            "arguments": arguments,
            "error": resp.error,
            "sha256": _sha256(resp.content),
            "chars": len(resp.content),
        }
        if resp.error:
            case["content"] = resp.content
        cases.append(case)
    _dump(out / "tau2_grep.json", {"_source": _tau2_source(importlib.metadata.version("tau2")), "cases": cases})


#: telecom phones played one after another in one process: (phone, initialisation actions when it is set up, user
#: tool calls); a phone named again continues where it was.
VPN_STEPS: list[tuple[str, list[str], list[str]]] = [
    ("A", [], ["connect_vpn", "check_vpn_status", "run_speed_test"]),
    ("B", ["break_vpn"], ["check_vpn_status", "run_speed_test"]),
    ("A", [], ["check_vpn_status", "run_speed_test", "disconnect_vpn", "connect_vpn", "check_vpn_status"]),
    ("C", [], ["connect_vpn", "check_vpn_status", "run_speed_test"]),
]


def dump_vpn(out: Path) -> None:
    """telecom's VPN details across phones of one process (:data:`VPN_STEPS`): each user tool's output and the
    user DB hash after it, through tau2's environment (``get_response``, then ``sync_tools``)."""
    import importlib.metadata

    from tau2.data_model.message import ToolCall
    from tau2.data_model.tasks import EnvFunctionCall
    from tau2.registry import registry

    envs: dict[str, Any] = {}
    steps = []
    for name, init, calls in VPN_STEPS:
        if name not in envs:
            env = registry.get_env_constructor("telecom")()
            actions = [EnvFunctionCall(env_type="user", func_name=f, arguments={}) for f in init]
            env.set_state(initialization_data=None, initialization_actions=actions, message_history=[])
            envs[name] = env
        env = envs[name]
        for call in calls:
            resp = env.get_response(ToolCall(id=call, name=call, arguments={}, requestor="user"))
            env.sync_tools()
            steps.append(
                {
                    "phone": name,
                    "call": call,
                    "content": resp.content,
                    "error": resp.error,
                    "user_db_hash": env.get_user_db_hash(),
                }
            )
    _dump(out / "tau2_telecom_vpn.json", {"_source": _tau2_source(importlib.metadata.version("tau2")), "steps": steps})


_SWEEP: list[tuple[str, dict[str, Any]]] = [
    (name, {})
    for name in (
        "check_status_bar", "check_network_status", "check_network_mode_preference", "run_speed_test",
        "check_apn_settings", "can_send_mms", "check_data_restriction_status", "toggle_data", "toggle_data",
        "toggle_airplane_mode", "toggle_airplane_mode", "reset_apn_settings", "reboot_device",
        "check_apn_settings", "check_network_mode_preference", "check_status_bar",
    )
]  # fmt: skip

#: telecom phones (each fresh, no task) given an APN or a network mode of the wrong type, then used on
STORED_STEPS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "apn_str": [("set_apn_settings", {"apn_settings": "internet"}), *_SWEEP],
    "apn_int": [("set_apn_settings", {"apn_settings": 5}), *_SWEEP],
    "apn_list": [("set_apn_settings", {"apn_settings": ["internet"]}), ("check_status_bar", {})],
    "apn_none": [("set_apn_settings", {"apn_settings": None}), ("check_apn_settings", {})],
    "apn_bool": [("set_apn_settings", {"apn_settings": True}), ("check_status_bar", {})],
    "apn_float": [("set_apn_settings", {"apn_settings": 2.5}), ("reboot_device", {})],
    "mode_int": [("set_network_mode_preference", {"mode": 5}), *_SWEEP],
    "mode_none": [("set_network_mode_preference", {"mode": None}), *_SWEEP],
    "mode_list": [("set_network_mode_preference", {"mode": ["4g_only"]}), ("check_status_bar", {})],
    "mode_bool": [("set_network_mode_preference", {"mode": True}), ("check_network_mode_preference", {})],
    "mode_dict": [("set_network_mode_preference", {"mode": {"a": 1}}), ("run_speed_test", {})],
    "mode_recover": [
        ("set_network_mode_preference", {"mode": 3}),
        ("set_network_mode_preference", {"mode": "3g_only"}),
        ("check_network_mode_preference", {}),
        ("check_status_bar", {}),
    ],
}


def dump_stored(out: Path) -> None:
    """telecom phones given a non-object APN or a non-string network mode (:data:`STORED_STEPS`): each user
    tool's output, error flag and the user DB hash after it, through tau2's environment (``get_response``, then
    ``sync_tools``)."""
    import importlib.metadata
    import warnings

    from tau2.data_model.message import ToolCall
    from tau2.registry import registry

    warnings.simplefilter("ignore")  # pydantic's serializer warnings on the wrongly typed field
    scenarios = {}
    for name, calls in STORED_STEPS.items():
        env = registry.get_env_constructor("telecom")()
        env.set_state(initialization_data=None, initialization_actions=None, message_history=[])
        steps = []
        for i, (call, arguments) in enumerate(calls):
            resp = env.get_response(ToolCall(id=f"c{i}", name=call, arguments=arguments, requestor="user"))
            env.sync_tools()
            steps.append(
                {"call": call, "arguments": arguments, "content": resp.content, "error": resp.error,
                 "user_db_hash": env.get_user_db_hash()}
            )  # fmt: skip
        scenarios[name] = steps
    source = _tau2_source(importlib.metadata.version("tau2"))
    _dump(out / "tau2_telecom_stored.json", {"_source": source, "scenarios": scenarios})


def _tau2_source(version: str | None) -> str:
    return f"tau2-bench {version or '?'} (commit a2c024725189473d2d7cea3a5cfdbcc67478e41f), dump_reference.py"


def dump_tau_bench(src: Path, out: Path) -> None:
    """tau-bench's ``Env.tools_info``, wiki (the agent's system prompt) and the ``llm`` user's system prompt."""
    stub = types.ModuleType("litellm")

    def _no_calls(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("reference dump: no model calls")

    stub.completion = _no_calls  # type: ignore[attr-defined]
    sys.modules["litellm"] = stub  # tau_bench/envs/user.py imports litellm.completion; it is never called here
    sys.path.insert(0, str(src))
    from tau_bench.envs import get_env
    from tau_bench.envs.user import LLMUserSimulationEnv

    result: dict[str, Any] = {"_source": "tau-bench commit 59a200c6d575d595120f1cb70fea53cef0632f6b, dump_reference.py"}
    for domain, (split, indexes) in TAU_BENCH_SAMPLES.items():
        env = get_env(domain, user_strategy="human", user_model="none", task_split=split)
        user = LLMUserSimulationEnv.__new__(LLMUserSimulationEnv)  # build_system_prompt reads nothing of self
        result[domain] = {
            "tools_info": env.tools_info,
            "wiki": env.wiki,
            "user_system_prompts": {
                f"{split}/{i}": user.build_system_prompt(instruction=env.tasks[i].instruction) for i in indexes
            },
        }
    _dump(out / "tau_bench_reference.json", result)


def write_package(reference: Path, package: Path) -> None:
    """The package's schema files from ``tau2_tools.json``: ``<domain>.json`` (agent, user) and ``solo_done.json``."""
    tools = json.loads(reference.read_text(encoding="utf-8"))
    package.mkdir(parents=True, exist_ok=True)
    done = None
    for domain in TAU2_DOMAINS:
        entry = tools[domain]
        _dump(package / f"{domain}.json", {"agent": entry["agent"], "user": entry.get("user", [])})
        if "solo" in entry:
            assert entry["solo"][: len(entry["agent"]) + len(entry["user"])] == entry["agent"] + entry["user"]
            solo_done = entry["solo"][-1]
            assert done in (None, solo_done) and solo_done["function"]["name"] == "done"
            done = solo_done
    _dump(package / "solo_done.json", done)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "which", choices=["tau2", "tau_bench", "package", "validation", "trajectories", "runs", "grep", "vpn", "stored"]
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    parser.add_argument("--src", type=Path, help="tau-bench checkout (tau_bench)")
    parser.add_argument("--tau2", default="tau2", help="tau2-bench's command (runs)")
    args = parser.parse_args()
    if args.which == "tau2":
        dump_tau2(args.out)
    elif args.which == "validation":
        dump_validation(args.out)
    elif args.which == "trajectories":
        dump_trajectories(args.out)
    elif args.which == "runs":
        dump_runs(args.out, args.tau2)
    elif args.which == "grep":
        dump_grep(args.out)
    elif args.which == "vpn":
        dump_vpn(args.out)
    elif args.which == "stored":
        dump_stored(args.out)
    elif args.which == "package":
        repo = Path(__file__).resolve().parents[3]
        write_package(Path(__file__).with_name("tau2_tools.json"), repo / "verl_rewards" / "tau2" / "tool_schemas")
    else:
        if args.src is None:
            parser.error("tau_bench needs --src")
        dump_tau_bench(args.src, args.out)


if __name__ == "__main__":
    main()
