"""The manifest shipped with the package: every benchmark data file ``verl-rewards data get`` installs, its sha256
and size, and where it comes from in the pinned upstream commit (a copy of one upstream file, or the conversion of
upstream Python files, themselves pinned by sha256, see :mod:`.convert`).

``manifest.json`` was generated once from verified files by ``python -m verl_rewards.benchmark_data.make_manifest``
(how: that module's doc); a test checks it against the data folder the package's rule finds.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST_FILE = Path(__file__).with_name("manifest.json")
FORMAT = 1
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Pinned:
    """A file pinned by content: ``path`` (upstream, or in the data folder), ``size`` in bytes, ``sha256``."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class DataFile(Pinned):
    """One installed file, ``path`` relative to its benchmark's folder. ``sources``: the upstream files it is made
    from; ``convert``: None for a copy of its one source, else the conversion (:func:`.convert.convert`)."""

    sources: tuple[Pinned, ...] = ()
    convert: str | None = None


@dataclass(frozen=True)
class Benchmark:
    """One benchmark's files: ``name`` (its folder), ``repo`` (``owner/name`` on GitHub), the pinned ``commit``."""

    name: str
    repo: str
    commit: str
    files: tuple[DataFile, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


@dataclass(frozen=True)
class Manifest:
    benchmarks: dict[str, Benchmark]

    def select(self, which: str) -> list[Benchmark]:
        """The benchmarks ``which`` names (one name, or ``all``); ValueError naming the choices otherwise."""
        if which == "all":
            return list(self.benchmarks.values())
        if which not in self.benchmarks:
            raise ValueError(f"no benchmark {which!r}; choose from {', '.join([*self.benchmarks, 'all'])}")
        return [self.benchmarks[which]]


def _pinned(raw: Any, where: str) -> Pinned:
    try:
        return Pinned(str(raw["path"]), int(raw["size"]), str(raw["sha256"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where}: a malformed entry ({exc!r})") from None


def _data_file(raw: Any, where: str) -> DataFile:
    base = _pinned(raw, where)
    source = raw.get("from")
    sources: tuple[Pinned, ...] = (Pinned(source, base.size, base.sha256),) if isinstance(source, str) else ()
    if isinstance(source, list):
        sources = tuple(_pinned(s, where) for s in source)
    if not sources or (raw.get("convert") is None and len(sources) != 1):
        raise ValueError(f"{where}: {base.path} has no usable 'from'")
    parts = Path(base.path).parts
    if Path(base.path).is_absolute() or ".." in parts or base.path != Path(base.path).as_posix():
        raise ValueError(f"{where}: {base.path!r} is not a plain relative path")
    return DataFile(base.path, base.size, base.sha256, sources, raw.get("convert"))


def parse_manifest(text: str, where: str = "manifest") -> Manifest:
    """The manifest in ``text`` (ValueError naming ``where`` when it is not one)."""
    raw = json.loads(text)
    if raw.get("format") != FORMAT:
        raise ValueError(f"{where}: format {raw.get('format')!r}, this package reads {FORMAT}")
    benchmarks = {}
    for name, bench in raw["benchmarks"].items():
        files = tuple(_data_file(f, where) for f in bench["files"])
        benchmarks[name] = Benchmark(name, str(bench["repo"]), str(bench["commit"]), files)
    return Manifest(benchmarks)


def load_manifest(path: str | os.PathLike[str] = MANIFEST_FILE) -> Manifest:
    """The manifest shipped with the package (or the one at ``path``)."""
    return parse_manifest(Path(path).read_text(encoding="utf-8"), str(path))


def manifest_text(manifest: Manifest) -> str:
    """``manifest`` as the JSON text of ``manifest.json``: one file per line, so a change reads as a diff of lines."""

    def entry(f: DataFile) -> str:
        item: dict[str, Any] = {"path": f.path, "size": f.size, "sha256": f.sha256}
        if f.convert is None:
            item["from"] = f.sources[0].path
        else:
            item["convert"] = f.convert
            item["from"] = [{"path": s.path, "size": s.size, "sha256": s.sha256} for s in f.sources]
        return json.dumps(item, ensure_ascii=False)

    blocks = []
    for b in manifest.benchmarks.values():
        pins = f'"repo": {json.dumps(b.repo)}, "commit": {json.dumps(b.commit)}'
        head = f'    {json.dumps(b.name)}: {{{pins}, "files": [\n'
        blocks.append(head + ",\n".join(f"      {entry(f)}" for f in b.files) + "\n    ]}")
    return f'{{\n  "format": {FORMAT},\n  "benchmarks": {{\n' + ",\n".join(blocks) + "\n  }\n}\n"


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def matches(path: Path, pinned: Pinned) -> bool:
    """Whether ``path`` is a regular file with ``pinned``'s size and sha256 (the size is checked first: cheap)."""
    try:
        return path.is_file() and path.stat().st_size == pinned.size and sha256_of(path) == pinned.sha256
    except OSError:
        return False


def walk_files(folder: Path) -> Iterator[str]:
    """The relative POSIX paths of every file under ``folder``."""
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path.relative_to(folder).as_posix()
