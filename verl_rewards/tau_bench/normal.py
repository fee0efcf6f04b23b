"""tau-bench v1 *normal mode*: tau-bench's simulated user (strategy ``llm``) talks to the agent, run by the same
conversation engine and user backends as tau2's normal mode (:mod:`verl_rewards.tau2.normal`), with tau-bench's
rules (``tau_bench/envs/base.py``, ``envs/user.py``, ``agents/tool_calling_agent.py``):

* the user model's history starts as ``[system: tau-bench's user prompt with the task instruction, user: the
  greeting]``; its first reply is the episode's first message. The agent never sees the greeting: its view is
  ``[system: wiki.md, user: that first message, ...]``;
* the user sees the agent's text as ``user`` messages and its own replies as ``assistant`` messages, never the
  agent's tool calls; it has no tools;
* a user message containing ``###STOP###`` (anywhere) ends the episode (``user_stop``); it is the only stop token;
* ``transfer_to_human_agents`` ends the episode at once (``transfer``);
* only the first tool call of an agent message runs, and the message keeps only that call;
* the agent has :data:`MAX_NUM_STEPS` (30) messages (tool calls and text replies; user turns do not count): an
  episode still running after them ends as ``max_steps`` and scores 0, as tau-bench computes no reward then.
  There is no step or error limit besides it.

Ours, as in tau2's normal mode: a failing user backend ends the episode as ``user_error`` (scored 0), an empty
agent message as ``agent_error`` (tau-bench would send the empty text to the user). Only ``user_stop`` and
``transfer`` episodes are *done* and scored (:data:`DONE_TERMINATIONS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..engine.conversation import Conversation, Reply, UserPlayer
from ..engine.rules import DEFAULT_MAX_AGENT_TURNS, TAU_BENCH
from ..engine.steps import Progress
from ..engine.termination import TerminationReason
from ..engine.users import FINAL_TURN, UserConfig, positive_setting, user_settings
from .domain import TauBenchDomain, TauBenchTask
from .user import user_system_prompt

AGENT_LOOP_NAME = "tau_bench_agent"
AGENT_LOOP_TARGET = "verl_rewards.tau_bench.agent_loop.TauBenchAgentLoop"
CONFIG_PATH = "actor_rollout_ref.rollout.custom.tau_bench"
MAX_NUM_STEPS = DEFAULT_MAX_AGENT_TURNS
TRANSFER = str(TerminationReason.TRANSFER)
DONE_TERMINATIONS = (str(TerminationReason.USER_STOP), TRANSFER)
CONFIRM_TURN = "Yes, please go ahead."
_SETTINGS_KEYS = {"user", "max_num_steps", "data_dir"}


def open_conversation(
    domain: TauBenchDomain,
    task_id: str,
    user: UserPlayer,
    *,
    seed: int | None = None,
    max_num_steps: int = MAX_NUM_STEPS,
    agent_system_prompt: bool = False,
    progress: Progress | None = None,
) -> Conversation:
    """A normal-mode episode of ``task_id`` under tau-bench's rules (see the module doc).

    ``agent_system_prompt``: start the agent's view with ``wiki.md`` (offline runs; in verl the row's prompt has it).
    ``progress``: record the agent's step dicts with this progress rule (the verl loop does).
    """
    task = domain.task(task_id)
    return Conversation(
        domain.make_env(task.id),
        user,
        user_system_prompt=user_system_prompt(task.instruction),
        user_tools=None,
        agent_system_prompt=domain.policy if agent_system_prompt else None,
        rules=TAU_BENCH,
        max_agent_turns=max_num_steps,
        seed=seed,
        progress=progress,
    )


def is_done(termination: Any) -> bool:
    """Whether an episode that ended this way is scored (tau-bench's ``done``)."""
    return termination in DONE_TERMINATIONS


def default_script(task: TauBenchTask) -> tuple[Reply, ...]:
    """A smoke-run script for the ``scripted`` backend: the instruction, a confirmation, a goodbye with
    ``###STOP###``."""
    return (Reply(content=task.instruction), Reply(content=CONFIRM_TURN), Reply(content=FINAL_TURN))


@dataclass(frozen=True)
class TauBenchNormalSettings:
    """Validated ``actor_rollout_ref.rollout.custom.tau_bench`` settings: ``user`` (the user backend, as tau2's
    ``custom.tau2.user``), ``max_num_steps`` (30), ``data_dir`` (else ``TAU_BENCH_DATA_DIR``; never the row's)."""

    user: UserConfig
    max_num_steps: int = MAX_NUM_STEPS
    data_dir: str | None = None

    @classmethod
    def from_mapping(cls, section: Mapping[str, Any] | None) -> TauBenchNormalSettings:
        user = user_settings(section, CONFIG_PATH, AGENT_LOOP_NAME, _SETTINGS_KEYS)
        assert isinstance(section, Mapping)
        steps = positive_setting(section, "max_num_steps", MAX_NUM_STEPS, CONFIG_PATH)
        data_dir = section.get("data_dir")
        return cls(user, steps, str(data_dir) if data_dir else None)
