"""Where a benchmark's data are: the one rule every loader, verl tool and agent loop follows.

Precedence, first that is set wins:

1. the explicit value: a ``data_dir=`` argument, the verl tool config's ``data_dir``, the agent loop's
   ``actor_rollout_ref.rollout.custom.<tau2|tau_bench>.data_dir``, a command's ``--data-dir``;
2. the benchmark's environment variable (``TAU2_DATA_DIR``, ``TAU_BENCH_DATA_DIR``).

A dataset row's own ``data_dir`` (what ``verl-rewards prepare`` records: ``extra_info.data_dir`` or a tool's
``create_kwargs.data_dir``) never chooses the folder: rows are data, configs are code, and a row may not send the
worker to read from a path of its choosing. With neither 1 nor 2 set, the error names the row's folder and where
to configure it. (The reward never read a row's folder either, so rollouts and reward now agree on one folder.)

The folder holds one sub-folder per domain (``<dir>/<domain>/<marker file>``); a folder that directly holds the
domain's files is accepted too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .errors import DataNotFoundError


def choose_data_dir(explicit: Any, env_var: str, row: Any = None, *, where: str = "data_dir=") -> str | None:
    """The data folder by the module's precedence: ``explicit``, else ``$env_var`` (None: neither set).

    ``row``: the folder a dataset row records, which is never used; when neither is set it is named in the
    :class:`DataNotFoundError` raised, with ``where`` (the explicit setting of the caller) to set instead."""
    for value in (explicit, os.environ.get(env_var)):
        if value:
            return str(value)
    if row:
        raise DataNotFoundError(
            f"no data folder configured: set {where} or {env_var} (the row records data_dir {str(row)!r}, but a "
            "dataset row never chooses a folder: rows are data, configs are code)"
        )
    return None


def row_data_dir(*sources: Any) -> str | None:
    """The ``data_dir`` a dataset row carries: in ``extra_info`` itself or in any tool's ``create_kwargs``.

    ``sources`` are mappings searched in order: each one's own ``data_dir``, then its
    ``tools_kwargs.<tool>.create_kwargs.data_dir``.
    """
    for source in sources:
        if not isinstance(source, Mapping):
            continue
        if source.get("data_dir"):
            return str(source["data_dir"])
        found = _tools_data_dir((source.get("tools_kwargs") or {}).values())
        if found:
            return found
    return None


def _tools_data_dir(entries: Iterable[Any]) -> str | None:
    for entry in entries:
        create = entry.get("create_kwargs") if isinstance(entry, Mapping) else None
        if isinstance(create, Mapping) and create.get("data_dir"):
            return str(create["data_dir"])
    return None


def resolve_data_dir(
    name: str,
    data_dir: str | os.PathLike[str] | None,
    files: Mapping[str, str],
    *,
    env_var: str,
    label: str,
) -> Path:
    """The folder holding domain ``name``'s data files: ``data_dir``, else ``$env_var`` (see the module doc);
    ``files["db"]`` marks a domain folder. ``label`` names the benchmark in errors."""
    root = data_dir if data_dir is not None else os.environ.get(env_var)
    if not root:
        raise DataNotFoundError(
            f"no {label} data directory for domain {name!r}: pass data_dir= or set {env_var} "
            f"to the folder that holds <domain>/{files['db']}"
        )
    root_path = Path(root).expanduser()
    candidate = root_path / name
    if candidate.is_dir():
        return candidate.resolve()
    if (root_path / files["db"]).is_file():
        return root_path.resolve()
    given = "data_dir=" if data_dir is not None else f"${env_var}"
    raise DataNotFoundError(
        f"{label} data for domain {name!r} not found: neither {candidate} nor {root_path} holds it "
        f"(the folder {given} names)"
    )
