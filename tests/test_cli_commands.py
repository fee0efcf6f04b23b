"""The ``verl-rewards`` command as a new user meets it: one module per command, ``--help`` that describes every
command and option with its default and no RST markup, one spelling of a domain everywhere (the data source's own
name accepted), errors that name the flag the user typed, ``score`` writing only what it is asked to, and a run's
extra keys being those of the rewards it can reach."""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from verl_rewards.cli import COMMAND_MODULES, COMMANDS, build_parser, main
from verl_rewards.commands.common import split_domain
from verl_rewards.engine.data_dir import TAU_BENCH_DATA

from data_support import installed_data_home, require_root
from repo_paths import DATA
from tau2_support import VENDORED

ENDPOINTS = [
    "--agent-base-url",
    "http://127.0.0.1:9/v1",
    "--agent-model",
    "a",
    "--user-base-url",
    "http://127.0.0.1:9/v1",
    "--user-model",
    "u",
]


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _subparsers(sub, (*path, name))


def _error(capsys, command: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"verl-rewards {command}: error: ") and err.count("\n") == 1, err
    return err


# -- one module per command --------------------------------------------------------------------------------------
def test_every_command_is_a_module_with_help_add_parser_and_run():
    names = [path[0] for path, _ in _subparsers(build_parser()) if len(path) == 1]
    assert names == [
        "doctor",
        "data",
        "demo",
        "score",
        "prepare",
        "simulate",
        "eval",
        "check",
        "smoke",
        "learn",
        "export-sft",
    ]
    for module in COMMANDS:
        assert isinstance(module.HELP, str) and module.HELP and "``" not in module.HELP
        assert callable(module.add_parser) and callable(module.run)


# -- --help ------------------------------------------------------------------------------------------------------
def test_help_describes_every_command_and_option_with_its_default_and_no_rst_markup():
    parser = build_parser()
    assert "``" not in parser.format_help()
    seen = 0
    for path, sub in _subparsers(parser):
        assert sub.description, f"verl-rewards {' '.join(path)} has no description"
        text = sub.format_help()
        assert "``" not in text, path
        formatter = sub._get_formatter()
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            seen += 1
            assert action.help, f"verl-rewards {' '.join(path)} {action.option_strings or action.dest}: no help"
            default = action.default
            worth_showing = not (default is None or default is False or default in ("", []))
            if action.option_strings and worth_showing:
                assert "default" in formatter._expand_help(action).lower(), (path, action.option_strings)
    assert seen > 80


def test_help_shows_the_defaults_of_the_code_that_owns_them():
    from verl_rewards.contribution import DEFAULT_BETA
    from verl_rewards.engine.rules import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS
    from verl_rewards.manager.config import DEFAULT_TIMEOUT_S
    from verl_rewards.tau_bench.normal import MAX_NUM_STEPS

    parsers = dict(_subparsers(build_parser()))
    simulate = " ".join(parsers[("simulate",)].format_help().split())
    assert f"tau2's step limit (default: {DEFAULT_MAX_STEPS})" in simulate
    assert f"tau2's tool-error limit (default: {DEFAULT_MAX_ERRORS})" in simulate
    assert f"the agent's turns (default: {MAX_NUM_STEPS})" in simulate
    score = " ".join(parsers[("score",)].format_help().split())
    assert f"(default: {DEFAULT_TIMEOUT_S})" in score and f"(default: {DEFAULT_BETA})" in score
    assert "--hist FILE" in score and "(default: none)" in score


# -- one spelling of a domain ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "bench", "expected"),
    [
        ("airline", None, ("tau2", "airline")),
        ("tau2/airline", None, ("tau2", "airline")),
        ("tau_bench/retail", None, ("tau_bench", "retail")),
        ("retail", "tau_bench", ("tau_bench", "retail")),
        ("tau_bench/retail", "tau_bench", ("tau_bench", "retail")),
    ],
)
def test_a_domain_is_its_bare_name_or_its_data_source(value, bench, expected):
    assert split_domain(value, bench) == expected


def test_prepare_tau2_takes_the_data_source_spelling(tmp_path, capsys):
    outs = {}
    for spelling in ("mock", "tau2/mock"):
        out = tmp_path / spelling.replace("/", "_")
        argv = ["prepare", "tau2", "--data-dir", str(VENDORED), "--domain", spelling, "--split", "base"]
        assert main([*argv, "--out", str(out)]) == 0
        outs[spelling] = pd.read_parquet(out / "base.parquet")
    assert len(outs["mock"]) > 0 and outs["mock"].astype(str).equals(outs["tau2/mock"].astype(str))
    assert set(outs["tau2/mock"]["data_source"]) == {"tau2/mock"}


