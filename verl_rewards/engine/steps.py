"""Step dicts: the state before and after each agent turn that ran tools, for the contribution terms.

One rule for both training modes: solo mode's episode sessions (:mod:`verl_rewards.engine.verl_tools`, under verl's
``tool_agent`` loop) and normal mode's conversation engine (:mod:`verl_rewards.engine.conversation`, under the
``tau2_agent`` / ``tau_bench_agent`` loops) record them with a :class:`StepRecorder`, so C-0, C-1, C-2 and ``terms``
read the same thing in both.

Per assistant turn that ran tools, ``prev_step_dict`` gets the step before the turn and ``cur_step_dict`` the step
after it, each ``{"turn", "bb_hash", "value_est"}``:

* ``turn``: the index of the turn among the turns that ran tools (0, 1, ...);
* ``bb_hash``: the hash of the environment's DB (the benchmark's own hash of the agent DB; for domains with a user
  DB, the sha256 of both hashes, so a fix on the customer's phone counts as a change). It is recomputed after
  every call of a mutating tool (failed writes may mutate too: tau2's quirks), whoever made the call;
* ``value_est``: the share of the benchmark's progress targets (:class:`Progress`: its gold write actions) that
  calls run without error have matched so far; in [0, 1], it never decreases, 0 without targets.

Calls the simulated user makes (normal mode) update the state between agent turns: the next turn's ``prev`` starts
from it, so only what the agent's own turn changed counts for the agent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .environment import Environment

STEP_KEYS = ("prev_step_dict", "cur_step_dict")
#: the fields of each step dict (what ``verl-rewards check`` matches the configured terms against)
STEP_FIELDS = ("turn", "bb_hash", "value_est")


def _never(target: Any, name: str, arguments: dict[str, Any]) -> bool:
    return False


@dataclass(frozen=True)
class Progress:
    """A benchmark's progress rule for ``value_est``: the targets of a task, and whether a call that ran without
    error (its name and parsed arguments) matches one."""

    targets: tuple[Any, ...] = ()
    matches: Callable[[Any, str, dict[str, Any]], bool] = _never


class StepRecorder:
    """Records the step dicts of one episode on ``env`` (see the module doc); :attr:`prev` and :attr:`cur` are the
    two lists, appended in place."""

    def __init__(self, env: Environment, progress: Progress | None = None):
        self.env = env
        self.progress = progress or Progress()
        self._matched = [False] * len(self.progress.targets)
        self.db_hash = env.get_data_hash()
        self.bb_hash = self._bb_hash()
        self.value_est = 0.0
        self.turn = -1
        self.prev: list[dict[str, Any]] = []
        self.cur: list[dict[str, Any]] = []

    def step(self) -> dict[str, Any]:
        """The current step: ``{"turn", "bb_hash", "value_est"}``."""
        return {"turn": self.turn, "bb_hash": self.bb_hash, "value_est": self.value_est}

    def _bb_hash(self) -> str:
        user = self.env.get_user_data_hash()
        if user is None:
            return self.db_hash
        return hashlib.sha256(f"{self.db_hash}/{user}".encode()).hexdigest()

    def begin_turn(self) -> None:
        """An agent turn starts running tools: its ``prev`` and (until a call lands) ``cur`` are the state now."""
        self.turn += 1
        self.prev.append(self.step())
        self.cur.append(self.step())

    def record_call(self, name: Any, action: Mapping[str, Any], *, in_turn: bool = True) -> None:
        """A call just ran on the environment (``action``: its entry in ``env.actions``). ``in_turn``: it belongs to
        the agent turn begun last (its ``cur`` is updated); else it ran between turns (the user's own calls)."""
        if isinstance(name, str) and self.env.has_tool(name) and self.env.is_mutating_tool(name):
            self.db_hash = self.env.get_data_hash()
            self.bb_hash = self._bb_hash()
        arguments = action.get("arguments")
        if not action.get("error") and isinstance(arguments, dict) and self.progress.targets:
            for i, target in enumerate(self.progress.targets):
                if not self._matched[i] and self.progress.matches(target, str(name), arguments):
                    self._matched[i] = True
            self.value_est = sum(self._matched) / len(self.progress.targets)
        if in_turn and self.cur:
            self.cur[-1] = self.step()

    def fields(self) -> dict[str, list[dict[str, Any]]]:
        """The step dicts as the reward reads them (copies of the lists)."""
        return {"prev_step_dict": list(self.prev), "cur_step_dict": list(self.cur)}
