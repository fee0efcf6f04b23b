"""The package is a stack of layers (ARCHITECTURE.md): no module imports another in a cycle, and no layer imports
one above it. Read from the source with ``ast``, so imports inside functions count too."""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from repo_paths import REPO

PACKAGE = REPO / "verl_rewards"

# what each top-level part may import (besides itself); parts not listed import anything below the drivers
ALLOWED = {
    "coerce": set(),
    "files": set(),
    "json_files": set(),
    "step_dicts": set(),
    "contribution": {"coerce", "step_dicts"},
    "scoring": {"step_dicts", "coerce"},
    "rewards": {"scoring", "coerce", "files", "contribution"},
    "engine": {"files"},
    "rollout": {"engine", "files", "verl_compat"},
    "benchmark": {"scoring", "engine"},
    "toolrl": {"scoring", "rewards", "coerce", "files", "benchmark"},
    "tau2": {"scoring", "rewards", "coerce", "files", "verl_compat", "engine", "rollout", "benchmark"},
    "tau_bench": {"scoring", "rewards", "coerce", "files", "engine", "rollout", "benchmark"},
    "benchmark_list": {"benchmark", "toolrl", "tau2", "tau_bench"},
    "catalog": {"scoring", "rewards", "toolrl", "tau2", "tau_bench", "benchmark", "benchmark_list"},
    "manager": {"scoring", "rewards", "catalog", "coerce", "contribution", "files"},
    "local_tokenizer": set(),
    "verl_compat": set(),
    # the CPU backend: verl's registries and classes, low in the stack; it knows no reward, benchmark or command
    "cpu": {"verl_compat", "local_tokenizer"},
    # the smoke driver: the benchmarks' records (their smoke settings), the data-folder rule and the CPU backend
    "smoke": {"benchmark", "benchmark_list", "engine", "cpu"},
}
DRIVERS = {
    "cli",
    "commands",
    "checking",
    "offline",
    "demo",
    "evaluation",
    "gold",
    "metrics",
    "plugin",
    "benchmark_data",
    "learning",
    "smoke",
}


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


def test_the_cli_is_the_top_layer():
    """Every ``verl-rewards`` command lives in ``commands/`` and only ``cli.py`` imports it: the libraries a command
    drives (gold, evaluation, learning, benchmark_data, ...) never import a command."""
    top = {"cli", "commands"}
    wrong = [
        f"{source} -> {target}"
        for source, targets in _imports(_modules()).items()
        for target in targets
        if source.count(".") and _part(source) not in top and _part(target) in top
    ]
    assert wrong == []
    assert not list(PACKAGE.rglob("command.py"))
    from verl_rewards.cli import COMMAND_MODULES

    assert [m for m in COMMAND_MODULES.values() if not m.startswith("verl_rewards.commands.")] == []


def test_every_command_reports_errors_through_the_one_fail():
    """A usage or configuration error is printed by ``commands.common.fail`` only: no module writes its own
    ``verl-rewards <command>: error:`` line."""
    own = []
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "commands" / "common.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                texts = [c.value for a in node.args for c in ast.walk(a) if isinstance(c, ast.Constant)]
                if any(isinstance(t, str) and ": error: " in t for t in texts):
                    own.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert own == []


