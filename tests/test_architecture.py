"""The package is a stack of layers (ARCHITECTURE.md): no module imports another in a cycle, and no layer imports
one above it. Read from the source with ``ast``, so imports inside functions count too."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from repo_paths import REPO

PACKAGE = REPO / "verl_rewards"

# what each top-level part may import (besides itself); parts not listed import anything below the drivers
ALLOWED = {
    "coerce": set(),
    "files": set(),
    "contribution": {"coerce"},
    "scoring": {"contribution", "coerce"},
    "rewards": {"scoring", "coerce", "files", "contribution"},
    "toolrl": {"scoring", "rewards", "coerce", "files"},
    "tau2": {"scoring", "rewards", "coerce", "files"},
    "tau_bench": {"scoring", "rewards", "coerce", "files", "tau2"},
    "catalog": {"scoring", "rewards", "toolrl", "tau2", "tau_bench"},
    "manager": {"scoring", "rewards", "catalog", "coerce", "contribution", "files"},
}
DRIVERS = {"cli", "commands", "check", "offline", "demo", "evaluation", "gold", "metrics", "plugin"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
                module = ".".join(filter(None, [base, node.module or ""]))
                # ``from pkg import sub`` imports the submodule; ``from mod import name`` the module
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                while target and target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != name and target.startswith("verl_rewards."):
                    edges[name].add(target)
    return edges


def _part(module: str) -> str:
    return module.split(".")[1]


def test_no_module_imports_another_in_a_cycle():
    modules = _modules()
    edges = _imports(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    assert cycles == []


def test_each_layer_imports_only_the_layers_below_it():
    modules = _modules()
    wrong = []
    for source, targets in _imports(modules).items():
        if source.count(".") == 0:  # the package's own __init__
            continue
        part = _part(source)
        for target in targets:
            other = _part(target)
            if other == part:
                continue
            if part in ALLOWED and other not in ALLOWED[part]:
                wrong.append(f"{source} -> {target}")
            elif part not in DRIVERS and other in DRIVERS:
                wrong.append(f"{source} -> {target} (a driver)")
    assert wrong == []


def test_the_scoring_contract_imports_no_verl():
    modules = _modules()
    for name, path in modules.items():
        if name.startswith("verl_rewards.scoring"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
            names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
            assert not [n for n in names if n == "verl" or n.startswith("verl.")], name


def test_verl_privates_are_reached_only_through_verl_compat():
    """Every verl private verl-rewards touches is in verl_compat.PRIVATES and imported there only: no other module
    does ``from verl... import _name`` or names a module-level private of that list."""
    from verl_rewards.verl_compat import PRIVATES

    module_level = {attr for _, attr, _, _ in PRIVATES if attr.startswith("_") and "." not in attr}
    wrong = []
    for name, path in _modules().items():
        if name == "verl_rewards.verl_compat":
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "verl":
                wrong += [f"{name}: from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
            if isinstance(node, ast.Attribute) and node.attr in module_level:
                wrong.append(f"{name}: .{node.attr}")
            if isinstance(node, ast.Name) and node.id in module_level:
                wrong.append(f"{name}: {node.id}")
    assert wrong == []
