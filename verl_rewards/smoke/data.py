"""The data of a smoke run: which benchmarks a smoke run serves (the records whose ``smoke`` settings say how), the
benchmark's real ``prepare`` output cut to a few rows (with the scripted turns of each row when the script policy
plays them), the agent-loop YAML that wraps every row's loop, the longest prompt the tiny model must hold, and the
metrics verl's file logger writes (:func:`read_metrics`)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..benchmark import Benchmark, plain
from ..benchmark_list import benchmarks
from .errors import SmokeError

#: the agent loop that wraps every row's own loop (``<SMOKE_LOOP>__<inner>``)
SMOKE_LOOP = "verl_rewards_smoke_policy"


def smoke_benchmarks() -> list[Benchmark]:
    """The registered benchmarks a smoke run can train on (those with ``smoke`` settings), in catalog order."""
    return [b for b in benchmarks() if b.smoke is not None]


def family_data_dir(explicit: str | None, bench: Benchmark) -> str:
    """The benchmark's data folder by the one data-folder rule (:mod:`verl_rewards.engine.data_dir`): ``--data-dir``,
    else the variable, else the folder ``verl-rewards data get`` installs; ``""`` for a benchmark without a data
    folder; a :class:`SmokeError` when there is none or the variable names no folder."""
    from ..engine.data_dir import choose_data_dir
    from ..engine.errors import DataNotFoundError

    data = bench.data
    if data is None:
        return ""
    try:
        path = choose_data_dir(explicit, data, where="--data-dir")
    except DataNotFoundError as exc:
        raise SmokeError("set-up", str(exc)) from None
    if not path or not Path(path).is_dir():
        raise SmokeError("set-up", f"{bench.name} needs its data: --data-dir, ${data.env_var} or {data.how_to_get()}")
    return str(Path(path).resolve())


def prepare_rows(
    bench: Benchmark, domain: str, mode: str, data_dir: str, out: Path, retrieval: str | None = None
) -> tuple[Path, Path | None]:
    """Run ``verl-rewards prepare`` as a user would, with the arguments the benchmark's smoke settings give for
    ``domain`` and ``mode``; returns (parquet, tool_config or None). ``retrieval``: banking_knowledge's retrieval
    configuration (the rows and the tool config carry it to the tools)."""
    spec = bench.smoke
    if spec is None:
        raise SmokeError("set-up", f"{bench.name} has no smoke settings")
    cmd = [sys.executable, "-m", "verl_rewards.cli", "prepare", bench.name, *spec.prepare_args(domain, mode, data_dir)]
    cmd += ["--out", str(out)]
    if retrieval is not None:
        cmd += ["--retrieval", retrieval]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SmokeError("set-up", f"prepare failed ({shlex.join(cmd)}):\n{proc.stderr[-2000:]}")
    tools = out / "tool_config.yaml"
    return out / f"{spec.split_for(domain)}.parquet", tools if tools.is_file() else None


def tool_schemas(tool_config: Path | None) -> list[dict[str, Any]]:
    if tool_config is None:
        return []
    import yaml

    tools = (yaml.safe_load(tool_config.read_text(encoding="utf-8")) or {}).get("tools") or []
    schemas = []
    for tool in tools:
        if isinstance(tool, Mapping):  # verl's `tool_schema`, or the full schema our configs carry in the config
            schema = tool.get("tool_schema") or (tool.get("config") or {}).get("openai_schema")
            if schema:
                schemas.append(schema)
    return schemas


@dataclass
class SmokeData:
    """A smoke run's rows: the training and validation parquet, the tool config, the texts the tiny model's tokenizer
    learns from, the rows left out (no scripted turns) and the longest prompt."""

    train: Path
    val: Path
    tool_config: Path | None
    texts: list[str]
    dropped: int
    prompt_tokens: int = 0


def build_data(
    rows_file: Path, tool_config: Path | None, out: Path, need: int, val_rows: int, policy: str, source: str
) -> SmokeData:
    """``need`` training rows (repeated when there are fewer) and ``val_rows`` validation rows from ``prepare``'s
    output; under the script policy only rows with scripted turns, whose turns join the tokenizer's texts."""
    import pandas as pd

    frame = pd.read_parquet(rows_file)
    rows = [{k: plain(v) for k, v in r.items()} for r in frame.to_dict("records")]
    texts: list[str] = []
    kept: list[dict[str, Any]] = []
    dropped = 0
    script = None
    if policy == "script":
        from ..cpu.policy import load_script_source, row_view

        script = load_script_source(source)
    for row in rows:
        if script is not None:
            try:
                turns = script(row_view(row))
            except Exception:  # noqa: BLE001 - a row without a usable script is left out of the smoke data
                turns = None
            if not turns:
                dropped += 1
                continue
            texts += [json.dumps(t, ensure_ascii=False, default=str) for t in turns]
        kept.append(row)
        if len(kept) >= need + val_rows:
            break
    if not kept:
        raise SmokeError("set-up", f"no usable rows in {rows_file} ({dropped} without scripted turns)")
    train_rows = [kept[i % len(kept)] for i in range(need)]
    val_rows_list = kept[need : need + val_rows] or kept[:val_rows]
    for row in kept:
        texts += [str(m.get("content") or "") for m in row.get("prompt") or () if isinstance(m, Mapping)]
    texts += [json.dumps(s, ensure_ascii=False) for s in tool_schemas(tool_config)]
    out.mkdir(parents=True, exist_ok=True)
    train, val = out / "train.parquet", out / "val.parquet"
    pd.DataFrame(train_rows).to_parquet(train)
    pd.DataFrame(val_rows_list).to_parquet(val)
    return SmokeData(train, val, tool_config, texts, dropped)


