"""``verl-rewards data get [tau2|tau_bench|all]`` and ``verl-rewards data status``: the benchmarks' data files in
the installed data folder, where every command and the tests find them when no folder is given
(:mod:`verl_rewards.engine.data_dir`)."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

HELP = "get the tau2-bench / tau-bench data files (checked against the package's sha256 manifest) or show them"
CHOICES = ("tau2", "tau_bench", "all")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``data`` with its ``get`` and ``status`` subcommands to the ``verl-rewards`` subparsers."""
    from ..engine.data_dir import installed_root
    from .mirror import DEFAULT_SOURCE

    parser = sub.add_parser("data", help=HELP)
    commands = parser.add_subparsers(dest="data_command", required=True, metavar="{get,status}")
    root_help = f"the data folder, holding tau2/ and tau_bench/ (default: {installed_root()})"
    get = commands.add_parser(
        "get",
        help="download the files of the pinned upstream commits (or copy them from a mirror), check and install them",
        description="Download tau2-bench's and tau-bench's data files from their pinned commits, check every file "
        "against the sha256 manifest shipped with the package, and install them into the data folder (a "
        "benchmark's folder appears only once complete; an interrupted run resumes). tau-bench's task and tool "
        "lists are Python files upstream: they are parsed, never run, into the JSON the loaders read.",
    )
    get.add_argument("benchmark", nargs="?", default="all", choices=CHOICES, help="what to get (default: all)")
    get.add_argument(
        "--from",
        dest="source",
        metavar="DIR|URL",
        default=None,
        help=f"a mirror: a URL or folder laid out as {DEFAULT_SOURCE} (<owner>/<repo>/<commit>/<path>), or a "
        f"folder laid out as the data folder (holding tau2/ and tau_bench/, e.g. a copy of one) "
        f"(default: {DEFAULT_SOURCE})",
    )
    get.add_argument("--root", type=Path, default=None, metavar="DIR", help=root_help)
    get.add_argument("--no-progress", action="store_true", help="no progress bar (it is drawn only on a terminal)")
    status = commands.add_parser("status", help="list which benchmarks' files are present and match the manifest")
    status.add_argument("--root", type=Path, default=None, metavar="DIR", help=root_help)
    return parser


def run(args: argparse.Namespace) -> int:
    """``get``: 0 when every file is installed and checked; ``status``: 0 when every benchmark is."""
    return get(args) if args.data_command == "get" else show_status(args)


def _root(args: argparse.Namespace) -> Path:
    from ..engine.data_dir import installed_root

    return (args.root or installed_root()).expanduser()


def get(args: argparse.Namespace) -> int:
    from ..commands.common import fail
    from .convert import ConvertError
    from .install import install
    from .manifest import load_manifest
    from .mirror import FetchError, OfflineError, open_mirror

    manifest = load_manifest()
    root = _root(args)
    try:
        benchmarks = manifest.select(args.benchmark)
        mirror = open_mirror(args.source, benchmarks)
        for bench in benchmarks:
            start = time.perf_counter()
            report = install(bench, root, mirror, progress=not args.no_progress)
            took = time.perf_counter() - start
            if report.already:
                print(f"{bench.name}: {len(bench.files)} files present and verified in {report.folder}")
            else:
                print(
                    f"{bench.name}: {report.fetched} files ({report.fetched_bytes / 1e6:.1f} MB) from "
                    f"{mirror.describe()}, {report.kept} kept, all {len(bench.files)} verified, in "
                    f"{report.folder} ({took:.1f} s)"
                )
    except OfflineError as exc:
        return fail("data get", f"{exc}; with no network, pass --from DIR|URL (a local mirror, see --help)")
    except (FetchError, ConvertError, ValueError, OSError) as exc:
        return fail("data get", exc)
    return 0


def show_status(args: argparse.Namespace) -> int:
    from ..engine.data_dir import BENCHMARKS
    from .install import status
    from .manifest import load_manifest

    root = _root(args)
    print(f"data folder: {root}")
    ok = True
    for bench in load_manifest().benchmarks.values():
        found = status(bench, root / bench.name)
        ok &= found.verified
        pin = f"{bench.repo}@{bench.commit[:7]}"
        if found.verified:
            state = f"verified   {len(bench.files)} files, {bench.size / 1e6:.1f} MB, {pin}"
        elif len(found.missing) == len(bench.files):
            state = f"missing    (verl-rewards data get {bench.name})"
        else:
            state = (
                f"incomplete {len(found.missing)} missing, {len(found.differ)} differ of {len(bench.files)} "
                f"(verl-rewards data get {bench.name})"
            )
        if found.partial:
            state += "; a partial download waits in .incoming/ (data get resumes it)"
        print(f"  {bench.name:<10} {state}")
        data = BENCHMARKS.get(bench.name)
        if data is not None and os.environ.get(data.env_var):
            print(f"  {'':<10} ${data.env_var} is set: commands read {os.environ[data.env_var]} instead")
    return 0 if ok else 1
