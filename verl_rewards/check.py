"""``verl-rewards check -- HYDRA_OVERRIDES...``: a training config checked in seconds, on a laptop, before a GPU
allocation.

It does what ``python -m verl.trainer.main_ppo`` does at start-up, in this process and without Ray or a model:

1. ``import verl`` (verl loads its plugins, this one included, through the ``verl.plugins`` entry point: when verl
   would not load it, every later step fails as the run would);
2. composes verl's ``ppo_trainer.yaml`` with Hydra and the overrides (``hydra.searchpath=[pkg://verl_rewards.configs]``
   and ``+verl_rewards=contribution`` included), then runs ``main_ppo``'s driver checks: ``auto_set_device`` and
   ``validate_config``;
3. the task runner's: the V1 trainer class of ``trainer.v1.trainer_mode``, the config resolved; for the async modes
   (``colocate_async``, ``separate_async`` and trainers built on them) what their trainer, replay buffer and
   checkpoint engine assert at start-up;
4. builds the reward manager the way each reward worker does (``load_reward_manager``: the manager by name, the
   custom reward function, every ``reward.reward_kwargs`` key and family section; the tokenizer too when
   ``actor_rollout_ref.model`` names a local folder);
5. the agent-loop side: the tools of ``multi_turn.tool_config_path`` / ``function_tool_path`` (loaded as each
   agent-loop worker loads them), ``agent.agent_loop_config_path``, the default agent loop and every ``agent_name``
   of the data registered, and the settings of the loops that read their own (``custom.tau2``, ``custom.tau_bench``);
6. the data: ``data.train_files`` / ``data.val_files`` exist and are readable; which reward scores each
   ``data_source`` they hold, and every row-level ``reward_fn`` names a registered reward;
7. what the first step runs (:mod:`verl_rewards.check_step`): ``algorithm.adv_estimator`` in verl's registry, every
   row's ``reward_fn`` field and its reward's required inputs, and no row choosing an endpoint, credential or path.
8. the contribution terms: per data source, what records the step dicts the configured terms read (the rows'
   own columns, or the agent loop that plays them: ``tool_agent`` with the tau2 / tau-bench tools, ``tau2_agent``,
   ``tau_bench_agent``); a term that can never fire there (verl's ``single_turn_agent`` records none) fails, and
   so does a ``value_source: critic`` term in a run without a critic.

The first failure is printed as one line (``verl-rewards check: error: <stage>: <message>``, exit code 2); a good
config prints its verdict line (exit code 0); ``-v`` adds the summary and what verl printed while building.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

HELP = "check a main_ppo config (Hydra overrides) as a run's start-up would, without Ray or a model"
DESCRIPTION = __doc__.split("\n\n", 1)[0] if __doc__ else HELP


class CheckError(Exception):
    """A start-up failure, with the stage it happened in."""

    def __init__(self, stage: str, message: str):
        self.stage = stage
        super().__init__(f"{stage}: {message}")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``check`` subcommand to the ``verl-rewards`` subparsers."""
    p = sub.add_parser("check", help=HELP, description=HELP)
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print the summary (trainer, reward manager, agent loops, data, routing) and what verl printed",
    )
    p.add_argument(
        "overrides",
        nargs=argparse.REMAINDER,
        metavar="-- HYDRA_OVERRIDES",
        help="the overrides you would give main_ppo (after --)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """0 and a summary when the config would start; 2 and one line naming the stage that failed."""
    overrides = list(args.overrides or [])
    if overrides and overrides[0] == "--":
        overrides = overrides[1:]
    bad = [o for o in overrides if o.startswith("-")]
    if bad:
        return _fail(CheckError("arguments", f"{bad[0]!r} is not a Hydra override (check takes overrides only)"))
    printed = io.StringIO()  # what verl prints while it builds (tool schemas, configs): shown with -v only
    try:
        with contextlib.redirect_stdout(sys.stdout if args.verbose else printed):
            lines = check(overrides)
    except CheckError as exc:
        return _fail(exc)
    print("\n".join(lines if args.verbose else lines[:1]))
    return 0


def _fail(exc: BaseException) -> int:
    message = " ".join(str(exc).split()) or type(exc).__name__
    print(f"verl-rewards check: error: {message}", file=sys.stderr)
    return 2


def _message(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def check(overrides: Sequence[str]) -> list[str]:
    """Every start-up stage (module doc) on ``overrides``; the summary lines, or :class:`CheckError`."""
    started = time.perf_counter()
    config = _compose(overrides)
    _driver(config)
    trainer = _task_runner(config)
    trainer_mode = _async_mode_constraints(config)
    manager = _reward_manager(config)
    loops = _agent_loops(config)
    data = _data(config, manager, loops)
    from .check_step import StepError, first_step  # what the first step runs

    files = [(key, path) for key in ("train_files", "val_files") for path in _files(config.data.get(key))]
    try:
        data += first_step(config, manager, files)
    except StepError as exc:
        raise CheckError(exc.stage, str(exc)) from None
    contribution = _contribution_reach(config, manager, loops)
    took = time.perf_counter() - started
    return [
        f"verl-rewards check: ok ({len(overrides)} overrides, {took:.1f} s)",
        f"  trainer: {trainer}",
        *([f"  {trainer_mode}"] if trainer_mode else []),
        f"  reward manager: {_describe_manager(config, manager)}",
        *(f"  {line}" for line in loops.lines),
        *(f"  {line}" for line in data),
        *(f"  {line}" for line in contribution),
    ]


# ----------------------------------------------------------------------------------------------- stages
def _compose(overrides: Sequence[str]) -> Any:
    import verl  # noqa: F401 - verl loads its plugins here, as in main_ppo

    from .verl_config import compose_config

    try:
        return compose_config(list(overrides))
    except Exception as exc:  # noqa: BLE001 - Hydra / OmegaConf errors of every kind
        raise CheckError("compose", _message(exc)) from None


def _driver(config: Any) -> None:
    """``main_ppo.main``'s checks before Ray starts."""
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config
    from verl.utils.device import auto_set_device

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # its progress lines; the summary says what matters
            auto_set_device(config)
            validate_config(
                config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
            )
    except Exception as exc:  # noqa: BLE001 - verl raises AssertionError, ValueError, ...
        raise CheckError("validate_config", _message(exc)) from None


def _task_runner(config: Any) -> str:
    """The task runner's set-up: the trainer class (V1) and the resolved config."""
    from omegaconf import OmegaConf

    mode = "legacy trainer (use_v1=False)"
    try:
        if config.trainer.use_v1:
            from verl.trainer.ppo.v1 import get_trainer_cls

            name = str(config.trainer.v1.trainer_mode)
            _known_trainer_mode(name)
            cls = get_trainer_cls(name)
            retired = getattr(cls, "retired", None)
            if retired:  # a retired mode fails when the trainer is built; check builds none
                raise ValueError(retired)
            mode = f"V1 {cls.__name__} (trainer_mode={name})"
        OmegaConf.resolve(config)
    except Exception as exc:  # noqa: BLE001
        raise CheckError("trainer", _message(exc)) from None
    return f"{mode}, adv_estimator={config.algorithm.adv_estimator}, rollout.n={config.actor_rollout_ref.rollout.n}"


def _async_mode_constraints(config: Any) -> str | None:
    """What verl's async V1 trainers assert when they start (``trainer_base.py``, ``replay_buffer.py``,
    ``trainer_separate_async.py``), checked here: the first one broken is the error (stage ``trainer mode
    <mode>``), else a summary line. ``None`` for the sync trainer and the legacy one."""
    if not config.trainer.use_v1:
        return None
    from verl.trainer.ppo.utils import need_reward_model
    from verl.trainer.ppo.v1 import PPOTrainerColocateAsync, PPOTrainerSeparateAsync, get_trainer_cls

    cls = get_trainer_cls(str(config.trainer.v1.trainer_mode))
    if issubclass(cls, PPOTrainerSeparateAsync):
        mode = "separate_async"
    elif issubclass(cls, PPOTrainerColocateAsync):
        mode = "colocate_async"
    else:
        return None
    v1, rollout = config.trainer.v1, config.actor_rollout_ref.rollout
    section = v1.get(mode) or {}
    batch, sync_step = int(config.data.train_batch_size), section.get("parameter_sync_step", 1)
    mini, sampler = int(config.actor_rollout_ref.actor.ppo_mini_batch_size), v1.sampler
    threshold, strategy = sampler.get("max_off_policy_threshold"), sampler.get("max_off_policy_strategy")
    engine = rollout.checkpoint_engine
    rules: list[tuple[bool, str]] = [
        (
            threshold is None or (isinstance(threshold, int) and not isinstance(threshold, bool) and threshold > 0),
            f"trainer.v1.sampler.max_off_policy_threshold must be an integer > 0 or null, got {threshold!r} "
            "(verl/trainer/ppo/v1/replay_buffer.py)",
        ),
        (
            strategy in ("drop", "wait"),
            f"trainer.v1.sampler.max_off_policy_strategy must be drop or wait, got {strategy!r} "
            "(verl/trainer/ppo/v1/replay_buffer.py)",
        ),
        (
            isinstance(sync_step, int) and sync_step > 0 and batch % sync_step == 0,
            f"data.train_batch_size ({batch}) must be divisible by trainer.v1.{mode}.parameter_sync_step "
            f"({sync_step}) (verl/trainer/ppo/v1/trainer_base.py, PPOTrainer.step)",
        ),
    ]
    if mode == "separate_async":
        # verl ignores the switch without hybrid replicas (actor_rollout_ref.hybrid_engine=False)
        hybrid = bool(config.actor_rollout_ref.get("hybrid_engine", True))
        switch = hybrid and bool((section.get("hybrid_rollout") or {}).get("enable_switch", False))
        rules += [
            (
                batch == sync_step * mini,
                f"data.train_batch_size ({batch}) must equal trainer.v1.separate_async.parameter_sync_step "
                f"({sync_step}) x actor_rollout_ref.actor.ppo_mini_batch_size ({mini}) "
                "(verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                int(rollout.nnodes) > 0,
                f"actor_rollout_ref.rollout.nnodes must be > 0 (the standalone rollout's nodes), got {rollout.nnodes} "
                "(verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                int(rollout.n_gpus_per_node) > 0,
                "actor_rollout_ref.rollout.n_gpus_per_node must be > 0 (the standalone rollout's devices per node), "
                f"got {rollout.n_gpus_per_node} (verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                engine.backend != "naive",
                "actor_rollout_ref.rollout.checkpoint_engine.backend must not be naive: the standalone rollout runs "
                "in other processes (nccl, nixl, ...; cpu_gloo on the CPU) "
                "(verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                not need_reward_model(config) or bool(config.reward.reward_model.enable_resource_pool),
                "reward.reward_model.enable_resource_pool must be True with a reward model: the standalone rollout "
                "never pauses to free the devices (verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
            (
                not (switch and bool((rollout.get("disaggregation") or {}).get("enabled", False))),
                "trainer.v1.separate_async.hybrid_rollout.enable_switch does not support "
                "actor_rollout_ref.rollout.disaggregation.enabled (verl/trainer/ppo/v1/trainer_separate_async.py)",
            ),
        ]
    for ok, message in rules:
        if not ok:
            raise CheckError(f"trainer mode {mode}", message)
    _checkpoint_backend(engine)
    parts = [f"parameter_sync_step {sync_step}", f"max_off_policy_threshold {threshold} ({strategy})"]
    parts.append(f"num_warmup_batches {section.get('num_warmup_batches', 1)}")
    if mode == "separate_async":
        parts.insert(1, f"standalone rollout {rollout.nnodes} x {rollout.n_gpus_per_node} devices")
        parts.insert(2, f"checkpoint engine {engine.backend}")
    return f"trainer mode: {mode} ({', '.join(parts)})"


def _checkpoint_backend(engine: Any) -> None:
    """The actor workers build ``checkpoint_engine.backend`` from verl's registry (``verl/workers/engine_workers.py``),
    after importing ``custom_backend_module``."""
    from verl.checkpoint_engine import CheckpointEngineRegistry
    from verl.utils.import_utils import import_external_libs

    try:
        import_external_libs(engine.get("custom_backend_module") or None)
        CheckpointEngineRegistry.get(str(engine.backend))
    except Exception as exc:  # noqa: BLE001 - ImportError, ValueError naming the registered backends
        raise CheckError("checkpoint engine", f"actor_rollout_ref.rollout.checkpoint_engine: {_message(exc)}") from None


def _known_trainer_mode(name: str) -> None:
    """An unknown V1 trainer mode is an error listing the modes a run can use: verl's registry less the retired
    names this package keeps in it only to explain them (:func:`verl_rewards.metrics`)."""
    from verl.trainer.ppo.v1 import trainer_base

    registry = trainer_base.TRAINER_REGISTRY
    if name not in registry:
        usable = sorted(k for k, cls in registry.items() if not getattr(cls, "retired", None))
        raise ValueError(f"trainer.v1.trainer_mode={name!r} is not a V1 trainer mode; available: {usable}")


def _tokenizer(config: Any) -> Any:
    """The tokenizer a reward worker loads, when it is a local folder (a hub name would need a download)."""
    model = config.actor_rollout_ref.model
    path = model.get("tokenizer_path") or model.get("path")
    if not path or not Path(str(path)).expanduser().is_dir():
        return None
    from verl.utils import hf_tokenizer

    try:
        return hf_tokenizer(str(Path(str(path)).expanduser()), trust_remote_code=True)
    except Exception as exc:  # noqa: BLE001
        raise CheckError("tokenizer", f"{path}: {_message(exc)}") from None


def _reward_manager(config: Any) -> Any:
    """The manager as every ``RewardLoopWorker`` builds it (verl's ``load_reward_manager``)."""
    from verl.trainer.ppo.reward import load_reward_manager

    tokenizer = _tokenizer(config)
    try:
        return load_reward_manager(config, tokenizer)
    except SystemExit as exc:  # verl's loader of reward.custom_reward_function.path runs the file's top level
        raise CheckError("reward manager", f"a module it imports called sys.exit({exc.code!r}) at import") from None
    except Exception as exc:  # noqa: BLE001 - ManagerConfigError, verl's lookup and loading errors
        raise CheckError("reward manager", _message(exc)) from None


class _Loops:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.registry: dict[str, Any] = {}
        self.checked: set[str] = set()
        self.tools: list[Any] = []


def _agent_loops(config: Any) -> _Loops:
    """Tools, agent-loop registry and our loops' settings, as an ``AgentLoopWorker`` reads them."""
    from verl.utils.import_utils import resolve_config_path

    from .verl_compat import agent_loop_registry

    out = _Loops()
    rollout = config.actor_rollout_ref.rollout
    multi_turn = rollout.get("multi_turn") or {}
    tool_path, function_path = multi_turn.get("tool_config_path"), multi_turn.get("function_tool_path")
    if tool_path or function_path:
        from verl.tools.tool_registry import load_all_tools

        try:
            tools = load_all_tools(
                tool_config_path=resolve_config_path(tool_path) if tool_path else None,
                function_tool_path=resolve_config_path(function_path) if function_path else None,
            )
        except Exception as exc:  # noqa: BLE001
            raise CheckError("tools", f"{tool_path or function_path}: {_message(exc)}") from None
        out.tools = list(tools)
        names = [getattr(t, "name", None) or type(t).__name__ for t in tools]
        out.lines.append(f"tools: {len(tools)} from {tool_path or function_path} ({_short(names)})")
    agent = rollout.get("agent") or {}
    loop_config_path = agent.get("agent_loop_config_path")
    registry: dict[str, Any] = dict(agent_loop_registry())
    if loop_config_path:
        from omegaconf import OmegaConf

        try:
            entries: Any = OmegaConf.load(resolve_config_path(loop_config_path))
            for entry in entries:
                registry[str(entry.name)] = entry
        except Exception as exc:  # noqa: BLE001
            raise CheckError("agent loops", f"{loop_config_path}: {_message(exc)}") from None
    out.registry = registry
    default = agent.get("default_agent_loop")
    if default:
        _agent_loop(config, out, str(default), "actor_rollout_ref.rollout.agent.default_agent_loop")
        out.lines.append(f"agent loop: {default}{_settings_note(config, str(default))}")
    return out


def _agent_loop(config: Any, loops: _Loops, name: str, where: str) -> None:
    """``name`` is registered; a loop that reads its own settings (``load_settings``) accepts them."""
    if name in loops.checked:
        return
    entry = loops.registry.get(name)
    if entry is None:
        raise CheckError(
            "agent loop", f"{where}: agent loop {name!r} is not registered; registered: {sorted(loops.registry)}"
        )
    target = entry.get("_target_") if hasattr(entry, "get") else None
    if target:
        from hydra.utils import get_class

        try:
            cls = get_class(str(target))
            load_settings = getattr(cls, "load_settings", None)
            if load_settings is not None:
                load_settings(config)
        except Exception as exc:  # noqa: BLE001 - settings errors are ValueErrors naming their key
            raise CheckError(f"agent loop {name}", _message(exc)) from None
    loops.checked.add(name)


def _settings_note(config: Any, name: str) -> str:
    from .catalog import benchmarks

    custom = config.actor_rollout_ref.rollout.get("custom") or {}
    for section in (b.name for b in benchmarks()):  # a benchmark's loops: <name>_agent, settings under custom.<name>
        user = ((custom.get(section) or {}).get("user") or {}) if name.startswith(section) else {}
        if user:
            where = f" {user.get('model')} at {user.get('base_url')}" if user.get("backend") == "openai" else ""
            return f" (user: {user.get('backend')}{where})"
    return ""


def _files(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _data(config: Any, manager: Any, loops: _Loops) -> list[str]:
    """Each data file is readable; every ``agent_name`` is registered; which reward scores each data source."""
    counts: Counter[str] = Counter()
    row_rewards: set[str] = set()
    lines = []
    for key in ("train_files", "val_files"):
        files = _files(config.data.get(key))
        for path in files:
            table = _read_columns(path, key)
            rows = table.num_rows
            columns = set(table.column_names)
            sources = table.column("data_source").to_pylist() if "data_source" in columns else ["<none>"] * rows
            counts.update(str(s) for s in sources)
            if "agent_name" in columns:
                for name in sorted({str(n) for n in table.column("agent_name").to_pylist() if n}):
                    _agent_loop(config, loops, name, f"{path}: column agent_name")
            if "reward_fn" in columns:
                row_rewards.update(str(n) for n in table.column("reward_fn").to_pylist() if n)
            lines.append(f"data.{key}: {path} ({rows} rows)")
    router = getattr(manager, "router", None)
    for name in sorted(row_rewards):
        if router is not None:
            try:
                router.named(name)
            except Exception as exc:  # noqa: BLE001
                raise CheckError("routing", f"column reward_fn: {_message(exc)}") from None
    for source, n in sorted(counts.items()):
        lines.append(f"  {source} ({n} rows) -> {_route(router, source)}")
    return lines


def _read_columns(path: str, key: str) -> Any:
    import pyarrow.parquet as pq

    local = Path(os.path.expanduser(path))
    if not local.is_file():
        raise CheckError("data", f"data.{key}: {path} does not exist (prepare the data first, or fix the path)")
    try:
        schema = pq.read_schema(local)
        wanted = [c for c in ("data_source", "agent_name", "reward_fn") if c in schema.names]
        return pq.read_table(local, columns=wanted)
    except Exception as exc:  # noqa: BLE001 - not parquet, truncated
        raise CheckError("data", f"data.{key}: {path}: {_message(exc)}") from None


def _route(router: Any, source: str) -> str:
    if router is None:
        return "the manager's own rule (not the contribution manager)"
    try:
        return str(router.describe(source))
    except Exception as exc:  # noqa: BLE001
        raise CheckError("routing", f"data_source {source!r}: {_message(exc)}") from None


def _describe_manager(config: Any, manager: Any) -> str:
    name = config.reward.reward_manager.name
    settings = getattr(manager, "settings", None)
    if settings is None:
        return f"{name} ({type(manager).__name__})"
    return (
        f"{name} ({type(manager).__name__}); contribution: {settings.contribution.describe()}; "
        f"timeout_s={settings.timeout_s:g}, on_error={settings.on_error}, executor={settings.executor}"
    )


def _short(names: Iterable[Any], limit: int = 6) -> str:
    names = [str(n) for n in names]
    return ", ".join(names[:limit]) + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


# ------------------------------------------------------------------------------------------- contribution
_STEP_DICT_COLUMNS = ("prev_step_dict", "cur_step_dict")
_RECORDING_LOOPS = "tool_agent with the tau2 / tau-bench tools, tau2_agent or tau_bench_agent"


def _contribution_reach(config: Any, manager: Any, loops: _Loops) -> list[str]:
    """Per data source, whether the configured contribution terms can get what they read: step dicts (from the
    rows' own columns or the agent loop that plays them) or, for ``value_source: critic``, a critic. A term that
    can never fire is a :class:`CheckError` naming the data source and the fix."""
    settings = getattr(manager, "settings", None)
    contribution = getattr(settings, "contribution", None)
    if contribution is None or not contribution.enabled:
        return []
    lines = []
    critic = contribution.critic_terms
    if critic:
        from .manager.config import critic_terms_problem

        problem = critic_terms_problem(config, contribution)
        if problem:
            raise CheckError("contribution", problem)
        names = ", ".join(t.name for t in critic)
        lines.append(f"contribution: {names} from the critic's values (added before the advantage)")
    terms = contribution.step_terms
    if not terms:
        return lines
    for source, (loop_names, carried) in sorted(_source_loops(config).items()):
        if carried:
            lines.append(f"contribution: {source}: step dicts from the rows' own {'/'.join(_STEP_DICT_COLUMNS)}")
            continue
        for name in sorted(loop_names):
            fields, how = _step_dict_fields(config, loops, name)
            if fields is None:
                lines.append(f"contribution: {source}: {how}: unknown whether it records step dicts")
                continue
            lost = [t for t in terms if t.step_field not in fields]
            if lost:
                what = ", ".join(f"{t.name} ({t.type}, reads {t.step_field})" for t in lost)
                records = f"records only {', '.join(fields)}" if fields else "records no step dicts"
                raise CheckError(
                    "contribution",
                    f"data source {source!r}: {how} {records}, so term(s) {what} can never fire there (a silent "
                    f"0): turn them off (reward.reward_kwargs.contribution.type=none, or CONTRIBUTION=0) or train "
                    f"{source!r} with a loop that records them ({_RECORDING_LOOPS})",
                )
            lines.append(f"contribution: {source}: step dicts from {how}")
    return lines


def _source_loops(config: Any) -> dict[str, tuple[set[str], bool]]:
    """data_source -> (the agent loops its rows name, whether its rows carry step-dict columns themselves)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    default = str((config.actor_rollout_ref.rollout.get("agent") or {}).get("default_agent_loop") or "")
    out: dict[str, tuple[set[str], bool]] = {}
    for key in ("train_files", "val_files"):
        for path in _files(config.data.get(key)):
            local = Path(os.path.expanduser(path))
            schema = pq.read_schema(local)
            extra = schema.field("extra_info").type if "extra_info" in schema.names else None
            carried = all(c in schema.names for c in _STEP_DICT_COLUMNS) or (
                isinstance(extra, pa.StructType) and all(extra.get_field_index(c) >= 0 for c in _STEP_DICT_COLUMNS)
            )
            wanted = [c for c in ("data_source", "agent_name") if c in schema.names]
            table = pq.read_table(local, columns=wanted)
            rows = table.num_rows
            sources = table.column("data_source").to_pylist() if "data_source" in wanted else ["<none>"] * rows
            agents = table.column("agent_name").to_pylist() if "agent_name" in wanted else [None] * rows
            for source, agent in zip(sources, agents, strict=True):
                names, had = out.setdefault(str(source), (set(), True))
                names.add(str(agent or default))
                out[str(source)] = (names, had and carried)
    return out


def _step_dict_fields(config: Any, loops: _Loops, name: str, depth: int = 0) -> tuple[tuple[str, ...] | None, str]:
    """The step-dict fields the agent loop ``name`` records (None: unknown, a loop of someone else's) and how to
    say which loop that is."""
    from hydra.utils import get_class
    from verl.experimental.agent_loop.single_turn_agent_loop import SingleTurnAgentLoop
    from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop

    from .cpu.policy import PolicyAgentLoop

    entry: Any = loops.registry.get(name)
    target = entry.get("_target_") if entry is not None and hasattr(entry, "get") else None
    if not target:
        return None, f"agent loop {name}"
    cls = get_class(str(target))
    if issubclass(cls, PolicyAgentLoop) and depth < 3:  # the smoke wrapper plays the row's own loop
        inner = entry.get("inner_agent") or (config.actor_rollout_ref.rollout.get("agent") or {}).get(
            "default_agent_loop"
        )
        return _step_dict_fields(config, loops, str(inner), depth + 1)
    if issubclass(cls, SingleTurnAgentLoop):
        return (), f"agent loop {name}"
    if issubclass(cls, ToolAgentLoop):
        recording = [t for t in loops.tools if getattr(t, "step_dict_fields", ())]
        if not recording:
            return (), f"agent loop {name} (its tools)"
        fields = tuple(dict.fromkeys(f for t in recording for f in t.step_dict_fields))
        return fields, f"agent loop {name} with the {getattr(recording[0], 'label', 'recording')} tools"
    declared = getattr(cls, "step_dict_fields", None)
    if declared is None:
        return None, f"agent loop {name} ({target})"
    return tuple(declared), f"agent loop {name}"
