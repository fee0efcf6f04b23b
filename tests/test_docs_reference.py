"""The generated reference pages (docs/hooks/reference.py) cover exactly what the code defines: every config key
the validators accept, every extra key a reward or the engine reports, every CLI command and option, every
registered reward, family and data source; nothing in the pages that the code does not have."""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType
from typing import Any

import pytest

from verl_rewards import catalog
from verl_rewards.catalog import BUILTIN_FAMILIES
from verl_rewards.cli import build_parser
from verl_rewards.manager.config import ManagerConfig, ManagerConfigError, configured_family_scorers, known_keys
from verl_rewards.scoring.families import families
from verl_rewards.tau2.registry import available_domains

from repo_paths import REPO


@pytest.fixture(scope="module")
def ref() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "docs" / "hooks" / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_reference"] = module
    spec.loader.exec_module(module)
    return module


def _valid_keys(reward_kwargs: dict) -> set[str]:
    """The keys a validator accepts, as its own error for an unknown key lists them."""
    catalog.register_builtins()
    with pytest.raises(ManagerConfigError) as err:
        configured_family_scorers(ManagerConfig.from_reward_kwargs(reward_kwargs, environ={}))
    listed = str(err.value).rsplit("valid", 1)[1]
    return set(re.findall(r"[a-z][a-z0-9_]+", listed.split(":", 1)[1])) - {"names", "keys"}


SECTIONS = {
    "": {"zz_unknown": 1},
    "contribution": {"contribution": {"zz_unknown": 1}},
    "decode": {"decode": {"zz_unknown": 1}},
    "toolrl": {"toolrl": {"zz_unknown": 1}},
    "tau2": {"tau2": {"zz_unknown": 1}},
    "tau_bench": {"tau_bench": {"zz_unknown": 1}},
}


@pytest.mark.parametrize("section", list(SECTIONS))
def test_every_config_key_the_validator_accepts_is_in_the_reference_and_back(ref: ModuleType, section: str) -> None:
    documented = {k.key for k in ref.config_keys()}
    if section:
        in_ref = {k.split(".", 1)[1] for k in documented if k.startswith(section + ".")}
    else:
        in_ref = {k for k in documented if "." not in k}
    added = {f.name for f in families()} - {f.name for f in BUILTIN_FAMILIES}  # by other tests in this process
    assert in_ref == _valid_keys(SECTIONS[section]) - (set() if section else added)


def test_the_top_level_keys_are_the_managers(ref: ModuleType) -> None:
    added = {f.name for f in families()} - {f.name for f in BUILTIN_FAMILIES}  # by other tests in this process
    assert {k.key for k in ref.config_keys() if "." not in k.key} == set(known_keys()) - added


def test_every_config_key_has_a_meaning_and_every_meaning_a_key(ref: ModuleType) -> None:
    keys = {k.key for k in ref.config_keys()}
    assert {k for k in keys if not ref.CONFIG_MEANINGS.get(k)} == set()
    assert set(ref.CONFIG_MEANINGS) - keys == set()


def test_the_config_page_lists_every_key_with_its_default(ref: ModuleType) -> None:
    page = ref.config_page()
    for key in ref.config_keys():
        assert f"| `{key.key}` |" in page
    assert "| `timeout_s` | `float` | `60.0` |" in page
    assert "`fallback`, `raise`" in page  # on_error's choices, from the validator's constant


def test_every_reported_extra_key_has_a_meaning(ref: ModuleType) -> None:
    catalog.register_builtins()
    builtin = ref.builtin_rewards()
    assert {s.name for s in builtin} >= {"qa_f1", "qa_em", "length_penalty", "toolrl", "tau2", "tau_bench_v1"}
    reported = {k for spec in builtin for k in (*spec.extra_keys, *spec.text_keys)}
    reported |= {k for family in BUILTIN_FAMILIES for k in (*family.extra_keys, *family.text_keys)}
    keys = set(ref.metric_keys())
    assert reported <= keys
    assert {k for k in keys if not ref.METRIC_MEANINGS.get(k)} == set()
    assert set(ref.METRIC_MEANINGS) - keys == set()
    page = ref.metrics_page()
    assert all(f"| `{k}` |" in page for k in keys)


