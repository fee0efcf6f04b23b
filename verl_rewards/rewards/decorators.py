"""Defining rewards: the ``@reward`` decorator and the ``BaseReward`` class (registered by name).

A reward gets its inputs **by parameter name** (see :mod:`verl_rewards.scoring.inputs` for the fields) and
returns a number or a dict with ``reward`` (or verl's ``score``) whose other keys become
``reward_extra/<key>/*`` metrics::

    from verl_rewards import reward, BaseReward

    @reward(name="qa_em", extra_keys=("em",))
    def qa_em(final_response: str, ground_truth: str) -> dict: ...

    class APIReward(BaseReward):
        name = "api_reward"
        def call(self, final_response: str) -> float: ...

Both build a :class:`~verl_rewards.scoring.spec.RewardSpec` and put it in the registry of
:mod:`verl_rewards.scoring.spec` (names are case-insensitive; a second, different reward under a taken name is an
error; loading the same module twice is not).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..scoring.spec import (
    RewardRegistryError,
    RewardSpec,
    _origin,
    get_reward,
    is_registered,
    register,
    registered_names,
    unregister,
)

__all__ = [
    "BaseReward",
    "RewardFunction",
    "RewardRegistryError",
    "RewardSpec",
    "get_reward",
    "is_registered",
    "register",
    "registered_names",
    "reward",
    "unregister",
]


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
    text_keys: tuple[str, ...] | list[str] = (),
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
        text_keys: those of ``extra_keys`` that hold text (a sample that did not report one gets ``""``).
        auto_register: put it in the registry (``False`` to only wrap it).
    """
    if callable(name) and not isinstance(name, str):  # used as bare @reward
        return reward()(name)

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
            text_keys=tuple(text_keys),
        )
        if auto_register:
            register(spec)
        return RewardFunction(spec)

    return wrap


class BaseReward:
    """Base class of class-based rewards: set ``name`` and define ``call(self, ...)`` (sync or async).

    Optional class attributes: ``env_cls``, ``env_kwargs``, ``pool_size``, ``executor``, ``extra_keys``,
    ``text_keys``. The
    class registers itself when defined; one instance per process is created on first use (``__init__``
    must take no required arguments).
    """

    name: str | None = None
    env_cls: type | None = None
    env_kwargs: dict[str, Any] = {}
    pool_size: int = -1
    executor: str | None = None
    extra_keys: tuple[str, ...] = ()
    text_keys: tuple[str, ...] = ()
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
                name=str(cls.name),
                func=bound,
                origin=_origin(cls),
                env_cls=cls.env_cls,
                env_kwargs=dict(cls.env_kwargs),
                pool_size=cls.pool_size,
                executor=cls.executor,
                extra_keys=tuple(cls.extra_keys),
                text_keys=tuple(cls.text_keys),
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

    async def bound_async(**kwargs: Any) -> Any:
        return await cls.instance().call(**kwargs)

    def bound_sync(**kwargs: Any) -> Any:
        return cls.instance().call(**kwargs)

    bound: Callable[..., Any] = bound_async if inspect.iscoroutinefunction(call) else bound_sync
    sig = inspect.signature(call)
    bound.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p for p in sig.parameters.values() if p.name != "self"]
    )
    bound.__doc__ = call.__doc__
    bound.__qualname__ = f"{cls.__qualname__}.call"
    return bound
