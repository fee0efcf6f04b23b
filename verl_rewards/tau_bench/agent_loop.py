"""verl's ``tau_bench_agent`` loop: tau-bench v1 normal mode inside the rollout (see :mod:`.normal` for the rules).

It is tau2's ``tau2_agent`` loop (:mod:`verl_rewards.tau2.normal.agent_loop`: verl's public ``AgentLoopBase`` with
``ToolAgentLoop``'s token stream, whose tool and text turns the conversation engine plays; token masks 1 on the
agent's tokens, 0 on tool results and user messages) with a tau-bench episode: the row's prompt is ``[system:
wiki.md]``, the user's first message is generated at the start and appended. The plugin registers it; ``verl-rewards
prepare tau_bench --mode normal`` writes rows with ``agent_name: tau_bench_agent``.

Configuration, Hydra keys under ``actor_rollout_ref.rollout.custom.tau_bench`` (``+`` prefix on the command line):
``user.*`` (the user backend, exactly as tau2's ``custom.tau2.user``: ``backend`` openai | policy | scripted,
``base_url``, ``model``, ``temperature``, ``timeout_s``, ``retries``, ``max_concurrency``, ``seed``, ``scripts``
keyed by ``"<split>/<index>"``...), ``max_num_steps`` (30, tau-bench's agent budget), ``data_dir`` (else
``TAU_BENCH_DATA_DIR``, else the row's). What the reward gets in ``extra_fields``: as tau2's loop (``messages``,
``termination``, ``tau2_steps``, ``tau2_errors``, ``tau2_end_cause``, ``user_error``, ``user_seed``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..tau2.normal.agent_loop import Tau2AgentLoop, settings_of
from ..tau2.normal.conversation import Conversation
from .domain import DATA_DIR_ENV, TauBenchDomain, load_domain
from .normal import TauBenchNormalSettings, default_script, open_conversation


class TauBenchAgentLoop(Tau2AgentLoop):
    """``tau_bench_agent``: the ``tau2_agent`` loop playing tau-bench v1 episodes."""

    @staticmethod
    def load_settings(config: Any) -> TauBenchNormalSettings:
        return settings_of(config, "tau_bench", TauBenchNormalSettings.from_mapping)

    def _tau_bench_domain(self) -> TauBenchDomain:
        extra = self._row.get("extra_info") or {}
        name = extra.get("domain") or str(self._row.get("data_source", "")).removeprefix("tau_bench/")
        data_dir = self.settings.data_dir or os.environ.get(DATA_DIR_ENV) or None
        if not data_dir:
            for entry in (self._row.get("tools_kwargs") or extra.get("tools_kwargs") or {}).values():
                create = entry.get("create_kwargs") if isinstance(entry, Mapping) else None
                if isinstance(create, Mapping) and create.get("data_dir"):
                    data_dir = create["data_dir"]
                    break
        return load_domain(str(name), data_dir)

    def _open(self) -> Conversation:
        extra = self._row.get("extra_info") or {}
        domain = self._tau_bench_domain()
        task = domain.task(extra.get("task_id"))
        config = self.settings.user
        self._user_seed = self.trial_seed(config, task.id)
        user = self.user_player(config, lambda: config.scripts.get(task.id) or default_script(task))
        return open_conversation(domain, task.id, user, seed=self._user_seed, max_num_steps=self.settings.max_num_steps)