def loop_name(split: str, inner: str | None) -> str:
    """The smoke's name of the wrapped loop serving ``split`` rows whose own loop is ``inner``."""
    return f"{SMOKE_LOOP}{'' if split == 'train' else '_' + split}__{inner or 'default'}"


def wrap_loops(
    data: SmokeData,
    policy: str,
    ratio: float,
    source: str,
    out: Path,
    val_ratio: float | None = None,
    val_seed: int | None = None,
) -> Path:
    """Route every row through the policy wrapper (its own loop as ``inner_agent``, one loop name per split, so
    the training rows mix scripted and sampled rollouts at ``ratio`` while validation plays ``val_ratio``, default
    all scripted, and draws from ``val_seed``, default verl's ``rollout.seed``); write the loops' YAML."""
    import pandas as pd
    import yaml

    ratios = {"train": ratio, "val": 1.0 if val_ratio is None else val_ratio}
    entries = []
    for split, path in (("train", data.train), ("val", data.val)):
        frame = pd.read_parquet(path)
        names = frame["agent_name"].tolist() if "agent_name" in frame else [None] * len(frame)
        frame["agent_name"] = [loop_name(split, n) for n in names]
        frame.to_parquet(path)
        entries += [
            {
                "name": loop_name(split, n),
                "_target_": "verl_rewards.cpu.policy.PolicyAgentLoop",
                "inner_agent": n,
                "policy": policy,
                "script_ratio": ratios[split],
                "script_source": source,
                "split": split,
                **({"seed": val_seed} if split == "val" and val_seed is not None else {}),
            }
            for n in sorted(set(names), key=str)
        ]
    path = out / "agent_loops.yaml"
    path.write_text(yaml.safe_dump(entries, sort_keys=False), encoding="utf-8")
    return path


def opening(extra_info: Any) -> list[dict[str, str]]:
    """Normal mode's first exchange, which the loop adds to the prompt before the agent's first turn: the greeting
    and the user's opening (the scripted user opens with the task's instructions, at most the whole scenario)."""
    extra = plain(extra_info) if extra_info is not None else {}
    if not isinstance(extra, Mapping) or extra.get("mode") != "normal":
        return []
    text = extra.get("user_scenario") or extra.get("instruction")
    if not isinstance(text, str) or not text:
        return []
    from ..engine.rules import GREETING

    return [{"role": "assistant", "content": GREETING}, {"role": "user", "content": text}]


def prompt_tokens(model_dir: str, data: SmokeData) -> int:
    """The longest first prompt of the smoke rows (normal mode: with the greeting and the user's opening)."""
    import pandas as pd
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    tools: Any = tool_schemas(data.tool_config) or None
    longest = 0
    for path in (data.train, data.val):
        frame = pd.read_parquet(path)
        extras = frame["extra_info"] if "extra_info" in frame else [None] * len(frame)
        for prompt, extra in zip(frame["prompt"], extras, strict=True):
            msgs = [dict(m) for m in plain(prompt)] + opening(extra)
            ids = tok.apply_chat_template(msgs, tools=tools, add_generation_prompt=True, tokenize=True)
            ids = ids["input_ids"] if isinstance(ids, Mapping) else ids
            longest = max(longest, len(ids))
    return longest


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """verl's file-logger JSONL: one ``{"step": s, "data": {...}}`` per logged step."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line:
            out.append(json.loads(line))
    return out
