"""Reward functions by name: the ``@reward`` decorator, the ``BaseReward`` class and their registry.

A reward gets its inputs **by parameter name** (see :mod:`verl_rewards.rewards.inputs` for the fields) and
returns a number or a dict with ``reward`` (or verl's ``score``) whose other keys become
``reward_extra/<key>/*`` metrics::

    from verl_rewards import reward, BaseReward

    @reward(name="qa_em", extra_keys=("em",))
    def qa_em(final_response: str, ground_truth: str) -> dict: ...

    class APIReward(BaseReward):
        name = "api_reward"
        def call(self, final_response: str) -> float: ...

Names are case-insensitive. Registering a second, different reward under a taken name is an error; loading
the same module twice is not.
"""

from __future__ import annotations

import inspect
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..threads import EXECUTORS


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
    is_async: bool = False
    params: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    owner: Any = None  # the BaseReward subclass, for class-based rewards

    def __post_init__(self) -> None:
        if self.executor is not None and self.executor not in EXECUTORS:
            raise RewardRegistryError(f"reward {self.name!r}: executor must be one of {EXECUTORS}")
        if self.env_cls is not None and self.pool_size < 1:
            raise RewardRegistryError(f"reward {self.name!r}: env_cls needs pool_size >= 1, got {self.pool_size}")
        sig = inspect.signature(self.func)
        named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        ps = [p for p in sig.parameters.values() if p.kind in named and p.name != "self"]
        self.params = tuple(p.name for p in ps)
        self.required = tuple(p.name for p in ps if p.default is inspect.Parameter.empty)
        self.is_async = inspect.iscoroutinefunction(self.func)
        if self.env_cls is None and "env" in self.params:
            raise RewardRegistryError(f"reward {self.name!r} takes `env` but declares no env_cls/pool_size")

    def invoke(self, **kwargs: Any) -> Any:
        """Call the reward with keyword arguments (a coroutine for async rewards)."""
        return self.func(**kwargs)


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
        existing = _REGISTRY.get(key)
        if existing is not None and existing.origin != spec.origin:
            raise RewardRegistryError(
                f"reward name {spec.name!r} is already registered by {existing.origin}; "
                f"cannot register {spec.origin} under the same name"
            )
        _REGISTRY[key] = spec
    return spec


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


def unregister(name: str) -> None:
    """Remove a reward (tests and interactive use)."""
    with _LOCK:
        _REGISTRY.pop(str(name).lower(), None)


class RewardFunction:
    """What ``@reward`` returns: the registered spec, still callable like the plain function."""

    def __init__(self, spec: RewardSpec):
        self.spec = spec
        self.__wrapped__ = spec.func
        self.__name__ = spec.name
        self.__doc__ = spec.func.__doc__

    def __call__(self, **kwargs: Any) -> Any:
        return self.spec.invoke(**kwargs)


def reward(
    name: str | None = None,
    *,
    env_cls: type | None = None,
    env_kwargs: dict[str, Any] | None = None,
    pool_size: int = -1,
    executor: str | None = None,
    extra_keys: tuple[str, ...] | list[str] = (),
    auto_register: bool = True,
) -> Callable[[Callable[..., Any]], RewardFunction]:
    """Register a function as a reward.

    Args:
        name: registry name (default: the function name); case-insensitive.
        env_cls: environment class; with ``pool_size`` environments created once per worker, the reward gets
            one as its ``env`` parameter (the same one for the same trajectory ``id``), reset and returned after.
        env_kwargs: keyword arguments for ``env_cls``.
        pool_size: number of pooled environments (required with ``env_cls``).
        executor: ``"thread"`` or ``"process"`` for a sync reward (default: the run's ``executor`` setting).
        extra_keys: extra keys this reward always returns (declared so every sample reports them).
        auto_register: put it in the registry (``False`` to only wrap it).
    """
    if callable(name) and not isinstance(name, str):  # used as bare @reward
        return reward()(name)  # type: ignore[return-value]

    def wrap(func: Callable[..., Any]) -> RewardFunction:
        spec = RewardSpec(
            name=name or func.__name__,
            func=func,
            origin=_origin(func),
            env_cls=env_cls,
            env_kwargs=dict(env_kwargs or {}),
            pool_size=pool_size,
            executor=executor,
            extra_keys=tuple(extra_keys),
        )
        if auto_register:
            register(spec)
        return RewardFunction(spec)

    return wrap


class BaseReward:
    """Base class of class-based rewards: set ``name`` and define ``call(self, ...)`` (sync or async).

    Optional class attributes: ``env_cls``, ``env_kwargs``, ``pool_size``, ``executor``, ``extra_keys``. The
    class registers itself when defined; one instance per process is created on first use (``__init__``
    must take no required arguments).
    """

    name: str | None = None
    env_cls: type | None = None
    env_kwargs: dict[str, Any] = {}
    pool_size: int = -1
    executor: str | None = None
    extra_keys: tuple[str, ...] = ()
    _instance: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            return
        if "call" not in {k for klass in cls.__mro__ for k in vars(klass)} or cls.call is BaseReward.call:
            raise RewardRegistryError(f"reward class {cls.__qualname__} must define call(self, ...)")
        bound = _bind_instance_call(cls)
        register(
            RewardSpec(
                name=cls.name,
                func=bound,
                origin=_origin(cls),
                env_cls=cls.env_cls,
                env_kwargs=dict(cls.env_kwargs),
                pool_size=cls.pool_size,
                executor=cls.executor,
                extra_keys=tuple(cls.extra_keys),
                owner=cls,
            )
        )

    def call(self, **kwargs: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    @classmethod
    def instance(cls) -> BaseReward:
        """The per-process instance of this reward class."""
        inst = cls.__dict__.get("_instance")
        if inst is None:
            inst = cls()
            cls._instance = inst
        return inst


def _bind_instance_call(cls: type[BaseReward]) -> Callable[..., Any]:
    """``cls.call`` on the class's lazily created instance, with ``call``'s signature minus ``self``."""
    call = cls.call
    if inspect.iscoroutinefunction(call):

        async def bound(**kwargs: Any) -> Any:
            return await cls.instance().call(**kwargs)

    else:

        def bound(**kwargs: Any) -> Any:
            return cls.instance().call(**kwargs)

    sig = inspect.signature(call)
    bound.__signature__ = sig.replace(parameters=[p for p in sig.parameters.values() if p.name != "self"])
    bound.__doc__ = call.__doc__
    bound.__qualname__ = f"{cls.__qualname__}.call"
    return bound
