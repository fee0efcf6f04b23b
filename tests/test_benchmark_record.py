"""A benchmark is one registered record (``verl_rewards.benchmark``, listed by ``verl_rewards.catalog``): a third
benchmark defined in one test module (``tests/support/toy_benchmark.py``) and one catalog call gets ``prepare``, the
manager's routing, the gold policy and ``export-sft gold`` without any other file naming it; and outside the catalog
and the benchmarks' own packages, no code compares benchmark names."""

from __future__ import annotations

import ast
import json

import pandas as pd
import pytest
import toy_benchmark

from verl_rewards import catalog
from verl_rewards.cli import main

from manager_support import build_manager, enc, make_batch
from repo_paths import REPO


@pytest.fixture
def toy(tmp_path):
    catalog.add_benchmark(toy_benchmark.BENCHMARK)
    try:
        yield toy_benchmark.write_data(tmp_path / "toy_data")
    finally:
        catalog.remove_benchmark(toy_benchmark.NAME)


def test_an_unregistered_benchmark_is_no_prepare_choice(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["prepare", "toy", "--out", "x"])
    assert exit_info.value.code == 2 and "invalid choice: 'toy'" in capsys.readouterr().err


def test_prepare_builds_its_subcommand_from_the_record(toy, tmp_path, capsys):
    out = tmp_path / "prepared"
    assert (
        main(
            [
                "prepare",
                "toy",
                "--data-dir",
                str(toy),
                "--domain",
                "toy/sums",
                "--out",
                str(out),
                "--split",
                "train,test",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines() == [
        f"train: 3 rows -> {out / 'train.parquet'}",
        f"test: 1 rows -> {out / 'test.parquet'}",
    ]
    rows = pd.read_parquet(out / "train.parquet").to_dict("records")
    assert [r["data_source"] for r in rows] == ["toy/sums"] * 3
    assert [r["extra_info"]["task_id"] for r in rows] == ["t0", "t1", "t2"]
    # the shared --domain and --data-dir help of every command reads the record
    with pytest.raises(SystemExit):
        main(["prepare", "toy", "--help"])
    text = capsys.readouterr().out
    assert "toy/sums; or the bare domain (sums)" in text and "$TOY_BENCHMARK_DATA_DIR" in text


def test_the_manager_routes_its_rows_to_its_family(toy, small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok)
    gts = [json.dumps({"task_id": "t1", "answer": 3}), json.dumps({"task_id": "t2", "answer": 5})]
    batch = make_batch(tok, ["What is 1 + 2?", "What is 2 + 3?"], ["The answer is 3", "It is 4"], gts=gts)
    batch.non_tensor_batch["data_source"][:] = "toy/sums"
    out = mgr(batch, return_dict=True)
    extra = out["reward_extra_info"]
    assert extra["toy_exact"] == [1.0, 0.0] and extra["base_score"] == [1.0, 0.0]
    assert out["reward_tensor"][0, len(enc(tok, "The answer is 3")) - 1].item() == 1.0


def test_gold_turns_and_export_sft_gold_come_from_the_record(toy, tmp_path, capsys):
    from toy_benchmark import load_domain, row

    from verl_rewards.gold import gold_assistant_turns, play_gold

    first = row(load_domain("sums", str(toy)), "t2", 0, "train")
    assert gold_assistant_turns(first) == [{"role": "assistant", "content": "The answer is 5"}]
    assert play_gold(first).messages[-2:] == [first["prompt"][1], {"role": "assistant", "content": "The answer is 5"}]
    out = tmp_path / "sft"
    args = [
        "export-sft",
        "gold",
        "toy",
        "--domain",
        "sums",
        "--split",
        "train",
        "--data-dir",
        str(toy),
        "--out",
        str(out),
    ]
    assert main(args) == 0
    assert "wrote 3 conversation(s)" in capsys.readouterr().out
    written = pd.read_parquet(out / "train.parquet")
    assert sorted(written["task_id"]) == ["t0", "t1", "t2"] and set(written["data_source"]) == {"toy/sums"}


def test_the_smoke_driver_runs_it_from_its_record(toy, tmp_path, monkeypatch, capsys):
    """``smoke toy``: the family choice, its default domain and mode, its data folder, the smoke rows with the gold
    turns of each row and the recipe's environment all come from the record's ``smoke`` settings."""
    from verl_rewards.commands import smoke
    from verl_rewards.commands.common import CliParser
    from verl_rewards.smoke.data import build_data, family_data_dir, smoke_benchmarks
    from verl_rewards.smoke.recipe import recipe_env

    bench = toy_benchmark.BENCHMARK
    assert bench in smoke_benchmarks()
    parser = CliParser()
    smoke.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["smoke", "toy", "--data-dir", str(toy)])
    assert smoke._resolve(args) == (bench, "sums", "single")
    data_dir = family_data_dir(args.data_dir, bench)
    assert data_dir == str(toy.resolve())
    prepared = tmp_path / "prepared"
    assert main(["prepare", "toy", "--data-dir", data_dir, "--domain", "sums", "--out", str(prepared)]) == 0
    source = "verl_rewards.gold:gold_assistant_turns"
    data = build_data(prepared / "train.parquet", None, tmp_path / "data", 2, 1, "script", source)
    assert len(pd.read_parquet(data.train)) == 2 and len(pd.read_parquet(data.val)) == 1
    assert json.dumps({"role": "assistant", "content": "The answer is 1"}) in data.texts  # t0's gold turn
    monkeypatch.delenv("EXPERIMENT_NAME", raising=False)
    env = recipe_env(bench, "sums", "single", data_dir, data, "/m", tmp_path, "scripted", 2)
    assert env["TOY_BENCHMARK_DATA_DIR"] == data_dir and env["EXPERIMENT_NAME"] == "smoke-toy-sums-single"
    capsys.readouterr()
    assert main(["smoke", "toy", "--sft", "--data-dir", data_dir, "--out", str(tmp_path / "run")]) == 1
    assert "--sft needs tau2 or tau_bench" in capsys.readouterr().err  # the records whose smoke settings allow it


# ------------------------------------------------------------------------------------------------ no name matching
#: the names of the built-in benchmarks, and ToolRL's data-source marker
NAMES = {"toolrl", "tau2", "tau_bench", "tau-bench", "rlla"}
#: where a benchmark's name may be compared: the catalog and the benchmarks' own packages
OWNERS = ("catalog.py", "toolrl/", "tau2/", "tau_bench/")


def _named(node: ast.AST) -> bool:
    """Whether ``node`` is a string constant (or a tuple / set / list of them) naming a benchmark or its prefix."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rstrip("/") in NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_named(e) for e in node.elts)
    return False


def name_comparisons(tree: ast.AST) -> list[int]:
    """The lines comparing a value with a benchmark's name: ``==``, ``!=``, ``in``, ``startswith`` /
    ``removeprefix`` / ``endswith`` with a name, and dict literals keyed by names."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(_named(n) for n in (node.left, *node.comparators)):
            lines.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"startswith", "endswith", "removeprefix", "removesuffix"}
            and any(_named(a) for a in node.args)
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.Dict) and any(k is not None and _named(k) for k in node.keys):
            lines.append(node.lineno)
    return lines


def test_the_rule_finds_every_kind_of_name_comparison():
    source = (
        'a == "tau2"\nb != "toolrl"\nc in ("tau2", "tau_bench")\nd.startswith("tau2/")\n"rlla" in e\n'
        'f = {"tau_bench": 1}\ng = "tau2"\nh(name="toolrl")\n'
    )
    assert name_comparisons(ast.parse(source)) == [1, 2, 3, 4, 5, 6]


def test_no_code_outside_the_catalog_and_the_benchmarks_compares_benchmark_names():
    package = REPO / "verl_rewards"
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if relative.startswith(OWNERS):
            continue
        found += [f"{relative}:{n}" for n in name_comparisons(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []
