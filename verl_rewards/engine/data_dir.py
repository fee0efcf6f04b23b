"""Where a benchmark's data are: the one rule every loader, verl tool, agent loop, command and the test suite follow.

Precedence, first that is set wins:

1. the explicit value: a ``data_dir=`` argument, the verl tool config's ``data_dir``, the agent loop's
   ``actor_rollout_ref.rollout.custom.<tau2|tau_bench>.data_dir``, a command's ``--data-dir``;
2. the benchmark's environment variable (``TAU2_DATA_DIR``, ``TAU_BENCH_DATA_DIR``); one that names a folder that
   does not exist is an error (:class:`DataNotFoundError`), never a reason to look further;
3. the installed data folder, ``<user data folder>/verl-rewards/<benchmark>`` (platformdirs' user data folder:
   ``~/.local/share`` on Linux), which ``verl-rewards data get`` fills, when it exists.

A dataset row's own ``data_dir`` (what ``verl-rewards prepare`` records: ``extra_info.data_dir`` or a tool's
``create_kwargs.data_dir``) never chooses the folder: rows are data, configs are code, and a row may not send the
worker to read from a path of its choosing. With none of 1-3, the error names the row's folder and where to
configure it. (The reward never read a row's folder either, so rollouts and reward agree on one folder.)

The folder holds one sub-folder per domain (``<dir>/<domain>/<marker file>``); a folder that directly holds the
domain's files is accepted too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from .errors import DataNotFoundError

#: the application folder under the user data folder (``verl-rewards data get`` writes there)
APP_NAME = "verl-rewards"


def installed_root() -> Path:
    """The folder ``verl-rewards data get`` installs into, one sub-folder per benchmark (it may not exist)."""
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


@dataclass(frozen=True)
class BenchmarkData:
    """A benchmark's data: ``name`` (its folder under :func:`installed_root` and its name for
    ``verl-rewards data get``), ``env_var`` (the variable naming its folder) and ``label`` (its name in messages)."""

    name: str
    env_var: str
    label: str

    def installed(self) -> Path:
        """Where ``verl-rewards data get <name>`` puts this benchmark's folder."""
        return installed_root() / self.name

    def how_to_get(self) -> str:
        """The fix for missing data, for error messages."""
        return f"run `verl-rewards data get {self.name}` (it installs into {self.installed()})"


TAU2_DATA = BenchmarkData("tau2", "TAU2_DATA_DIR", "tau2")
TAU_BENCH_DATA = BenchmarkData("tau_bench", "TAU_BENCH_DATA_DIR", "tau-bench")
#: every benchmark whose data ``verl-rewards data get`` installs, by name
BENCHMARKS: dict[str, BenchmarkData] = {b.name: b for b in (TAU2_DATA, TAU_BENCH_DATA)}


def env_data_dir(data: BenchmarkData) -> str | None:
    """The folder ``data.env_var`` names (None when unset or empty); :class:`DataNotFoundError` when it names no
    folder: a wrong variable is an error, never a reason to use another folder."""
    value = os.environ.get(data.env_var)
    if not value:
        return None
    if not Path(value).expanduser().is_dir():
        raise DataNotFoundError(
            f"{data.env_var}={value!r} is not a folder: point it at the {data.label} data folder, or unset it to "
            f"use the installed one, {data.installed()} (filled by `verl-rewards data get {data.name}`)"
        )
    return value


def choose_data_dir(explicit: Any, data: BenchmarkData, row: Any = None, *, where: str = "data_dir=") -> str | None:
    """The data folder by the module's precedence: ``explicit``, else ``$data.env_var``, else the installed folder
    when it exists (None: none of them).

    ``row``: the folder a dataset row records, which is never used; when none of them is set it is named in the
    :class:`DataNotFoundError` raised, with ``where`` (the caller's explicit setting) to set instead."""
    if explicit:
        return str(explicit)
    from_env = env_data_dir(data)
    if from_env:
        return from_env
    installed = data.installed()
    if installed.is_dir():
        return str(installed)
    if row:
        raise DataNotFoundError(
            f"no {data.label} data folder configured: set {where} or {data.env_var}, or {data.how_to_get()} (the "
            f"row records data_dir {str(row)!r}, but a dataset row never chooses a folder: rows are data, configs "
            "are code)"
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
    data: BenchmarkData,
) -> Path:
    """The folder holding domain ``name``'s data files: ``data_dir``, else ``$data.env_var``, else the installed
    folder (see the module doc); ``files["db"]`` marks a domain folder."""
    root = choose_data_dir(data_dir, data)
    if not root:
        raise DataNotFoundError(
            f"no {data.label} data for domain {name!r}: {data.how_to_get()}, pass data_dir= or set {data.env_var} "
            f"to the folder that holds <domain>/{files['db']}"
        )
    root_path = Path(root).expanduser()
    candidate = root_path / name
    if candidate.is_dir():
        return candidate.resolve()
    if (root_path / files["db"]).is_file():
        return root_path.resolve()
    if not data_dir and not os.environ.get(data.env_var):
        raise DataNotFoundError(
            f"{data.label} data for domain {name!r} not found in the installed data folder {root_path}: run "
            f"`verl-rewards data get {data.name}`, pass data_dir= or set {data.env_var}"
        )
    given = "data_dir=" if data_dir else f"${data.env_var}"
    raise DataNotFoundError(
        f"{data.label} data for domain {name!r} not found: neither {candidate} nor {root_path} holds it "
        f"(the folder {given} names)"
    )
