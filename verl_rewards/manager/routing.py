"""Which reward scores a sample.

Order of precedence, first match wins:

1. the row's own ``reward_fn`` field (a column or an ``extra_info`` key) naming a registered reward (``None``, NaN
   and blank text mean no choice; a value that is not text, e.g. an array, scores the fallback with
   ``reward_error=1``);
2. ``reward.reward_kwargs.reward_fn_by_source[data_source]``;
3. ``reward.reward_kwargs.reward_fn`` (the default registered reward);
4. a custom function configured in verl (``reward.custom_reward_function.path``; legacy API: the
   ``compute_score`` argument) — a plain function, or a ``@reward`` function / ``BaseReward`` class;
5. a built-in reward family whose data sources match (:mod:`verl_rewards.catalog`: ToolRL for sources
   containing ``"rlla"``, tau2 for ``tau2/<domain>``, tau-bench v1 for ``tau_bench/<domain>``);
6. verl's ``default_compute_score`` (gsm8k, math, ...), which raises for unknown sources — reported as a
   scoring failure with the sample id.

Registered rewards come from ``reward.reward_kwargs.modules`` (module names or file paths), the file of
``reward.custom_reward_function.path``, and the built-in rewards. Every name the config mentions is checked
when the manager is built. Every reward, registered or plain, runs through the same
:class:`~verl_rewards.scoring.runner.RewardScorer`.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import catalog
from ..rewards.decorators import BaseReward, RewardFunction, RewardRegistryError, get_reward
from ..scoring.contract import RewardInputError, Scorer, ScoringContext
from ..scoring.families import Family, families
from ..scoring.loading import RewardModuleError, load_modules
from ..scoring.result import ScoreResult
from ..scoring.runner import RewardScorer
from ..scoring.sample import Sample
from ..scoring.spec import RewardSpec, spec_from_callable
from .config import ManagerConfig, ManagerConfigError, configured_family_scorers, family_scorer

_NOT_A_NAME = object()


def _reward_fn_field(value: Any) -> Any:
    """A row's ``reward_fn`` value as a name, None (no choice: ``None``, NaN, blank text) or ``_NOT_A_NAME``."""
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        return value.strip() or None
    return _NOT_A_NAME


def _row_choice(sample: Sample) -> tuple[Any, Any]:
    """A row's own reward choice (rule 1): the raw ``reward_fn`` field (the row's, else ``extra_info``'s) and that
    value read by :func:`_reward_fn_field`."""
    raw = sample.row.get("reward_fn")
    choice = _reward_fn_field(raw)
    if choice is None:
        raw = sample.extra_info.get("reward_fn")
        choice = _reward_fn_field(raw)
    return raw, choice


class _NotAName(Scorer):
    """The scorer of a row whose ``reward_fn`` field is not a name: the call fails, so the sample gets the
    fallback score with ``reward_error=1`` and a logged reason, and the step goes on."""

    name = "reward_fn field"

    def __init__(self, value: Any):
        self.message = f"the row's reward_fn field is not a reward name: {type(value).__name__} {value!r:.80}"

    async def run(self, sample: Sample, ctx: ScoringContext) -> ScoreResult:
        raise ValueError(self.message)


