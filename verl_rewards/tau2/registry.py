"""The tau2 domains this package knows, by name: a registry of :class:`~.domain_spec.DomainSpec` values.

It plays the role of tau2-bench's ``src/tau2/registry.py``: the built-in domains (``mock``, ``airline``,
``retail``, ``telecom``, ``banking_knowledge``) are registered from each domain module's ``SPEC`` when first looked
up (a domain's modules, e.g. banking_knowledge's numpy, are imported only by a run that uses it); :func:`register`
adds another one. :func:`~verl_rewards.tau2.load_domain` and the verl tool adapters look
domains up here only.
"""

from __future__ import annotations

import importlib
import threading

from ..scoring.registries import register_unique
from .domain_spec import DomainSpec
from .errors import UnknownDomainError

_specs: dict[str, DomainSpec] = {}
_lock = threading.Lock()
#: the built-in domains: name -> the module holding its ``SPEC``
_BUILTIN = {
    name: f"{__package__}.domains.{name}" for name in ("mock", "airline", "retail", "telecom", "banking_knowledge")
}


def _builtin(name: object) -> None:
    """Register built-in domain ``name`` from its module, unless a spec of that name is already registered."""
    module = _BUILTIN.get(name) if isinstance(name, str) else None
    if module is None:
        return
    with _lock:
        if name in _specs:
            return
    spec = importlib.import_module(module).SPEC  # outside the lock: importing may take a while
    with _lock:
        _specs.setdefault(spec.name, spec)


def register(spec: DomainSpec, *, replace: bool = False) -> DomainSpec:
    """Make ``spec`` loadable by its name. The same spec again is a no-op; a different spec of a taken name is
    refused unless ``replace``."""
    if not isinstance(spec, DomainSpec):
        raise TypeError(f"register() takes a DomainSpec, got {type(spec).__name__}")
    _builtin(spec.name)  # a built-in name is taken, loaded or not
    with _lock:
        return register_unique(
            _specs, spec.name, spec, kind="tau2 domain", replace=replace, hint="register(spec, replace=True)"
        )


def available_domains() -> list[str]:
    """Names of the registered domains, sorted."""
    with _lock:
        return sorted(set(_specs) | set(_BUILTIN))


def domain_spec(name: str) -> DomainSpec:
    """The registered spec of domain ``name``; :class:`UnknownDomainError` listing the known names otherwise."""
    _builtin(name)
    with _lock:
        spec = _specs.get(name) if isinstance(name, str) else None
    if spec is None:
        raise UnknownDomainError(f"unknown tau2 domain {name!r}; available: {available_domains()}")
    return spec