def _commands() -> dict[str, list[str]]:
    from argparse import _HelpAction, _SubParsersAction

    out: dict[str, list[str]] = {}

    def walk(parser, prefix: str) -> None:  # type: ignore[no-untyped-def]
        for action in parser._actions:
            if isinstance(action, _SubParsersAction):
                for name, sub in action.choices.items():
                    path = f"{prefix} {name}".strip()
                    out[path] = [
                        s
                        for a in sub._actions
                        if not isinstance(a, _HelpAction | _SubParsersAction)
                        for s in a.option_strings
                    ]
                    walk(sub, path)

    walk(build_parser(), "")
    return out


def test_every_command_and_option_is_in_the_cli_page_and_back(ref: ModuleType) -> None:
    page = ref.cli_page()
    sections = dict(re.findall(r"^## `([^`]+)`\n(.*?)(?=^## `|\Z)", page, flags=re.S | re.M))
    commands = _commands()
    assert set(sections) == set(commands)
    for path, flags in commands.items():
        table = [line for line in sections[path].splitlines() if line.startswith("| `")]
        listed = {flag for line in table for flag in re.findall(r"`(--?[A-Za-z][\w-]*)`", line.split(" | ")[0])}
        assert listed == set(flags), path


def test_every_reward_family_and_data_source_is_in_the_rewards_page(ref: ModuleType) -> None:
    page = ref.rewards_page()
    rows = set(re.findall(r"^\| `([^`]+)` \|", page, flags=re.M))
    catalog.register_builtins()
    assert {spec.name for spec in ref.builtin_rewards()} <= rows
    assert {f.name for f in BUILTIN_FAMILIES} <= rows
    assert {f"tau2/{d}" for d in available_domains()} <= rows
    assert {"tau_bench/retail", "tau_bench/airline"} <= rows


def test_the_readme_is_short_and_its_links_lead_somewhere() -> None:
    """The README stays a front page (at most 12 KB); what it links to exists."""
    readme = REPO / "README.md"
    assert readme.stat().st_size <= 12 * 1024
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert local and [link for link in local if not (REPO / link).exists()] == []


def _loop_valid_keys(parse: Any, section: dict[str, Any]) -> set[str]:
    """The keys a normal-mode loop's validator accepts, as its own error for an unknown key lists them."""
    with pytest.raises(ValueError) as err:
        parse(section)
    return set(re.findall(r"'([a-z_]+)'", str(err.value).rsplit("valid", 1)[1]))


def test_every_agent_loop_key_the_validators_accept_is_in_the_reference_and_back(ref: ModuleType) -> None:
    from verl_rewards.engine.users import UserConfig
    from verl_rewards.tau2.normal.agent_loop import NormalSettings
    from verl_rewards.tau_bench.normal import TauBenchNormalSettings

    user_keys = {f"user.{k}" for k in _loop_valid_keys(UserConfig.from_mapping, {"backend": "scripted", "zz": 1})}
    assert {"user.backend", "user.base_url", "user.timeout_s"} <= user_keys
    accepted = {
        name: _loop_valid_keys(cls.from_mapping, {"user": {"backend": "scripted"}, "zz_unknown": 1}) | user_keys
        for name, cls in (("tau2", NormalSettings), ("tau_bench", TauBenchNormalSettings))
    }
    sections = ref.loop_sections()
    assert {name: set(keys) for name, keys in sections.items()} == accepted
    documented = {k for keys in sections.values() for k in keys}
    assert {k for k in documented if not ref.LOOP_MEANINGS.get(k)} == set()
    assert set(ref.LOOP_MEANINGS) == documented  # no meaning for a key the code does not have
    page = ref.loops_page()
    assert "| `max_steps` | `200` |" in page and "| `user.timeout_s` | `60.0` |" in page
