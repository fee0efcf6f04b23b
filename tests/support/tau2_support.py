"""Helpers shared by the tau2 tests: locating the data, synthetic mock domains, message builders."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.batching import padded_batch
from verl_rewards.engine.data_dir import TAU2_DATA

from data_support import data_root, missing_reason
from repo_paths import DATA
from verl_support import compose_verl_config

_SKIP = missing_reason(TAU2_DATA)


VENDORED = DATA / "tau2"  # the mock domain ships with the tests


def tau2_data_dir() -> Path | None:
    """The tau2 data folder by the package's rule (``TAU2_DATA_DIR``, else the installed one), else None."""
    return data_root(TAU2_DATA)


def require_data(domain: str = "mock") -> Path:
    """The data folder holding ``domain`` (the vendored copy for mock), or skip the test with a clear message."""
    root = tau2_data_dir()
    if root is not None and (root / domain).is_dir():
        return root
    if (VENDORED / domain).is_dir():
        return VENDORED
    pytest.skip(_SKIP + f" [domain {domain}]")


def require_domain(name: str):
    """The loaded domain, or skip when its data or its module is missing."""
    root = require_data(name)
    if importlib.util.find_spec(f"verl_rewards.tau2.domains.{name}") is None:
        pytest.skip(f"domain module verl_rewards/tau2/domains/{name}.py is not there yet")
    from verl_rewards.tau2 import load_domain

    return load_domain(name, root)


def mock_task(task_id: str, criteria: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    """A synthetic mock task JSON object."""
    task: dict[str, Any] = {"id": task_id, "user_scenario": {"instructions": "test"}, "evaluation_criteria": criteria}
    task.update(extra)
    return task


def mock_dir(tmp_path: Path, tasks: list[dict[str, Any]], splits: dict[str, list[str]] | None = None) -> Path:
    """A data folder with the real mock DBs and policy but the given tasks (copied into ``tmp_path``)."""
    src = require_data("mock") / "mock"
    dst = tmp_path / "tau2" / "mock"
    dst.mkdir(parents=True)
    for name in ("db.json", "user_db.json", "policy.md"):
        shutil.copy(src / name, dst / name)
    (dst / "tasks.json").write_text(json.dumps(tasks))
    (dst / "split_tasks.json").write_text(json.dumps(splits or {"base": [t["id"] for t in tasks]}))
    return dst.parent


def synthetic_mock(tmp_path: Path, tasks: list[dict[str, Any]]):
    """Load a mock domain whose tasks are ``tasks``."""
    from verl_rewards.tau2 import load_domain

    return load_domain("mock", mock_dir(tmp_path, tasks))


# ------------------------------------------------------------------------------------------ messages
def call(name: str, args: Any, cid: str = "c1", role: str = "assistant", *, flat: bool = False) -> dict[str, Any]:
    """A message with one tool call (OpenAI style, or tau2's flat style with ``flat=True``)."""
    if flat:
        tc = {"id": cid, "name": name, "arguments": args}
    else:
        tc = {
            "id": cid,
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
    return {"role": role, "content": None, "tool_calls": [tc]}


def tool(cid: str = "c1", content: str = "ok") -> dict[str, Any]:
    """A tool message answering call ``cid``."""
    return {"role": "tool", "tool_call_id": cid, "content": content}


def say(text: str, role: str = "assistant") -> dict[str, Any]:
    """A text message."""
    return {"role": role, "content": text}


def exchange(name: str, args: Any, cid: str = "c1", role: str = "assistant") -> list[dict[str, Any]]:
    """A tool call and its (placeholder) answer."""
    return [call(name, args, cid, role), tool(cid)]


def read_json(path: Path) -> Any:
    """A domain data file (the DB, tasks.json, ...) as plain JSON."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def toolkit_fixtures(data: Path, normalize_db: Any, toolkit_cls: Any) -> tuple[Any, Any, Any, Any]:
    """pytest fixtures ``raw``, ``base``, ``tasks`` (module scope: the DB is read and normalised once) and ``tk``
    (a fresh toolkit over a copy-on-write state) for one domain's tool tests. Assign them at module level."""
    from verl_rewards.engine.state import BaseDB, DBState

    @pytest.fixture(scope="module")
    def raw() -> dict[str, Any]:
        return read_json(data / "db.json")

    @pytest.fixture(scope="module")
    def base(raw: dict[str, Any]) -> BaseDB:
        return BaseDB(normalize_db(raw))

    @pytest.fixture(scope="module")
    def tasks() -> list[dict[str, Any]]:
        return read_json(data / "tasks.json")

    @pytest.fixture()
    def tk(base: BaseDB) -> Any:
        return toolkit_cls(DBState(base))

    return raw, base, tasks, tk


def tau2_manager(tokenizer_dir, tok, kwargs=()):
    """The contribution manager built by verl's own loader, with ``+reward.reward_kwargs.<kwargs>`` overrides."""
    from verl.trainer.ppo.reward import load_reward_manager

    overrides = [
        f"actor_rollout_ref.model.path={tokenizer_dir}",
        "reward.reward_manager.name=contribution",
        *[f"+reward.reward_kwargs.{k}" for k in kwargs],
    ]
    return load_reward_manager(compose_verl_config(overrides), tok)


def tau2_rows(tok, domain, items):
    """A padded batch of tau2 rows: ``items`` are ``(task_id, messages, termination)``."""
    n = len(items)
    return padded_batch(
        [tok.encode("ticket", add_special_tokens=False)] * n,
        [tok.encode("done", add_special_tokens=False)] * n,
        {
            "data_source": [f"tau2/{domain}"] * n,
            "reward_model": [{"ground_truth": {"task_id": t}} for t, _, _ in items],
            "extra_info": [{"task_id": t} for t, _, _ in items],
            "tool_extra_fields": [{"messages": msgs, "termination": term} for _, msgs, term in items],
        },
        pad_token_id=tok.pad_token_id,
    )
