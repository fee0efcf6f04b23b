"""The rollout side of ``verl-rewards check``, as an ``AgentLoopWorker`` reads it: the tools of
``multi_turn.tool_config_path`` / ``function_tool_path``, the agent-loop registry (verl's and
``agent.agent_loop_config_path``'s), every loop a run names registered and its own settings accepted, and which
step-dict fields a loop records (:func:`step_dict_fields`, for the contribution terms)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import CheckError, describe


class Loops:
    """What the rollout side holds: its summary lines, the agent-loop registry, the loops checked, the tools."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.registry: dict[str, Any] = {}
        self.checked: set[str] = set()
        self.tools: list[Any] = []


def agent_loops(config: Any) -> Loops:
    """Tools, agent-loop registry and our loops' settings, as an ``AgentLoopWorker`` reads them."""
    from verl.utils.import_utils import resolve_config_path

    from ..verl_compat import agent_loop_registry

    out = Loops()
    rollout = config.actor_rollout_ref.rollout
    multi_turn = rollout.get("multi_turn") or {}
    tool_path, function_path = multi_turn.get("tool_config_path"), multi_turn.get("function_tool_path")
    if tool_path or function_path:
        from verl.tools.tool_registry import load_all_tools

        try:
            tools = load_all_tools(
                tool_config_path=resolve_config_path(tool_path) if tool_path else None,
                function_tool_path=resolve_config_path(function_path) if function_path else None,
            )
        except Exception as exc:  # noqa: BLE001
            raise CheckError("tools", f"{tool_path or function_path}: {describe(exc)}") from None
        out.tools = list(tools)
        names = [getattr(t, "name", None) or type(t).__name__ for t in tools]
        out.lines.append(f"tools: {len(tools)} from {tool_path or function_path} ({short(names)})")
    agent = rollout.get("agent") or {}
    loop_config_path = agent.get("agent_loop_config_path")
    registry: dict[str, Any] = dict(agent_loop_registry())
    if loop_config_path:
        from omegaconf import OmegaConf

        try:
            entries: Any = OmegaConf.load(resolve_config_path(loop_config_path))
            for entry in entries:
                registry[str(entry.name)] = entry
        except Exception as exc:  # noqa: BLE001
            raise CheckError("agent loops", f"{loop_config_path}: {describe(exc)}") from None
    out.registry = registry
    default = agent.get("default_agent_loop")
    if default:
        agent_loop(config, out, str(default), "actor_rollout_ref.rollout.agent.default_agent_loop")
        out.lines.append(f"agent loop: {default}{settings_note(config, str(default))}")
    return out


def agent_loop(config: Any, loops: Loops, name: str, where: str) -> None:
    """``name`` is registered; a loop that reads its own settings (``load_settings``) accepts them."""
    if name in loops.checked:
        return
    entry = loops.registry.get(name)
    if entry is None:
        raise CheckError(
            "agent loop", f"{where}: agent loop {name!r} is not registered; registered: {sorted(loops.registry)}"
        )
    target = entry.get("_target_") if hasattr(entry, "get") else None
    if target:
        from hydra.utils import get_class

        try:
            cls = get_class(str(target))
            load_settings = getattr(cls, "load_settings", None)
            if load_settings is not None:
                load_settings(config)
        except Exception as exc:  # noqa: BLE001 - settings errors are ValueErrors naming their key
            raise CheckError(f"agent loop {name}", describe(exc)) from None
    loops.checked.add(name)


def settings_note(config: Any, name: str) -> str:
    from ..catalog import benchmarks

    custom = config.actor_rollout_ref.rollout.get("custom") or {}
    for section in (b.name for b in benchmarks()):  # a benchmark's loops: <name>_agent, settings under custom.<name>
        user = ((custom.get(section) or {}).get("user") or {}) if name.startswith(section) else {}
        if user:
            where = f" {user.get('model')} at {user.get('base_url')}" if user.get("backend") == "openai" else ""
            return f" (user: {user.get('backend')}{where})"
    return ""


def step_dict_fields(config: Any, loops: Loops, name: str, depth: int = 0) -> tuple[tuple[str, ...] | None, str]:
    """The step-dict fields the agent loop ``name`` records (None: unknown, a loop of someone else's) and how to
    say which loop that is."""
    from hydra.utils import get_class
    from verl.experimental.agent_loop.single_turn_agent_loop import SingleTurnAgentLoop
    from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop

    from ..cpu.policy import PolicyAgentLoop

    entry: Any = loops.registry.get(name)
    target = entry.get("_target_") if entry is not None and hasattr(entry, "get") else None
    if not target:
        return None, f"agent loop {name}"
    cls = get_class(str(target))
    if issubclass(cls, PolicyAgentLoop) and depth < 3:  # the smoke wrapper plays the row's own loop
        inner = entry.get("inner_agent") or (config.actor_rollout_ref.rollout.get("agent") or {}).get(
            "default_agent_loop"
        )
        return step_dict_fields(config, loops, str(inner), depth + 1)
    if issubclass(cls, SingleTurnAgentLoop):
        return (), f"agent loop {name}"
    if issubclass(cls, ToolAgentLoop):
        recording = [t for t in loops.tools if getattr(t, "step_dict_fields", ())]
        if not recording:
            return (), f"agent loop {name} (its tools)"
        fields = tuple(dict.fromkeys(f for t in recording for f in t.step_dict_fields))
        return fields, f"agent loop {name} with the {getattr(recording[0], 'label', 'recording')} tools"
    declared = getattr(cls, "step_dict_fields", None)
    if declared is None:
        return None, f"agent loop {name} ({target})"
    return tuple(declared), f"agent loop {name}"


def short(names: Iterable[Any], limit: int = 6) -> str:
    names = [str(n) for n in names]
    return ", ".join(names[:limit]) + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")
