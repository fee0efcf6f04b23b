"""verl's ``tau2_agent`` loop: tau2 normal mode inside the rollout, on verl's public ``AgentLoopBase``.

The plugin registers it in verl's agent-loop registry (:mod:`verl_rewards.plugin`); a row selects it with
``agent_name: tau2_agent`` (``verl-rewards prepare tau2 --mode normal`` writes such rows). The engine's loop
(:class:`verl_rewards.rollout.agent_loop.ConversationAgentLoop`, on :mod:`verl_rewards.rollout.verl_loop`) does the
tokenisation (verl's Continuous Token, exactly as verl's ``ToolAgentLoop``), generation, tool-call parsing and the
assistant message; where ``ToolAgentLoop`` would run the tools or end on a text reply, the conversation engine
(:mod:`verl_rewards.engine.conversation`, tau2's rule set) plays the turn instead: tool calls run on the
trajectory's environment, text goes to the simulated user, whose answer comes back as a ``user`` message. Token
masks: the agent's own tokens 1, tool results and user messages 0 (never trained).

Configuration, Hydra keys under ``actor_rollout_ref.rollout.custom.tau2`` (``+`` prefix on the command line):

==================================  ===============================================================================
``user.*``                          the user backend (:class:`~verl_rewards.engine.users.UserConfig`:
                                    ``backend`` openai | policy | scripted, ``base_url``, ``model``,
                                    ``api_key_env``, ``temperature``, ``timeout_s``, ``retries``,
                                    ``max_concurrency``, ``seed``, ``scripts``, ...)
``max_steps``                       tau2's step limit (200, tau2's CLI default)
``max_errors``                      tau2's tool-error limit (10)
``enforce_communication_protocol``  false (tau2's default): a text + tool-call message runs its calls
``agent_message_errors``            ``agent_error`` (training's rule: an empty agent message or tool-call arguments
                                    that are not a JSON object end the run as agent_error, scored 0) or
                                    ``infrastructure_error`` (tau2's runner; such a sample then scores 0 too, as
                                    every termination but a stop does, but is left out of pass^k)
``data_dir``                        tau2 domains folder (else ``TAU2_DATA_DIR``; a row's ``data_dir`` never
                                    chooses it)
``domain_options``                  the domains' load options (banking_knowledge: ``retrieval`` and the dense
                                    endpoint ``embeddings_*``; telecom: ``vpn_details``): each domain takes those
                                    it names, a key no domain takes is refused at start-up; a row's
                                    ``extra_info.domain_options`` may change only those its domain lets a row
                                    choose (:mod:`verl_rewards.tau2.row_options`)
==================================  ===============================================================================

verl's own budgets still apply (``response_length``, ``max_assistant_turns``, ``max_user_turns``, where user turns
count both user replies and tool-result rounds); a trajectory they cut ends as ``max_steps`` (scored 0).

What the reward gets (``extra_fields``, merged into ``extra_info`` by the ``contribution`` manager): ``messages``
(the whole trajectory: greeting, user text and user tool calls, agent messages, tool results with their requestor),
``termination``, ``tau2_steps``, ``tau2_errors``, ``tau2_end_cause`` (why a run ended early: a user backend's
error, a budget), ``user_error`` (1.0 when the user backend failed), ``user_seed``, the step dicts
``prev_step_dict`` / ``cur_step_dict`` of the agent's tool turns, recorded as solo mode's tools record them
(:mod:`verl_rewards.engine.steps`), for the contribution terms, and, when the row asked for load options it may not
choose, ``row_options_refused`` (their names).

The ``policy`` backend: the rollout server that generates the agent also plays the user, from the user's own
prompt (guidelines + scenario, role-flipped history, user tools), in separate requests whose tokens never enter
the trained sequence. No second model is needed, but it costs one more generation per user turn on the policy's
GPUs, and the user drifts with the policy (a weak early policy is also a weak customer, and the two can collude,
e.g. a "user" that confirms anything), so it is weaker than a fixed, separate user model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...engine.conversation import AGENT_MESSAGE_ERRORS, Conversation
from ...engine.data_dir import TAU2_DATA, choose_data_dir, row_data_dir
from ...engine.rules import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS
from ...engine.steps import STEP_FIELDS
from ...engine.termination import TerminationReason
from ...engine.users import UserConfig, positive_setting, user_settings
from ...rollout.agent_loop import ConversationAgentLoop
from ...rollout.agent_loop import settings_of as engine_settings_of
from ..domain import Domain, load_domain
from ..row_options import REFUSED_KEY, check_configured_options, row_load_options
from ..verl_tools import progress
from . import AGENT_LOOP_NAME
from .history import history_messages, prompt_for_template
from .prompts import user_scenario_text, user_system_prompt, user_tool_schemas
from .users import script_for

AGENT_NAME = AGENT_LOOP_NAME
CONFIG_PATH = "actor_rollout_ref.rollout.custom.tau2"
_SETTINGS_KEYS = {
    "user",
    "max_steps",
    "max_errors",
    "enforce_communication_protocol",
    "agent_message_errors",
    "data_dir",
    "domain_options",
}


@dataclass(frozen=True)
class NormalSettings:
    """Validated ``actor_rollout_ref.rollout.custom.tau2`` settings."""

    user: UserConfig
    max_steps: int = DEFAULT_MAX_STEPS
    max_errors: int = DEFAULT_MAX_ERRORS
    enforce_communication_protocol: bool = False
    data_dir: str | None = None
    agent_message_errors: str = str(TerminationReason.AGENT_ERROR)
    domain_options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, section: Mapping[str, Any] | None) -> NormalSettings:
        user = user_settings(section, CONFIG_PATH, AGENT_NAME, _SETTINGS_KEYS)
        assert isinstance(section, Mapping)
        max_steps = positive_setting(section, "max_steps", DEFAULT_MAX_STEPS, CONFIG_PATH)
        max_errors = positive_setting(section, "max_errors", DEFAULT_MAX_ERRORS, CONFIG_PATH)
        enforce = section.get("enforce_communication_protocol", False)
        if not isinstance(enforce, bool):
            raise ValueError(f"{CONFIG_PATH}.enforce_communication_protocol must be true or false")
        data_dir = section.get("data_dir")
        rule = section.get("agent_message_errors", str(TerminationReason.AGENT_ERROR))
        if rule not in AGENT_MESSAGE_ERRORS:
            raise ValueError(f"{CONFIG_PATH}.agent_message_errors must be one of {AGENT_MESSAGE_ERRORS}, got {rule!r}")
        options = check_configured_options(section.get("domain_options"), f"{CONFIG_PATH}.domain_options")
        return cls(user, max_steps, max_errors, enforce, str(data_dir) if data_dir else None, rule, options)


def settings_of(config: Any, name: str = "tau2", parse: Callable[[Any], Any] = NormalSettings.from_mapping) -> Any:
    """The settings ``actor_rollout_ref.rollout.custom.<name>`` of a trainer config (tau2's by default), parsed by
    ``parse`` once per config object (:func:`verl_rewards.rollout.agent_loop.settings_of`)."""
    return engine_settings_of(config, name, parse)


class Tau2AgentLoop(ConversationAgentLoop):
    """``tau2_agent``: ToolAgentLoop whose tool and text turns are played by the normal-mode conversation engine."""

    agent_name = AGENT_NAME
    step_dict_fields = STEP_FIELDS

    # ------------------------------------------------------------------ set-up
    @staticmethod
    def load_settings(config: Any) -> Any:
        """This loop's settings (``custom.tau2``); a sibling loop reads its own section."""
        return settings_of(config)

    async def run(self, sampling_params: dict[str, Any], priority: int = 0, **kwargs: Any) -> Any:
        """The engine's loop on the row, whose prompt may hold a task's initial history: its tool-call arguments
        are stored as JSON text (one parquet type for every tool) and go to the chat template as objects, as verl's
        own loop writes assistant messages."""
        if "raw_prompt" in kwargs:
            kwargs["raw_prompt"] = prompt_for_template(kwargs["raw_prompt"])
        return await super().run(sampling_params, priority, **kwargs)

    def _domain(self) -> Domain:
        extra = self._row.get("extra_info") or {}
        name = str(extra.get("domain") or str(self._row.get("data_source", "")).removeprefix("tau2/"))
        row_dir = row_data_dir(extra, self._row)
        data_dir = choose_data_dir(self.settings.data_dir, TAU2_DATA, row_dir, where=f"{CONFIG_PATH}.data_dir")
        options, refused = row_load_options(name, self.settings.domain_options, extra.get("domain_options"), AGENT_NAME)
        if refused:
            self.row_fields[REFUSED_KEY] = refused
        return load_domain(name, data_dir, **options)

    def _open(self) -> Conversation:
        extra = self._row.get("extra_info") or {}
        domain = self._domain()
        task = domain.task(extra.get("task_id"))
        scenario = extra.get("user_scenario") or user_scenario_text(task)
        config = self.settings.user
        self._user_seed = self.trial_seed(config, task.id)
        return Conversation(
            domain.make_env(task.id),
            self.user_player(config, lambda: script_for(config, domain, task)),
            user_system_prompt=user_system_prompt(domain, scenario, user_tool_schemas(domain, task) is not None),
            user_tools=user_tool_schemas(domain, task),
            max_steps=self.settings.max_steps,
            max_errors=self.settings.max_errors,
            enforce_communication_protocol=self.settings.enforce_communication_protocol,
            seed=self._user_seed,
            agent_message_errors=self.settings.agent_message_errors,
            history=history_messages(task),
            progress=progress(domain, task),
        )
