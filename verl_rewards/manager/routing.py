"""Which scoring function scores a sample.

Order of precedence, first match wins:

1. the row's own ``reward_fn`` field (a column or an ``extra_info`` key) naming a registered reward;
2. ``reward.reward_kwargs.reward_fn_by_source[data_source]``;
3. ``reward.reward_kwargs.reward_fn`` (the default registered reward);
4. a custom function configured in verl (``reward.custom_reward_function.path``; legacy API: the
   ``compute_score`` argument) — a plain function, or a ``@reward`` function / ``BaseReward`` class;
5. a built-in reward family whose data sources match (ToolRL for sources containing ``"rlla"``, tau2 for
   ``tau2/<domain>``, tau-bench v1 for ``tau_bench/<domain>``);
6. verl's ``default_compute_score`` (gsm8k, math, ...), which raises for unknown sources — reported as a
   scoring failure with the sample id.

Registered rewards come from ``reward.reward_kwargs.modules`` (module names or file paths), the file of
``reward.custom_reward_function.path``, and the built-in rewards. Every name the config mentions is checked
when the manager is built.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .config import DecodeConfig, ManagerConfig, ManagerConfigError
from .core import FunctionScorer, RewardInputError, Scorer
from .sample import Sample
from .scoring import ScoreFn


@dataclass(frozen=True)
class BuiltinRoute:
    """A built-in reward family: its module exports ``matches(data_source)``, ``make_scorer(config, tokenizer)`` and
    ``EXTRA_KEYS`` (every extra key its scorers may report)."""

    name: str
    module: str
    section: str  # its key in reward.reward_kwargs; when present the family is built (and validated) eagerly

    def _module(self) -> Any:
        return importlib.import_module(self.module)

    def matches(self, data_source: str) -> bool:
        return bool(self._module().matches(data_source))

    def extra_keys(self) -> tuple[str, ...]:
        return tuple(self._module().EXTRA_KEYS)

    def build(self, config: ManagerConfig, tokenizer: Any = None) -> Scorer:
        return self._module().make_scorer(config, tokenizer)


#: the built-in families, tried in order.
BUILTIN_ROUTES: list[BuiltinRoute] = [
    BuiltinRoute("toolrl", "verl_rewards.toolrl.verl_scorer", "toolrl"),
    BuiltinRoute("tau2", "verl_rewards.tau2.verl_scorer", "tau2"),
    BuiltinRoute("tau_bench", "verl_rewards.tau_bench.verl_scorer", "tau_bench"),
]


def _layer_spec(fn: Any) -> Any:
    """The registry spec behind a ``@reward`` function or ``BaseReward`` class, else None."""
    from ..rewards.registry import BaseReward, RewardFunction, get_reward

    if isinstance(fn, RewardFunction):
        return fn.spec
    if inspect.isclass(fn) and issubclass(fn, BaseReward) and fn.__dict__.get("name"):
        return get_reward(fn.name)
    return None


class Router:
    """Maps a sample to a :class:`Scorer`, building each scorer once."""

    def __init__(
        self,
        config: ManagerConfig,
        custom: Callable[..., Any] | None,
        default: Callable[..., Any] | None,
        custom_path: str | None = None,
        tokenizer: Any = None,
    ):
        self.config = config
        self.tokenizer = tokenizer
        sections = config.sections
        self._layer: dict[str, Scorer] = {}
        self._runner: Any = None
        self.executor = str(sections.get("executor") or "thread")  # validated by ManagerConfig
        self.modules = self._load_modules(sections.get("modules"), custom_path)
        self.custom: Scorer | None = None
        if custom is not None:
            raw = ScoreFn(custom)
            spec = _layer_spec(raw.fn)
            self.custom = self._layer_scorer(spec.name) if spec is not None else FunctionScorer(raw)
        self.default = FunctionScorer(ScoreFn(default)) if default is not None else None
        self.reward_fn = sections.get("reward_fn")
        by_source = sections.get("reward_fn_by_source") or {}
        if not isinstance(by_source, Mapping):
            raise ManagerConfigError("reward.reward_kwargs.reward_fn_by_source must be a mapping {data_source: name}")
        self.by_source = {str(k): str(v) for k, v in by_source.items()}
        for name in [self.reward_fn, *self.by_source.values()]:
            if name:
                self._layer_scorer(str(name))  # unknown names fail now, not at the first sample
        self._built: dict[str, Scorer] = {}
        self._by_source: dict[str, Scorer] = {}
        if self.custom is None and not self.reward_fn:
            for route in BUILTIN_ROUTES:
                if route.section in sections:  # configured: validate now, not at the first sample
                    self._built[route.name] = route.build(config, tokenizer)

    # ----------------------------------------------------------------------------------- setup
    @staticmethod
    def _load_modules(modules: Any, custom_path: str | None) -> list[str]:
        from ..rewards import ensure_builtins
        from ..rewards.loading import RewardModuleError, load_modules

        ensure_builtins()
        specs: list[str] = []
        if isinstance(modules, str):
            specs = [m for m in modules.split(",") if m.strip()]
        elif modules:
            specs = [str(m) for m in modules]
        if custom_path:
            specs.append(str(custom_path))
        try:
            load_modules(specs)
        except RewardModuleError as exc:
            raise ManagerConfigError(f"reward.reward_kwargs.modules: {exc}") from exc
        return specs

    def _layer_scorer(self, name: str) -> Scorer:
        from ..rewards.registry import RewardRegistryError, get_reward
        from ..rewards.scorer import LayerScorer

        key = name.lower()
        scorer = self._layer.get(key)
        if scorer is None:
            try:
                spec = get_reward(name)
            except RewardRegistryError as exc:
                raise ManagerConfigError(str(exc)) from None
            try:
                scorer = LayerScorer(spec, executor=self.executor, runner=self._process_runner)
            except ValueError as exc:
                raise ManagerConfigError(str(exc)) from None
            self._layer[key] = scorer
        return scorer

    def _process_runner(self) -> Any:
        if self._runner is None:
            from ..rewards.process import shared_runner

            self._runner = shared_runner(self.modules, owner=self)
        return self._runner

    def declared_keys(self) -> list[str]:
        """Every extra key a sample of this run may report, known before the first sample.

        A row may select any registered reward (its ``reward_fn`` field), so all of their keys are included, plus
        whatever the fallbacks can reach: nothing more with ``reward_fn`` set; the custom function when configured;
        else every built-in family (matched by data source) and verl's default. The set must not depend on which
        samples come first.
        """
        from ..rewards.registry import get_reward, registered_names

        keys: list[str] = []
        for name in registered_names():
            keys.extend(get_reward(name).extra_keys)
        if not self.reward_fn:
            if self.custom is not None:
                keys.extend(self.custom.extra_keys)
            else:
                for route in BUILTIN_ROUTES:
                    keys.extend(route.extra_keys())
                if self.default is not None:
                    keys.extend(self.default.extra_keys)
        return list(dict.fromkeys(keys))

    # --------------------------------------------------------------------------------- routing
    def __call__(self, sample: Sample) -> Scorer:
        row_choice = sample.row.get("reward_fn") or sample.extra_info.get("reward_fn")
        if row_choice:
            try:
                return self._layer_scorer(str(row_choice))
            except ManagerConfigError as exc:
                raise RewardInputError(f"sample {sample.sample_id}: reward_fn field: {exc}") from None
        data_source = sample.data_source
        if data_source in self.by_source:
            return self._layer_scorer(self.by_source[data_source])
        if self.reward_fn:
            return self._layer_scorer(str(self.reward_fn))
        if self.custom is not None:
            return self.custom
        scorer = self._by_source.get(data_source)
        if scorer is not None:
            return scorer
        for route in BUILTIN_ROUTES:
            if route.matches(data_source):
                scorer = self._built.get(route.name)
                if scorer is None:
                    scorer = route.build(self.config, self.tokenizer)
                    self._built[route.name] = scorer
                break
        else:
            if self.default is None:
                raise LookupError(f"no scoring function for data_source {data_source!r} and no default configured")
            scorer = self.default
        self._by_source[data_source] = scorer
        return scorer


def scorer_from_callable(
    fn: Callable[..., Any],
    *,
    decode: DecodeConfig | None = None,
    extra_keys: tuple[str, ...] = (),
    fixed_kwargs: Mapping[str, Any] | None = None,
) -> Scorer:
    """Wrap a plain function as a :class:`Scorer` (used by the built-in families)."""
    return FunctionScorer(ScoreFn(fn, fixed_kwargs=fixed_kwargs), decode or DecodeConfig(), tuple(extra_keys))
