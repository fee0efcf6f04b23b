"""The manager's configuration: ``reward.reward_kwargs`` of verl's trainer config, validated at build time.

Every key is documented in the README ("Configuration"). Hydra keys win; the GRPO scripts' environment variables
(``CONTRIBUTION``, ``CONTRIB_TYPE``, ``BETA``) are read only when the Hydra keys are absent. Invalid values
raise :class:`ManagerConfigError` when the manager is built, never a silent zero later.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..coerce import finite_float, parse_bool
from ..contribution import ContributionConfig, ContributionConfigError
from ..threads import EXECUTORS

ON_ERROR_CHOICES = ("fallback", "raise")
DEFAULT_TIMEOUT_S = 60.0
#: upper bound of ``timeout_s`` (one week): larger waits overflow the OS timers the executors use
MAX_TIMEOUT_S = 7 * 24 * 3600.0

#: top-level keys of ``reward.reward_kwargs`` this package reads; anything else is a typo and an error.
KNOWN_KEYS = frozenset(
    {
        "contribution",
        "decode",
        "timeout_s",
        "on_error",
        "fallback_reward",
        "extra_keys",
        "score_kwargs",
        "max_concurrency",
        "toolrl",
        "tau2",
        "tau_bench",
        "modules",
        "reward_fn",
        "reward_fn_by_source",
        "executor",
    }
)


class ManagerConfigError(ValueError):
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
class DecodeConfig:
    """How a rollout becomes ``solution_str``. ``None`` fields defer to the scoring function's preference."""

    include_prompt: bool | None = None
    skip_special_tokens: bool | None = None


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
    sections: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_reward_kwargs(
        cls, reward_kwargs: Mapping[str, Any] | None, environ: Mapping[str, str] | None = None
    ) -> ManagerConfig:
        """Validate ``reward.reward_kwargs`` (a mapping or OmegaConf node)."""
        kw = to_plain(reward_kwargs) or {}
        if not isinstance(kw, Mapping):
            raise ManagerConfigError(f"reward.reward_kwargs must be a mapping, got {type(kw).__name__}")
        unknown = sorted(set(kw) - KNOWN_KEYS)
        if unknown:
            raise ManagerConfigError(
                f"unknown key(s) {unknown} in reward.reward_kwargs; valid keys: {sorted(KNOWN_KEYS)}"
            )
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
        _check_sections(kw)
        score_kwargs = kw.get("score_kwargs") or {}
        if not isinstance(score_kwargs, Mapping):
            raise ManagerConfigError("reward.reward_kwargs.score_kwargs must be a mapping")
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
            sections={k: kw[k] for k in ("toolrl", "tau2", "tau_bench", "modules", "reward_fn", "reward_fn_by_source",
                                         "executor")
                      if k in kw},
        )


def _check_sections(kw: Mapping[str, Any]) -> None:
    """The shapes of the sections other modules read (their values are validated where they are used)."""
    shapes = {
        "toolrl": (Mapping, "a mapping of ToolRL options"),
        "tau2": (Mapping, "a mapping of tau2 options"),
        "tau_bench": (Mapping, "a mapping of tau-bench options"),
        "reward_fn_by_source": (Mapping, "a mapping {data_source: reward name}"),
        "reward_fn": (str, "a registered reward name"),
    }
    for key, (kind, what) in shapes.items():
        if kw.get(key) is not None and not isinstance(kw[key], kind):
            raise ManagerConfigError(f"reward.reward_kwargs.{key} must be {what}, got {kw[key]!r}")
    modules = kw.get("modules")
    if modules is not None and not isinstance(modules, str) and not (
        isinstance(modules, list | tuple) and all(isinstance(m, str) for m in modules)
    ):
        raise ManagerConfigError(
            f"reward.reward_kwargs.modules must be a module name, a .py path or a list of them, got {modules!r}"
        )
    executor = kw.get("executor")
    if executor is not None and executor not in EXECUTORS:
        raise ManagerConfigError(f"reward.reward_kwargs.executor must be one of {EXECUTORS}, got {executor!r}")
