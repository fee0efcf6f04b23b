"""`.ci/run` installs exactly as the README's Install section tells a user to: the same pip commands, in order."""

from __future__ import annotations

import re
import shlex

from repo_paths import REPO


def _pip_commands(lines: list[str]) -> list[list[str]]:
    """Each `pip install ...` line as its words, comments and pip's -q (output only) left out."""
    out = []
    for line in lines:
        if not line.strip().startswith(("pip ", "python -m pip ")):
            continue
        words = shlex.split(line, comments=True)
        if words[:2] == ["python", "-m"]:
            words = words[2:]
        if words[:2] == ["pip", "install"]:
            out.append([w for w in words if w != "-q"])
    return out


def _readme_install_block() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Install\n(.*?)^## ", text, flags=re.S | re.M)
    assert section, "README.md has no '## Install' section"
    block = re.search(r"```bash\n(.*?)```", section.group(1), flags=re.S)
    assert block, "README.md's Install section has no bash block"
    return block.group(1).splitlines()


def test_ci_installs_as_the_readme_says() -> None:
    readme = _pip_commands(_readme_install_block())
    ci = _pip_commands((REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines())
    assert readme, "no pip command in the README's Install block"
    assert ci[: len(readme)] == readme


def test_every_pip_command_of_ci_is_one_the_readme_gives() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    readme = _pip_commands([line for block in blocks for line in block.splitlines()])
    ci = _pip_commands((REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines())
    assert [c for c in ci if c not in readme] == []


def test_the_install_puts_cpu_torch_first() -> None:
    readme = _pip_commands(_readme_install_block())
    assert readme[0][:3] == ["pip", "install", "torch==2.13.0"]
    assert "https://download.pytorch.org/whl/cpu" in readme[0]
