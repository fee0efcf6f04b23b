"""Whether the configured contribution terms can ever fire, per data source (``verl-rewards check``): the step dicts
they read come from the rows' own columns or from the agent loop that plays them (:func:`.rollout.step_dict_fields`),
and a ``value_source: critic`` term needs a run with a critic."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .data import data_files
from .errors import CheckError
from .rollout import Loops, step_dict_fields

#: the columns (or extra_info fields) that carry a row's own step dicts
_STEP_DICT_COLUMNS = ("prev_step_dict", "cur_step_dict")
#: the loops that record step dicts, named in the fix of a term that cannot fire
_RECORDING_LOOPS = "tool_agent with the tau2 / tau-bench tools, tau2_agent or tau_bench_agent"


def contribution_reach(config: Any, manager: Any, loops: Loops) -> list[str]:
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
        from ..manager.config import critic_terms_problem

        problem = critic_terms_problem(config, contribution)
        if problem:
            raise CheckError("contribution", problem)
        names = ", ".join(t.name for t in critic)
        lines.append(f"contribution: {names} from the critic's values (added before the advantage)")
    terms = contribution.step_terms
    if not terms:
        return lines
    for source, (loop_names, carried) in sorted(source_loops(config).items()):
        if carried:
            lines.append(f"contribution: {source}: step dicts from the rows' own {'/'.join(_STEP_DICT_COLUMNS)}")
            continue
        for name in sorted(loop_names):
            fields, how = step_dict_fields(config, loops, name)
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


def source_loops(config: Any) -> dict[str, tuple[set[str], bool]]:
    """data_source -> (the agent loops its rows name, whether its rows carry step-dict columns themselves)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    default = str((config.actor_rollout_ref.rollout.get("agent") or {}).get("default_agent_loop") or "")
    out: dict[str, tuple[set[str], bool]] = {}
    for key in ("train_files", "val_files"):
        for path in data_files(config.data.get(key)):
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
