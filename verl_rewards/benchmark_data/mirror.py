"""Where ``verl-rewards data get`` reads files from, and fetching one file into a partial file that resumes.

Two layouts (``--from``):

* **upstream** (the default, ``https://raw.githubusercontent.com``): ``<base>/<owner>/<repo>/<commit>/<upstream
  path>``, the layout of GitHub's raw file server, so a mirror is a copy of those paths (a URL or a folder).
  Converted files are made here from the upstream Python files (:mod:`.convert`).
* **data folder** (a folder only): a folder laid out like the installed data folder (``<dir>/tau2/<domain>/...``,
  ``<dir>/tau_bench/<domain>/...``), such as a copy of one; every file is taken as it is.

Every file is checked against the manifest's size and sha256 before it is used; a file that differs is deleted
and refused (:class:`CorruptFileError`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from .manifest import Benchmark, DataFile, Pinned, sha256_of

DEFAULT_SOURCE = "https://raw.githubusercontent.com"
_CHUNK = 1 << 16
#: seconds to connect, and between two reads of a download
TIMEOUT_S = 30.0

Progress = Callable[[int], object]


class FetchError(RuntimeError):
    """A file that could not be fetched; the message is one line naming the URL or path."""


class OfflineError(FetchError):
    """The mirror cannot be reached at all (no network, refused connection, unknown host)."""


class CorruptFileError(FetchError):
    """A fetched file whose size or sha256 differs from the manifest's."""


@dataclass(frozen=True)
class Mirror:
    """Where files come from: ``base`` (a URL or a folder) and its ``layout`` (``upstream`` or ``data``)."""

    base: str
    layout: str

    @property
    def is_url(self) -> bool:
        return self.base.startswith(("http://", "https://"))

    def describe(self) -> str:
        return f"{self.base} ({'a data folder' if self.layout == 'data' else 'upstream layout'})"

    def upstream(self, bench: Benchmark, path: str) -> str:
        """Where an upstream file of ``bench``'s pinned commit is."""
        return f"{self.base.rstrip('/')}/{bench.repo}/{bench.commit}/{path}"

    def copy_of(self, bench: Benchmark, f: DataFile) -> str:
        """Where ``f`` is in a data-folder mirror."""
        return str(Path(self.base) / bench.name / f.path)


def open_mirror(value: str | None, benchmarks: list[Benchmark]) -> Mirror:
    """The mirror ``--from`` names (None: upstream). A folder holding ``<owner>/`` of the benchmarks' repositories
    has the upstream layout, one holding ``tau2/`` or ``tau_bench/`` the data-folder layout; FetchError otherwise."""
    if not value:
        return Mirror(DEFAULT_SOURCE, "upstream")
    if value.startswith(("http://", "https://")):
        return Mirror(value, "upstream")
    folder = Path(value).expanduser()
    if not folder.is_dir():
        raise FetchError(f"--from {value}: no such folder (a folder or an http(s):// URL)")
    if all((folder / b.repo / b.commit).is_dir() for b in benchmarks):
        return Mirror(str(folder.resolve()), "upstream")
    if all((folder / b.name).is_dir() for b in benchmarks):
        return Mirror(str(folder.resolve()), "data")
    wanted = " and ".join(f"{b.name}/" for b in benchmarks)
    upstream = " and ".join(f"{b.repo}/{b.commit}/" for b in benchmarks)
    raise FetchError(f"--from {value} holds neither {wanted} (a data folder) nor {upstream} (an upstream mirror)")


def check(path: Path, pinned: Pinned, where: str) -> None:
    """Refuse (delete, :class:`CorruptFileError`) ``path`` unless it has ``pinned``'s size and sha256."""
    size, digest = path.stat().st_size, sha256_of(path)
    if size != pinned.size or digest != pinned.sha256:
        path.unlink()
        raise CorruptFileError(
            f"{where} refused: {size:,} bytes with sha256 {digest[:16]}..., the manifest pins "
            f"{pinned.size:,} bytes with sha256 {pinned.sha256[:16]}... (a corrupt or wrong mirror)"
        )


