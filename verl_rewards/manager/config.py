"""The manager's configuration: ``reward.reward_kwargs`` of verl's trainer config, validated at build time.

Every key is listed in the docs' generated reference (``docs/reference/config.md``, from these dataclasses).
Hydra keys win; the GRPO scripts' environment variables
(``CONTRIBUTION``, ``CONTRIB_TYPE``, ``BETA``) are read only when the Hydra keys are absent. Invalid values
raise :class:`ManagerConfigError` when the manager is built, never a silent zero later.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import catalog
from ..coerce import finite_float, parse_bool
from ..contribution import ContributionConfig, ContributionConfigError
from ..scoring.contract import ConfigError, DecodeConfig, Scorer
from ..scoring.executors.base import EXECUTORS
from ..scoring.families import Family, families
from ..scoring.inputs import PREDEFINED

#: the name the manager registers under in verl's reward-manager registry
MANAGER_NAME = "contribution"
ON_ERROR_CHOICES = ("fallback", "raise")
DEFAULT_TIMEOUT_S = 60.0
#: upper bound of ``timeout_s`` (one week): larger waits overflow the OS timers the executors use
MAX_TIMEOUT_S = 7 * 24 * 3600.0

#: top-level keys of ``reward.reward_kwargs`` besides the reward families' sections (``toolrl``, ``tau2``,
#: ``tau_bench``); anything else is a typo and an error.
ENGINE_KEYS = frozenset(
    {
        "contribution",
        "decode",
        "timeout_s",
        "on_error",
        "fallback_reward",
        "extra_keys",
        "score_kwargs",
        "max_concurrency",
        "modules",
        "reward_fn",
        "reward_fn_by_source",
        "executor",
        "record_trajectory",
    }
)


def known_keys() -> frozenset[str]:
    """Every valid top-level key: the engine's and one section per registered reward family."""
    catalog.register_builtins()
    return ENGINE_KEYS | {family.name for family in families()}


class ManagerConfigError(ConfigError):
    """A ``reward.reward_kwargs`` value is invalid; raised when the manager is built."""


def to_plain(value: Any) -> Any:
    """OmegaConf containers (or anything mapping-like) to plain Python, without importing omegaconf."""
    if hasattr(value, "_metadata") and hasattr(value, "_get_node"):
        from omegaconf import OmegaConf

        return OmegaConf.to_container(value, resolve=True)
    if isinstance(value, Mapping):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    return value


def _bool(value: Any, key: str) -> bool:
    try:
        return parse_bool(value)
    except ValueError as exc:
        raise ManagerConfigError(f"reward.reward_kwargs.{key}: {exc}") from None


def _float(value: Any, key: str, *, positive: bool = False, maximum: float | None = None) -> float:
    try:
        return finite_float(value, positive=positive, maximum=maximum)
    except ValueError as exc:
        raise ManagerConfigError(f"reward.reward_kwargs.{key}: {exc}") from None


