"""Atomic output files: every file the CLI writes appears complete or not at all.

A writer fills a temporary file in the target's own folder (same file system, so ``os.replace`` is an atomic
rename) and the temporary file is renamed into place only after the writer returned without error. A failed or
interrupted write leaves the previous file untouched and removes its temporary file. :func:`replace_together`
does the same for a set of files that belong together (parquet splits plus a tool config): all of them are
written first, then renamed one after another, so a failure while writing changes none of them.

SIGTERM's default action ends the process without running ``finally`` blocks; while a temporary file exists (and
SIGTERM has its default action, in the main thread) a handler removes the pending temporary files, then lets the
process die of SIGTERM as before.

:func:`writer_lock` makes one process the only writer of a file for as long as it holds it (``simulate --out``:
two runs on one results file would each rewrite it with their own simulations only).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path

Writer = Callable[[Path], None]


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; on a clean exit it replaces ``target``, on an error it is deleted."""
    target = Path(target)
    tmp = _temp_beside(target)
    try:
        yield tmp
        _fsync(tmp)
        os.replace(tmp, target)
    finally:
        _discard(tmp)


def write_text_atomic(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def replace_together(writers: Mapping[Path, Writer] | Mapping[str, Writer]) -> list[Path]:
    """Write every ``target: writer(tmp_path)`` pair to temporary files, then rename them all into place.

    If any writer fails, no target is touched. Returns the targets in the order given.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for name, writer in writers.items():
            target = Path(name)
            tmp = _temp_beside(target)
            staged.append((tmp, target))
            writer(tmp)
            _fsync(tmp)
        for tmp, target in staged:
            os.replace(tmp, target)
        return [target for _, target in staged]
    finally:
        for tmp, _ in staged:
            _discard(tmp)


class OutputPathError(ValueError):
    """An output path that cannot be written (checked before any work, so a typo costs nothing)."""


def check_output_path(target: str | os.PathLike[str], option: str = "output") -> Path:
    """``target`` as a path when a file can be written there; :class:`OutputPathError` saying why not.

    The target must not be a directory or another non-file, and its nearest existing folder must be a
    writable directory (missing folders are created when the file is written).
    """
    path = Path(target)
    if not str(target) or path.is_dir():
        raise OutputPathError(f"{option} {str(target)!r} is a directory, not a file name")
    if path.exists() and not path.is_file():
        raise OutputPathError(f"{option} {target} exists and is not a regular file")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputPathError(f"{option} {target}: {folder} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(f"{option} {target}: no permission to write in {folder}")
    return path


def image_format(target: str | os.PathLike[str], option: str) -> str:
    """The image format of ``target`` from its extension (``.png``, ``.svg``, ``.pdf``, ... whatever matplotlib
    writes); :class:`OutputPathError` naming the choices otherwise, so a typo never yields a PNG under another
    name."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(target).suffix
    fmt = suffix.lower().lstrip(".")
    if fmt not in formats:
        got = f"extension {suffix!r}" if fmt else "no extension"
        raise OutputPathError(f"{option} {target}: {got}; use one of {', '.join('.' + f for f in sorted(formats))}")
    return fmt


def _temp_beside(target: Path) -> Path:
    """An empty temporary file in ``target``'s folder (created if missing), hidden and named after ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(name, 0o666 & ~umask)  # mkstemp's 0600 would otherwise become the output file's mode
    path = Path(name)
    _track(path)
    return path


#: temporary files not yet renamed or removed; SIGTERM removes them (see the module doc)
_PENDING: set[Path] = set()
_PENDING_LOCK = threading.Lock()
_HANDLER_INSTALLED = False


def _track(path: Path) -> None:
    global _HANDLER_INSTALLED
    with _PENDING_LOCK:
        _PENDING.add(path)
        if _HANDLER_INSTALLED or threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return  # someone else handles SIGTERM: theirs decides, we do not override it
        signal.signal(signal.SIGTERM, _on_sigterm)
        _HANDLER_INSTALLED = True


def _discard(path: Path) -> None:
    """Remove ``path`` if it is still there and stop tracking it; the SIGTERM handler goes when none are left."""
    global _HANDLER_INSTALLED
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    with _PENDING_LOCK:
        _PENDING.discard(path)
        if _HANDLER_INSTALLED and not _PENDING and threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGTERM) is _on_sigterm:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _HANDLER_INSTALLED = False


def _on_sigterm(signum: int, frame: object) -> None:
    """Remove the pending temporary files, then die of SIGTERM with its default action."""
    for path in list(_PENDING):
        with contextlib.suppress(OSError):
            path.unlink()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


class WriterLockError(OSError):
    """Another process holds the writer lock of a file (the message names it: pid, host, start time)."""


def lock_path_of(target: str | os.PathLike[str]) -> Path:
    """The lock file of ``target``: ``<target>.lock`` beside it."""
    target = Path(target)
    return target.with_name(target.name + ".lock")


@contextlib.contextmanager
def writer_lock(target: str | os.PathLike[str], option: str = "output") -> Iterator[Path]:
    """Hold an exclusive ``flock`` on ``<target>.lock`` while the body runs; the lock file records the holder (pid,
    host, start time) and is removed on release. A lock held elsewhere raises :class:`WriterLockError` at once,
    naming the holder. The kernel drops the lock when its process dies, so a crashed run never blocks the next one
    (its stale lock file is taken over)."""
    import fcntl

    path = lock_path_of(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder_text(fd)
            os.close(fd)
            raise WriterLockError(
                f"{option} {target} is being written by another run ({holder}; lock file {path}); wait for it to "
                "finish or use another file"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        try:  # a holder that released it meanwhile unlinked the file we opened: open the new one
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        record = {"pid": os.getpid(), "host": socket.gethostname(), "started": datetime.now().isoformat()}
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(record).encode())
        yield path
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # while still holding it: a waiting opener sees another inode and retries
        os.close(fd)


def _holder_text(fd: int) -> str:
    """``pid P on host H since T`` from a held lock file (what its holder wrote), else that it is unknown."""
    try:
        record = json.loads(os.pread(fd, 4096, 0) or b"null")
    except (OSError, ValueError):
        record = None
    if not isinstance(record, dict):
        return "holder not recorded yet"
    return f"pid {record.get('pid')} on host {record.get('host')} since {record.get('started')}"
