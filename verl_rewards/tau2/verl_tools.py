"""verl tools over our tau2 domain tools, for verl's multi-turn ``tool_agent`` loop (``ToolAgentLoop``).

The episode of one trajectory is a :class:`Tau2Session`, kept in the engine's process-local session store
(:mod:`verl_rewards.rollout.verl_tools`: :data:`~verl_rewards.rollout.verl_tools.SESSIONS`, bounded, dropped with the
trajectory; a live session evicted ends its trajectory as ``infrastructure_error``).

Only small picklable data go into ``agent_data.extra_fields``; verl hands that dict to the reward manager as
``tool_extra_fields`` (and the ``contribution`` manager merges it into ``extra_info``):

=================  ==========================================================================================
``messages``       the trajectory: a reference to ``agent_data.messages`` (so the final assistant message is
                   included), or, once the episode has ended, a frozen copy that stops at the end (below)
``termination``    ``"agent_stop"`` after ``done``, ``"user_stop"`` after a successful call of the domain's
                   terminate tool (``transfer_to_human_agents``: tau2's user simulator hangs up after a
                   transfer), else None (the reward then uses ``reward.reward_kwargs.tau2.default_termination``)
``prev_step_dict``  one dict per assistant turn that called our tools: ``{"turn", "bb_hash", "value_est"}``
``cur_step_dict``   before / after the turn (``bb_hash``: the tau2 hash of the agent DB; for domains with a
                   user DB, mock and telecom, the sha256 of the agent and user DB hashes, so a fix on the
                   customer's phone counts as a change)
``trajectory_id``  ``agent_data.request_id``
``action_log``     the calls run on the environment: ``{"turn", "name", "arguments", "error"}``
``db_hash``        the agent DB hash after the last call (the state the reward's replay must reach)
=================  ==========================================================================================

When the row asked for load options it may not choose (:mod:`verl_rewards.tau2.row_options`), their names are in
``row_options_refused`` too.

``value_est`` (for C-1) is the share of the task's *progress targets* matched so far: the gold actions on write
tools (or, for a task without gold writes, all its gold actions; user-requested ones included, since the solo
agent performs them), where a target
is matched once a call that ran without error matches it under tau2's ACTION rule (same name; the compared
arguments are ``compare_args`` or the call's own keys). It lies in [0, 1], starts at 0, never decreases, and
stays 0 for tasks without gold actions. So C-1 sums to the final share, and C-0 counts the turns that changed
the DB.

Episode end (tau2 solo mode): a message that calls ``done`` ends the episode, and the other calls in that
message are not run (tau2 drops them too). A successful terminate-tool call ends it after that call; later
calls of the same message are not run. After the end every call is refused, and ``messages`` is frozen as:
the messages before the ending assistant message, that message with only the calls that ran (given ids),
and their tool answers. The reward replays exactly what ran, whatever the model generates afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl.tools.schemas import OpenAIFunctionToolSchema

from ..engine.data_dir import TAU2_DATA
from ..engine.environment import Environment
from ..engine.steps import Progress
from ..engine.termination import TerminationReason
from ..engine.trajectory import ToolCall
from ..rollout.verl_tools import (
    STOP_OBSERVATION,
    EpisodeSession,
    EpisodeTool,
    ToolSchema,
    not_run_with_stop,
)
from .data import DONE_TOOL, done_schema
from .domain import Domain, load_domain
from .evaluators.action import compare_action
from .registry import domain_spec
from .row_options import REFUSED_KEY, check_configured_options, row_load_options
from .tasks import Action, Task

DONE_OBSERVATION = STOP_OBSERVATION
NOT_RUN_WITH_DONE = not_run_with_stop(DONE_TOOL)


def progress_targets(domain: Domain, task: Task) -> tuple[Action, ...]:
    """The gold actions ``value_est`` counts: write actions, else all actions. User-requested gold actions count
    too: in solo mode the agent performs them (telecom's fixes on the customer's phone)."""
    criteria = task.evaluation_criteria
    actions = list(criteria.actions or ()) if criteria is not None else []
    kinds = domain.tool_kinds()
    writes = [a for a in actions if kinds.get(a.name) == "write"]
    return tuple(writes or actions)


def matches_target(target: Action, name: str, arguments: dict[str, Any]) -> bool:
    """Whether a call that ran without error matches a progress target (tau2's ACTION rule)."""
    return compare_action(target, ToolCall(id="", name=name, arguments=arguments))


def progress(domain: Domain, task: Task) -> Progress:
    """tau2's progress rule for ``value_est`` (solo mode's sessions and normal mode's conversations)."""
    return Progress(progress_targets(domain, task), matches_target)


class Tau2Session(EpisodeSession):
    """The episode of one trajectory on a tau2 domain: tau2's solo mode, ``done`` as the stop tool, the gold
    actions as progress targets under tau2's ACTION rule, a successful terminate-tool call as ``user_stop``."""

    stop_tool: str | None = DONE_TOOL

    def make_env(self) -> Environment:
        """The episode's environment: tau2's solo mode (no user simulator; the agent may act for the customer)."""
        return self.domain.make_env(self.task.id, solo_mode=True)

    def progress(self) -> Progress:
        """The gold actions ``value_est`` counts, under tau2's ACTION rule (see the module doc)."""
        return progress(self.domain, self.task)

    def ends_episode(self, name: str, error: bool) -> str | None:
        """The termination a call that just ran causes, or None (tau2: a successful terminate-tool call)."""
        return TerminationReason.USER_STOP if not error and name in self.env.terminate_tools else None


def _tool_schemas(domain_name: str) -> dict[str, dict[str, Any]]:
    """The agent's and the user's tool schemas of a registered domain, by tool name."""
    spec = domain_spec(domain_name)
    return {s["function"]["name"]: s for s in [*spec.agent_tool_schemas(), *spec.user_tool_schemas()]}


class Tau2Tool(EpisodeTool):
    """One tool of a tau2 domain (``config``: ``domain``, ``openai_schema``, optional ``data_dir``,
    ``domain_options`` and ``max_sessions``, the live trajectories one worker keeps, default 4096; the name is the
    schema's). Each domain takes the ``domain_options`` it names; a key no domain takes is refused when the tool is
    built (:func:`~verl_rewards.tau2.row_options.check_configured_options`).

    The schema the model is shown is ``config.openai_schema`` (what ``prepare`` writes), kept whole
    (:class:`~verl_rewards.rollout.verl_tools.ToolSchema`); without it, the domain's own schema of the tool named
    ``config.name``; a ``tool_schema`` given by verl (parsed by verl's typed model, so without ``$defs``, ``title``,
    defaults) is used only when neither is there.

    A user tool (telecom's phone tools) runs on the user side of the trajectory's environment: the episode is
    tau2's solo mode, where the agent acts for the customer.

    Per-row ``create_kwargs`` (``tools_kwargs.<tool>.create_kwargs`` of the dataset) give ``task_id``, ``domain``
    and ``domain_options``, of which only those the domain lets a row choose are used, over the tool config's
    (:mod:`verl_rewards.tau2.row_options`; the others are refused and listed in ``row_options_refused`` of the
    trajectory's extra fields). The data folder is the tool config's ``data_dir``, else ``TAU2_DATA_DIR``; a row's
    ``data_dir`` never chooses it.
    """

    label = "tau2"
    benchmark_data = TAU2_DATA

    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema | None = None):
        super().__init__(config, tool_schema)
        check_configured_options(self.config.get("domain_options"), "tau2 tool config: domain_options")

    def _default_schema(self) -> OpenAIFunctionToolSchema:
        name, domain = self.config.get("name"), self.config.get("domain")
        if not name or not domain:
            raise ValueError(
                "a tau2 tool without a schema needs config.openai_schema, or config.name and config.domain"
            )
        schemas = _tool_schemas(str(domain))
        if name not in schemas:
            raise ValueError(f"tau2 domain {domain!r} has no tool {name!r}")
        return ToolSchema.from_openai(schemas[name])

    def _check_name(self) -> None:
        domain = self.config.get("domain")
        if domain and self.name not in _tool_schemas(str(domain)):
            raise ValueError(f"tau2 domain {domain!r} has no tool {self.name!r} (check the tool config)")

    def open_session(self, create: Mapping[str, Any], agent_data: Any) -> Tau2Session:
        task_id = create.get("task_id")
        domain_name = create.get("domain") or self.config.get("domain")
        if task_id is None or not domain_name:
            raise ValueError(
                "tau2 tools need tools_kwargs.<tool>.create_kwargs with task_id and domain in each row "
                "(verl-rewards prepare tau2 writes them)"
            )
        configured = self.config.get("domain_options")
        options, refused = row_load_options(str(domain_name), configured, create.get("domain_options"), "tau2 tools")
        if refused:  # recorded first: an episode that then cannot start still reports it
            agent_data.extra_fields[REFUSED_KEY] = refused
        domain = load_domain(str(domain_name), self._data_dir(create), **options)
        return Tau2Session(domain, task_id, agent_data.extra_fields, agent_data.messages, str(agent_data.request_id))


class Tau2DoneTool(Tau2Tool):
    """The ``done`` tool: ends the episode as an agent stop (tau2's solo-mode stop tool)."""

    def _default_schema(self) -> OpenAIFunctionToolSchema:
        return ToolSchema.from_openai(done_schema())

    def _check_name(self) -> None:
        if self.name != DONE_TOOL:
            raise ValueError(f"Tau2DoneTool must be named {DONE_TOOL!r}, got {self.name!r}")
