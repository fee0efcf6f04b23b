"""One wiring of a run's scoring, for verl's manager and offline scoring alike: the :class:`Router` and the
:class:`ScoringCore` built from what the Router knows (the reward modules, the extra keys of the rewards the run
reaches, whether one of them runs in worker processes)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..scoring.contract import Scorer
from ..scoring.families import Family
from ..scoring.sample import Sample
from .config import ManagerConfig
from .core import ScoringCore
from .routing import Router


@dataclass
class Scoring:
    """A run's router and engine; ``routes``: each given sample's scorer (offline), routed once."""

    router: Router
    core: ScoringCore
    routes: list[Scorer] | None = None


def build_scoring(
    config: ManagerConfig,
    tokenizer: Any = None,
    *,
    custom: Callable[..., Any] | None = None,
    default: Callable[..., Any] | None = None,
    custom_path: str | None = None,
    samples: Iterable[Sample] | None = None,
    family_tokenizer: Any = None,
) -> Scoring:
    """The Router and ScoringCore of a run. Without ``samples`` (training) the extra keys are those of every reward
    the configuration reaches (:meth:`Router.reachable`); with them (offline, all rows known) each sample is routed
    here once and the keys are those of the rewards the rows reach. The process pool starts now only when one of
    those reachable rewards runs in worker processes (any other reward a row names starts it on first use).
    ``tokenizer`` decodes token ids; ``family_tokenizer`` is what the built-in families are built with (the manager
    passes its tokenizer; offline scoring none, as before: ToolRL's `chat_template="auto"` then keeps its default)."""
    router = Router(config, custom=custom, default=default, custom_path=custom_path, tokenizer=family_tokenizer)
    routes: list[Scorer] | None = None
    if samples is None:
        targets = router.reachable()
    else:
        routes, targets = router.plan(samples)
    keys, text_keys = router.keys_of(targets)
    core = ScoringCore(
        tokenizer,
        config,
        router,
        keys,
        router.modules,
        text_keys=text_keys,
        start_pool=any(_runs_in_processes(router, target) for target in targets),
    )
    return Scoring(router, core, routes)


def _runs_in_processes(router: Router, target: Scorer | Family) -> bool:
    """Whether ``target``'s calls go to worker processes (a family whose scorer is not built yet: no)."""
    scorer = router.built_family(target.name) if isinstance(target, Family) else target
    return getattr(scorer, "executor", None) == "process"
