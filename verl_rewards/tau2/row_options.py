"""What a dataset row may choose of a tau2 domain's load options: rows are data, configs are code.

A row carries load options (``extra_info.domain_options``, read by the ``tau2_agent`` loop; a tool's
``create_kwargs.domain_options``, read by the tau2 verl tools). It may choose among the settings its domain lists
(:attr:`~verl_rewards.tau2.domain_spec.DomainSpec.row_options`: banking_knowledge's retrieval configuration by name,
``top_k``, ``grep_top_k``, ``case_sensitive``); everything else comes from the configuration (the tool config's
``domain_options``, ``actor_rollout_ref.rollout.custom.tau2.domain_options``), and what a row chooses wins over it.
Any other key a row carries (an endpoint URL, an API-key variable, a cache folder, an unknown name) is refused: left
out, logged as one line once per distinct request, and recorded under :data:`REFUSED_KEY` in the trajectory's extra
fields, which the tau2 reward reports as a flag. ``verl-rewards check`` refuses a dataset with such rows.
:func:`split_row_options` is the one place this rule lives.

A configuration's ``domain_options`` serve every domain of a run: each domain takes the keys its spec lists
(``load_options``: telecom ``vpn_details``, banking_knowledge its retrieval settings) and ignores the others
(:func:`domain_load_options`); a key no domain takes is a start-up error naming it, and each domain's values are
checked then by the domain's own ``check_options`` (:func:`check_configured_options`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from .registry import available_domains, domain_spec

logger = logging.getLogger(__name__)

#: the trajectory's extra field listing the row's refused load options (and the reward's 0/1 flag of the same name)
REFUSED_KEY = "row_options_refused"
_WARNED: set[tuple[str, tuple[str, ...]]] = set()
_WARNED_MAX = 256
_LOCK = threading.Lock()


def split_row_options(domain: str, options: Any) -> tuple[dict[str, Any], list[str]]:
    """A row's load options for ``domain`` as ``(allowed, refused key names)``.

    ``None`` values count as absent (parquet gives every row the keys of the others); options that are not a
    mapping are refused whole (``["domain_options"]``). Raises ``UnknownDomainError`` for an unknown domain.
    """
    if options is None:
        return {}, []
    if not isinstance(options, Mapping):
        return {}, ["domain_options"]
    given = {str(k): v for k, v in options.items() if v is not None}
    if not given:
        return {}, []
    may = domain_spec(domain).row_options
    return {k: v for k, v in given.items() if k in may}, sorted(k for k in given if k not in may)


def domain_load_options(domain: str, configured: Mapping[str, Any] | None) -> dict[str, Any]:
    """The configured load options ``domain`` takes (its spec's ``load_options``): a run's ``domain_options`` apply
    to the domains that name them, so one configuration serves a dataset mixing domains (telecom's ``vpn_details``
    beside banking_knowledge's ``retrieval``); :func:`check_configured_options` refuses a key no domain takes."""
    if not configured:
        return {}
    takes = domain_spec(domain).load_options
    return {k: v for k, v in configured.items() if k in takes}


def check_configured_options(configured: Any, where: str) -> dict[str, Any]:
    """A run's ``domain_options`` (``where`` names the key) checked at start-up: a mapping whose every key some tau2
    domain takes, each domain's share checked by the domain's own ``check_options``. Returns them as a dict;
    ``ValueError`` naming the key otherwise."""
    if configured is None:
        return {}
    if not isinstance(configured, Mapping):
        raise ValueError(f"{where} must be a mapping of load options, got {configured!r}")
    options = {str(k): v for k, v in configured.items()}
    if not options:
        return options
    specs = [domain_spec(name) for name in available_domains()]
    for key in options:
        if not any(key in spec.load_options for spec in specs):
            takes = "; ".join(f"{s.name}: {', '.join(sorted(s.load_options))}" for s in specs if s.load_options)
            raise ValueError(f"{where}.{key}: no tau2 domain takes this load option ({takes})")
    for spec in specs:
        share = {k: v for k, v in options.items() if k in spec.load_options}
        if share and spec.check_options is not None:
            try:
                spec.check_options(share)
            except ValueError as exc:
                raise ValueError(f"{where} ({spec.name}): {exc}") from None
    return options


def row_load_options(
    domain: str, configured: Mapping[str, Any] | None, row: Any, where: str
) -> tuple[dict[str, Any], list[str]]:
    """The load options of a row's episode: the ``configured`` ones ``domain`` takes (:func:`domain_load_options`)
    updated with what the row may choose, and the names of the keys refused (logged once per distinct request;
    ``where`` names the reader in that line)."""
    allowed, refused = split_row_options(domain, row)
    if refused:
        key = (domain, tuple(refused))
        with _LOCK:
            new = key not in _WARNED and len(_WARNED) < _WARNED_MAX
            if new:
                _WARNED.add(key)
        if new:
            logger.warning(
                "%s: a dataset row asked for %s load options %s; refused (rows are data and never choose endpoints, "
                "credentials or paths: set them in the tool config's domain_options or "
                "actor_rollout_ref.rollout.custom.tau2.domain_options)",
                where,
                domain,
                refused,
            )
    return {**domain_load_options(domain, configured), **allowed}, refused


def refused_in_row(row: Mapping[str, Any]) -> str | None:
    """What a tau2 dataset row asks for among the load options it may not choose (for ``tau2_agent`` in
    ``extra_info.domain_options`` and for each tool in its ``create_kwargs.domain_options``), as one message; None
    when it asks for nothing refused (or names an unknown domain: routing and the agent loop say so themselves)."""
    from ..engine.errors import UnknownDomainError

    raw = row.get("extra_info")
    extra: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    source = str(row.get("data_source") or "")
    domain = str(extra.get("domain") or source.partition("/")[2])
    asked = [("extra_info.domain_options", extra.get("domain_options"))]
    tool_fields = (("extra_info.tools_kwargs", extra.get("tools_kwargs")), ("tools_kwargs", row.get("tools_kwargs")))
    for column, tools in tool_fields:
        for tool, entry in tools.items() if isinstance(tools, Mapping) else ():
            create = entry.get("create_kwargs") if isinstance(entry, Mapping) else None
            if isinstance(create, Mapping):
                asked.append((f"{column}.{tool}.create_kwargs.domain_options", create.get("domain_options")))
    for field, options in asked:
        try:
            refused = split_row_options(domain, options)[1]
        except UnknownDomainError:
            return None
        if refused:
            return (
                f"{field} asks for {refused}: a row never chooses endpoints, credentials or paths (rows are "
                "data, configs are code); remove them from the rows and set them in the tool config's domain_options "
                "or actor_rollout_ref.rollout.custom.tau2.domain_options"
            )
    return None
