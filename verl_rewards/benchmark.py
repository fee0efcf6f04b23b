"""A benchmark is one registered record, :class:`Benchmark`: everything the commands, the gold policy, ``export-sft``
and the smoke run need to know of it, so that none of them compares benchmark names.

A record holds its name (``<name>/<domain>`` data sources), its reward :class:`~verl_rewards.scoring.families.Family`
(whose ``matches`` says which data sources are its rows), its data folder (the variable naming it, the installed
folder: :mod:`verl_rewards.engine.data_dir`), its domains and how to load one (a :class:`~verl_rewards.engine.domain.
Domain`), how a row's mode is read, its gold turns (:class:`GoldPlay`), its ``export-sft`` plan and task context, its
``prepare`` and ``simulate`` entry points (:class:`PrepareEntry`, :class:`SimulateEntry`) and its smoke settings
(:class:`SmokeSpec`). The built-in ones (ToolRL, tau2, tau-bench) are defined in their own packages
(``<package>/benchmark.py``), listed by :mod:`verl_rewards.benchmark_list` and registered with their families by
:mod:`verl_rewards.catalog`; a new benchmark is one module with its record and one
:func:`verl_rewards.catalog.add_benchmark` call.

Which benchmark a data source belongs to is decided by the reward families in the order they are tried
(:func:`verl_rewards.catalog.benchmark_for`), so the gold policy, ``export-sft`` and the reward never disagree on a
row.
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .engine.data_dir import BenchmarkData, choose_data_dir, row_data_dir
from .engine.domain import Domain
from .engine.errors import DataNotFoundError, EngineError
from .engine.gold import Played
from .scoring.families import Family
from .scoring.registries import register_unique

__all__ = [
    "Benchmark",
    "ExportError",
    "ExportPlan",
    "GOLD_CONCURRENCY",
    "GoldError",
    "GoldPlay",
    "MIN_REWARD",
    "Option",
    "Played",
    "PrepareEntry",
    "RowInfo",
    "SimulateEntry",
    "SmokeSpec",
    "TRAIN_AND_VAL",
    "TaskContext",
    "benchmark_named",
    "benchmarks",
    "domain_in",
    "plain",
    "register_benchmark",
    "row_domain",
    "task_id_in",
]


#: why ``prepare``'s splits default to train,test (tau2, tau-bench)
TRAIN_AND_VAL = "the training and validation files of a recipe, data.train_files and data.val_files"


class GoldError(ValueError):
    """A row the gold policy cannot play (unknown benchmark, missing task id, unknown domain or task)."""


class ExportError(ValueError):
    """Bad input for an export (reported as one line, exit code 2; nothing is written)."""


def plain(value: Any) -> Any:
    """``value`` with numpy arrays as lists and mappings as dicts, recursively (parquet rows → plain Python)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        return plain(value.tolist())
    return value


# ------------------------------------------------------------------------------------------------ rows
def task_id_in(ground_truth: Any, extra_info: Mapping[str, Any], *, text_is_id: bool = False) -> str | None:
    """The task id of a row, the one rule every reader follows: ``extra_info.task_id``, else the ground truth's
    ``task_id`` (a mapping, or JSON text as ``prepare`` writes it), else (``text_is_id``) a plain-text ground truth;
    None when the row names none."""
    if extra_info.get("task_id") is not None:
        return str(extra_info["task_id"])
    if isinstance(ground_truth, str) and ground_truth.lstrip().startswith("{"):
        try:
            ground_truth = json.loads(ground_truth)
        except ValueError:
            pass
    if isinstance(ground_truth, Mapping) and ground_truth.get("task_id") is not None:
        return str(ground_truth["task_id"])
    if text_is_id and isinstance(ground_truth, str) and ground_truth:
        return ground_truth
    return None


