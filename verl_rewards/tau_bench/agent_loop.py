"""verl's ``tau_bench_agent`` loop: tau-bench v1 normal mode inside the rollout (see :mod:`.normal` for the rules).

It is the conversation engine's verl loop (:mod:`verl_rewards.engine.agent_loop`: verl's ``ToolAgentLoop`` whose
tool and text turns the conversation engine plays, as tau2's ``tau2_agent``; token masks 1 on the agent's tokens, 0
on tool results and user messages) with a tau-bench episode: the row's prompt is ``[system: wiki.md]``, the user's
first message is generated at the start and appended. The plugin registers it; ``verl-rewards prepare tau_bench
--mode normal`` writes rows with ``agent_name: tau_bench_agent``.

Configuration, Hydra keys under ``actor_rollout_ref.rollout.custom.tau_bench`` (``+`` prefix on the command line):
``user.*`` (the user backend, exactly as tau2's ``custom.tau2.user``: ``backend`` openai | policy | scripted,
``base_url``, ``model``, ``temperature``, ``timeout_s``, ``retries``, ``max_concurrency``, ``seed``, ``scripts``
keyed by ``"<split>/<index>"``...), ``max_num_steps`` (30, tau-bench's agent budget), ``data_dir`` (else
``TAU_BENCH_DATA_DIR``; never the row's). What the reward gets in ``extra_fields``: as tau2's loop (``messages``,
``termination``, ``tau2_steps``, ``tau2_errors``, ``tau2_end_cause``, ``user_error``, ``user_seed``, and the step
dicts ``prev_step_dict`` / ``cur_step_dict`` of the agent's tool turns).
"""

from __future__ import annotations

from typing import Any

from ..engine.agent_loop import ConversationAgentLoop, settings_of
from ..engine.conversation import Conversation
from ..engine.data_dir import TAU_BENCH_DATA, choose_data_dir, row_data_dir
from ..engine.steps import STEP_FIELDS
from .domain import TauBenchDomain, load_domain
from .normal import AGENT_LOOP_NAME, CONFIG_PATH, TauBenchNormalSettings, default_script, open_conversation
from .verl_tools import progress


class TauBenchAgentLoop(ConversationAgentLoop):
    """``tau_bench_agent``: the conversation engine's verl loop playing tau-bench v1 episodes."""

    agent_name = AGENT_LOOP_NAME
    step_dict_fields = STEP_FIELDS

    @staticmethod
    def load_settings(config: Any) -> TauBenchNormalSettings:
        return settings_of(config, "tau_bench", TauBenchNormalSettings.from_mapping)

    def _tau_bench_domain(self) -> TauBenchDomain:
        extra = self._row.get("extra_info") or {}
        name = extra.get("domain") or str(self._row.get("data_source", "")).removeprefix("tau_bench/")
        where = f"{CONFIG_PATH}.data_dir"
        row = row_data_dir(self._row, extra)
        return load_domain(str(name), choose_data_dir(self.settings.data_dir, TAU_BENCH_DATA, row, where=where))

    def _open(self) -> Conversation:
        extra = self._row.get("extra_info") or {}
        domain = self._tau_bench_domain()
        task = domain.task(extra.get("task_id"))
        config = self.settings.user
        self._user_seed = self.trial_seed(config, task.id)
        user = self.user_player(config, lambda: config.scripts.get(task.id) or default_script(task))
        return open_conversation(
            domain,
            task.id,
            user,
            seed=self._user_seed,
            max_num_steps=self.settings.max_num_steps,
            progress=progress(domain, task),
        )
