"""Install a benchmark's files into the data folder, and say what is there (``verl-rewards data get`` / ``status``).

A benchmark's folder (``<root>/<benchmark>``) only ever appears complete: files are gathered and checked in
``<root>/.incoming/<benchmark>`` (files of an existing folder that still match the manifest are linked, not
fetched again), and the gathered folder then takes the old one's place by renaming. An interrupted run leaves
the benchmark's folder as it was; the next run keeps every file already gathered and checked, and resumes a
partial download (``<file>.part``) where it stopped. Files in the old folder that the manifest does not list
are moved into the new one, never deleted.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from tqdm import tqdm

from ..files import atomic_path
from .convert import convert
from .manifest import Benchmark, DataFile, matches, walk_files
from .mirror import Mirror, Progress, check, fetch, http_client, link_or_copy

INCOMING = ".incoming"
#: files fetched at once from a URL (one at a time from a folder)
PARALLEL_DOWNLOADS = 8


@dataclass
class Report:
    """What one install did: ``fetched`` files and bytes, files ``kept`` (already there and matching)."""

    benchmark: str
    folder: Path
    fetched: int = 0
    fetched_bytes: int = 0
    kept: int = 0
    already: bool = False


@dataclass
class Status:
    """What the data folder holds of one benchmark: the files that are ``missing`` and that ``differ``."""

    benchmark: Benchmark
    folder: Path
    missing: list[str] = field(default_factory=list)
    differ: list[str] = field(default_factory=list)
    partial: bool = False

    @property
    def verified(self) -> bool:
        return self.folder.is_dir() and not self.missing and not self.differ


def status(bench: Benchmark, folder: Path) -> Status:
    """Check every file of ``bench`` in its ``folder`` (``<root>/<bench>``) against the manifest (size, then
    sha256)."""
    found = Status(bench, folder, partial=(folder.parent / INCOMING / bench.name).exists())
    for f in bench.files:
        path = folder / f.path
        if not path.is_file():
            found.missing.append(f.path)
        elif not matches(path, f):
            found.differ.append(f.path)
    return found


def install(bench: Benchmark, root: Path, mirror: Mirror, *, progress: bool = True) -> Report:
    """Make ``root/<bench>`` hold every file of ``bench``, checked (see the module doc); raises
    :class:`~.mirror.FetchError` (or :class:`~.convert.ConvertError`) and leaves the folder as it was. Another
    install into the same ``root`` waits for this one."""
    with _exclusive(root):
        return _install(bench, root, mirror, progress)


def _install(bench: Benchmark, root: Path, mirror: Mirror, progress: bool) -> Report:
    live = root / bench.name
    report = Report(bench.name, live)
    if status(bench, live).verified:
        report.already, report.kept = True, len(bench.files)
        _discard(root / INCOMING / bench.name)
        return report
    stage = root / INCOMING / bench.name
    todo = []
    for f in bench.files:
        target = stage / f.path
        if matches(target, f):
            report.kept += 1
        elif matches(live / f.path, f):
            link_or_copy(live / f.path, target)
            report.kept += 1
        else:
            todo.append(f)
    sources = stage.parent / f"{bench.name}.sources"
    total = sum(_cost(f, mirror) for f in todo)
    # tqdm: None draws the bar only on a terminal
    with tqdm(total=total, unit="B", unit_scale=True, desc=bench.name, disable=None if progress else True) as bar:
        with _client(mirror) as client:
            failed = threading.Event()  # after a failure (or Ctrl-C) the queued files are not started

            def one(f: DataFile) -> None:
                if failed.is_set():
                    return
                try:
                    _gather(bench, f, stage / f.path, sources, mirror, bar.update, client)
                except BaseException:
                    failed.set()
                    raise

            copies = [f for f in todo if mirror.layout == "data" or f.convert is None]
            pool = ThreadPoolExecutor(max_workers=PARALLEL_DOWNLOADS if mirror.is_url else 1)
            try:
                for _ in pool.map(one, copies):
                    pass
            except BaseException:
                failed.set()
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            for f in todo:  # conversions one by one: they may share upstream files
                if f not in copies:
                    one(f)
    report.fetched, report.fetched_bytes = len(todo), sum(f.size for f in todo)
    _swap(stage, live, {f.path for f in bench.files})
    _discard(sources)
    with contextlib.suppress(OSError):
        (root / INCOMING).rmdir()
    return report


@contextlib.contextmanager
def _exclusive(root: Path) -> Iterator[None]:
    """Hold an exclusive lock on the folder ``root`` itself (no lock file is left behind) where the system has
    ``flock``."""
    root.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _cost(f: DataFile, mirror: Mirror) -> int:
    """The bytes fetched for ``f``: itself, or the upstream files it is converted from."""
    return f.size if mirror.layout == "data" or f.convert is None else sum(s.size for s in f.sources)


@contextlib.contextmanager
def _client(mirror: Mirror) -> Iterator[httpx.Client | None]:
    if mirror.is_url:
        with http_client() as client:
            yield client
    else:
        yield None


def _gather(
    bench: Benchmark,
    f: DataFile,
    target: Path,
    sources: Path,
    mirror: Mirror,
    bar: Progress,
    client: httpx.Client | None,
) -> None:
    """Put ``f`` at ``target`` (in the gathering folder), checked."""
    part = target.with_name(target.name + ".part")
    if mirror.layout == "data":
        fetch(mirror.copy_of(bench, f), part, f, bar, client)
    elif f.convert is None:
        fetch(mirror.upstream(bench, f.sources[0].path), part, f, bar, client)
    else:
        texts = {}
        for s in f.sources:
            cached = sources / s.path
            if not matches(cached, s):
                cached_part = cached.with_name(cached.name + ".part")
                fetch(mirror.upstream(bench, s.path), cached_part, s, bar, client)
                os.replace(cached_part, cached)
            texts[s.path] = cached.read_text(encoding="utf-8")
        with atomic_path(part) as tmp:
            tmp.write_text(convert(f.convert, texts), encoding="utf-8")
        check(part, f, f"{f.path} converted from {f.sources[0].path}")
    os.replace(part, target)


def _swap(stage: Path, live: Path, listed: set[str]) -> None:
    """Put the gathered folder in ``live``'s place, moving over the files of ``live`` the manifest does not list."""
    if live.exists():
        for rel in walk_files(live):
            if rel not in listed and not (stage / rel).exists():
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                os.replace(live / rel, stage / rel)
        old = stage.with_name(stage.name + ".old")
        _discard(old)
        os.replace(live, old)
        os.replace(stage, live)
        _discard(old)
    else:
        live.parent.mkdir(parents=True, exist_ok=True)
        os.replace(stage, live)


def _discard(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
