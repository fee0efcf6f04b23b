"""A reward as the scorer runs it (:class:`RewardSpec`), and the process-wide registry of named rewards.

Every way to define a reward ends as one ``RewardSpec``: a ``@reward`` function or a ``BaseReward`` class
(:mod:`verl_rewards.rewards.decorators`, registered under a name), a reward family's scoring function, and a
plain verl-style ``compute_score`` (:func:`spec_from_callable`, unregistered). The spec records the callable's
parameters once, so inputs are resolved by name (:mod:`verl_rewards.scoring.inputs`) the same way for all.

Names are case-insensitive. Registering a second, different reward under a taken name is an error; loading
the same module twice is not (the rule of every registry here, :mod:`.registries`).
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .contract import RESPONSE_DECODE, DecodeConfig
from .executors.base import EXECUTORS
from .registries import register_unique
from .result import TUPLE_KEYS


class RewardRegistryError(ValueError):
    """A reward could not be registered or found."""


@dataclass
class RewardSpec:
    """What the registry knows of one reward: its callable and how to run it."""

    name: str
    func: Callable[..., Any]
    origin: str  # "module:qualname", used to accept a harmless re-registration
    env_cls: type | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    pool_size: int = -1
    executor: str | None = None  # None: the run's default ("thread" unless configured)
    extra_keys: tuple[str, ...] = ()
    #: the extra keys that hold text, e.g. a termination reason (a sample without one reports ``""``, not ``0.0``)
    text_keys: tuple[str, ...] = ()
    #: how the rollout becomes the text inputs (``final_response`` / ``solution_str``)
    decode: DecodeConfig = RESPONSE_DECODE
    #: a plain-number result is also reported under this key (verl's ``acc`` for plain functions), or not
    number_key: str | None = None
    #: keyword arguments fixed at build time (verl's ``custom_reward_function.reward_kwargs``); they win
    fixed_kwargs: dict[str, Any] = field(default_factory=dict)
    is_async: bool = False
    params: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    accepts_any: bool = False  # takes ``**kwargs``: gets every verl-style field
    owner: Any = None  # the BaseReward subclass, for class-based rewards

    def __post_init__(self) -> None:
        if self.executor is not None and self.executor not in EXECUTORS:
            raise RewardRegistryError(f"reward {self.name!r}: executor must be one of {EXECUTORS}")
        if self.env_cls is not None and self.pool_size < 1:
            raise RewardRegistryError(f"reward {self.name!r}: env_cls needs pool_size >= 1, got {self.pool_size}")
        target: Any = self.func
        if not inspect.isroutine(target) and callable(target):
            target = target.__call__  # a callable object
        try:
            sig = inspect.signature(self.func)
        except (TypeError, ValueError):  # builtins without a signature: give them every verl-style field
            sig = None
        named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        ps = [p for p in (sig.parameters.values() if sig else ()) if p.kind in named and p.name != "self"]
        self.params = tuple(p.name for p in ps)
        self.required = tuple(p.name for p in ps if p.default is inspect.Parameter.empty)
        self.accepts_any = sig is None or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
        self.is_async = inspect.iscoroutinefunction(self.func) or inspect.iscoroutinefunction(target)
        if self.env_cls is None and "env" in self.params:
            raise RewardRegistryError(f"reward {self.name!r} takes `env` but declares no env_cls/pool_size")
        for key in self.extra_keys:
            if not isinstance(key, str):
                raise RewardRegistryError(f"reward {self.name!r}: extra_keys must be names, got {key!r}")
        stray = [k for k in self.text_keys if k not in self.extra_keys]
        if stray:
            raise RewardRegistryError(f"reward {self.name!r}: text_keys {stray} are not among its extra_keys")

    def invoke(self, **kwargs: Any) -> Any:
        """Call the reward with keyword arguments (fixed ones win; a coroutine for async rewards)."""
        return self.func(**{**kwargs, **self.fixed_kwargs}) if self.fixed_kwargs else self.func(**kwargs)


_REGISTRY: dict[str, RewardSpec] = {}
_LOCK = threading.RLock()


def _origin(obj: Any) -> str:
    """Where a reward is defined: source file + qualified name (stable when a file is imported twice, even under
    another module name, as verl's ``custom_reward_function.path`` loader does)."""
    code_owner = obj.__dict__.get("call", obj) if inspect.isclass(obj) else obj
    code = getattr(inspect.unwrap(code_owner), "__code__", None)
    where = os.path.realpath(code.co_filename) if code is not None else getattr(obj, "__module__", "?")
    return f"{where}:{getattr(obj, '__qualname__', repr(obj))}"


def register(spec: RewardSpec) -> RewardSpec:
    """Add ``spec`` to the registry; a different reward under the same name is an error."""
    key = spec.name.lower()
    with _LOCK:
        return register_unique(
            _REGISTRY,
            key,
            spec,
            kind="reward",
            same=lambda old, new: old.origin == new.origin,
            describe=lambda s: s.origin,
            error=RewardRegistryError,
        )


def get_reward(name: str) -> RewardSpec:
    """The reward registered as ``name`` (case-insensitive)."""
    with _LOCK:
        spec = _REGISTRY.get(str(name).lower())
        if spec is None:
            raise RewardRegistryError(f"no reward named {name!r}; registered: {sorted(_REGISTRY)}")
        return spec


def registered_names() -> list[str]:
    with _LOCK:
        return sorted(_REGISTRY)


def is_registered(spec: RewardSpec) -> bool:
    """Whether ``spec`` itself is the registered reward of its name (so a worker process can find it)."""
    with _LOCK:
        return _REGISTRY.get(spec.name.lower()) is spec


def unregister(name: str) -> None:
    """Remove a reward (tests and interactive use)."""
    with _LOCK:
        _REGISTRY.pop(str(name).lower(), None)


def _unwrap_verl_partial(fn: Callable[..., Any]) -> tuple[Callable[..., Any], dict[str, Any]]:
    """verl wraps custom reward functions in ``partial(_call_with_kwargs, raw_fn, reward_kwargs)``.

    Unwrapping recovers the user's real signature (so inputs by name work) and the configured
    ``custom_reward_function.reward_kwargs`` (which keep precedence over call-time arguments).
    """
    if isinstance(fn, functools.partial) and getattr(fn.func, "__name__", "") in (
        "_call_with_kwargs",
        "_call_with_kwargs_async",
    ):
        if len(fn.args) >= 2 and callable(fn.args[0]) and isinstance(fn.args[1], Mapping):
            return fn.args[0], dict(fn.args[1])
    return fn, {}


def spec_from_callable(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    decode: DecodeConfig | None = None,
    extra_keys: tuple[str, ...] = (),
    fixed_kwargs: Mapping[str, Any] | None = None,
    number_key: str | None = "acc",
) -> RewardSpec:
    """A plain scoring function (verl style, ToolRL style, sync or async) as an unregistered spec.

    Without ``extra_keys`` the function's own ``extra_keys`` attribute declares what it returns, plus ``acc``
    (a number is reported as ``acc``) and ToolRL's tuple components ``format``/``correctness``/``length``.
    """
    raw, configured = _unwrap_verl_partial(fn)
    registered = getattr(raw, "spec", None)  # a @reward function: its declaration
    registered = registered if isinstance(registered, RewardSpec) else None
    if not extra_keys:
        own = registered.extra_keys if registered is not None else getattr(raw, "extra_keys", ())
        own = tuple(own) if isinstance(own, list | tuple) else ()
        extra_keys = (*((number_key,) if number_key else ()), *TUPLE_KEYS, *own)
    text_keys = tuple(k for k in (registered.text_keys if registered else ()) if k in extra_keys)
    return RewardSpec(
        name=name or getattr(raw, "__qualname__", None) or getattr(raw, "__name__", None) or repr(raw),
        func=raw,
        origin=_origin(raw) if (inspect.isroutine(raw) or inspect.isclass(raw)) else repr(raw),
        extra_keys=tuple(dict.fromkeys(extra_keys)),
        text_keys=text_keys,
        decode=decode or DecodeConfig(),
        number_key=number_key,
        fixed_kwargs={**dict(fixed_kwargs or {}), **configured},
    )
