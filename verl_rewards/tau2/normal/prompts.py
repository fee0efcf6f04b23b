"""What each side of a tau2 normal-mode conversation is told: the greeting, the agent's system prompt, the user
simulator's system prompt and tool schemas.

Facts from tau2-bench (``src/tau2/agent/llm_agent.py``, ``src/tau2/user/user_simulator.py``,
``src/tau2/data_model/tasks.py``), in our words:

* the conversation opens with the agent's fixed :data:`GREETING` (the agent model did not generate it);
* agent system prompt: ``<instructions>`` + the normal-mode agent instruction + ``</instructions>`` +
  ``<policy>`` + the domain policy + ``</policy>`` (lines joined by newlines); the agent gets its own tools only;
* user system prompt: the simulation guidelines (the *tools* variant when the domain has user tools), a blank
  line, then the scenario between ``<scenario>`` tags; the scenario is the task's ``user_scenario`` rendered as
  tau2's ``str(UserScenario)`` does (:func:`render_user_scenario`).

The guidelines are data files of a tau2-bench checkout (``data/tau2/user_simulator/simulation_guidelines.md`` and
``simulation_guidelines_tools.md``), found next to the domains folder. The agent instruction is read from
``agent/normal_mode_instruction.txt`` next to the domains folder when present, else from the copy shipped with
this package (tau2-bench's agent instruction, MIT, see ``PROVENANCE.md`` in this folder).
"""

from __future__ import annotations

import textwrap
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..domain import Domain
from ..errors import DataNotFoundError
from ..tasks import Task

GUIDELINES_FILE = "simulation_guidelines.md"
GUIDELINES_TOOLS_FILE = "simulation_guidelines_tools.md"
AGENT_INSTRUCTION_FILE = "normal_mode_instruction.txt"
_PACKAGED_INSTRUCTION = Path(__file__).with_name(AGENT_INSTRUCTION_FILE)


def _data_roots(domain: Domain) -> list[Path]:
    """Folders that may hold ``user_simulator/`` and ``agent/``: the domains folder and its parent."""
    root = domain.data_dir.parent
    return [root, root.parent]


@lru_cache(maxsize=16)
def _read(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def guidelines_path(domain: Domain, with_tools: bool | None = None) -> Path:
    """The user simulator's guidelines file for ``domain`` (DataNotFoundError naming the places looked at).

    ``with_tools``: whether this user has tools (tau2 picks the guidelines by the user's tools, which a task's
    ``user_tools`` may empty); None: whether the domain has user tools."""
    tools = has_user_tools(domain) if with_tools is None else with_tools
    name = GUIDELINES_TOOLS_FILE if tools else GUIDELINES_FILE
    candidates = [root / "user_simulator" / name for root in _data_roots(domain)]
    for path in candidates:
        if path.is_file():
            return path
    raise DataNotFoundError(
        f"tau2 user simulator guidelines not found: looked for {', '.join(map(str, candidates))} "
        "(tau2-bench ships them in data/tau2/user_simulator/)"
    )


def agent_instruction(domain: Domain) -> str:
    """The normal-mode agent instruction (the data folder's copy wins over the packaged one)."""
    for root in _data_roots(domain):
        path = root / "agent" / AGENT_INSTRUCTION_FILE
        if path.is_file():
            return _read(str(path)).strip()
    return _read(str(_PACKAGED_INSTRUCTION)).strip()


def agent_system_prompt(domain: Domain, policy_type: str | None = None, task_id: Any = None) -> str:
    """The agent's system prompt in normal mode (telecom: the assembled main + tech-support policy;
    ``task_id``: for policies that depend on the task, banking_knowledge's ``golden_retrieval``)."""
    policy = domain.policy_for(solo=False, policy_type=policy_type, task_id=task_id)
    return f"<instructions>\n{agent_instruction(domain)}\n</instructions>\n<policy>\n{policy}\n</policy>"


def has_user_tools(domain: Domain) -> bool:
    """True when the simulated user acts with tools of its own (telecom's phone, mock's notifications)."""
    return bool(domain.spec.user_tool_specs())


def render_user_scenario(scenario: Any) -> str:
    """tau2's ``str(UserScenario)``: ``Persona:`` (when set) and ``Instructions:`` blocks, each indented by a tab
    (blank lines stay empty); structured instructions list domain, reason for call, known / unknown info (when
    set) and task instructions."""
    if not isinstance(scenario, dict):
        raise ValueError(f"user_scenario must be an object, got {type(scenario).__name__}")
    lines: list[str] = []
    persona = scenario.get("persona")
    if persona is not None:
        lines += ["Persona:", textwrap.indent(str(persona), "\t")]
    instructions = scenario.get("instructions")
    if isinstance(instructions, dict):
        text = _render_instructions(instructions)
    elif isinstance(instructions, str):
        text = instructions
    else:
        raise ValueError("user_scenario.instructions must be a string or an object")
    lines += ["Instructions:", textwrap.indent(text, "\t")]
    return "\n".join(lines)


def _render_instructions(ins: dict[str, Any]) -> str:
    for key in ("domain", "reason_for_call", "task_instructions"):
        if not isinstance(ins.get(key), str):
            raise ValueError(f"user_scenario.instructions.{key} must be a string")
    lines = [f"Domain: {ins['domain']}", f"Reason for call:\n{textwrap.indent(ins['reason_for_call'], chr(9))}"]
    if ins.get("known_info") is not None:
        lines.append(f"Known info:\n{textwrap.indent(str(ins['known_info']), chr(9))}")
    if ins.get("unknown_info") is not None:
        lines.append(f"Unknown info:\n{textwrap.indent(str(ins['unknown_info']), chr(9))}")
    lines.append(f"Task instructions:\n{textwrap.indent(ins['task_instructions'], chr(9))}")
    return "\n".join(lines)


def user_scenario_text(task: Task) -> str:
    """The task's rendered user scenario (ValueError naming the task when it has none or a malformed one)."""
    if task.user_scenario is None:
        raise ValueError(f"task {task.id!r} has no user_scenario (normal mode needs one)")
    try:
        return render_user_scenario(task.user_scenario)
    except ValueError as exc:
        raise ValueError(f"task {task.id!r}: {exc}") from None


def user_system_prompt(domain: Domain, scenario_text: str, with_tools: bool | None = None) -> str:
    """The user simulator's system prompt: guidelines (see :func:`guidelines_path` for ``with_tools``), then the
    scenario in ``<scenario>`` tags."""
    guidelines = _read(str(guidelines_path(domain, with_tools)))
    return f"{guidelines}\n\n<scenario>\n{scenario_text}\n</scenario>".strip()


def agent_tool_schemas(domain: Domain) -> list[dict[str, Any]]:
    """OpenAI schemas of the agent's tools, as tau2 sends them (:meth:`DomainSpec.agent_tool_schemas`)."""
    return domain.spec.agent_tool_schemas()


def user_tool_schemas(domain: Domain, task: Any = None) -> list[dict[str, Any]] | None:
    """OpenAI schemas of the user's tools, or None when the user has none (then no ``tools`` are sent).

    A task's ``user_tools`` list (banking_knowledge) keeps only the tools it names, in toolkit order, as tau2's
    ``get_user_tools(include=...)``; an empty list leaves the user without tools."""
    if not has_user_tools(domain):
        return None
    schemas = domain.spec.user_tool_schemas()
    wanted = None if task is None else getattr(task, "user_tools", None)
    if wanted is not None:
        schemas = [s for s in schemas if s["function"]["name"] in wanted]
    return schemas or None