def fetch(where: str, part: Path, pinned: Pinned, progress: Progress, client: httpx.Client | None = None) -> None:
    """Fetch ``where`` (a URL or a path) into ``part`` and check it against ``pinned``.

    An existing ``part`` of a URL is resumed (an HTTP range request; a server that ignores ranges sends the file
    again, which restarts it); a folder's file is copied afresh. Never reads more than ``pinned.size`` bytes.
    ``client``: the HTTP client to use (one per run keeps its connections open)."""
    part.parent.mkdir(parents=True, exist_ok=True)
    if where.startswith(("http://", "https://")):
        if client is None:
            with http_client() as own:
                _download(own, where, part, pinned, progress)
        else:
            _download(client, where, part, pinned, progress)
    else:
        _copy(Path(where), part, pinned, progress)
    check(part, pinned, where)


def _copy(source: Path, part: Path, pinned: Pinned, progress: Progress) -> None:
    try:
        with open(source, "rb") as src, open(part, "wb") as dst:
            left = pinned.size + 1  # one byte more than pinned shows a longer file without reading all of it
            while left > 0:
                chunk = src.read(min(_CHUNK, left))
                if not chunk:
                    break
                dst.write(chunk)
                left -= len(chunk)
                progress(len(chunk))
    except FileNotFoundError:
        part.unlink(missing_ok=True)
        raise FetchError(f"{source} not found in the mirror") from None
    except IsADirectoryError:
        part.unlink(missing_ok=True)
        raise FetchError(f"{source} is a folder, not a file") from None


def http_client() -> httpx.Client:
    """The HTTP client of a run: redirects followed, :data:`TIMEOUT_S` to connect and between reads."""
    return httpx.Client(timeout=TIMEOUT_S, follow_redirects=True)


def _download(client: httpx.Client, url: str, part: Path, pinned: Pinned, progress: Progress) -> None:
    have = part.stat().st_size if part.exists() else 0
    if have >= pinned.size:  # a complete (or over-long) partial file: start again
        part.unlink()
        have = 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        with client.stream("GET", url, headers=headers) as response:
            if response.status_code == 416 and have:  # the range is wrong for this server's file: restart
                part.unlink()
                return _download(client, url, part, pinned, progress)
            if response.status_code == 404:
                raise FetchError(f"{url} not found (HTTP 404): the mirror lacks this file")
            if response.status_code not in (200, 206):
                raise FetchError(f"{url}: HTTP {response.status_code}")
            resumed = response.status_code == 206 and _range_start(response) == have
            if have and resumed:
                progress(have)
            else:
                have = 0
            with open(part, "ab" if resumed else "wb") as fh:
                for chunk in response.iter_bytes():
                    have += len(chunk)
                    if have > pinned.size:
                        raise CorruptFileError(
                            f"{url} refused: more than the {pinned.size:,} bytes the manifest pins (a corrupt or "
                            "wrong mirror)"
                        )
                    fh.write(chunk)
                    progress(len(chunk))
    except httpx.ConnectError as exc:
        raise OfflineError(f"cannot reach {url} ({_reason(exc)})") from None
    except httpx.TransportError as exc:  # the connection broke or stalled mid-file: keep what arrived
        raise FetchError(
            f"the download of {url} was interrupted after {have:,} of {pinned.size:,} bytes ({_reason(exc)}); "
            "run the command again to resume"
        ) from None
    except CorruptFileError:
        part.unlink(missing_ok=True)
        raise
    return None


def _range_start(response: httpx.Response) -> int | None:
    value = response.headers.get("content-range", "")  # "bytes 100-199/200"
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def link_or_copy(source: Path, target: Path) -> None:
    """``target`` as a hard link to ``source`` (same file system), else a copy; written through a temporary name
    so ``target`` appears complete."""
    tmp = target.with_name(target.name + ".link")
    tmp.unlink(missing_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)
