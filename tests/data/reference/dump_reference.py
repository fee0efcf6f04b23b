"""Dump what tau2-bench and tau-bench show a model, produced by their own code, as the JSON fixtures of this folder.

Not part of the package and not a test: run it by hand in a throwaway environment that has the reference installed
(see README.md in this folder for the exact commands). It only reads the references' objects; it never sends a
request (the NL judge's ``generate`` is replaced by a function that records the messages it would send, and
tau-bench's ``litellm`` import is satisfied by a stub whose functions raise).

    python dump_reference.py tau2 --out DIR            # needs tau2-bench importable and TAU2_DATA_DIR set
    python dump_reference.py tau_bench --src SRC --out DIR   # SRC: a tau-bench checkout (needs pydantic)
    python dump_reference.py package                   # tau2_tools.json -> verl_rewards/tau2/tool_schemas/*.json
    python dump_reference.py validation --out DIR      # needs tau2-bench importable
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
    parser.add_argument("which", choices=["tau2", "tau_bench", "package", "validation", "grep"])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    parser.add_argument("--src", type=Path, help="tau-bench checkout (tau_bench)")
    args = parser.parse_args()
    if args.which == "tau2":
        dump_tau2(args.out)
    elif args.which == "validation":
        dump_validation(args.out)
    elif args.which == "grep":
        dump_grep(args.out)
    elif args.which == "package":
        repo = Path(__file__).resolve().parents[3]
        write_package(Path(__file__).with_name("tau2_tools.json"), repo / "verl_rewards" / "tau2" / "tool_schemas")
    else:
        if args.src is None:
            parser.error("tau_bench needs --src")
        dump_tau_bench(args.src, args.out)


if __name__ == "__main__":
    main()