def test_another_benchmarks_domain_is_a_usage_error_naming_both(capsys):
    with pytest.raises(SystemExit) as info:
        main(["prepare", "tau2", "--domain", "tau_bench/retail", "--out", "unused"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --domain: 'tau_bench/retail' is a tau_bench domain; this command takes tau2 domains" in err


def test_prepare_tau_bench_takes_the_data_source_spelling(tmp_path, capsys):
    root = require_root(TAU_BENCH_DATA, "retail")
    argv = ["prepare", "tau_bench", "--data-dir", str(root), "--split", "dev", "--mode", "instruction"]
    assert main([*argv, "--domain", "tau_bench/retail", "--out", str(tmp_path / "a")]) == 0
    assert main([*argv, "--domain", "retail", "--out", str(tmp_path / "b")]) == 0
    a, b = pd.read_parquet(tmp_path / "a" / "dev.parquet"), pd.read_parquet(tmp_path / "b" / "dev.parquet")
    assert len(a) > 0 and a.astype(str).equals(b.astype(str))


def test_simulate_takes_the_tau2_data_source_spelling(tmp_path, capsys):
    errors = {}
    for spelling in ("mock", "tau2/mock"):
        argv = ["simulate", "--domain", spelling, "--data-dir", str(VENDORED), *ENDPOINTS]
        assert main([*argv, "--out", str(tmp_path / "r.json")]) == 2  # the copy has no user simulator guidelines
        errors[spelling] = _error(capsys, "simulate")
    assert "unknown tau2 domain" not in errors["tau2/mock"] and errors["tau2/mock"] == errors["mock"]


def test_smoke_takes_the_data_source_spelling():
    from verl_rewards.commands import smoke as command

    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["smoke", "tau2", "--domain", "tau2/mock", "--mode", "solo"])
    command.split_arguments(args)
    assert command._resolve(args)[1:] == ("mock", "solo")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--domain", "tau2/mock", "--max-num-steps", "3"], "--max-num-steps: tau-bench options; a tau2 run"),
        (["--domain", "tau_bench/retail", "--retrieval", "bm25"], "--retrieval: tau2 options; a tau-bench run"),
        (["--domain", "tau_bench/retail", "--judge-model", "j"], "--judge-model: tau2 options; a tau-bench run"),
        (["--domain", "mock", "--task-ids", "1", "--split", "base"], "give --task-ids or --split, not both"),
    ],
)
def test_simulate_refuses_another_benchmarks_options(tmp_path, capsys, argv, message):
    assert main(["simulate", *argv, *ENDPOINTS, "--out", str(tmp_path / "r.json")]) == 2
    assert message in _error(capsys, "simulate")


# -- errors name the flag ----------------------------------------------------------------------------------------
@pytest.fixture
def rollouts(tmp_path) -> Path:
    path = tmp_path / "r.jsonl"
    rows = [{"response": "a", "ground_truth": "a", "data_source": "x"}, {"response": "b", "ground_truth": "a"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--module", "no_such_reward_module_xyz"],
            "--module: cannot import reward module 'no_such_reward_module_xyz'",
        ),
        (["--module", "/nonexistent/r.py"], "--module: reward module file not found: /nonexistent/r.py"),
        (["--contrib-type", "C1", "--beta", "-1"], "--beta: must be >= 0, got -1.0"),
        (["--timeout-s", "-1"], "--timeout-s: expected a positive number, got -1.0"),
    ],
)
def test_score_errors_name_the_flag_not_the_config_path(rollouts, capsys, argv, message):
    assert main(["score", str(rollouts), "--reward", "qa_em", *argv]) == 2
    err = _error(capsys, "score")
    assert message in err and "reward_kwargs" not in err


def test_prepare_without_data_names_data_dir(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    installed_data_home(tmp_path / "home", monkeypatch)  # nothing installed there
    assert main(["prepare", "tau2", "--domain", "tau2/airline", "--out", str(tmp_path / "o")]) == 2
    err = _error(capsys, "prepare tau2")
    assert "--data-dir" in err and "TAU2_DATA_DIR" in err and "data_dir" not in err
    assert "run `verl-rewards data get tau2`" in err


def test_commands_read_the_installed_data_when_no_variable_or_flag_is_given(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    home = installed_data_home(tmp_path / "home", monkeypatch)
    shutil.copytree(DATA / "tau2" / "mock", home / "tau2" / "mock")
    assert main(["prepare", "tau2", "--domain", "mock", "--split", "base", "--out", str(tmp_path / "o")]) == 0
    rows = pd.read_parquet(tmp_path / "o" / "base.parquet")
    assert len(rows) == 10  # mock's 10 tasks: the only tau2 data here is the installed copy


def test_a_data_variable_naming_a_missing_folder_is_an_error_even_with_installed_data(tmp_path, capsys, monkeypatch):
    home = installed_data_home(tmp_path / "home", monkeypatch)
    shutil.copytree(DATA / "tau2" / "mock", home / "tau2" / "mock")
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "typo"))
    assert main(["prepare", "tau2", "--domain", "mock", "--split", "base", "--out", str(tmp_path / "o")]) == 2
    err = _error(capsys, "prepare tau2")
    assert f"TAU2_DATA_DIR='{tmp_path / 'typo'}' is not a folder" in err and not (tmp_path / "o").exists()