def domain_in(data_source: str, name: str, extra_info: Mapping[str, Any]) -> str | None:
    """The domain of a row of benchmark ``name``: ``<name>/<domain>`` in its data source, else
    ``extra_info.domain``; None when neither names one."""
    head, sep, tail = data_source.partition("/")
    if sep and head == name and tail:
        return tail
    if extra_info.get("domain"):
        return str(extra_info["domain"])
    return None


@dataclass(frozen=True)
class RowInfo:
    """What the gold policy reads from a row of ``prepare`` output (:meth:`Benchmark.row_info`)."""

    family: str  # the benchmark's name
    mode: str
    data_source: str
    domain: str
    task_id: str
    prompt: list[dict[str, Any]]
    extra_info: dict[str, Any]
    ground_truth: Any
    data_dir: str | None


# ------------------------------------------------------------------------------------------------ parts
@dataclass(frozen=True)
class GoldPlay:
    """A benchmark's gold policy: ``turns`` (a row's gold assistant messages), ``play`` (those turns played in the
    row's loop: ``(info, turns, user, seed)``; None when the row is answered in one turn, the prompt then the
    turns) and ``reward`` (what a gold episode of the row scores)."""

    turns: Callable[[RowInfo], list[dict[str, Any]]]
    play: Callable[[RowInfo, list[dict[str, Any]], Any, int], Awaitable[Played]] | None = None
    reward: Callable[[RowInfo], float] = lambda info: 1.0


#: ``export-sft gold``: conversations played at once (with a user model)
GOLD_CONCURRENCY = 8
#: ``export-sft results``: the reward a kept trajectory reaches (the gold reward of a solved task)
MIN_REWARD = 1.0


@dataclass
class ExportPlan:
    """What ``export-sft gold`` plays for one split: the rows, the tool config their agent gets (``prepare``'s
    YAML text, None: no tools), the data source, mode, split, data folder and the tasks left out with why."""

    rows: list[dict[str, Any]]
    tool_config: str | None
    data_source: str
    mode: str
    split: str
    root: str
    skipped: list[tuple[str, str]]


@dataclass(frozen=True)
class TaskContext:
    """A task's place for ``export-sft results``: the held-out split it belongs to (``""``: none), the tool config
    its agent had in ``mode`` and the system prompt it had."""

    held_out: str
    tool_config: str | None
    system: str


@dataclass(frozen=True)
class Option:
    """A command-line option of a benchmark's ``prepare`` (``verl-rewards prepare <name>`` builds it)."""

    flag: str
    help: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] | None = None
    type: Callable[[str], Any] | None = None
    action: str | None = None

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """Add the option to ``parser``."""
        kwargs: dict[str, Any] = {"help": self.help}
        if self.action is not None:
            kwargs["action"] = self.action
        else:
            kwargs.update(default=self.default, required=self.required)
            if self.choices is not None:
                kwargs["choices"] = self.choices
            if self.type is not None:
                kwargs["type"] = self.type
        parser.add_argument(self.flag, **kwargs)


@dataclass(frozen=True)
class PrepareEntry:
    """``verl-rewards prepare <name>``: what it says it does, its options (``--data-dir``, ``--domain`` and
    ``--split`` first when ``data_dir`` / ``domains`` / ``split_default``: their help is every command's), the
    function that writes the parquet (the parsed options as a mapping of their destinations; it returns the lines to
    print and the number of bad rows) and the errors it reports as one line."""

    about: str
    run: Callable[[Mapping[str, Any]], tuple[list[str], int]]
    options: tuple[Option, ...] = ()
    domains: bool = True
    data_dir: bool = True
    errors: tuple[type[BaseException], ...] = (OSError, ValueError)
    #: ``--split``'s default (None: no ``--split``), why, and whether it takes several (one file each)
    split_default: str | None = None
    split_why: str = ""
    split_several: bool = False
    #: ``--domain`` takes only the benchmark's domains (argparse ``choices``)
    domain_choices: bool = False


@dataclass(frozen=True)
class SmokeSpec:
    """What ``verl-rewards smoke`` runs for the benchmark: its recipe, modes (the first the default), domains (the
    first the default), the split ``prepare`` writes for a domain, ``prepare``'s arguments for a domain and mode
    besides ``--out``, whether ``--sft`` applies, and the response length."""

    recipe: str
    modes: tuple[str, ...]
    domains: tuple[str, ...]
    split_for: Callable[[str], str]
    prepare_args: Callable[[str, str, str], list[str]]  # (domain, mode, data_dir) -> arguments
    #: ``smoke --sft`` can warm-start it (``export-sft gold`` of a split)
    sft: bool = False
    #: the response length a smoke run allows (None: by the policy, long enough for a scripted conversation)
    response_length: int | None = None


@dataclass(frozen=True)
class SimulateEntry:
    """``verl-rewards simulate --domain <name>/<domain>``: the options only this benchmark takes (each defaults to
    None / False, so "given" is "not default"), how its limits are named (said when another benchmark's option is
    given), a check of the parsed options (ValueError), and the run: ``(options, domain, settings)`` with the
    parsed options as a mapping (``judge``: the judge endpoint or None), the settings every run takes
    (:class:`~verl_rewards.engine.simulate.RunConfig`'s fields and ``concurrency``); it returns the summary to print
    and each simulation's ``(termination, cause)``."""

    own_options: tuple[str, ...]
    limits: str
    run: Callable[[Mapping[str, Any], str, Mapping[str, Any]], tuple[str, list[tuple[Any, Any]]]]
    check: Callable[[Mapping[str, Any]], None] = lambda options: None


def _no_domains() -> list[str]:
    return []


def _normal_mode(extra_info: Mapping[str, Any]) -> str:
    return str(extra_info.get("mode") or "normal")


