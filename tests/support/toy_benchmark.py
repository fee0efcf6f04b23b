"""A third benchmark, "toy", defined in this one module: arithmetic questions in ``<data>/<domain>/tasks.json``,
answered in one turn, scored 1.0 when the answer states the task's number. ``tests/test_benchmark_record.py``
registers it with one catalog call (:func:`verl_rewards.catalog.add_benchmark`) and runs ``prepare``, the manager,
``export-sft gold`` and the smoke data builder on it: nothing else in the package names it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verl_rewards.benchmark import (
    Benchmark,
    ExportError,
    ExportPlan,
    GoldPlay,
    Option,
    PrepareEntry,
    RowInfo,
    SmokeSpec,
)
from verl_rewards.engine.data_dir import BenchmarkData, choose_data_dir
from verl_rewards.scoring.families import Family
from verl_rewards.scoring.runner import RewardScorer
from verl_rewards.scoring.spec import spec_from_callable

NAME = "toy"
DATA = BenchmarkData(NAME, "TOY_BENCHMARK_DATA_DIR", "toy")


class ToyDomain:
    """A toy domain: ``tasks.json`` holds ``{"splits": {name: [ids]}, "tasks": {id: {"question", "answer"}}}``."""

    def __init__(self, name: str, data_dir: str | None):
        root = choose_data_dir(data_dir, DATA)
        if root is None:
            raise FileNotFoundError(f"no toy data folder: pass data_dir or set {DATA.env_var}")
        self.name = name
        self.data_dir = Path(root) / name
        doc = json.loads((self.data_dir / "tasks.json").read_text(encoding="utf-8"))
        self.tasks: dict[str, dict[str, Any]] = doc["tasks"]
        self.splits: dict[str, list[str]] = doc["splits"]
        self.policy = "Answer with the number."
        self.terminate_tools: frozenset[str] = frozenset()

    def task(self, task_id: Any) -> dict[str, Any]:
        return self.tasks[str(task_id)]

    def split(self, name: str) -> list[str]:
        return list(self.splits[name])

    def tool_kinds(self) -> dict[str, str]:
        return {}

    def make_env(self, task_id: Any = None) -> Any:
        return None

    def gold_hash(self, task_id: Any) -> str:
        return ""


def load_domain(name: str, data_dir: str | None = None) -> ToyDomain:
    return ToyDomain(name, data_dir)


def row(domain: ToyDomain, task_id: str, index: int, split: str) -> dict[str, Any]:
    """A verl row of one task."""
    task = domain.task(task_id)
    return {
        "data_source": f"{NAME}/{domain.name}",
        "prompt": [{"role": "system", "content": domain.policy}, {"role": "user", "content": task["question"]}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": json.dumps({"task_id": task_id, "answer": task["answer"]})},
        "extra_info": {"task_id": task_id, "index": index, "split": split, "domain": domain.name},
    }


# ------------------------------------------------------------------------------------------------ reward
def toy_score(solution_str: str, ground_truth: Any) -> dict[str, float]:
    answer = json.loads(ground_truth)["answer"] if isinstance(ground_truth, str) else ground_truth["answer"]
    found = re.findall(r"-?\d+", solution_str)
    exact = float(bool(found) and found[-1] == str(answer))
    return {"score": exact, "toy_exact": exact}


def make_scorer(section: Mapping[str, Any] | None, tokenizer: Any = None) -> RewardScorer:
    return RewardScorer(spec_from_callable(toy_score, name=NAME, extra_keys=("toy_exact",)))


FAMILY = Family(
    name=NAME, matches=lambda source: source.startswith(f"{NAME}/"), make_scorer=make_scorer, extra_keys=("toy_exact",)
)


# ------------------------------------------------------------------------------------------------ gold
def gold_turns(info: RowInfo) -> list[dict[str, Any]]:
    answer = json.loads(info.ground_truth)["answer"]
    return [{"role": "assistant", "content": f"The answer is {answer}"}]


def export_plan(domain: str, split: str, mode: str | None, data_dir: str | None, rows_file: str | None) -> ExportPlan:
    dom = load_domain(domain, data_dir)
    if split not in dom.splits:
        raise ExportError(f"toy domain {domain!r} has no split {split!r}")
    rows = [row(dom, t, i, split) for i, t in enumerate(dom.split(split))]
    return ExportPlan(rows, None, f"{NAME}/{domain}", "single_turn", split, str(dom.data_dir.parent), [])


# ------------------------------------------------------------------------------------------------ prepare
def prepare(values: Mapping[str, Any]) -> tuple[list[str], int]:
    import pandas as pd

    dom = load_domain(values["domain"], values["data_dir"])
    out = Path(values["out"])
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for split in values["split"].split(","):
        rows = [row(dom, t, i, split) for i, t in enumerate(dom.split(split))]
        pd.DataFrame(rows).to_parquet(out / f"{split}.parquet")
        lines.append(f"{split}: {len(rows)} rows -> {out / f'{split}.parquet'}")
    return lines, 0


BENCHMARK = Benchmark(
    name=NAME,
    label="Toy",
    reward_family=lambda: FAMILY,
    data=DATA,
    data_help="toy: the folder holding <domain>/tasks.json",
    domains=lambda: ["sums"],
    load_domain=load_domain,
    row_mode=lambda extra: "single_turn",
    gold=GoldPlay(turns=gold_turns),
    export_plan=export_plan,
    prepare=PrepareEntry(
        about="toy questions -> verl parquet",
        run=prepare,
        errors=(OSError, KeyError, ValueError),
        options=(
            Option("--out", "output directory", required=True),
            Option("--split", "comma-separated splits", default="train"),
        ),
    ),
    smoke=SmokeSpec(
        recipe="recipes/toolrl_grpo/run_toolrl_grpo.sh",
        modes=("single",),
        domains=("sums",),
        split_for=lambda domain: "train",
        prepare_args=lambda domain, mode, data_dir: ["--data-dir", data_dir, "--domain", domain, "--split", "train"],
        response_length=64,
    ),
)


def write_data(root: Path) -> Path:
    """A toy data folder with domain ``sums``: three train tasks and one test task."""
    tasks = {f"t{i}": {"question": f"What is {i} + {i + 1}?", "answer": 2 * i + 1} for i in range(4)}
    folder = root / "sums"
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"splits": {"train": ["t0", "t1", "t2"], "test": ["t3"]}, "tasks": tasks}
    (folder / "tasks.json").write_text(json.dumps(doc), encoding="utf-8")
    return root
