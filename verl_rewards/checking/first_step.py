"""What ``verl-rewards check`` runs of the first training step, after it has built the step's parts
(:mod:`.startup`): what would otherwise fail only once the first rollout is done.

* ``algorithm.adv_estimator`` names an estimator of verl's registry (``verl.trainer.ppo.core_algos``, where the
  first advantage computation looks it up);
* every row of ``data.train_files`` / ``data.val_files``, as the reward manager reads it: its ``reward_fn`` field
  (a column or ``extra_info.reward_fn``) names a registered reward, and the reward the row is routed to gets every
  parameter it requires (a predefined input, a field of the row, a ``score_kwargs`` constant:
  :func:`verl_rewards.scoring.inputs.missing_inputs`). Rows that a multi-turn agent loop plays are left out of
  the parameter check: their loop may record more fields;
* rows choose no endpoint, credential or path: the tau2 load options they carry
  (tau2's :func:`verl_rewards.tau2.row_options.refused_in_row`).

Each problem is one line naming the key or the file and row, and the fix (a :class:`~.errors.CheckError`, as every
stage's).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import CheckError, describe

#: the fields verl adds to every row before the reward sees it (``RLHFDataset.__getitem__``, the trainer's ``uid``,
#: the agent-loop manager's ``agent_name``): a reward may ask for them by name
VERL_ROW_FIELDS = frozenset({"index", "tools_kwargs", "interaction_kwargs", "uid", "agent_name", "request_id"})
#: verl's one-turn agent loop (the default one): it records no fields for the reward
SINGLE_TURN = "single_turn_agent"
#: columns the checks do not need the values of (large), only their names
_SKIPPED_VALUES = ("prompt", "raw_prompt", "images", "videos")
_BATCH = 1024


def first_step(config: Any, manager: Any, data_files: list[tuple[str, str]]) -> list[str]:
    """Every check of the module doc on a built config, its reward manager and its data files (``(key, path)``:
    ``("train_files", path)``, already found readable); the summary lines."""
    _adv_estimator(config)
    return _rows(config, manager, data_files)


def _adv_estimator(config: Any) -> None:
    from verl.trainer.ppo import core_algos

    name = config.algorithm.get("adv_estimator")
    try:
        core_algos.get_adv_estimator_fn(name)
    except ValueError:
        known = sorted(core_algos.ADV_ESTIMATOR_REGISTRY)
        raise CheckError(
            "algorithm",
            f"algorithm.adv_estimator={name!r} is not an advantage estimator of verl: use one of {known}, or register "
            "yours with verl.trainer.ppo.core_algos.register_adv_est in a module the run imports",
        ) from None


def _rows(config: Any, manager: Any, data_files: list[tuple[str, str]]) -> list[str]:
    from ..manager.routing import Router

    router = getattr(manager, "router", None)
    router = router if isinstance(router, Router) else None
    score_kwargs = set(getattr(getattr(manager, "settings", None), "score_kwargs", None) or ())
    default_loop = str((config.actor_rollout_ref.rollout.get("agent") or {}).get("default_agent_loop") or SINGLE_TURN)
    rows = checked = 0
    for key, path in data_files:
        where = f"data.{key}: {path}"
        for i, row, columns in _read_rows(path, where):
            rows += 1
            _row_options(row, f"{where} row {i}")
            if router is None:
                continue
            spec = _routed_spec(router, row, f"{where} row {i}")
            if spec is None or str(row.get("agent_name") or default_loop) != SINGLE_TURN:
                continue
            _inputs(spec, row, columns | score_kwargs, f"{where} row {i}")
            checked += 1
    if not rows:
        return []
    inputs = f"the inputs of {checked} one-turn rows' rewards" if router is not None else "no rewards (another manager)"
    return [f"rows: {rows} read: reward_fn fields, {inputs}, load options"]


def _read_rows(path: str, where: str) -> Iterator[tuple[int, dict[str, Any], set[str]]]:
    """``(index, row, column names)`` of each row of a parquet file, the large columns' values left out."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(Path(path).expanduser())
        names = set(parquet.schema_arrow.names)
        wanted = [c for c in parquet.schema_arrow.names if c not in _SKIPPED_VALUES]
        start = 0
        for batch in parquet.iter_batches(batch_size=_BATCH, columns=wanted):
            for offset, row in enumerate(batch.to_pylist()):
                yield start + offset, row, names
            start += batch.num_rows
    except CheckError:
        raise
    except Exception as exc:  # noqa: BLE001 - not parquet, truncated
        raise CheckError("data", f"{where}: {describe(exc)}") from None


def _routed_spec(router: Any, row: dict[str, Any], where: str) -> Any:
    """The reward spec ``router`` gives this row at the first step (its own ``reward_fn`` field first)."""
    from ..scoring.contract import RewardInputError
    from ..scoring.sample import Sample

    sample = Sample.from_text(row, "")
    try:
        scorer = router(sample)
    except RewardInputError:
        field = "reward_fn" if row.get("reward_fn") is not None else "extra_info.reward_fn"
        value = row.get("reward_fn") if field == "reward_fn" else sample.extra_info.get("reward_fn")
        raise CheckError(
            "routing",
            f"{where}: {field} {value!r} is not a registered reward (registered: {_registered()}); fix the row, or "
            "register the reward in a module of reward.reward_kwargs.modules",
        ) from None
    except Exception as exc:  # noqa: BLE001 - no scorer for the data source, a family that cannot be built
        raise CheckError("routing", f"{where}: {describe(exc)}") from None
    return getattr(scorer, "spec", None)


def _registered() -> str:
    from ..scoring.spec import registered_names

    return ", ".join(registered_names())


def _inputs(spec: Any, row: dict[str, Any], given: set[str], where: str) -> None:
    from ..scoring.inputs import missing_inputs, row_fields
    from ..scoring.sample import Sample

    fields = set(row_fields(Sample.from_text(row, ""))) | given | VERL_ROW_FIELDS
    missing = missing_inputs(spec, fields)
    if missing:
        raise CheckError(
            "inputs",
            f"{where} ({row.get('data_source')}): reward {spec.name!r} requires {missing}, which neither the "
            "predefined inputs nor the row (its columns, extra_info and reward_model keys) nor "
            "reward.reward_kwargs.score_kwargs provide: add the field to the data, or the constant to score_kwargs",
        )


def _row_options(row: dict[str, Any], where: str) -> None:
    """The load options a row carries ask for nothing a row may not choose (the row's benchmark's check:
    :attr:`verl_rewards.benchmark.Benchmark.check_row`)."""
    from ..catalog import benchmark_for

    benchmark = benchmark_for(str(row.get("data_source") or ""))
    refused = benchmark.check_row(row) if benchmark is not None and benchmark.check_row is not None else None
    if refused:
        raise CheckError("data", f"{where}: {refused}")
