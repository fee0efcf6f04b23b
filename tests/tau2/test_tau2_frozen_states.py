"""A DB state frozen into a new shared base (:meth:`DBState.freeze`, how a task's initial state is cached) and dumped
as plain data (:meth:`DBState.to_dict`, what hashes and dumps read).

Both lay the overlay over copies of the touched collections with dict and list operations. They must give what the
state reads record by record (:meth:`DBState.items`, the tools' read path): the same keys in the same order and the
very record objects; for an untouched collection ``freeze`` shares the base's own container and ``to_dict`` copies
it. Checked on every task of every domain, on the states a task's first use freezes (initialisation actions and
message histories replayed) and on the states after its gold actions (records written, inserted and appended).
"""

from __future__ import annotations

from typing import Any

import pytest

from verl_rewards.engine.environment import Environment
from verl_rewards.engine.state import BaseDB, DBState
from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.domain import Domain

from tau2_support import require_data

DOMAINS = ("mock", "airline", "retail", "telecom", "banking_knowledge")


def _read(state: DBState, name: str) -> Any:
    """Collection ``name`` read record by record through :meth:`DBState.items`."""
    coll = state.base.data[name]
    if isinstance(coll, dict):
        return dict(state.items(name))
    if isinstance(coll, list):
        return [rec for _, rec in state.items(name)]
    return coll


def _expected(state: DBState) -> dict[str, Any]:
    """What the frozen base must hold: the state's reads where it touched a collection, else the base's own."""
    touched = state._overlay.keys() | state._added.keys() | state._appended.keys()
    return {name: _read(state, name) if name in touched else coll for name, coll in state.base.data.items()}


def _same(got: Any, want: Any) -> bool:
    """Same type, keys in the same order and the very records."""
    if type(got) is not type(want):
        return False
    if isinstance(want, dict):
        return list(got) == list(want) and all(got[k] is want[k] for k in want)
    if isinstance(want, list):
        return len(got) == len(want) and all(a is b for a, b in zip(got, want, strict=True))
    return got is want


def _check(state: DBState, where: str) -> tuple[bool, bool]:
    """Dump and freeze ``state`` and compare with its reads; returns whether it had inserted and appended records."""
    dumped = state.to_dict()
    assert list(dumped) == list(state.base.data), where
    for name, coll in state.base.data.items():
        assert _same(dumped[name], _read(state, name)), (where, name)
        assert dumped[name] is not coll or not isinstance(coll, (dict, list)), (where, name)  # the caller's own
    expected = _expected(state)
    frozen = state.freeze()
    assert isinstance(frozen, BaseDB) and frozen.codec is state.base.codec, where
    assert list(frozen.data) == list(expected), where
    for name, want in expected.items():
        got = frozen.data[name]
        if want is state.base.data[name]:
            assert got is want, (where, name)  # untouched: shared, not copied
            continue
        assert got is not state.base.data[name], (where, name)
        assert _same(got, want), (where, name)  # DB order: base keys, then inserted ones
    return bool(state._added), bool(state._appended)


def _states(env: Environment) -> list[DBState]:
    user = env.user_db
    return [env.agent_db] if user is None or user is env.agent_db else [env.agent_db, user]


def _construction(domain: Domain, task_id: str) -> Environment | None:
    """The environment a task's first use freezes (its initialisation actions and history replayed, a sync after
    every action), or None when the task has no such state."""
    task = domain.task(task_id)
    state = task.initial_state
    if state is None or not (state.initialization_actions or task.history):
        return None
    env = domain._env_over(*domain._bases_for(task), False)
    env.sync()
    for call in state.initialization_actions or ():
        env.run_env_function(call.env_type, call.func_name, call.arguments)
    if task.history:
        env.replay(task.history, strict=True)
    return env


@pytest.mark.parametrize("name", DOMAINS)
def test_a_frozen_state_holds_what_the_state_reads_on_every_task(name: str) -> None:
    domain = load_domain(name, require_data(name))
    initial = added = appended = 0
    for tid in domain.tasks:
        construction = _construction(domain, tid)
        initial += construction is not None
        gold, _ = domain.replay_gold(tid)
        for env, when in ((construction, "initial state"), (gold, "after the gold actions")):
            for state in _states(env) if env is not None else ():
                a, b = _check(state, f"{tid} {when}")
                added, appended = added + a, appended + b
    assert initial >= {"mock": 4, "telecom": 2285}.get(name, 0)
    if name in ("mock", "airline"):
        assert added > 0  # records inserted into dict collections (mock's tasks, airline's reservations)
    if name == "telecom":
        assert appended > 0  # records appended to list collections (the bills of overdue-bill tasks)


def test_freeze_of_a_collection_whose_write_failed_copies_it_as_to_dict_does() -> None:
    base = BaseDB({"a": {"k1": {"x": 1}}, "b": [{"v": 1}], "c": 5})
    state = DBState(base)
    with pytest.raises(KeyError):
        state.write("a", "missing")  # leaves an empty overlay for "a": the collection counts as touched
    frozen = state.freeze()
    assert frozen.data == base.data and frozen.data["a"] is not base.data["a"]
    assert frozen.data["b"] is base.data["b"] and frozen.data["c"] == 5
    assert frozen.data["a"]["k1"] is base.data["a"]["k1"]
