"""One tau-bench v1 episode: the data state, the step rules of ``tau_bench/envs/base.py``, an action log.

:meth:`TauBenchEnvironment.step` follows tau-bench's ``Env.step`` and never raises:

* ``respond`` (``{"content": text}``) is a message to the user: the observation is the user simulator's reply
  (``user``, a callable; without one, as in instruction mode, the empty string); a reply containing
  ``###STOP###`` ends the episode;
* a domain tool runs on the data; any exception becomes ``"Error: " + str(exception)`` and whatever the tool
  changed before it raised stays changed; ``transfer_to_human_agents`` ends the episode whatever it returns;
* any other name answers ``"Unknown action <name>"`` (no ``Error:`` prefix) and changes nothing.

Arguments may be a dict or JSON text; unusable text is answered with ``"Error: Invalid tool arguments: ..."``
and changes nothing (tau-bench's agent would have crashed on it). A tool that returns something other than
text (``send_certificate`` once all three certificate ids are taken) makes tau-bench's step raise and the run
score 0: here it sets :attr:`TauBenchEnvironment.crashed` and answers with an error text. So do arguments nested
deeper than :data:`MAX_ARGUMENT_DEPTH` levels (tools store some arguments as given, and tau-bench's hash of such
data fails on Python's recursion limit); they are not run.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..engine.environment import Environment
from ..engine.rules import STOP_TOKEN
from ..engine.toolkit import Toolkit
from ..engine.trajectory import MAX_NAME_CHARS, check_tool_name, parse_arguments

RESPOND_ACTION = "respond"
TERMINATE_TOOLS = ("transfer_to_human_agents",)
UserReply = Callable[[str], str]
MAX_ARGUMENT_DEPTH = 100


def nesting_depth(value: Any) -> int:
    """How deeply dicts and lists nest in ``value`` (0 for a scalar), computed without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((v, depth + 1) for v in item)
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
    return deepest


class TauBenchEnvironment(Environment):
    """An episode of a v1 domain over its agent toolkit (built by :meth:`TauBenchDomain.make_env`).

    v1 domains have no user toolkit and no sync hook; ``user`` answers ``respond`` (see the module doc).
    """

    def __init__(self, tools: Toolkit, user: UserReply | None = None):
        super().__init__(tools, terminate_tools=TERMINATE_TOOLS)
        self.user = user
        self.crashed: str | None = None

    def step(self, tool_name: str, arguments: Any = None, requestor: str = "assistant") -> str:
        """Run one action and return its observation (see the module doc). Every action is logged.

        A frozen environment (:meth:`~verl_rewards.engine.environment.Environment.freeze`) raises ``RuntimeError``.
        """
        self._check_not_frozen()
        if tool_name == RESPOND_ACTION:
            return self._respond(arguments, requestor)
        if check_tool_name(tool_name) is not None or not self.tools.has_tool(tool_name):
            shown = tool_name[:MAX_NAME_CHARS] if isinstance(tool_name, str) else repr(tool_name)[:MAX_NAME_CHARS]
            return self._refuse(tool_name, arguments, requestor, f"Unknown action {shown}")
        args, why = parse_arguments(arguments)
        if args is None:
            observation = f"Error: {why}"
        elif nesting_depth(args) > MAX_ARGUMENT_DEPTH:
            self.crashed = f"arguments of {tool_name} nest deeper than {MAX_ARGUMENT_DEPTH} levels (not run)"
            observation = f"Error: {self.crashed}"
        else:
            try:
                result = self.tools.call(tool_name, copy.deepcopy(args))
            except Exception as exc:  # noqa: BLE001 - tau-bench turns every exception into an observation
                result = f"Error: {exc}"
            if isinstance(result, str):
                observation = result
            else:
                self.crashed = (
                    f"tool {tool_name} returned {type(result).__name__} instead of text "
                    "(tau-bench's step raises here and the run scores 0)"
                )
                observation = f"Error: {self.crashed}"
        self._log(tool_name, args, requestor, observation, observation.startswith("Error:"))
        if tool_name in self.terminate_tools:
            self.done = True
        return observation

    def _respond(self, arguments: Any, requestor: str) -> str:
        args, _ = parse_arguments(arguments)
        content = (args or {}).get("content")
        text = content if isinstance(content, str) else ""
        observation = self.user(text) if self.user is not None else ""
        self._log(RESPOND_ACTION, {"content": content}, requestor, observation, False)
        if STOP_TOKEN in observation:
            self.done = True
        return observation
