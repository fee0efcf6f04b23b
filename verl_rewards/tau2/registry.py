"""The tau2 domains this package knows, by name: a registry of :class:`~.domain_spec.DomainSpec` values.

It plays the role of tau2-bench's ``src/tau2/registry.py``: the built-in domains (``mock``, ``airline``,
``retail``, ``telecom``, ``banking_knowledge``) are registered at the bottom of this module from each domain
module's ``SPEC``;
:func:`register` adds another one. :func:`~verl_rewards.tau2.load_domain` and the verl tool adapters look
domains up here only.
"""

from __future__ import annotations

import threading

from ..scoring.registries import register_unique
from .domain_spec import DomainSpec
from .domains import airline, banking_knowledge, mock, retail, telecom
from .errors import UnknownDomainError

_specs: dict[str, DomainSpec] = {}
_lock = threading.Lock()


def register(spec: DomainSpec, *, replace: bool = False) -> DomainSpec:
    """Make ``spec`` loadable by its name. The same spec again is a no-op; a different spec of a taken name is
    refused unless ``replace``."""
    if not isinstance(spec, DomainSpec):
        raise TypeError(f"register() takes a DomainSpec, got {type(spec).__name__}")
    with _lock:
        return register_unique(
            _specs, spec.name, spec, kind="tau2 domain", replace=replace, hint="register(spec, replace=True)"
        )


def available_domains() -> list[str]:
    """Names of the registered domains, sorted."""
    with _lock:
        return sorted(_specs)


def domain_spec(name: str) -> DomainSpec:
    """The registered spec of domain ``name``; :class:`UnknownDomainError` listing the known names otherwise."""
    with _lock:
        spec = _specs.get(name) if isinstance(name, str) else None
    if spec is None:
        raise UnknownDomainError(f"unknown tau2 domain {name!r}; available: {available_domains()}")
    return spec


for _spec in (mock.SPEC, airline.SPEC, retail.SPEC, telecom.SPEC, banking_knowledge.SPEC):
    register(_spec)
