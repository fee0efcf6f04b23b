"""Which scoring function scores a sample: the user's, or a built-in chosen by ``data_source``.

Order of precedence:

1. a custom function configured in verl (``reward.custom_reward_function.path``; legacy API: the
   ``compute_score`` argument) scores every sample;
2. otherwise a built-in reward family whose data sources match (ToolRL for any source containing
   ``"rlla"``, tau2 for ``tau2/<domain>``), once those families are installed in this package;
3. otherwise verl's ``default_compute_score`` (gsm8k, math, ...), which raises for unknown sources — that
   error is reported as a scoring failure with the sample id.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .config import DecodeConfig, ManagerConfig
from .core import Scorer
from .scoring import ScoreFn


@dataclass(frozen=True)
class BuiltinRoute:
    """A built-in reward family: its module exports ``matches(data_source)`` and ``make_scorer(config)``."""

    name: str
    module: str
    section: str  # its key in reward.reward_kwargs; when present the family is built (and validated) eagerly

    def _module(self) -> Any:
        return importlib.import_module(self.module)

    def matches(self, data_source: str) -> bool:
        return bool(self._module().matches(data_source))

    def build(self, config: ManagerConfig) -> Scorer:
        return self._module().make_scorer(config)


#: the built-in families, tried in order.
BUILTIN_ROUTES: list[BuiltinRoute] = [
    BuiltinRoute("toolrl", "verl_rewards.toolrl.verl_scorer", "toolrl"),
]


class Router:
    """Maps a data source to a :class:`Scorer`, building each built-in family once."""

    def __init__(self, config: ManagerConfig, custom: Callable[..., Any] | None, default: Callable[..., Any] | None):
        self.config = config
        self.custom = Scorer(ScoreFn(custom)) if custom is not None else None
        self.default = Scorer(ScoreFn(default)) if default is not None else None
        self._built: dict[str, Scorer] = {}
        self._by_source: dict[str, Scorer] = {}
        if custom is None:
            for route in BUILTIN_ROUTES:
                if route.section in config.sections:  # configured: validate now, not at the first sample
                    self._built[route.name] = route.build(config)

    def known_scorers(self) -> tuple[Scorer, ...]:
        """Scorers known before the first sample (their extra keys are emitted by every sample)."""
        out = [s for s in (self.custom,) if s is not None]
        return tuple(out + list(self._built.values()))

    def __call__(self, data_source: str) -> Scorer:
        if self.custom is not None:
            return self.custom
        scorer = self._by_source.get(data_source)
        if scorer is not None:
            return scorer
        for route in BUILTIN_ROUTES:
            if route.matches(data_source):
                scorer = self._built.get(route.name)
                if scorer is None:
                    scorer = route.build(self.config)
                    self._built[route.name] = scorer
                break
        else:
            if self.default is None:
                raise LookupError(f"no scoring function for data_source {data_source!r} and no default configured")
            scorer = self.default
        self._by_source[data_source] = scorer
        return scorer


def scorer_from_callable(
    fn: Callable[..., Any], *, decode: DecodeConfig | None = None, extra_keys: tuple[str, ...] = (),
    fixed_kwargs: Mapping[str, Any] | None = None,
) -> Scorer:
    """Wrap a plain function as a :class:`Scorer` (used by the built-in families)."""
    return Scorer(ScoreFn(fn, fixed_kwargs=fixed_kwargs), decode or DecodeConfig(), tuple(extra_keys))
