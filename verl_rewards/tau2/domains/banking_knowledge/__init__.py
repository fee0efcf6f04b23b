"""tau2-bench 1.0.1's ``banking_knowledge`` domain (τ³): a bank's knowledge base, discoverable tools, user tools.

``load_domain("banking_knowledge", data_dir=None, retrieval="bm25")`` loads ``db.json``, the 97 task files of
``tasks/`` (file-name order) and the 698 documents of ``documents/`` (tau2's order: the folder's listing;
``document_order="id"`` sorts them) from the data folder
(``TAU2_DATA_DIR``); the package ships no copy of them. Other load options: :data:`retrieval.OPTION_NAMES`.

As in tau2:

* Agent and user share one DB (user writes enter the agent DB hash). Solo mode is refused.
* Each environment of a task gets the task's ``read_log_allowlist`` (the ``agent_tool_name`` of every gold
  ``call_discoverable_agent_tool`` action): discoverable read tools on that list are logged in the DB when called,
  the others are not (tau2 1.0.1 passes the same list to the run and to the evaluator).
* The agent policy is the retrieval configuration's template with its components (and, for ``full_kb`` /
  ``golden_retrieval``, the whole KB / the task's required documents: ``domain.policy_for(task_id=...)``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ....engine.toolkit import ToolSpec, spec_of
from ...domain_spec import DomainSpec
from ...schemas import load_schema_file
from . import retrieval
from .common import TABLES, normalize_db
from .tools import KnowledgeTools
from .user_tools import KnowledgeUserTools

DOMAIN = "banking_knowledge"


def read_log_allowlist(task: Any) -> frozenset[str]:
    """tau2's ``_derive_read_log_allowlist``: discoverable tool names of the task's gold calls."""
    criteria = None if task is None else task.evaluation_criteria
    names = set()
    for action in (criteria.actions or ()) if criteria is not None else ():
        if action.name == "call_discoverable_agent_tool":
            name = (action.arguments or {}).get("agent_tool_name")
            if name:
                names.add(name)
    return frozenset(names)


def _prepare_env(env: Any, task: Any) -> None:
    env.tools.read_log_allowlist = read_log_allowlist(task)


def _toolkit_class(mixins: tuple[type, ...], attrs: dict[str, Any]) -> type[KnowledgeTools]:
    """The agent toolkit of a configuration: retrieval tools first (tau2's order), then the banking tools."""
    cls = type("KnowledgeTools", (*mixins, KnowledgeTools), dict(attrs))
    specs: dict[str, ToolSpec] = {}
    for mixin in mixins:
        for name, fn in vars(mixin).items():
            spec = spec_of(name, fn)
            if spec is not None:
                specs[name] = spec
    specs.update(KnowledgeTools.tool_specs())
    cls._tool_specs_cache = specs  # type: ignore[attr-defined]
    return cls


SCHEMA_FILE = "banking_knowledge.json"
"""tau2's own schemas of every tool an offline configuration offers (``KB_search``, ``grep``, the 14 banking tools,
the 6 user tools), in tau2's order; a configuration shows the subset of its tools."""


def _with_schemas(spec: DomainSpec) -> DomainSpec:
    """``spec`` showing tau2's schemas of exactly its tools (the subset of :data:`SCHEMA_FILE`)."""
    agent, user = list(spec.agent_tool_specs()), list(spec.user_tool_specs())
    every = load_schema_file(SCHEMA_FILE, DOMAIN, [*agent, *_missing_retrieval_tools(agent)], user)
    schemas = {
        "agent": [s for s in every["agent"] if s["function"]["name"] in agent],
        "user": every["user"],
    }
    object.__setattr__(spec, "_schema_cache", schemas)  # DomainSpec's own cache of its schemas
    return spec


def _missing_retrieval_tools(agent: list[str]) -> list[str]:
    return [n for n in ("KB_search", "grep") if n not in agent]


def _configure(data_dir: Path, options: dict[str, Any]) -> DomainSpec:
    opts = retrieval.check_options(options)
    mixins, attrs = retrieval.retrieval_tools(Path(data_dir), opts)
    name = opts["retrieval"]
    order = opts.get("document_order")

    def policy_text(folder: Any, solo: bool = False, **_: Any) -> str:
        return retrieval.policy_text(Path(folder), name, document_order=order)

    def task_policy(folder: Any, task: Any) -> str:
        return retrieval.policy_text(Path(folder), name, task.required_documents, order)

    # the registered spec with this configuration's tools, policy and schemas (and nothing left to configure)
    return _with_schemas(
        dataclasses.replace(
            SPEC,
            agent_toolkit=_toolkit_class(mixins, attrs),
            policy_text=policy_text,
            configure=None,
            task_policy=task_policy if retrieval.CONFIGS[name].prompt == "golden" else None,
            tool_schemas=None,
        )
    )


def _base_policy(folder: Any, solo: bool = False, **_: Any) -> str:
    return retrieval.policy_text(Path(folder), retrieval.DEFAULT_CONFIG)


SPEC = DomainSpec(
    name=DOMAIN,
    files={"db": "db.json", "tasks": "tasks"},
    terminate_tools=("transfer_to_human_agents",),
    normalize_db=normalize_db,
    # every tool any offline configuration offers (names and schemas); a loaded domain uses its configuration's
    agent_toolkit=_toolkit_class((retrieval.KBSearchMixin, retrieval.GrepMixin), {}),
    user_toolkit=KnowledgeUserTools,
    shared_user_db=True,
    policy_text=_base_policy,
    configure=_configure,
    prepare_env=_prepare_env,
    solo=False,
    tool_schemas=SCHEMA_FILE,
    # what a dataset row may choose: a configuration by name and its result counts; never the dense endpoint, its
    # API-key variable, the cache folder or the query instruction sent there (those come from the configuration)
    row_options=frozenset({"retrieval", "top_k", "grep_top_k", "case_sensitive"}),
    load_options=frozenset(retrieval.OPTION_NAMES),
    check_options=retrieval.check_options,
)
"""The registered spec; :func:`~verl_rewards.tau2.load_domain` derives the configured one from it."""

__all__ = ["DOMAIN", "SPEC", "TABLES", "KnowledgeTools", "KnowledgeUserTools", "read_log_allowlist", "retrieval"]
