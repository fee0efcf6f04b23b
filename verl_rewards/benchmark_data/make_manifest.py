"""Generate ``manifest.json`` (run once per pinned commit; the output is committed):

    python -m verl_rewards.benchmark_data.make_manifest --data DATA \\
        --tau2-git TAU2_BENCH_GIT --tau-bench-git TAU_BENCH_GIT [--out manifest.json]

``DATA`` is a verified data folder (``tau2/``, ``tau_bench/``); the two ``--*-git`` are git repositories (bare or
not) of tau2-bench and tau-bench holding the pinned commits. What it checks before writing anything:

* the files selected (:data:`TAU2_DOMAINS` etc. below) are listed from the commit's tree, and every copy in
  ``DATA`` has the git blob id (SHA-1) upstream has for that path, so it is byte-identical to upstream;
* every converted file (tau-bench's task lists and tool lists) is what :mod:`.convert` makes of the upstream Python
  files, byte for byte, and those files are pinned by their own sha256.
The sha256 and size of each file are then read from ``DATA``.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path

from .convert import convert, tool_modules
from .manifest import MANIFEST_FILE, Benchmark, DataFile, Manifest, Pinned, manifest_text, sha256_of

TAU2_REPO, TAU2_COMMIT = "sierra-research/tau2-bench", "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
TAU_BENCH_REPO, TAU_BENCH_COMMIT = "sierra-research/tau-bench", "59a200c6d575d595120f1cb70fea53cef0632f6b"

TAU2_DOMAINS = ("mock", "airline", "retail", "telecom", "banking_knowledge")
#: upstream files of a tau2 domain folder not installed: voice mode only, notes, pictures, and telecom's
#: ``tasks_full.json`` (the same blob as its ``tasks.json``)
TAU2_SKIPPED = ("tasks_voice.json", "audio_difficulty.json", "task_issues/", "workflows/", "tasks_full.json")
TAU2_USER_SIMULATOR = ("simulation_guidelines.md", "simulation_guidelines_tools.md")
#: tau-bench's task lists: (domain, split, the list's variable)
TAU_BENCH_TASKS = (
    ("retail", "train", "TASKS_TRAIN"),
    ("retail", "test", "TASKS_TEST"),
    ("retail", "dev", "TASKS_DEV"),
    ("airline", "test", "TASKS"),
)


class Git:
    """Read-only access to one commit of a git repository."""

    def __init__(self, repo: Path, commit: str):
        self.repo, self.commit = repo, commit
        out = self._run("ls-tree", "-r", commit).decode()
        self.blobs = {}
        for line in out.splitlines():
            meta, path = line.split("\t", 1)
            _, kind, blob = meta.split()
            if kind == "blob":
                self.blobs[path] = blob

    def _run(self, *args: str) -> bytes:
        return subprocess.run(["git", "-C", str(self.repo), *args], check=True, capture_output=True).stdout

    def read(self, path: str) -> bytes:
        return self._run("cat-file", "blob", self.blobs[path])

    def under(self, folder: str) -> list[str]:
        return sorted(p for p in self.blobs if p.startswith(folder + "/"))


def blob_id(path: Path) -> str:
    """The git blob SHA-1 of a file (``git hash-object``)."""
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _copy(git: Git, folder: Path, dest: str, upstream: str) -> DataFile:
    path = folder / dest
    if blob_id(path) != git.blobs[upstream]:
        raise SystemExit(f"{path} is not upstream's {upstream} (blob {git.blobs[upstream]})")
    size, sha = path.stat().st_size, sha256_of(path)
    return DataFile(dest, size, sha, (Pinned(upstream, size, sha),))


def _converted(git: Git, folder: Path, dest: str, kind: str, upstream: list[str]) -> DataFile:
    texts = {p: git.read(p).decode("utf-8") for p in upstream}
    path = folder / dest
    if convert(kind, texts).encode("utf-8") != path.read_bytes():
        raise SystemExit(f"{path} is not what {kind} makes of {upstream[0]}")
    sources = tuple(Pinned(p, len(git.read(p)), hashlib.sha256(git.read(p)).hexdigest()) for p in upstream)
    return DataFile(dest, path.stat().st_size, sha256_of(path), sources, kind)


def tau2_files(git: Git, folder: Path) -> list[DataFile]:
    files = [_copy(git, folder, "LICENSE.tau2-bench", "LICENSE")]
    for domain in TAU2_DOMAINS:
        base = f"data/tau2/domains/{domain}"
        for upstream in git.under(base):
            rel = upstream[len(base) + 1 :]
            if not any(rel == s or (s.endswith("/") and rel.startswith(s)) for s in TAU2_SKIPPED):
                files.append(_copy(git, folder, f"{domain}/{rel}", upstream))
    for name in TAU2_USER_SIMULATOR:
        files.append(_copy(git, folder, f"user_simulator/{name}", f"data/tau2/user_simulator/{name}"))
    return files


def tau_bench_files(git: Git, folder: Path) -> list[DataFile]:
    files = [_copy(git, folder, "LICENSE.tau-bench", "LICENSE")]
    for domain in ("retail", "airline"):
        env = f"tau_bench/envs/{domain}"
        for upstream in git.under(f"{env}/data"):
            if upstream.endswith(".json"):
                files.append(_copy(git, folder, f"{domain}/{upstream.rsplit('/', 1)[1]}", upstream))
        files.append(_copy(git, folder, f"{domain}/wiki.md", f"{env}/wiki.md"))
        for dom, split, variable in TAU_BENCH_TASKS:
            if dom == domain:
                files.append(
                    _converted(
                        git, folder, f"{domain}/tasks_{split}.json", f"tasks:{variable}", [f"{env}/tasks_{split}.py"]
                    )
                )
        init = f"{env}/tools/__init__.py"
        modules = tool_modules(git.read(init).decode("utf-8"), init)
        files.append(_converted(git, folder, f"{domain}/tools_info.json", "tools_info", [init, *modules]))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a verified data folder (tau2/, tau_bench/)")
    parser.add_argument("--tau2-git", type=Path, required=True, help="a git repository of tau2-bench")
    parser.add_argument("--tau-bench-git", type=Path, required=True, help="a git repository of tau-bench")
    parser.add_argument("--out", type=Path, default=MANIFEST_FILE, help="where to write the manifest")
    args = parser.parse_args(argv)
    tau2 = tau2_files(Git(args.tau2_git, TAU2_COMMIT), args.data / "tau2")
    tau_bench = tau_bench_files(Git(args.tau_bench_git, TAU_BENCH_COMMIT), args.data / "tau_bench")
    manifest = Manifest(
        {
            "tau2": Benchmark("tau2", TAU2_REPO, TAU2_COMMIT, tuple(tau2)),
            "tau_bench": Benchmark("tau_bench", TAU_BENCH_REPO, TAU_BENCH_COMMIT, tuple(tau_bench)),
        }
    )
    args.out.write_text(manifest_text(manifest), encoding="utf-8")
    for b in manifest.benchmarks.values():
        print(f"{b.name}: {len(b.files)} files, {b.size:,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
