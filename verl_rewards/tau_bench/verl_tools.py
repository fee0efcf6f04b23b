"""verl tools over the tau-bench v1 tools, for verl's ``tool_agent`` loop (instruction mode).

They are the engine's adapters (:mod:`verl_rewards.engine.verl_tools`, which tau2's tools use too): one episode per
trajectory kept in the process-local session store, the same ``agent_data.extra_fields`` (``messages``, ``termination``,
``prev_step_dict`` / ``cur_step_dict`` per assistant turn with ``bb_hash`` = tau-bench's data hash and
``value_est``, ``action_log``, ``db_hash``), so C-0 / C-1 work as on tau2. What differs:

* there is no ``done`` tool: a text reply ends the episode (verl's loop stops when the model calls no tool);
* any call of ``transfer_to_human_agents`` ends the episode (``termination: "transfer"``), whatever it returns,
  as in tau-bench; a tool that crashes tau-bench's step ends it too (``"crash"``, scored 0);
* ``value_est`` is the share of the task's gold write actions already matched by a call that ran without an
  ``Error:`` answer, with exactly the gold name and arguments (what the data hash needs).

The model sees tau-bench's own tool schemas: the tool config carries each one whole in ``config.openai_schema``,
and the tool keeps it whole (:class:`~verl_rewards.engine.verl_tools.ToolSchema`: verl's schema model would drop
the ``items`` of array parameters).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl.tools.schemas import OpenAIFunctionToolSchema

from ..engine.data_dir import TAU_BENCH_DATA
from ..engine.steps import Progress
from ..engine.termination import TerminationReason
from ..engine.verl_tools import EpisodeSession, EpisodeTool
from .domain import DOMAINS, TauBenchDomain, load_domain
from .hashing import TUPLE_CODEC


def matches_target(target: Any, name: str, arguments: dict[str, Any]) -> bool:
    """Whether a call that ran without error matches a gold write: same name and arguments, compared as the data
    hash compares values (100 and 100.0 differ)."""
    return target["name"] == name and TUPLE_CODEC.record(target["kwargs"]) == TUPLE_CODEC.record(arguments)


def progress(domain: TauBenchDomain, task: Any) -> Progress:
    """tau-bench's progress rule for ``value_est``: the task's gold write actions (instruction mode's sessions and
    normal mode's conversations)."""
    kinds = domain.tool_kinds()
    actions: Any = getattr(task, "actions", ())  # a tau-bench task (tau_bench.domain.TauBenchTask)
    return Progress(tuple(a for a in actions if kinds.get(a["name"]) == "write"), matches_target)


class TauBenchSession(EpisodeSession):
    """The episode of one trajectory on a v1 domain (see the module doc)."""

    def progress(self) -> Progress:
        return progress(self.domain, self.task)

    def ends_episode(self, name: str, error: bool) -> str | None:
        if getattr(self.env, "crashed", None):
            return TerminationReason.CRASH
        return TerminationReason.TRANSFER if name in self.env.terminate_tools else None


class TauBenchTool(EpisodeTool):
    """One tool of a tau-bench v1 domain (``config``: ``domain``, ``openai_schema``, optional ``data_dir``).

    Per-row ``create_kwargs`` give ``task_id`` and ``domain``. The data folder is the tool config's ``data_dir``,
    else ``TAU_BENCH_DATA_DIR`` (never the row's ``data_dir``: :mod:`verl_rewards.engine.data_dir`).
    """

    label = "tau-bench"
    benchmark_data = TAU_BENCH_DATA

    def _default_schema(self) -> OpenAIFunctionToolSchema:
        raise ValueError("a tau-bench tool needs its schema: config.openai_schema (prepare writes it) or tool_schema")

    def _check_name(self) -> None:
        domain = self.config.get("domain")
        if domain not in DOMAINS:
            raise ValueError(f"tau-bench tool {self.name!r}: config.domain must be one of {sorted(DOMAINS)}")
        if self.name not in DOMAINS[domain].agent_tool_specs():
            raise ValueError(f"tau-bench domain {domain!r} has no tool {self.name!r} (check the tool config)")

    def open_session(self, create: Mapping[str, Any], agent_data: Any) -> TauBenchSession:
        task_id = create.get("task_id")
        if task_id is None:
            raise ValueError(
                "tau-bench tools need tools_kwargs.<tool>.create_kwargs.task_id in each row "
                "(verl-rewards prepare tau_bench writes it)"
            )
        domain: TauBenchDomain = load_domain(str(create.get("domain") or self.config["domain"]), self._data_dir(create))
        return TauBenchSession(
            domain, task_id, agent_data.extra_fields, agent_data.messages, str(agent_data.request_id)
        )
