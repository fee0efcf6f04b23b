"""tau-bench v1 as a reward of the ``contribution`` manager, selected by ``data_source`` ``tau_bench/<domain>``.

(``tau2/<domain>`` rows with ``reward.reward_kwargs.tau2.reward=tau_bench`` get tau-bench's *formula* on tau2's
tasks and data instead; that is :mod:`verl_rewards.tau2.tau_bench`.)

What a row carries (``verl-rewards prepare tau_bench`` writes it): the task id ``"<split>/<index>"`` in
``extra_info.task_id`` (or ``reward_model.ground_truth.task_id``); the domain in the data source. The trajectory
is ``tool_extra_fields["messages"]`` as our tools record it, else the prompt plus the response as one assistant
message (an episode that called no tool). Option: ``reward.reward_kwargs.tau_bench.data_dir`` (else
``TAU_BENCH_DATA_DIR``).

Reward: tau-bench's, 0.0 or 1.0. Extras (every sample, 0/1 unless noted):

=====================  =====================================================================================
``tb_r_actions``       the data after the agent's calls equals the data after the gold actions (hash match)
``tb_r_outputs``       every required output was said in one ``respond`` text (1 when the task has none)
``tb_outputs_found``   share of the required outputs said, in [0, 1] (1 when the task has none)
``tb_done``            the episode ended (transfer, ``###STOP###``, or a text reply in instruction mode);
                       0 means it ran out of turns and scores 0 whatever the data
``tb_transfer``        it ended with ``transfer_to_human_agents``
``termination``        how the episode ended (text): normal mode, the conversation's reason (``user_stop``,
                       ``transfer``, ``max_steps``, ``user_error``, ``agent_error``, ``infrastructure_error``);
                       instruction mode, ``transfer``, ``agent_reply`` (a text reply), ``crash`` or ``max_steps``
``user_error``         normal mode: the user backend failed (the episode scores 0)
=====================  =====================================================================================

Normal mode (``extra_info.mode == "normal"``, rows of ``prepare tau_bench --mode normal`` played by the
``tau_bench_agent`` loop): the episode is done only when the conversation ended with ``user_stop`` or
``transfer`` (``extra_info.termination``, from the loop); any other ending scores 0 whatever the messages show.

``reward = tb_done * tb_r_actions * tb_r_outputs`` (and 0 when a tool crashed the episode, as in tau-bench).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.termination import TerminationReason
from ..rewards.decorators import RewardSpec, reward
from ..scoring.contract import ConfigError, Scorer
from ..scoring.families import Family
from ..scoring.runner import RewardScorer
from .domain import DOMAINS, load_domain
from .normal import is_done
from .reward import ENDED_BY_TRANSFER, tau_bench_reward

SOURCE_PREFIX = "tau_bench/"
EXTRA_KEYS = ("tb_r_actions", "tb_r_outputs", "tb_outputs_found", "tb_done", "tb_transfer", "termination", "user_error")
#: the extra keys that hold text (the termination reason)
TEXT_KEYS = ("termination",)
_OPTION_KEYS = {"data_dir"}


class TauBenchInputError(ValueError):
    """A row lacks what the tau-bench reward needs (task id or domain)."""


@dataclass(frozen=True)
class TauBenchOptions:
    """Validated ``reward.reward_kwargs.tau_bench`` settings."""

    data_dir: str | None = None

    @classmethod
    def from_config(cls, section: Mapping[str, Any] | None) -> TauBenchOptions:
        section = dict(section or {})
        unknown = sorted(set(section) - _OPTION_KEYS)
        if unknown:
            raise ConfigError(
                f"unknown key(s) {unknown} in reward.reward_kwargs.tau_bench; valid: {sorted(_OPTION_KEYS)}"
            )
        data_dir = section.get("data_dir") or None
        if data_dir is not None:
            if not isinstance(data_dir, str | os.PathLike) or not Path(data_dir).expanduser().is_dir():
                raise ConfigError(f"reward.reward_kwargs.tau_bench.data_dir {data_dir!r} is not a directory")
            data_dir = str(Path(data_dir).expanduser())
        return cls(data_dir=data_dir)


def matches(data_source: str) -> bool:
    """``tau_bench/<domain>``."""
    return data_source.startswith(SOURCE_PREFIX)


def domain_of(data_source: str) -> str:
    name = data_source[len(SOURCE_PREFIX) :] if matches(data_source) else ""
    if name not in DOMAINS:
        known = ", ".join(SOURCE_PREFIX + d for d in DOMAINS)
        raise TauBenchInputError(f"data_source {data_source!r} is not a tau-bench domain (use {known})")
    return name


def task_id_of(ground_truth: Any, extra_info: Mapping[str, Any]) -> str:
    if extra_info.get("task_id") is not None:
        return str(extra_info["task_id"])
    if isinstance(ground_truth, str) and ground_truth.lstrip().startswith("{"):
        try:
            ground_truth = json.loads(ground_truth)
        except ValueError:
            pass
    if isinstance(ground_truth, Mapping) and ground_truth.get("task_id") is not None:
        return str(ground_truth["task_id"])
    raise TauBenchInputError(
        "no task id: set extra_info.task_id to '<split>/<index>' (verl-rewards prepare tau_bench does)"
    )


def gold_hash_of(ground_truth: Any) -> str | None:
    """The task's ``gt_data_hash`` from the row's ground truth (written by ``prepare tau_bench``), if any."""
    if isinstance(ground_truth, str) and ground_truth.lstrip().startswith("{"):
        try:
            ground_truth = json.loads(ground_truth)
        except ValueError:
            return None
    value = ground_truth.get("gt_data_hash") if isinstance(ground_truth, Mapping) else None
    return value if isinstance(value, str) and len(value) == 64 else None


def score_tau_bench(
    trajectory: list[dict[str, Any]],
    data_source: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any],
    options: TauBenchOptions | None = None,
) -> dict[str, Any]:
    """tau-bench's reward of one rollout with its components (see the module doc); ``options`` default to
    :class:`TauBenchOptions`'s."""
    options = options or TauBenchOptions()
    domain = load_domain(domain_of(data_source), options.data_dir)
    termination = extra_info.get("termination")
    normal = extra_info.get("mode") == "normal"
    terminated = is_done(termination) if normal else None
    result = tau_bench_reward(
        domain,
        task_id_of(ground_truth, extra_info),
        trajectory,
        terminated=terminated,
        gold_hash=gold_hash_of(ground_truth),
    )
    details = result.details
    if not isinstance(termination, str) or not termination:
        termination = details["ended_by"] or str(
            TerminationReason.CRASH if details["crash"] else TerminationReason.MAX_STEPS
        )
    return {
        "reward": float(result.reward),
        "tb_r_actions": float(details["r_actions"]),
        "tb_r_outputs": float(details["r_outputs"]),
        "tb_outputs_found": float(details["outputs_found"]),
        "tb_done": float(bool(details["done"])),
        "tb_transfer": float(details["ended_by"] == ENDED_BY_TRANSFER),
        "termination": termination,
        "user_error": float(termination == TerminationReason.USER_ERROR),
    }


