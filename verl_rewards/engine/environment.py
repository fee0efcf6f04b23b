"""A tau2 environment: one episode's toolkits (agent, and user where the domain has one) and an action log.

As in tau2-bench's ``src/tau2/environment/environment.py``, an :class:`Environment` is built from its toolkits,
each holding its own DB state, plus the domain's terminate tools and its ``sync_tools`` hook (telecom), which runs
after every successful tool call, every initialisation action or env-assertion call, and at the end of a replay.
:meth:`Domain.make_env <verl_rewards.tau2.domain.Domain.make_env>` builds one with a task's initial state.

:meth:`Environment.step` is the entry point for model-chosen calls. It never raises: an unknown tool, a helper that
is not a tool, arguments that are not a JSON object, wrong parameter names or a tool refusing the call all come
back as the observation ``"Error: <message>"`` with the state unchanged (tools validate before they mutate).
:meth:`Environment.execute` is the same for a call whose arguments are already a dict (replays use it). Every
call, failed or not, is appended to :attr:`Environment.actions`. :meth:`Environment.freeze` makes an environment
read-only, for states shared between threads (a task's cached gold state).

In *solo mode* (tau2's solo agent, which acts without a user simulator) an agent call of a user tool acts on the
user toolkit, and calls with requestor ``"user"`` are refused.

Hashes (:meth:`get_data_hash`) are tau2's: sha256 of the sorted-key JSON of the whole DB. They cost O(DB size),
so reward code compares states with :meth:`same_db_as` instead, which costs O(records touched).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from .errors import ReplayMismatchError
from .state import DBState, clone_data
from .toolkit import ToolError, Toolkit, serialise_result
from .trajectory import MAX_NAME_CHARS, Message, check_tool_name, pair_tool_calls, parse_arguments

_MISMATCH_SHOWN = 500


def _not_found(name: Any) -> ToolError:
    shown = name[:MAX_NAME_CHARS] if isinstance(name, str) else repr(name)[:MAX_NAME_CHARS]
    return ToolError(f"Tool '{shown}' not found.")


def _parse_output(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


class Environment:
    """One episode: the agent's toolkit, the user's (or None), the action log and whether the episode is done.

    ``terminate_tools``: tool names whose call sets :attr:`done`. ``sync_tools(tools, user_tools)``: the domain's
    hook keeping both sides consistent (run only when there is a user toolkit). ``solo_mode``: see the module doc.
    Domains build environments with :meth:`Domain.make_env <verl_rewards.tau2.domain.Domain.make_env>`.
    """

    def __init__(
        self,
        tools: Toolkit,
        user_tools: Toolkit | None = None,
        *,
        terminate_tools: Iterable[str] = (),
        sync_tools: Callable[[Toolkit, Toolkit], None] | None = None,
        solo_mode: bool = False,
    ):
        self.tools = tools
        self.user_tools = user_tools
        self.terminate_tools: frozenset[str] = frozenset(terminate_tools)
        self.sync_tools = sync_tools
        self.solo_mode = bool(solo_mode)
        self.actions: list[dict[str, Any]] = []
        self.done = False
        self.task_id: str | None = None
        self._frozen = False

    # --------------------------------------------------------------- freezing
    @property
    def frozen(self) -> bool:
        """True once :meth:`freeze` was called."""
        return self._frozen

    def freeze(self) -> None:
        """Make this environment read-only: from now on :meth:`step`, :meth:`execute`, :meth:`run_env_function`
        and :meth:`replay` raise ``RuntimeError``. For states shared between episodes and threads (a task's
        cached gold state); reads (hashes, comparisons, ``actions``) keep working."""
        self._frozen = True

    def _check_not_frozen(self) -> None:
        if self._frozen:
            raise RuntimeError("this environment is frozen (a shared, cached state) and must not be stepped")

    # ------------------------------------------------------------------ state
    @property
    def agent_db(self) -> DBState:
        """The agent-side DB state."""
        return self.tools.db

    @property
    def user_db(self) -> DBState | None:
        """The user-side DB state (None for domains without one; may alias the agent DB, see tau2's set_state)."""
        return None if self.user_tools is None else self.user_tools.db

    def get_data_hash(self) -> str:
        """tau2 ``get_db_hash``: sha256 of the canonical JSON of the agent DB."""
        return self.agent_db.full_hash()

    def get_user_data_hash(self) -> str | None:
        """tau2 ``get_user_db_hash``: hash of the user DB, or None when the domain has none."""
        db = self.user_db
        return None if db is None else db.full_hash()

    def same_db_as(self, other: Environment) -> tuple[bool, bool]:
        """``(agent DBs equal, user DBs equal)``, equal to comparing the two hashes but O(touched records)."""
        agent = self.agent_db.same_as(other.agent_db)
        a, b = self.user_db, other.user_db
        if a is None or b is None:
            user = a is None and b is None
        else:
            user = a.same_as(b)
        return agent, user

    # ------------------------------------------------------------------ tools
    def has_tool(self, name: str) -> bool:
        """True if ``name`` is a tool of the agent or the user toolkit."""
        if not isinstance(name, str):
            return False
        return self.tools.has_tool(name) or (self.user_tools is not None and self.user_tools.has_tool(name))

    def is_mutating_tool(self, name: str) -> bool:
        """tau2's ``is_mutating_tool``: the kind of the tool of that name (agent toolkit first)."""
        for kit in (self.tools, self.user_tools):
            if kit is not None and kit.has_tool(name):
                return kit.tool_mutates_state(name)
        return True

    def sync(self) -> None:
        """Run the ``sync_tools`` hook (no-op without one or without a user toolkit)."""
        if self.sync_tools is not None and self.user_tools is not None:
            self.sync_tools(self.tools, self.user_tools)

    def _route(self, name: Any, requestor: str) -> Toolkit:
        if requestor == "user":
            if self.solo_mode:
                raise ToolError("User tool calls are not allowed in solo mode")
            if self.user_tools is None:
                raise ToolError("User tools not available")
            kit = self.user_tools
        elif requestor == "assistant":
            kit = self.tools
            if self.solo_mode and self.user_tools is not None and isinstance(name, str):
                if not kit.has_tool(name) and self.user_tools.has_tool(name):
                    kit = self.user_tools
        else:
            raise ToolError(f"Invalid requestor: {str(requestor)[:40]}")
        if not isinstance(name, str) or not kit.has_tool(name):
            raise _not_found(name)
        return kit

    def execute(
        self, name: Any, arguments: dict[str, Any], requestor: str = "assistant", *, sync: bool = True
    ) -> tuple[str, bool]:
        """Run one tool call whose arguments are already a dict; returns ``(observation, error)`` and logs it.

        Routing, the sync hook, the ``"Error: <message>"`` observation of a failed call and :attr:`done` are as
        for :meth:`step`, which parses model-written arguments and then calls this. ``arguments`` is copied
        before the tool sees it. ``sync=False`` leaves out the sync hook (tau2's ``make_tool_call``, which its
        evaluator's gold replay uses). Never raises, except ``RuntimeError`` on a frozen environment.
        """
        self._check_not_frozen()
        try:
            kit = self._route(name, requestor)
            result = kit.call(name, clone_data(arguments))
            if sync:
                self.sync()
            observation, error = serialise_result(result), False
        except Exception as exc:  # noqa: BLE001 - every tool failure becomes an observation
            observation, error = f"Error: {exc}", True
        self._log(name, arguments, requestor, observation, error)
        if isinstance(name, str) and name in self.terminate_tools:
            self.done = True
        return observation, error

    def _log(self, name: Any, arguments: Any, requestor: str, observation: str, error: bool) -> None:
        self.actions.append(
            {
                "name": name if isinstance(name, str) else repr(name)[:MAX_NAME_CHARS],
                "arguments": arguments,
                "requestor": requestor,
                "observation": observation,
                "error": error,
            }
        )

    def _refuse(self, name: Any, arguments: Any, requestor: str, observation: str) -> str:
        """Log a call that is not run (the observation says why) and return its observation."""
        self._log(name, arguments, requestor, observation, True)
        return observation

    def step(self, tool_name: str, arguments: Any = None, requestor: str = "assistant") -> str:
        """Execute one model-chosen tool call and return its observation (never raises).

        ``arguments`` may be a dict or a JSON string (see :mod:`verl_rewards.engine.trajectory` for the rules).
        ``requestor="user"`` routes to the user toolkit (mock, telecom); in solo mode an agent call of a user
        tool does. A call of a terminate tool sets :attr:`done`. A frozen environment raises ``RuntimeError``.
        """
        self._check_not_frozen()
        if check_tool_name(tool_name) is not None:
            return self._refuse(tool_name, None, requestor, f"Error: {_not_found(tool_name)}")
        args, why = parse_arguments(arguments)
        if args is None:
            observation = self._refuse(tool_name, None, requestor, f"Error: {why}")
            if tool_name in self.terminate_tools:
                self.done = True
            return observation
        return self.execute(tool_name, args, requestor)[0]

    def run_env_function(self, env_type: str, func_name: str, arguments: dict[str, Any], *, sync: bool = True) -> Any:
        """Call any public toolkit method (tool or helper such as ``assert_*``) and return its raw result.

        Used for task initialisation actions and env assertions; exceptions propagate (tau2 does the same).
        The domain's sync hook runs after the call (tau2's ``run_env_function``); ``sync=False`` leaves it out, for a
        caller that knows it would change nothing (a domain's ``sync_neutral`` initialisation helpers).
        """
        self._check_not_frozen()
        if env_type == "user":
            kit = self.user_tools
        elif env_type == "assistant":
            kit = self.tools
        else:
            raise ValueError(f"Invalid environment type: {env_type}")
        if kit is None:
            raise ValueError(f"Function {func_name} not found in {env_type} tools (no {env_type} toolkit)")
        result = kit.call(func_name, clone_data(arguments))  # copy.deepcopy's result, faster on JSON data
        if sync:
            self.sync()
        return result

    # ----------------------------------------------------------------- replay
    def replay(self, messages: Iterable[Message], *, strict: bool = False) -> dict[str, Any]:
        """Re-execute the mutating tool calls of parsed ``messages`` (tau2's ``set_state`` message replay).

        Calls are paired with their tool messages by id. Invalid calls (unparseable arguments), calls of tools
        the domain does not have, and non-mutating tools are skipped; unanswered calls are not executed. Each
        re-executed call's output is compared with the recorded tool message (both JSON-parsed when possible);
        a difference raises :class:`ReplayMismatchError` when ``strict`` and is reported otherwise.
        Returns a report: counts and the mismatches, invalid, unanswered and orphan entries.
        """
        self._check_not_frozen()
        pairing = pair_tool_calls(messages)
        report: dict[str, Any] = {
            "executed": 0,
            "skipped_read_only": 0,
            "skipped_unknown": 0,
            "skipped_invalid": 0,
            "errors": 0,
            "mismatches": [],
            "unanswered_calls": [c.name for c in pairing.unanswered],
            "orphan_tool_messages": [m.index for m in pairing.orphan_tool_messages],
        }
        for call, answer in pairing.pairs:
            if not call.valid or call.arguments is None:
                report["skipped_invalid"] += 1
                continue
            if not self.has_tool(call.name):
                report["skipped_unknown"] += 1
                continue
            if not self.is_mutating_tool(call.name):
                report["skipped_read_only"] += 1
                continue
            observation, error = self.execute(call.name, call.arguments, call.requestor)
            report["executed"] += 1
            report["errors"] += int(error)
            got, expected = _parse_output(observation), _parse_output(answer.content)
            if got != expected:
                if strict:
                    raise ReplayMismatchError(
                        f"replayed {call.name} (id {call.id!r}) returned {observation[:_MISMATCH_SHOWN]!r}, "
                        f"recorded {str(answer.content)[:_MISMATCH_SHOWN]!r}"
                    )
                report["mismatches"].append(
                    {
                        "name": call.name,
                        "id": call.id,
                        "got": observation[:_MISMATCH_SHOWN],
                        "recorded": str(answer.content)[:_MISMATCH_SHOWN],
                    }
                )
        self.sync()
        return report
