"""Calling a scoring function safely: keyword arguments by introspection, result normalisation, time limits.

A scoring function may be written verl style ``(data_source, solution_str, ground_truth, extra_info, **kw)``
or ToolRL style ``(solution_str, ground_truth, step, prev_step_dict, cur_step_dict)``: :class:`ScoreFn`
passes each function only the keyword arguments its signature accepts (all of them when it takes
``**kwargs``). It may be sync or async and may return

* a number (``int``/``float``/``bool``): the score;
* a dict with ``score`` (or ``reward``): the score, every other key a component;
* a tuple ``(score, format, correctness, length)`` as ToolRL's ``compute_score`` returns.

Every call is bounded by a timeout that works in any thread (verl's SIGALRM-based limit does not work in
reward worker threads; see :mod:`verl_rewards.threads`). A call that raises, times out, or returns a
non-finite or malformed score gives the fallback score and the 0/1 flags ``reward_error`` / ``reward_timeout``
instead of a crashed step.
"""

from __future__ import annotations

import functools
import inspect
import logging
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger("verl_rewards")

TOOLRL_TUPLE_KEYS = ("format", "correctness", "length")
#: the largest magnitude the float32 reward tensor holds; a score beyond it would silently become inf
FLOAT32_MAX = 3.4028234663852886e38
#: the component a plain-number result is also reported under (as verl's naive manager does)
NUMBER_KEY = "acc"
_LOGGED_FAILURES_MAX = 5
_MAX_TEXT_EXTRA = 512


class ScoreResultError(ValueError):
    """The scoring function returned something that is not a score."""


@dataclass
class ScoreResult:
    """A normalised score: the number and the named components that become ``reward_extra_info``."""

    score: float
    components: dict[str, Any] = field(default_factory=dict)


def _unwrap_verl_partial(fn: Callable[..., Any]) -> tuple[Callable[..., Any], dict[str, Any]]:
    """verl wraps custom reward functions in ``partial(_call_with_kwargs, raw_fn, reward_kwargs)``.

    Unwrapping recovers the user's real signature (so introspection works) and the configured
    ``custom_reward_function.reward_kwargs`` (which keep precedence over call-time arguments).
    """
    if isinstance(fn, functools.partial) and getattr(fn.func, "__name__", "") in (
        "_call_with_kwargs",
        "_call_with_kwargs_async",
    ):
        if len(fn.args) >= 2 and callable(fn.args[0]) and isinstance(fn.args[1], Mapping):
            return fn.args[0], dict(fn.args[1])
    return fn, {}


class ScoreFn:
    """A scoring function with its accepted parameters resolved once."""

    def __init__(self, fn: Callable[..., Any], fixed_kwargs: Mapping[str, Any] | None = None, name: str | None = None):
        raw, configured = _unwrap_verl_partial(fn)
        self.fn = raw
        self.fixed_kwargs = {**dict(fixed_kwargs or {}), **configured}
        self.name = name or getattr(raw, "__qualname__", None) or getattr(raw, "__name__", None) or repr(raw)
        target = raw.__call__ if not inspect.isroutine(raw) and callable(raw) else raw
        self.is_async = inspect.iscoroutinefunction(raw) or inspect.iscoroutinefunction(target)
        try:
            sig = inspect.signature(raw)
        except (TypeError, ValueError):
            sig = None
        if sig is None:
            self.accepts_any = True
            self.params: frozenset[str] = frozenset()
            self.required: tuple[str, ...] = ()
        else:
            ps = sig.parameters.values()
            self.accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ps)
            named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            self.params = frozenset(p.name for p in ps if p.kind in named)
            self.required = tuple(
                p.name
                for p in ps
                if p.default is inspect.Parameter.empty
                and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            )

    def select_kwargs(self, available: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments this function accepts out of ``available`` (+ fixed ones, which win)."""
        merged = {**available, **self.fixed_kwargs}
        if self.accepts_any:
            return merged
        return {k: v for k, v in merged.items() if k in self.params}

    def missing(self, available: Mapping[str, Any]) -> list[str]:
        """Required parameters that no available field provides."""
        have = set(available) | set(self.fixed_kwargs)
        return [p for p in self.required if p not in have]


def _finite(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if not isinstance(value, int | float):
        raise ScoreResultError(f"score must be a number, got {type(value).__name__}: {value!r:.80}")
    out = float(value)
    if not math.isfinite(out):
        raise ScoreResultError(f"score is not finite: {out}")
    if abs(out) > FLOAT32_MAX:
        raise ScoreResultError(f"score {out:g} does not fit the float32 reward tensor (it would become inf)")
    return out


def sanitize_extra(value: Any) -> Any:
    """Make a component storable in a numpy array row: scalars stay, everything else becomes short text."""
    if value is None or isinstance(value, bool | int | float | str):
        if isinstance(value, str) and len(value) > _MAX_TEXT_EXTRA:
            return value[:_MAX_TEXT_EXTRA]
        return value
    if hasattr(value, "item") and callable(value.item):
        try:
            return sanitize_extra(value.item())
        except (ValueError, TypeError):
            pass
    return str(value)[:_MAX_TEXT_EXTRA]


def normalise_result(result: Any, number_key: str | None = NUMBER_KEY) -> ScoreResult:
    """Turn whatever a scoring function returned into a :class:`ScoreResult` (or raise ScoreResultError).

    A plain number is also reported under ``number_key`` (``acc``, as verl's naive manager does), unless None.
    """
    if isinstance(result, Mapping):
        if "score" in result:
            key = "score"
        elif "reward" in result:
            key = "reward"
        else:
            raise ScoreResultError(f"a dict result must contain 'score' or 'reward'; got keys {sorted(result)[:20]}")
        score = _finite(result[key])
        components = {str(k): sanitize_extra(v) for k, v in result.items() if k not in ("score", "reward")}
        return ScoreResult(score, components)
    if isinstance(result, tuple | list):
        if not result:
            raise ScoreResultError("an empty tuple is not a score")
        score = _finite(result[0])
        components = {k: sanitize_extra(v) for k, v in zip(TOOLRL_TUPLE_KEYS, result[1:], strict=False)}
        return ScoreResult(score, components)
    if result is None or isinstance(result, str):
        raise ScoreResultError(f"a reward must return a number or a dict, got {type(result).__name__}")
    score = _finite(result)
    return ScoreResult(score, {number_key: score} if number_key else {})


class FailureLog:
    """Logs the first few scoring failures in full (sample id + traceback), then only counts them."""

    def __init__(self, limit: int = _LOGGED_FAILURES_MAX):
        self.limit = limit
        self.count = 0
        self._lock = threading.Lock()

    def report(self, what: str, sample_id: Any, exc: BaseException | None) -> None:
        with self._lock:
            self.count += 1
            n = self.count
        if n <= self.limit:
            logger.warning(
                "verl-rewards: %s for sample %s (failure %d; later ones are counted, not logged)",
                what,
                sample_id,
                n,
                exc_info=exc if exc is not None and not isinstance(exc, TimeoutError) else None,
            )
