"""tau2 and tau-bench as rewards of the ``contribution`` manager.

Rows whose ``data_source`` is ``tau2/<domain>`` (or ``tau2``) are scored by the tau2 evaluator on our own
domain environments; ``reward.reward_kwargs.tau2.reward=tau_bench`` switches to tau-bench's formula on tau2 tasks.
The rewards are also registered by name (``tau2``, ``tau2_tau_bench``) for ``reward_fn`` / ``reward_fn_by_source``.
(tau-bench on its own data is the family of :mod:`verl_rewards.tau_bench`, reward ``tau_bench_v1``.)

What a row must carry:

* the task id: ``extra_info.task_id`` (or ``reward_model.ground_truth.task_id``, or a string ground truth);
* the domain: from ``data_source`` ``tau2/<domain>``, or ``extra_info.domain``;
* the trajectory: the OpenAI-style messages recorded by the rollout (``tool_extra_fields["messages"]``, as our
  tau2 tools record them); without them, the prompt plus the response as one assistant message;
* whether the episode ran in tau2's solo mode (``extra_info.solo_mode``, written by ``prepare tau2``): the
  agent's calls of user tools then act on the user side when the trajectory is replayed;
* the termination reason: ``tool_extra_fields["termination"]`` (``agent_stop`` when the agent called ``done``),
  else ``extra_info.termination``, else ``default_termination`` (``agent_stop``).

Options (``reward.reward_kwargs.tau2.*``): ``data_dir`` (else ``TAU2_DATA_DIR``), ``reward`` (``tau2`` |
``tau_bench``), ``nl_policy`` (``skip``: NL assertions are left out of the product, the default since no
judge runs inside a reward worker; ``require``: a task whose basis needs them is an error unless ``judge``
names a callable ``module:function``, or is ``{backend: openai, base_url, model, ...}`` for the chat-completions
judge of :mod:`verl_rewards.tau2.normal.judge`), ``assertion_errors`` (``zero``: an env assertion that cannot be
evaluated counts as unmet; ``raise``), ``default_termination``, ``partial_credit`` (off by default; ``true`` or
weights ``{action: 0.7, env_assertion: 0.2, communicate: 0.1}``: see :func:`partial_credit`).

Extras (every sample): ``db_match`` (agent and user DB equal to the gold replay, 0/1), and the components
``tau2_db``, ``tau2_env_assertion``, ``tau2_action``, ``tau2_communicate``, ``tau2_nl_assertion`` (the
component's value when it is in the task's reward basis, else 1.0: it does not gate the reward; all 0.0 when
the episode ended without an agent or user stop); for tau2's own statistics (``verl-rewards eval`` and the
validation metrics of :mod:`verl_rewards.evaluation`): ``termination`` (the reason, a string),
``tau2_basis`` (the scored components, comma-separated; empty after an early stop), ``user_error`` (1 when a
normal-mode run ended because the simulated user's backend failed) and the gold-action counts
``tau2_read_actions`` / ``tau2_read_correct`` / ``tau2_write_actions`` / ``tau2_write_correct``; tau-bench:
``tb_r_actions``, ``tb_r_outputs``; both: ``row_options_refused`` (1 when the rollout refused load options the
row asked for: rows never choose endpoints, credentials or paths, :mod:`verl_rewards.tau2.row_options`). With
``partial_credit`` on: ``tau2_partial_credit`` (reported next to the binary reward, which stays the task reward).
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..coerce import finite_float, parse_bool
from ..engine.termination import TerminationReason
from ..rewards.decorators import RewardSpec, reward
from ..scoring.contract import ConfigError, Scorer
from ..scoring.families import Family
from ..scoring.runner import RewardScorer
from .domain import load_domain
from .evaluator import NL_POLICIES, SCORED_TERMINATIONS, TERMINATION_REASONS, evaluate_trajectory
from .row_options import REFUSED_KEY
from .tau_bench import tau2_tau_bench_reward

COMPONENTS = ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")
TAU2_KEYS = ("db_match", *(f"tau2_{c.lower()}" for c in COMPONENTS))
TAU2_EVAL_KEYS = (
    "termination",
    "tau2_basis",
    "tau2_read_actions",
    "tau2_read_correct",
    "tau2_write_actions",
    "tau2_write_correct",
    "user_error",
    REFUSED_KEY,
)
TAU_BENCH_KEYS = ("tb_r_actions", "tb_r_outputs", REFUSED_KEY)
PARTIAL_CREDIT_KEY = "tau2_partial_credit"
#: the extra keys that hold text: the termination reason and the reward basis (comma-separated components)
TEXT_KEYS = ("termination", "tau2_basis")
#: every extra key this family's scorers may report
EXTRA_KEYS = (*TAU2_KEYS, *TAU2_EVAL_KEYS, *TAU_BENCH_KEYS, PARTIAL_CREDIT_KEY)
_OPTION_KEYS = {"data_dir", "reward", "nl_policy", "judge", "assertion_errors", "default_termination", "partial_credit"}
#: ``tau2.partial_credit: true``: 0.7 actions, 0.2 env assertions, 0.1 communicate (as tau2 partial credit on slime)
DEFAULT_PARTIAL_CREDIT = (("action", 0.7), ("env_assertion", 0.2), ("communicate", 0.1))
#: ``tau2.assertion_errors``: an env assertion that raises counts as unmet (``zero``) or raises
ASSERTION_ERRORS = ("zero", "raise")
#: ``tau2.reward`` (the formula) -> the registered reward of that formula
REWARD_NAMES = {"tau2": "tau2", "tau_bench": "tau2_tau_bench"}


class Tau2InputError(ValueError):
    """A row lacks what the tau2 reward needs (task id or domain)."""


@dataclass(frozen=True)
class Tau2Options:
    """Validated ``reward.reward_kwargs.tau2`` settings."""

    data_dir: str | None = None
    reward: str = "tau2"
    nl_policy: str = "skip"
    judge: Callable[..., Any] | None = None
    assertion_errors: str = "zero"
    default_termination: str = str(TerminationReason.AGENT_STOP)
    #: ``(component, weight)`` pairs, or ``None`` when partial credit is off
    partial_credit: tuple[tuple[str, float], ...] | None = None

    @classmethod
    def from_config(cls, section: Mapping[str, Any] | None) -> Tau2Options:
        section = dict(section or {})
        unknown = sorted(set(section) - _OPTION_KEYS)
        if unknown:
            raise ConfigError(f"unknown key(s) {unknown} in reward.reward_kwargs.tau2; valid: {sorted(_OPTION_KEYS)}")
        kind = str(section.get("reward", "tau2"))
        if kind not in ("tau2", "tau_bench"):
            raise ConfigError(f"reward.reward_kwargs.tau2.reward must be tau2 or tau_bench, got {kind!r}")
        nl_policy = str(section.get("nl_policy", "skip"))
        if nl_policy not in NL_POLICIES:
            raise ConfigError(f"reward.reward_kwargs.tau2.nl_policy must be one of {NL_POLICIES}")
        errors = str(section.get("assertion_errors", "zero"))
        if errors not in ASSERTION_ERRORS:
            raise ConfigError(f"reward.reward_kwargs.tau2.assertion_errors must be one of {ASSERTION_ERRORS}")
        judge = section.get("judge")
        if isinstance(judge, Mapping):  # {backend: openai, base_url, model, ...}: the chat-completions judge
            from .normal.judge import judge_from_config

            try:
                judge = judge_from_config(judge, "reward.reward_kwargs.tau2.judge")
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
        elif judge:
            module_name, _, func = str(judge).partition(":")
            try:
                judge = getattr(importlib.import_module(module_name), func)
            except (ImportError, AttributeError, ValueError) as exc:
                raise ConfigError(f"reward.reward_kwargs.tau2.judge {section['judge']!r}: {exc}") from None
        if nl_policy == "require" and kind == "tau2" and not judge:
            raise ConfigError(
                "reward.reward_kwargs.tau2.nl_policy=require needs reward.reward_kwargs.tau2.judge (module:function, "
                "or {backend: openai, base_url, model}): without one every task with NL assertions is a reward "
                "error; set a judge, or nl_policy=skip"
            )
        termination = str(section.get("default_termination", TerminationReason.AGENT_STOP)).strip().lower()
        if termination not in TERMINATION_REASONS:
            raise ConfigError(
                f"reward.reward_kwargs.tau2.default_termination must be one of {TERMINATION_REASONS}, "
                f"got {section.get('default_termination')!r}"
            )
        data_dir = section.get("data_dir")
        if data_dir is not None:
            if not isinstance(data_dir, str | os.PathLike) or not Path(data_dir).expanduser().is_dir():
                raise ConfigError(f"reward.reward_kwargs.tau2.data_dir {data_dir!r} is not a directory")
            data_dir = str(Path(data_dir).expanduser())
        partial = _partial_credit_weights(section.get("partial_credit"))
        if partial is not None and kind != "tau2":
            raise ConfigError("reward.reward_kwargs.tau2.partial_credit needs tau2.reward=tau2 (tau2's checks)")
        return cls(
            data_dir=data_dir,
            reward=kind,
            nl_policy=nl_policy,
            judge=judge or None,
            assertion_errors=errors,
            default_termination=termination,
            partial_credit=partial,
        )


def _partial_credit_weights(value: Any) -> tuple[tuple[str, float], ...] | None:
    """``tau2.partial_credit``: off (absent, null, false), on with the default weights (true) or a weight mapping."""
    key = "reward.reward_kwargs.tau2.partial_credit"
    if value is None:
        return None
    if not isinstance(value, Mapping):
        try:
            on = parse_bool(value)
        except ValueError:
            raise ConfigError(
                f"{key} must be true/false or weights {{action: 0.7, env_assertion: 0.2, communicate: 0.1}}, "
                f"got {value!r}"
            ) from None
        return DEFAULT_PARTIAL_CREDIT if on else None
    names = [name for name, _ in DEFAULT_PARTIAL_CREDIT]
    unknown = sorted(set(value) - set(names))
    if unknown:
        raise ConfigError(f"unknown key(s) {unknown} in {key}; valid: {names}")
    weights = []
    for name in names:
        if value.get(name) is None:
            continue
        try:
            weight = finite_float(value[name])
        except ValueError as exc:
            raise ConfigError(f"{key}.{name}: {exc}") from None
        if weight < 0:
            raise ConfigError(f"{key}.{name}: a weight must be >= 0, got {value[name]!r}")
        weights.append((name, weight))
    if not any(w > 0 for _, w in weights):
        raise ConfigError(f"{key}: at least one weight must be > 0, got {value!r}")
    return tuple(weights)


def partial_credit(result: Any, weights: tuple[tuple[str, float], ...]) -> float:
    """A dense score in [0, 1] from the evaluator's per-check results (the binary reward is left untouched).

    Each weighted component scores the share of its checks that passed: gold actions matched
    (``action_checks``), env assertions met (``env_assertion_checks``, evaluated when ENV_ASSERTION is in the
    task's basis), information communicated (``communicate_checks``). A component without checks is left out and
    the weights are renormalised over the others; with none at all (or after an early stop, which runs no
    checks) the score is 0.0, so shaping is never free. The rule of the tau2 partial-credit shaping trained with
    slime (jbarnes850/slime-tau2-warmup ``tau2_reward_shaping.py``).
    """
    checks = {
        "action": [bool(c.get("match")) for c in result.action_checks],
        "env_assertion": [bool(c.get("met")) for c in result.env_assertion_checks],
        "communicate": [bool(c.get("met")) for c in result.communicate_checks],
    }
    total = weight_sum = 0.0
    for name, weight in weights:
        if checks[name]:
            total += weight * sum(checks[name]) / len(checks[name])
            weight_sum += weight
    return total / weight_sum if weight_sum > 0 else 0.0


def domain_of(data_source: str, extra_info: Mapping[str, Any]) -> str:
    if data_source.startswith("tau2/"):
        return data_source.split("/", 1)[1]
    if extra_info.get("domain"):
        return str(extra_info["domain"])
    raise Tau2InputError(f"cannot tell the tau2 domain of data_source {data_source!r} (use tau2/<domain>)")


def task_id_of(ground_truth: Any, extra_info: Mapping[str, Any]) -> str:
    if extra_info.get("task_id") is not None:
        return str(extra_info["task_id"])
    if isinstance(ground_truth, str) and ground_truth.lstrip().startswith("{"):
        try:  # `verl-rewards prepare tau2` stores the task id and criteria as JSON text
            ground_truth = json.loads(ground_truth)
        except ValueError:
            pass
    if isinstance(ground_truth, Mapping) and ground_truth.get("task_id") is not None:
        return str(ground_truth["task_id"])
    if isinstance(ground_truth, str) and ground_truth:
        return ground_truth
    raise Tau2InputError("no task id: set extra_info.task_id (verl-rewards prepare tau2 does)")


def termination_of(extra_info: Mapping[str, Any], options: Tau2Options) -> str:
    return str(extra_info.get("termination") or options.default_termination)


def score_tau2(
    trajectory: list[dict[str, Any]],
    data_source: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any],
    options: Tau2Options,
) -> dict[str, float]:
    """The tau2 (or tau-bench) reward of one rollout, with its components."""
    domain = load_domain(domain_of(data_source, extra_info), options.data_dir)
    task_id = task_id_of(ground_truth, extra_info)
    refused = float(bool(extra_info.get(REFUSED_KEY)))  # the rollout refused load options the row asked for
    if options.reward == "tau_bench":
        tb_result = tau2_tau_bench_reward(domain, task_id, trajectory)
        info = tb_result.info or {}
        return {
            "reward": float(tb_result.reward),
            "tb_r_actions": float(info.get("r_actions", 0.0) or 0.0),
            "tb_r_outputs": float(info.get("r_outputs", 1.0) if info.get("r_outputs") is not None else 1.0),
            REFUSED_KEY: refused,
        }
    result = evaluate_trajectory(
        domain,
        task_id,
        trajectory,
        termination=termination_of(extra_info, options),
        judge=options.judge,
        nl_policy=options.nl_policy,
        assertion_errors=options.assertion_errors,
        solo_mode=bool(extra_info.get("solo_mode", False)),
    )
    out = {"reward": float(result.reward), "db_match": float(bool(result.db_match)), REFUSED_KEY: refused}
    scored = result.termination in SCORED_TERMINATIONS  # an early stop scores 0 in every component
    for comp in COMPONENTS:
        out[f"tau2_{comp.lower()}"] = float(result.breakdown.get(comp, 1.0)) if scored else 0.0
    out.update(eval_extras(result))
    if options.partial_credit is not None:
        out[PARTIAL_CREDIT_KEY] = partial_credit(result, options.partial_credit)
    return out


def eval_extras(result: Any) -> dict[str, Any]:
    """What tau2's ``compute_metrics`` counts per simulation: termination, scored components, gold-action
    matches by tool kind (tau2-bench ``src/tau2/metrics/agent_metrics.py``)."""
    out: dict[str, Any] = {"termination": str(result.termination), "tau2_basis": ",".join(result.breakdown)}
    # normal mode: the user backend failed
    out["user_error"] = float(result.termination == TerminationReason.USER_ERROR)
    for kind in ("read", "write"):
        checks = [c for c in result.action_checks if c.get("tool_type") == kind]
        out[f"tau2_{kind}_actions"] = float(len(checks))
        out[f"tau2_{kind}_correct"] = float(sum(1 for c in checks if c.get("match")))
    return out


def matches(data_source: str) -> bool:
    """``tau2`` and ``tau2/<domain>``."""
    return data_source == "tau2" or data_source.startswith("tau2/")


def _spec(name: str, options: Tau2Options) -> RewardSpec:
    def tau2_reward(trajectory: list, data_source: str, ground_truth: Any, extra_info: dict) -> dict:
        tool_extra = extra_info  # the manager merges tool_extra_fields into extra_info
        return score_tau2(trajectory, data_source, ground_truth, tool_extra, options)

    keys = TAU_BENCH_KEYS if options.reward == "tau_bench" else TAU2_KEYS + TAU2_EVAL_KEYS
    if options.partial_credit is not None:
        keys = (*keys, PARTIAL_CREDIT_KEY)
    text = tuple(k for k in TEXT_KEYS if k in keys)
    return RewardSpec(name=name, func=tau2_reward, origin=f"{__file__}:{name}", extra_keys=keys, text_keys=text)


def make_scorer(section: Mapping[str, Any] | None, tokenizer: Any = None) -> Scorer:
    """The scorer for ``tau2/<domain>`` rows, configured by ``reward.reward_kwargs.tau2``."""
    options = Tau2Options.from_config(section)
    return RewardScorer(_spec(REWARD_NAMES[options.reward], options), executor="thread")


@reward(name="tau2", extra_keys=TAU2_KEYS + TAU2_EVAL_KEYS, text_keys=TEXT_KEYS)
def tau2(trajectory: list, data_source: str, ground_truth: Any, extra_info: dict) -> dict:
    """tau2 evaluator reward with default options (data from ``TAU2_DATA_DIR``)."""
    return score_tau2(trajectory, data_source, ground_truth, extra_info, Tau2Options())


@reward(name="tau2_tau_bench", extra_keys=TAU_BENCH_KEYS)
def tau2_tau_bench(trajectory: list, data_source: str, ground_truth: Any, extra_info: dict) -> dict:
    """tau-bench's reward on tau2 tasks (final DB hash vs gold replay, required outputs), default options."""
    return score_tau2(trajectory, data_source, ground_truth, extra_info, Tau2Options(reward="tau_bench"))


FAMILY = Family(name="tau2", matches=matches, make_scorer=make_scorer, extra_keys=EXTRA_KEYS, text_keys=TEXT_KEYS)