def _registered_spec(fn: Any) -> RewardSpec | None:
    """The registry spec behind a ``@reward`` function or ``BaseReward`` class, else None."""
    if isinstance(fn, RewardFunction):
        return fn.spec
    if inspect.isclass(fn) and issubclass(fn, BaseReward) and fn.__dict__.get("name"):
        return get_reward(str(fn.name))
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
        catalog.register_builtins()
        self.config = config
        self.tokenizer = tokenizer
        self._named: dict[str, Scorer] = {}
        self.modules = self._load_modules(config.modules, custom_path)
        self.custom: Scorer | None = None
        if custom is not None:
            spec = _registered_spec(custom)
            self.custom = RewardScorer(spec_from_callable(custom)) if spec is None else self._named_scorer(spec.name)
        self.default = RewardScorer(spec_from_callable(default)) if default is not None else None
        self.reward_fn = config.reward_fn
        self.by_source = dict(config.reward_fn_by_source)
        for name in [self.reward_fn, *self.by_source.values()]:
            if name:
                self._named_scorer(name)  # unknown names fail now, not at the first sample
        self._families: dict[str, Scorer] = configured_family_scorers(config, tokenizer)
        self._by_source: dict[str, tuple[Scorer, str, Scorer | Family]] = {}

    # ----------------------------------------------------------------------------------- setup
    @staticmethod
    def _load_modules(modules: tuple[str, ...], custom_path: str | None) -> list[str]:
        specs = [*modules, *([str(custom_path)] if custom_path else [])]
        try:
            load_modules(specs)
        except RewardModuleError as exc:
            raise ManagerConfigError(f"reward.reward_kwargs.modules: {exc}") from exc
        return specs

    def _named_scorer(self, name: str) -> Scorer:
        key = name.lower()
        scorer = self._named.get(key)
        if scorer is None:
            try:
                scorer = RewardScorer(get_reward(name), executor=self.config.executor)
            except (RewardRegistryError, ValueError) as exc:
                raise ManagerConfigError(str(exc)) from None
            self._named[key] = scorer
        return scorer

    def _build(self, family: Family) -> Scorer:
        return family_scorer(family, self.config, self.tokenizer)

    def reachable(self) -> list[Scorer | Family]:
        """The rewards and families the run's configuration can reach, known before the first sample.

        ``reward_fn_by_source``'s rewards; ``reward_fn``; without it the custom function, else every built-in family
        (matched by data source) and verl's default. The set must not depend on which samples come first (an
        offline run, whose rows are all known, uses :meth:`plan`). A training row naming another reward in its
        ``reward_fn`` field reports that reward's components as undeclared (logged, see
        :mod:`verl_rewards.scoring.extras`) unless ``reward.reward_kwargs.extra_keys`` declares them.
        """
        out: list[Scorer | Family] = [self._named_scorer(name) for name in self.by_source.values()]
        if self.reward_fn:
            out.append(self._named_scorer(self.reward_fn))
        elif self.custom is not None:
            out.append(self.custom)
        else:
            out.extend(families())
            if self.default is not None:
                out.append(self.default)
        return out

    def plan(self, samples: Iterable[Sample]) -> tuple[list[Scorer], list[Scorer | Family]]:
        """Route every sample once (an offline run, whose rows are all known): each sample's scorer, and exactly
        the rewards and families those rows reach, their own ``reward_fn`` fields included (the run's extra keys).
        The first sample whose routing fails raises that error, as scoring it would."""
        scorers: list[Scorer] = []
        targets: dict[int, Scorer | Family] = {}
        for sample in samples:
            scorer, target = self._route(sample)
            scorers.append(scorer)
            if target is not None:
                targets.setdefault(id(target), target)
        return scorers, list(targets.values())

    @staticmethod
    def keys_of(targets: Iterable[Scorer | Family]) -> tuple[list[str], list[str]]:
        """Every extra key ``targets`` may report, in a fixed order, and those of them that hold text (a sample
        without one reports ``""``)."""
        targets = list(targets)
        declared = list(dict.fromkeys(k for target in targets for k in target.extra_keys))
        return declared, list(dict.fromkeys(k for target in targets for k in target.text_keys))

    def extra_keys(self) -> tuple[list[str], list[str]]:
        """The extra keys of :meth:`reachable` (see :meth:`keys_of`)."""
        return self.keys_of(self.reachable())

    # --------------------------------------------------------------------------------- routing
    def __call__(self, sample: Sample) -> Scorer:
        return self._route(sample)[0]

    def _route(self, sample: Sample) -> tuple[Scorer, Scorer | Family | None]:
        """The sample's scorer and what declares its extra keys (a family, not its scorer; None for a row whose
        ``reward_fn`` field is not a name)."""
        raw, row_choice = _row_choice(sample)
        if row_choice is _NOT_A_NAME:
            return _NotAName(raw), None
        if row_choice:
            try:
                scorer = self._named_scorer(str(row_choice))
            except ManagerConfigError as exc:
                raise RewardInputError(f"sample {sample.sample_id}: reward_fn field: {exc}") from None
            return scorer, scorer
        scorer, _, target = self._for_source(sample.data_source)
        return scorer, target

    def built_family(self, name: str) -> Scorer | None:
        """The scorer of family ``name`` if it is built (its section is configured, or a row reached it)."""
        return self._families.get(name)

    def named(self, name: str) -> Scorer:
        """The registered reward ``name`` (ManagerConfigError when there is none)."""
        return self._named_scorer(name)

    def describe(self, data_source: str) -> str:
        """Which rule scores rows of ``data_source`` without their own ``reward_fn`` field (``verl-rewards check``)."""
        return self._for_source(data_source)[1]

    def _for_source(self, data_source: str) -> tuple[Scorer, str, Scorer | Family]:
        """The scorer of ``data_source``, the rule that chose it (:meth:`_rule_for`; a family's scorer is built
        once) and what it chose (the family itself for a family), remembered per data source."""
        hit = self._by_source.get(data_source)
        if hit is not None:
            return hit
        target, rule = self._rule_for(data_source)
        if target is None:
            raise LookupError(f"no scoring function for data_source {data_source!r} and no default configured")
        if isinstance(target, Family):
            if target.name not in self._families:
                self._families[target.name] = self._build(target)
            scorer = self._families[target.name]
        else:
            scorer = target
        self._by_source[data_source] = (scorer, rule, target)
        return scorer, rule, target

    def _rule_for(self, data_source: str) -> tuple[Scorer | Family | None, str]:
        """Rules 2-6 of the module doc: what scores ``data_source`` (a family, not yet its scorer; None when nothing
        does) and the rule that chose it."""
        if data_source in self.by_source:
            name = self.by_source[data_source]
            return self._named_scorer(name), f"reward {name!r} (reward_fn_by_source)"
        if self.reward_fn:
            return self._named_scorer(self.reward_fn), f"reward {self.reward_fn!r} (reward_fn)"
        if self.custom is not None:
            return self.custom, f"the custom function {self.custom.name!r} (reward.custom_reward_function)"
        for family in families():
            if family.matches(data_source):
                return family, f"the {family.name} family"
        return self.default, "verl's default_compute_score (it raises for data sources it does not know)"
