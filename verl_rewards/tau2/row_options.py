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
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from .registry import domain_spec

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


def row_load_options(
    domain: str, configured: Mapping[str, Any] | None, row: Any, where: str
) -> tuple[dict[str, Any], list[str]]:
    """The load options of a row's episode: the ``configured`` ones updated with what the row may choose, and the
    names of the keys refused (logged once per distinct request; ``where`` names the reader in that line)."""
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
    return {**dict(configured or {}), **allowed}, refused