@dataclass(frozen=True)
class ManagerConfig:
    """Validated ``reward.reward_kwargs`` for :class:`~verl_rewards.manager.ContributionRewardManager`."""

    contribution: ContributionConfig = field(default_factory=ContributionConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    timeout_s: float = DEFAULT_TIMEOUT_S
    on_error: str = "fallback"
    fallback_reward: float = 0.0
    extra_keys: tuple[str, ...] = ()
    score_kwargs: Mapping[str, Any] = field(default_factory=dict)
    max_concurrency: int = 64
    executor: str = "thread"
    modules: tuple[str, ...] = ()
    reward_fn: str | None = None
    reward_fn_by_source: Mapping[str, str] = field(default_factory=dict)
    #: every sample reports its recorded conversation as ``trajectory_json`` text (:mod:`..scoring.recorded`)
    record_trajectory: bool = False
    #: the reward families' own sections (``toolrl``, ``tau2``, ...), validated by each family when built
    family_sections: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def section(self, family: str) -> Mapping[str, Any] | None:
        """The ``reward.reward_kwargs.<family>`` section, or None when absent."""
        return self.family_sections.get(family)

    @classmethod
    def from_reward_kwargs(
        cls, reward_kwargs: Mapping[str, Any] | None, environ: Mapping[str, str] | None = None
    ) -> ManagerConfig:
        """Validate ``reward.reward_kwargs`` (a mapping or OmegaConf node)."""
        kw = to_plain(reward_kwargs) or {}
        if not isinstance(kw, Mapping):
            raise ManagerConfigError(f"reward.reward_kwargs must be a mapping, got {type(kw).__name__}")
        valid = known_keys()
        unknown = sorted(set(kw) - valid)
        if unknown:
            raise ManagerConfigError(f"unknown key(s) {unknown} in reward.reward_kwargs; valid keys: {sorted(valid)}")
        env = os.environ if environ is None else environ
        contribution_section = kw.get("contribution")
        if contribution_section is not None and not isinstance(contribution_section, Mapping):
            raise ManagerConfigError(
                "reward.reward_kwargs.contribution must be a mapping (type, beta, ... or terms: [...])"
            )
        try:
            contribution = ContributionConfig.from_config(contribution_section, env)
        except ContributionConfigError as exc:
            raise ManagerConfigError(str(exc)) from None

        decode_section = kw.get("decode") or {}
        if not isinstance(decode_section, Mapping):
            raise ManagerConfigError("reward.reward_kwargs.decode must be a mapping")
        bad = sorted(set(decode_section) - {"include_prompt", "skip_special_tokens"})
        if bad:
            raise ManagerConfigError(
                f"unknown key(s) {bad} in reward.reward_kwargs.decode; valid: include_prompt, skip_special_tokens"
            )
        decode = DecodeConfig(
            include_prompt=None
            if decode_section.get("include_prompt") is None
            else _bool(decode_section["include_prompt"], "decode.include_prompt"),
            skip_special_tokens=None
            if decode_section.get("skip_special_tokens") is None
            else _bool(decode_section["skip_special_tokens"], "decode.skip_special_tokens"),
        )

        on_error = str(kw.get("on_error", "fallback")).strip().lower()
        if on_error not in ON_ERROR_CHOICES:
            raise ManagerConfigError(
                f"reward.reward_kwargs.on_error must be one of {ON_ERROR_CHOICES}, got {kw.get('on_error')!r}"
            )
        extra_keys = kw.get("extra_keys") or []
        if not isinstance(extra_keys, list | tuple) or not all(isinstance(k, str) for k in extra_keys):
            raise ManagerConfigError(f"reward.reward_kwargs.extra_keys must be a list of names, got {extra_keys!r}")
        _check_sections(kw, valid - ENGINE_KEYS)
        modules = kw.get("modules") or ()
        modules = tuple(m for m in modules.split(",") if m.strip()) if isinstance(modules, str) else tuple(modules)
        score_kwargs = kw.get("score_kwargs") or {}
        if not isinstance(score_kwargs, Mapping):
            raise ManagerConfigError("reward.reward_kwargs.score_kwargs must be a mapping")
        _check_score_kwargs(score_kwargs)
        max_conc = kw.get("max_concurrency", 64)
        if isinstance(max_conc, bool) or not isinstance(max_conc, int) or max_conc < 1:
            raise ManagerConfigError(f"reward.reward_kwargs.max_concurrency must be an integer >= 1, got {max_conc!r}")
        return cls(
            contribution=contribution,
            decode=decode,
            timeout_s=_float(kw.get("timeout_s", DEFAULT_TIMEOUT_S), "timeout_s", positive=True, maximum=MAX_TIMEOUT_S),
            on_error=on_error,
            fallback_reward=_float(kw.get("fallback_reward", 0.0), "fallback_reward"),
            extra_keys=tuple(extra_keys),
            score_kwargs=dict(score_kwargs),
            max_concurrency=max_conc,
            executor=str(kw.get("executor") or "thread"),
            modules=modules,
            reward_fn=kw.get("reward_fn") or None,
            reward_fn_by_source={str(k): str(v) for k, v in (kw.get("reward_fn_by_source") or {}).items()},
            record_trajectory=_bool(kw.get("record_trajectory", False), "record_trajectory"),
            family_sections={k: dict(kw[k] or {}) for k in valid - ENGINE_KEYS if k in kw},
        )


def _check_score_kwargs(score_kwargs: Mapping[str, Any]) -> None:
    """``score_kwargs`` are constants for a reward's other parameters: one named like a per-sample input
    (``solution_str``, ``ground_truth``, ...) would replace that input in every sample of a ``**kwargs`` reward."""
    taken = [str(k) for k in score_kwargs if k in PREDEFINED]
    if taken:
        raise ManagerConfigError(
            f"reward.reward_kwargs.score_kwargs.{taken[0]}: {taken} are per-sample inputs, filled from each sample; "
            "score_kwargs hold constants for a reward's other parameters: remove the key, or give the reward a "
            "parameter of another name"
        )


def _check_sections(kw: Mapping[str, Any], family_keys: frozenset[str]) -> None:
    """The shapes of the sections (the families validate their own sections' values when they are built)."""
    shapes: dict[str, tuple[type, str]] = {
        "reward_fn_by_source": (Mapping, "a mapping {data_source: reward name}"),
        "reward_fn": (str, "a registered reward name"),
        **{name: (Mapping, f"a mapping of {name} options") for name in family_keys},
    }
    for key, (kind, what) in shapes.items():
        if kw.get(key) is not None and not isinstance(kw[key], kind):
            raise ManagerConfigError(f"reward.reward_kwargs.{key} must be {what}, got {kw[key]!r}")
    modules = kw.get("modules")
    if (
        modules is not None
        and not isinstance(modules, str)
        and not (isinstance(modules, list | tuple) and all(isinstance(m, str) for m in modules))
    ):
        raise ManagerConfigError(
            f"reward.reward_kwargs.modules must be a module name, a .py path or a list of them, got {modules!r}"
        )
    executor = kw.get("executor")
    if executor is not None and executor not in EXECUTORS:
        raise ManagerConfigError(f"reward.reward_kwargs.executor must be one of {EXECUTORS}, got {executor!r}")


def family_scorer(family: Family, settings: ManagerConfig, tokenizer: Any = None) -> Scorer:
    """``family``'s scorer built from its section (ManagerConfigError when the section is invalid)."""
    try:
        return family.make_scorer(settings.section(family.name), tokenizer)
    except ConfigError as exc:
        raise ManagerConfigError(str(exc)) from None


def configured_family_scorers(settings: ManagerConfig, tokenizer: Any = None) -> dict[str, Scorer]:
    """The scorer of every family whose section is configured: each section is validated whatever scores the rows
    (a custom function, ``reward_fn``), so a typo there stops the run at start-up."""
    catalog.register_builtins()
    return {f.name: family_scorer(f, settings, tokenizer) for f in families() if settings.section(f.name) is not None}


def check_trainer_config(config: Any) -> None:
    """Where the trainer starts (verl's task runner, before any reward worker exists): reject what every reward
    worker's build of this manager would reject, ``reward.reward_kwargs`` and its family sections, so a bad value
    stops the run at start-up instead of failing inside the reward workers. Other managers are left alone."""
    reward = (config.get("reward") if hasattr(config, "get") else None) or {}
    manager = reward.get("reward_manager") or {}
    if manager.get("source", "register") != "register" or manager.get("name") != MANAGER_NAME:
        return
    settings = ManagerConfig.from_reward_kwargs(reward.get("reward_kwargs"))
    configured_family_scorers(settings)
    problem = critic_terms_problem(config, settings.contribution)
    if problem:
        raise ManagerConfigError(problem)


def critic_terms_problem(config: Any, contribution: ContributionConfig) -> str | None:
    """Why the ``value_source: critic`` terms cannot run with this trainer config (None when they can, or there are
    none): they need a critic (``algorithm.adv_estimator=gae``) and verl's V1 trainer, whose advantage step adds
    them (:mod:`verl_rewards.critic_terms`)."""
    terms = contribution.critic_terms
    if not terms:
        return None
    from verl.trainer.ppo.utils import need_critic

    names = ", ".join(t.name for t in terms)
    if not need_critic(config):
        estimator = config.algorithm.adv_estimator
        return (
            f"reward.reward_kwargs.contribution: term(s) {names} read the critic (value_source: critic), but this run "
            f"has no critic (algorithm.adv_estimator={estimator}): use algorithm.adv_estimator=gae with a critic, or "
            "value_source: progress"
        )
    if not config.trainer.get("use_v1", True):
        return (
            f"reward.reward_kwargs.contribution: term(s) {names} read the critic (value_source: critic), which verl's "
            "V1 trainer adds before the advantage: use trainer.use_v1=True (the default)"
        )
    return None


def install_startup_check(manager_cls: Any) -> None:
    """Make verl's ``RewardLoopManager`` (built in the task runner before any reward worker) reject a config every
    reward worker's build of this manager would reject (:func:`~.config.check_trainer_config`), so the run stops
    at start-up naming the bad value, not inside the workers. Idempotent."""
    original = manager_cls.__init__
    if getattr(original, "_verl_rewards_startup_check", False):
        return

    @functools.wraps(original)
    def __init__(self: Any, config: Any, *args: Any, **kwargs: Any) -> None:
        check_trainer_config(config)
        original(self, config, *args, **kwargs)

    __init__._verl_rewards_startup_check = True  # type: ignore[attr-defined]
    manager_cls.__init__ = __init__