@dataclass(frozen=True)
class Benchmark:
    """One benchmark (see the module doc)."""

    name: str
    label: str
    #: the reward family, imported when first asked for: reading the record (a command's options and help)
    #: imports no reward
    reward_family: Callable[[], Family]
    data: BenchmarkData | None = None
    data_help: str = ""
    #: what a split name is (``--split``'s help in every command: :func:`verl_rewards.commands.help_texts.split_help`)
    split_names: str = ""
    #: the row modes, normal first (``--mode``'s choices), and what each means (its help)
    modes: tuple[str, ...] = ()
    mode_help: str = ""
    domains: Callable[[], Sequence[str]] = _no_domains
    load_domain: Callable[[str, str | None], Domain] | None = None
    row_mode: Callable[[Mapping[str, Any]], str] = _normal_mode
    gold: GoldPlay | None = None
    export_plan: Callable[[str, str, str | None, str | None, str | None], ExportPlan] | None = None
    task_context: Callable[[str, str, str | None, str], TaskContext] | None = None
    prepare: PrepareEntry | None = None
    simulate: SimulateEntry | None = None
    smoke: SmokeSpec | None = None
    #: what a row asks for that a row may not choose, as a message (``verl-rewards check``); None: nothing
    check_row: Callable[[Mapping[str, Any]], str | None] | None = None
    #: a trial succeeds when its reward is within 1e-6 of 1.0 (tau2's rule; ``verl-rewards eval``'s default)
    exact_success: bool = False

    @property
    def family(self) -> Family:
        """The benchmark's reward family (its reward, extra keys and data-source rule)."""
        return self.reward_family()

    def matches(self, data_source: str) -> bool:
        """Whether ``data_source`` names one of this benchmark's rows (its family's rule)."""
        return self.family.matches(data_source)

    def source(self, domain: str) -> str:
        """The data source of ``domain``'s rows: ``<name>/<domain>``."""
        return f"{self.name}/{domain}"

    def reward_kwargs(self, data_dir: str | None) -> dict[str, Any]:
        """``reward.reward_kwargs`` that point this benchmark's reward at ``data_dir`` (nothing without one)."""
        return {self.name: {"data_dir": data_dir}} if data_dir and self.load_domain is not None else {}

    def row_info(self, row: Mapping[str, Any], data_dir: str | None = None) -> RowInfo:
        """Read a row of ``prepare`` output (a dict, or a parquet row: see :func:`plain`). Its data folder is chosen
        by the one rule the tools use at training time (:mod:`verl_rewards.engine.data_dir`): ``data_dir``, the
        benchmark's environment variable, the installed folder; the path ``prepare`` recorded never chooses it."""
        row = plain(row)
        source = str(row.get("data_source") or "")
        extra = dict(row.get("extra_info") or {})
        reward_model = row.get("reward_model") or {}
        ground_truth = reward_model.get("ground_truth") if isinstance(reward_model, Mapping) else None
        prompt = [dict(m) for m in row.get("prompt") or row.get("raw_prompt") or []]  # agent-loop kwargs: raw_prompt
        mode = self.row_mode(extra)
        if self.load_domain is None:  # no task to look up: the row (its ground truth) is the task
            if not isinstance(ground_truth, str) or not ground_truth.strip():
                raise GoldError(
                    f"a {self.label} row needs reward_model.ground_truth ({self.label}'s ground-truth text)"
                )
            return RowInfo(self.name, mode, source, "", "", prompt, extra, ground_truth, None)
        domain = domain_in(source, self.name, extra)
        if domain is None:
            raise GoldError(f"cannot tell the {self.label} domain of data_source {source!r} (use {self.name}/<domain>)")
        task_id = task_id_in(ground_truth, extra)
        if task_id is None:
            raise GoldError(f"{source} row without extra_info.task_id (verl-rewards prepare writes it)")
        root = None
        if self.data is not None:
            tools = {"tools_kwargs": row.get("tools_kwargs") or {}}  # verl's agent-loop kwargs carry it at the top
            try:
                root = choose_data_dir(data_dir, self.data, row_data_dir(extra, tools), where="--data-dir (data_dir=)")
            except DataNotFoundError as exc:
                raise GoldError(str(exc)) from None
        return RowInfo(self.name, mode, source, domain, task_id, prompt, extra, ground_truth, root or data_dir)

    def domain_of(self, info: RowInfo) -> Domain:
        """The domain of a row, its task checked (GoldError with the reason when either fails)."""
        if self.load_domain is None:
            raise GoldError(f"{self.label} has no domains to load")
        return row_domain(self.load_domain, info)


def row_domain(load_domain: Callable[[str, str | None], Domain], info: RowInfo) -> Domain:
    """The domain of a row from ``load_domain``, its task checked (GoldError with the reason when either fails)."""
    try:
        domain = load_domain(info.domain, info.data_dir)
        domain.task(info.task_id)
    except (EngineError, KeyError, ValueError) as exc:
        raise GoldError(f"{info.data_source} task {info.task_id!r}: {exc}") from None
    return domain


# ------------------------------------------------------------------------------------------------ registry
_BENCHMARKS: dict[str, Benchmark] = {}
_LOCK = threading.Lock()


def register_benchmark(benchmark: Benchmark, *, replace: bool = False) -> Benchmark:
    """Add ``benchmark`` (the same record again is a no-op; another under a taken name is an error unless
    ``replace``). Its reward family is registered by :func:`verl_rewards.catalog.register_benchmarks`."""
    with _LOCK:
        return register_unique(
            _BENCHMARKS,
            benchmark.name,
            benchmark,
            kind="benchmark",
            replace=replace,
            hint="register_benchmark(..., replace=True)",
        )


def unregister_benchmark(name: str) -> None:
    """Remove a registered benchmark (tests that register their own)."""
    with _LOCK:
        _BENCHMARKS.pop(name, None)


def benchmarks() -> list[Benchmark]:
    """The registered benchmarks, in the order they were registered."""
    with _LOCK:
        return list(_BENCHMARKS.values())


def benchmark_named(name: str) -> Benchmark | None:
    """The benchmark registered as ``name``, or None."""
    with _LOCK:
        return _BENCHMARKS.get(name)