def test_simulate_endpoint_errors_name_the_flag(tmp_path, capsys):
    argv = ["simulate", "--domain", "mock", *ENDPOINTS, "--out", str(tmp_path / "r.json")]
    argv[argv.index("--agent-base-url") + 1] = "ftp://x"
    assert main(argv) == 2
    assert "error: --agent-base-url must be an http(s) URL, got 'ftp://x'" in _error(capsys, "simulate")


# -- score writes what it is asked to; eval keeps the tables --------------------------------------------------------
def test_score_writes_no_histogram_unless_asked(rollouts, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = set(tmp_path.iterdir())
    assert main(["score", str(rollouts), "--reward", "qa_em"]) == 0
    assert set(tmp_path.iterdir()) == before  # no rewards.png in the current folder
    assert main(["score", str(rollouts), "--reward", "qa_em", "--hist", "h.svg"]) == 0
    assert (tmp_path / "h.svg").read_text().lstrip().startswith("<?xml")


def test_eval_json_file_keeps_the_tables_on_screen(tmp_path, capsys):
    sims = [
        {"task_id": t, "trial": k, "termination_reason": "user_stop", "reward_info": {"reward": float(k == 0)}}
        for t in ("1", "2")
        for k in range(2)
    ]
    doc = {
        "info": {"environment_info": {"domain_name": "airline"}, "num_trials": 2},
        "tasks": [{"id": "1"}, {"id": "2"}],
        "simulations": sims,
    }
    results = tmp_path / "results.json"
    results.write_text(json.dumps(doc))
    assert main(["eval", str(results), "--json", str(tmp_path / "e.json")]) == 0
    out = capsys.readouterr().out
    assert "pass^1" in out and "0.5000" in out and f"json: {tmp_path / 'e.json'}" in out
    assert json.loads((tmp_path / "e.json").read_text())["inputs"][0]["sources"]["tau2/airline"]["pass_k"]["1"] == 0.5
    assert main(["eval", str(results), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs"]  # --json alone: the JSON instead of the tables


# -- a run's extra keys ------------------------------------------------------------------------------------------
REACHABLE_MODULE = """
from verl_rewards import reward

@reward(name="cli_qa_len", extra_keys=("chars",))
def cli_qa_len(solution_str: str, ground_truth: str) -> dict:
    return {"score": float(solution_str == ground_truth), "chars": len(solution_str)}
"""


def test_score_columns_are_those_of_the_reward_it_runs(tmp_path, rollouts, capsys):
    from verl_rewards.scoring.extras import ABSENT_KEY, BASE_EXTRA_KEYS, UNDECLARED_KEY

    module = tmp_path / "cli_rewards.py"
    module.write_text(REACHABLE_MODULE)
    scored = tmp_path / "s.jsonl"
    assert main(["score", str(rollouts), "--reward", "cli_qa_len", "--module", str(module), "--out", str(scored)]) == 0
    rows = [json.loads(line) for line in scored.read_text().splitlines()]
    input_keys = {"response", "ground_truth", "data_source", "index", "reward"}
    for row in rows:
        assert set(row) - input_keys == {*BASE_EXTRA_KEYS, "chars", ABSENT_KEY, UNDECLARED_KEY}
    assert [r["chars"] for r in rows] == [1, 1]


def test_a_text_key_a_sample_did_not_report_is_empty_text(tmp_path, capsys):
    """A tau-bench row that fails before its reward reports anything: ``termination`` is "" (text), the numbers
    0.0, all listed absent; only the tau-bench family's keys are there."""
    from verl_rewards.tau_bench.verl_scorer import EXTRA_KEYS

    path, scored = tmp_path / "t.jsonl", tmp_path / "s.jsonl"
    path.write_text(json.dumps({"response": "hi", "ground_truth": "x", "data_source": "tau_bench/retail"}) + "\n")
    assert main(["score", str(path), "--out", str(scored)]) == 0
    row = json.loads(scored.read_text())
    assert row["reward_error"] == 1 and row["termination"] == "" and row["tb_done"] == 0.0
    assert set(row["reward_extra_absent"].split(",")) == set(EXTRA_KEYS)
    assert not any(k.startswith(("tau2_", "db_match", "format", "correctness")) for k in row)


def test_training_manager_declares_the_keys_its_configuration_reaches(small_tokenizer):
    from verl_rewards.manager import ContributionRewardManager

    with_reward = ContributionRewardManager(tokenizer=small_tokenizer, reward_fn="qa_em")
    keys = with_reward.extra_keys()
    assert {"em", "f1", "base_score"} <= set(keys)
    assert not [k for k in keys if k.startswith(("tau2_", "tb_")) or k in ("format", "termination")]
    by_source = ContributionRewardManager(
        tokenizer=small_tokenizer, reward_fn="qa_em", reward_fn_by_source={"tau_bench/retail": "tau_bench_v1"}
    )
    assert {"tb_done", "termination"} <= set(by_source.extra_keys())
    assert by_source.core.keys.text == {"termination"}
    families = ContributionRewardManager(tokenizer=small_tokenizer)  # routed by data source: every family's keys
    assert {"format", "tau2_db", "tb_done", "termination", "tau2_basis"} <= set(families.extra_keys())
    assert families.core.keys.text == {"termination", "tau2_basis"}


def test_offline_columns_follow_each_rows_route_including_its_own_reward_fn(tmp_path, capsys):
    from verl_rewards.tau_bench.verl_scorer import EXTRA_KEYS

    path, scored = tmp_path / "mixed.jsonl", tmp_path / "s.jsonl"
    rows = [
        {"response": "4", "ground_truth": "4", "data_source": "qa", "reward_fn": "qa_em"},
        {"response": "hi", "ground_truth": "x", "data_source": "tau_bench/retail"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", str(path), "--out", str(scored)]) == 0
    first, second = (json.loads(line) for line in scored.read_text().splitlines())
    assert first["em"] == 1.0 and first["termination"] == "" and second["em"] == 0.0
    assert {"f1", "em", *EXTRA_KEYS} <= set(first) and set(first) - {"reward_fn"} == set(second)
    assert not any(k.startswith(("tau2_", "db_match")) or k in ("format", "correctness") for k in first)


def _options_by_command():
    """``{command path: {option string: (action, its help as --help prints it)}}`` of every (sub)command."""
    import argparse

    def walk(parser, prefix, out):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    path = f"{prefix} {name}".strip()
                    fmt = sub._get_formatter()
                    out[path] = {
                        s: (a, " ".join((fmt._expand_help(a) if a.help else "").split()))
                        for a in sub._actions
                        for s in a.option_strings
                    }
                    walk(sub, path, out)
        return out

    from verl_rewards.cli import build_parser

    return walk(build_parser(), "", {})


def test_one_vocabulary_for_the_same_things_across_commands():
    """--timeout-s (never --timeout), every --domain listing every domain in the data-source form, --mode with its
    choices, and one default wording: "(default: X)"."""
    from verl_rewards.tau2.registry import available_domains

    commands = _options_by_command()
    for path, options in commands.items():
        assert "--timeout" not in options, path
        for flag, (_action, text) in options.items():
            assert not re.search(r"\(default(?!: )|default \$", text), (path, flag, text)
        if "--domain" in options and not path.endswith("tau_bench"):
            text = options["--domain"][1]
            assert all(f"tau2/{d}" in text for d in available_domains()), (path, text)
        if "--mode" in options:
            assert options["--mode"][0].choices, path
    assert "tau2/banking_knowledge" in commands["export-sft gold"]["--domain"][1]
    assert "--timeout-s" in commands["smoke"] and "--timeout-s" in commands["simulate"]


#: ``score``'s parser reads its defaults from the manager's config (``ManagerConfig``), which imports the rewards
HEAVY_PARSERS = {"score"}


@pytest.mark.parametrize("command", sorted(set(COMMAND_MODULES) - HEAVY_PARSERS))
def test_a_command_s_parser_and_help_import_no_numpy(command):
    """``verl-rewards <command> --help`` builds only the parser: the libraries a run needs (numpy, the rewards, the
    evaluation and gold code) are imported by ``run``, so help and usage errors come back at once."""
    import os
    import subprocess
    import sys

    from repo_paths import REPO

    code = (
        "import sys\nfrom verl_rewards.cli import build_parser\n"
        f"build_parser({command!r}).parse_args([{command!r}, '--help'])\n"
    )
    code = f"import atexit, sys\natexit.register(lambda: print('numpy' in sys.modules, file=sys.stderr))\n{code}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    assert done.returncode == 0 and done.stderr.strip().splitlines()[-1] == "False", done.stderr[-2000:]
