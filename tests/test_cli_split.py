"""``--split`` has one meaning in every command (which of a domain's tasks are read; toolrl: the file's name) and
each command states its default with the reason; ``--mode`` lists the same choices in the same order everywhere;
``simulate`` picks tau2's runner default (the ``base`` split, in tasks.json order) when no tasks are named."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from verl_rewards.cli import build_parser
from verl_rewards.engine.client import Endpoint
from verl_rewards.tau2.normal.simulate import SimulateConfig, SimulateError, _load

from tau2_support import require_data


def _commands(parser: argparse.ArgumentParser, path: str = ""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{path} {name}".strip(), sub
                yield from _commands(sub, f"{path} {name}".strip())


def _option(parser: argparse.ArgumentParser, flag: str) -> tuple[argparse.Action, str] | None:
    for action in parser._actions:
        if flag in action.option_strings:
            return action, " ".join(parser._get_formatter()._expand_help(action).split())
    return None


def test_every_split_says_which_tasks_and_its_default_with_the_reason():
    seen = {}
    for path, parser in _commands(build_parser()):
        found = _option(parser, "--split")
        if found is None:
            continue
        action, text = found
        seen[path] = action.default
        assert not action.required, path
        assert text.startswith("which tasks: "), (path, text)
        stated = re.search(r"\(default: ([^:()]+): [^)]+\)$", text)
        assert stated, (path, text)  # "(default: X: why)", the reason after the colon
        if action.default is not None:
            assert stated.group(1) == action.default, (path, text)
    assert seen == {
        "prepare toolrl": "train",
        "prepare tau2": "train,test",
        "prepare tau_bench": "train,test",
        "simulate": None,  # per benchmark: tau2 base, tau_bench test (each runner's own default)
        "export-sft gold": "train",
    }


def test_every_mode_lists_the_same_choices_in_the_same_order():
    order = ["normal", "solo", "instruction"]
    for path, parser in _commands(build_parser()):
        found = _option(parser, "--mode")
        if found is not None:
            choices = list(found[0].choices or ())
            assert choices and choices == [m for m in order if m in choices], (path, choices)


def test_export_sft_gold_defaults_to_the_training_split():
    args = build_parser().parse_args(["export-sft", "gold", "tau2", "--domain", "airline", "--out", "x"])
    assert args.split == "train"


def _config(domain: str, root, **kw) -> SimulateConfig:
    e = Endpoint("http://127.0.0.1:9/v1", "m")
    return SimulateConfig(domain=domain, agent=e, user=e, out="unused.json", data_dir=str(root), **kw)


def test_simulate_runs_tau2s_base_split_by_default_in_tasks_file_order():
    root = require_data("telecom")
    tasks = [t["id"] for t in json.loads((root / "telecom" / "tasks.json").read_text())]
    base = set(json.loads((root / "telecom" / "split_tasks.json").read_text())["base"])
    _, ids = _load(_config("telecom", root))
    assert ids == [t for t in tasks if t in base] and len(ids) == 114 < len(tasks)
    _, every = _load(_config("telecom", root, split="all"))
    assert every == tasks
    with pytest.raises(SimulateError, match="has no split 'dev'; available: .*'all'"):
        _load(_config("telecom", root, split="dev"))