def test_the_scoring_contract_imports_no_verl():
    modules = _modules()
    for name, path in modules.items():
        if name.startswith("verl_rewards.scoring"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
            names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
            assert not [n for n in names if n == "verl" or n.startswith("verl.")], name


# ------------------------------------------------------------------------------------------------ verl's privates
HOOKS = {"getattr", "setattr", "hasattr", "delattr"}
#: ``_names`` verl also defines that the package uses for something else than verl's
NOT_VERLS = {"_metadata": "OmegaConf's node attribute: manager/config.py tells a DictConfig by it"}


@functools.lru_cache(maxsize=1)
def _verl_private_names() -> frozenset[str]:
    """Every ``_name`` (one leading underscore) verl defines: functions, classes, methods, attributes it assigns."""
    import verl

    names: set[str] = set()
    for path in Path(verl.__file__).parent.rglob("*.py"):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return frozenset(n for n in names if n.startswith("_") and not n.startswith("__"))


def _bound_names(tree: ast.Module, name: str) -> dict[str, str]:
    """What each imported name of a module is: ``verl``, ``ours:<module>.<name>`` or ``other``."""
    bound: dict[str, str] = {}
    package = name.split(".")[:-1] if not name.endswith("__init__") else name.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(filter(None, [base, node.module or ""]))
            for alias in node.names:
                local = alias.asname or alias.name
                if module == "verl" or module.startswith("verl."):
                    bound[local] = "verl"
                elif module.startswith("verl_rewards"):
                    bound[local] = f"ours:{module}.{alias.name}"
                else:
                    bound[local] = "other"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                bound[local] = "verl" if alias.name.split(".")[0] == "verl" else "other"
    return bound


def _verl_derived(trees: dict[str, ast.Module]) -> dict[tuple[str, str], ast.ClassDef]:
    """Every class of the package (nested ones too) whose bases reach a verl class, or a base the source cannot
    name (a local variable, a call): those are counted as verl's."""
    classes: dict[tuple[str, str], tuple[ast.ClassDef, dict[str, str]]] = {}
    for name, tree in trees.items():
        bound = _bound_names(tree, name)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes[(name, node.name)] = (node, bound)
    derived: dict[tuple[str, str], bool] = {}

    def is_verl(key: tuple[str, str], seen: frozenset[tuple[str, str]] = frozenset()) -> bool:
        if key in derived:
            return derived[key]
        if key not in classes or key in seen:
            return False
        node, bound = classes[key]
        result = False
        for base in node.bases:
            target = base.value if isinstance(base, ast.Subscript) else base
            root = target
            while isinstance(root, ast.Attribute):
                root = root.value
            if not isinstance(root, ast.Name):
                result = True  # a call or an expression: unknown
            elif root.id in bound:
                kind = bound[root.id]
                if kind == "verl":
                    result = True
                elif kind.startswith("ours:") and target is root:
                    module, _, cls = kind[5:].rpartition(".")
                    result = is_verl((module, cls), seen | {key}) if (module, cls) in classes else False
            elif (key[0], root.id) in classes and target is root:
                result = is_verl((key[0], root.id), seen | {key})
            elif root.id not in dir(__builtins__) and root.id not in {"object"}:
                result = True  # a local variable (e.g. a class handed in by verl_compat or a verl hook)
            if result:
                break
        derived[key] = result
        return result

    return {key: node for key, (node, _) in classes.items() if is_verl(key)}


def _verl_private_uses(modules: dict[str, Path]) -> list[str]:
    """Every use of a verl private outside ``verl_compat.py`` that ``PRIVATES`` does not cover (see the test)."""
    from verl_rewards.verl_compat import PRIVATES

    verl_names = _verl_private_names() - NOT_VERLS.keys()
    listed_methods = {attr.partition(".")[2] for _, attr, _, _ in PRIVATES if attr.partition(".")[2].startswith("_")}
    module_level = {attr for _, attr, _, _ in PRIVATES if attr.isidentifier()}  # module-level names
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    derived = _verl_derived(trees)
    wrong: list[str] = []
    for name, tree in trees.items():
        if name == "verl_rewards.verl_compat":
            continue
        in_derived: set[int] = set()
        for (module, cls), node in derived.items():
            if module != name:
                continue
            own = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            for fn in own & verl_names:
                if fn not in listed_methods:
                    wrong.append(f"{name}: {cls}.{fn} overrides a verl private not in verl_compat.PRIVATES")
            for sub in ast.walk(node):
                in_derived.add(id(sub))
                if isinstance(sub, ast.Attribute) and sub.attr in verl_names:
                    receiver = sub.value
                    is_super = isinstance(receiver, ast.Call) and getattr(receiver.func, "id", "") == "super"
                    if is_super or (isinstance(receiver, ast.Name) and receiver.id in ("self", "cls")):
                        if sub.attr in own and sub.attr in listed_methods:
                            continue  # an override of a listed private, or its super() call
                    wrong.append(f"{name}: {cls} uses verl's {sub.attr}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "verl":
                wrong += [
                    f"{name}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_") or a.name in module_level
                ]
            if isinstance(node, ast.Attribute) and node.attr.startswith("ct_"):
                wrong.append(f"{name}: .{node.attr} (verl's Continuous Token helpers: verl_compat)")
            if isinstance(node, ast.Attribute) and node.attr in module_level:
                wrong.append(f"{name}: .{node.attr}")
            if isinstance(node, ast.Name) and node.id in module_level:
                wrong.append(f"{name}: {node.id}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in HOOKS and len(node.args) > 1:
                key = node.args[1]
                if isinstance(key, ast.Constant) and key.value in verl_names:
                    wrong.append(f"{name}: {node.func.id}(..., {key.value!r})")  # type: ignore[attr-defined]
            if (
                isinstance(node, ast.Attribute)
                and id(node) not in in_derived
                and node.attr in verl_names
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                wrong.append(f"{name}: .{node.attr} on an object that may be verl's")
    return sorted(set(wrong))


def test_verl_privates_are_reached_only_through_verl_compat():
    """Outside ``verl_compat.py`` no module imports a ``_name`` from verl, calls verl's Continuous Token helpers
    (``ct_*``), reads or sets a verl private (``obj._name``, ``getattr(obj, "_name")`` for any ``_name`` verl defines),
    or overrides a verl private method that ``verl_compat.PRIVATES`` does not list (a subclass of a verl class may
    override a listed one and call it through ``super()``: ``tests/test_verl_compat.py`` checks it still exists)."""
    assert _verl_private_uses(_modules()) == []


def test_the_verl_private_check_finds_each_kind_of_use(tmp_path):
    bad = tmp_path / "verl_rewards"
    bad.mkdir()
    (bad / "probe.py").write_text(
        "from verl.experimental.agent_loop.agent_loop import _agent_loop_registry\n"
        "from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop\n"
        "class Loop(ToolAgentLoop):\n"
        "    async def _handle_pending_state(self, data, params):\n"
        "        return await super()._handle_pending_state(data, params)\n"
        "    async def step(self):\n"
        "        return await self.ct_merge_context_msg([], [], [], [])\n"
        "def hook(trainer_base):\n"
        "    original = trainer_base.PPOTrainer._compute_metrics\n"
        "    return getattr(trainer_base.PPOTrainer, '_val_metrics_update')\n",
        encoding="utf-8",
    )
    found = _verl_private_uses({"verl_rewards.probe": bad / "probe.py"})
    assert found == [
        "verl_rewards.probe: ._compute_metrics on an object that may be verl's",
        "verl_rewards.probe: .ct_merge_context_msg (verl's Continuous Token helpers: verl_compat)",
        "verl_rewards.probe: Loop uses verl's _handle_pending_state",
        "verl_rewards.probe: Loop._handle_pending_state overrides a verl private not in verl_compat.PRIVATES",
        "verl_rewards.probe: from verl.experimental.agent_loop.agent_loop import _agent_loop_registry",
        "verl_rewards.probe: getattr(..., '_val_metrics_update')",
    ]


def test_importing_tau_bench_loads_nothing_of_tau2():
    """tau2 and tau-bench are siblings on the engine: importing ``verl_rewards.tau_bench`` (in a fresh interpreter)
    loads no ``verl_rewards.tau2`` module, none of tau2's domains in particular."""
    code = (
        "import sys, verl_rewards.tau_bench, verl_rewards.tau_bench.normal, verl_rewards.tau_bench.reward; "
        "print(sorted(m for m in sys.modules if m.startswith('verl_rewards.tau2')))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


MAX_MODULE_LINES = 600


def test_no_module_is_over_the_size_limit():
    """A module a reader can hold in their head: every module of the package stays under 600 lines (split by concern
    when one grows past it)."""
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}