def _spec(options: TauBenchOptions) -> RewardSpec:
    def tau_bench_v1_reward(trajectory: list, data_source: str, ground_truth: Any, extra_info: dict) -> dict:
        return score_tau_bench(trajectory, data_source, ground_truth, extra_info, options)

    return RewardSpec(
        name="tau_bench_v1",
        func=tau_bench_v1_reward,
        origin=f"{__file__}:tau_bench_v1",
        extra_keys=EXTRA_KEYS,
        text_keys=TEXT_KEYS,
    )


def make_scorer(section: Mapping[str, Any] | None, tokenizer: Any = None) -> Scorer:
    """The scorer for ``tau_bench/<domain>`` rows, configured by ``reward.reward_kwargs.tau_bench``."""
    return RewardScorer(_spec(TauBenchOptions.from_config(section)), executor="thread")


@reward(name="tau_bench_v1", extra_keys=EXTRA_KEYS, text_keys=TEXT_KEYS)
def tau_bench_v1(trajectory: list, data_source: str, ground_truth: Any, extra_info: dict) -> dict:
    """tau-bench v1 reward on tau-bench's own data (``TAU_BENCH_DATA_DIR``) for ``tau_bench/<domain>`` rows."""
    return score_tau_bench(trajectory, data_source, ground_truth, extra_info)


FAMILY = Family(name="tau_bench", matches=matches, make_scorer=make_scorer, extra_keys=EXTRA_KEYS, text_keys=TEXT_KEYS)
