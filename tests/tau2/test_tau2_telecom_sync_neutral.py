"""Telecom's initial states are built without the sync after its sync-neutral helpers (``telecom.SYNC_NEUTRAL``).

tau2 runs the environment sync after every initialisation action. After a helper that writes nothing the sync reads
or writes, the sync changes nothing (it is idempotent), so the domain leaves it out. Checked here on the real data:
on every initialisation call of every task, such a helper writes neither the agent DB nor a user-DB entry any sync
reads or writes, and the sync after it leaves both DBs as they were; every task's initial state equals, dump for
dump, the one built with a sync after every action (which tau2's own hashes pin in test_tau2_telecom.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from verl_rewards.engine.environment import Environment
from verl_rewards.engine.state import DBState, canonical_json
from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.domain import Domain
from verl_rewards.tau2.domains import telecom

from tau2_support import require_data

UNUSED_HELPERS = ("turn_airplane_mode_off", "turn_data_on", "turn_data_saver_mode_off")
"""Sync-neutral helpers no task calls: each is called on every task's initial state instead."""


@dataclass
class Access:
    """What one call read and wrote, as ``(side, collection, key)``; ``key`` is ``*`` for a whole collection."""

    reads: set[tuple[str, str, Any]] = field(default_factory=set)
    writes: set[tuple[str, str, Any]] = field(default_factory=set)


class Recorder:
    """Records every read and write of the two DB states of one environment (DBState's methods, patched)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sides: dict[int, str] = {}
        self.current: Access | None = None
        for name, kind, whole in (
            ("get", "reads", False),
            ("items", "reads", True),
            ("keys", "reads", True),
            ("write", "writes", False),
            ("insert", "writes", False),
            ("append", "writes", True),
        ):
            monkeypatch.setattr(DBState, name, self._wrap(getattr(DBState, name), kind, whole))

    def _wrap(self, method: Any, kind: str, whole: bool) -> Any:
        recorder = self

        def wrapped(state: DBState, collection: str, *args: Any, **kwargs: Any) -> Any:
            side = recorder.sides.get(id(state))
            if recorder.current is not None and side is not None:
                key = "*" if whole else args[0]
                getattr(recorder.current, kind).add((side, collection, key))
            return method(state, collection, *args, **kwargs)

        return wrapped

    def track(self, env: Environment) -> None:
        self.sides = {id(env.agent_db): "agent", id(env.user_db): "user"}

    @contextmanager
    def call(self) -> Iterator[Access]:
        self.current = access = Access()
        try:
            yield access
        finally:
            self.current = None


def _dump(env: Environment) -> tuple[str, str]:
    """Both DBs as the canonical JSON text tau2's hashes are taken of."""
    assert env.user_db is not None
    return canonical_json(env.agent_db.to_dict()), canonical_json(env.user_db.to_dict())


@dataclass
class Reference:
    """Every task's initial state built tau2's way (a sync after every action) under a :class:`Recorder`."""

    dumps: dict[str, tuple[str, str]]
    neutral_calls: list[tuple[str, int, str, Access, bool]]  # task, index, helper, its access, sync changed nothing
    sync_reads: set[tuple[str, str, Any]]
    sync_writes: set[tuple[str, str, Any]]


def _synced(recorder: Recorder, env: Environment, reads: set[Any], writes: set[Any]) -> bool:
    """Run the sync under the recorder; whether it left both DBs as they were (it wrote nothing: a field set to
    the value it holds is not written)."""
    with recorder.call() as access:
        env.sync()
    reads |= access.reads
    writes |= access.writes
    return not access.writes


@pytest.fixture(scope="module")
def domain() -> Domain:
    return load_domain("telecom", require_data("telecom"))


@pytest.fixture(scope="module")
def reference(domain: Domain) -> Iterator[Reference]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        recorder = Recorder(monkeypatch)
        out = Reference({}, [], set(), set())
        for tid in domain.tasks:
            task = domain.task(tid)
            assert task.initial_state is not None and task.initial_state.initialization_data is None
            env = domain.make_env()  # the base state, synced: where a task's construction starts
            recorder.track(env)
            for i, call in enumerate(task.initial_state.initialization_actions or ()):
                with recorder.call() as access:
                    env.run_env_function(call.env_type, call.func_name, call.arguments, sync=False)
                unchanged = _synced(recorder, env, out.sync_reads, out.sync_writes)
                if call.env_type == "user" and call.func_name in telecom.SYNC_NEUTRAL:
                    out.neutral_calls.append((tid, i, call.func_name, access, unchanged))
            out.dumps[tid] = _dump(env)
            for helper in UNUSED_HELPERS:
                probe = domain.make_env(tid)
                recorder.track(probe)
                with recorder.call() as access:
                    probe.run_env_function("user", helper, {}, sync=False)
                unchanged = _synced(recorder, probe, out.sync_reads, out.sync_writes)
                out.neutral_calls.append((tid, -1, helper, access, unchanged))
        yield out


def test_every_sync_neutral_helper_is_checked_on_every_task(domain: Domain, reference: Reference) -> None:
    assert {name for _, _, name, _, _ in reference.neutral_calls} == telecom.SYNC_NEUTRAL
    assert len(reference.dumps) == len(domain.tasks) == 2285
    assert len(reference.neutral_calls) > 2 * 2285 * len(UNUSED_HELPERS)


def test_a_sync_neutral_helper_writes_nothing_a_sync_reads_or_writes(reference: Reference) -> None:
    # what the syncs touch: whole agent collections, and the user DB's surroundings entries the sync mirrors
    assert ("agent", "lines", "*") in reference.sync_reads and ("agent", "bills", "*") in reference.sync_reads
    touched_by_sync = reference.sync_reads | reference.sync_writes
    user_keys = {(c, k) for side, c, k in touched_by_sync if side == "user"}
    assert ("surroundings", "phone_number") in user_keys and ("surroundings", "line_active") in user_keys
    assert not any(c == "device" for c, _ in user_keys)
    assert {name for _, _, name, access, _ in reference.neutral_calls if access.writes} == telecom.SYNC_NEUTRAL
    for tid, i, name, access, _ in reference.neutral_calls:
        assert not {w for w in access.writes if w[0] == "agent"}, (tid, i, name)
        assert not {(c, k) for side, c, k in access.writes if side == "user"} & user_keys, (tid, i, name)


def test_the_sync_after_a_sync_neutral_helper_changes_nothing(reference: Reference) -> None:
    changed = [(tid, i, name) for tid, i, name, _, unchanged in reference.neutral_calls if not unchanged]
    assert changed == []


def test_every_initial_state_equals_the_one_built_with_a_sync_after_every_action(
    domain: Domain, reference: Reference
) -> None:
    fresh = Domain("telecom", domain.data_dir.parent)  # cold caches: every state built by make_env now
    differing = [tid for tid in fresh.tasks if _dump(fresh.make_env(tid)) != reference.dumps[tid]]
    assert differing == []


def test_so_do_they_with_each_phone_its_own_vpn(domain: Domain) -> None:
    """Under the load option ``vpn_details="episode"`` (another user toolkit class) too."""
    fresh = Domain("telecom", domain.data_dir.parent, vpn_details="episode")
    differing = []
    for tid in fresh.tasks:
        env = fresh.make_env()  # the base state, synced
        for call in fresh.task(tid).initial_state.initialization_actions:
            env.run_env_function(call.env_type, call.func_name, call.arguments)  # a sync after every action
        if _dump(fresh.make_env(tid)) != _dump(env):
            differing.append(tid)
    assert differing == []


def test_a_task_state_runs_the_sync_only_after_actions_that_are_not_sync_neutral(
    domain: Domain, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = Domain("telecom", domain.data_dir.parent)
    tid = fresh.split("base")[0]
    assert tid.startswith("[mms_issue]airplane_mode_on|bad_network_preference|bad_wifi_calling|")
    names = [a.func_name for a in fresh.task(tid).initial_state.initialization_actions]
    assert names == [
        "set_user_info",
        "turn_airplane_mode_on",
        "set_network_mode_preference",
        "set_wifi_calling",
        "break_apn_mms_setting",
        "remove_app_permission",
        "remove_app_permission",
        "turn_data_off",
        "set_data_usage",
        "unseat_sim_card",
        "set_user_location",
        "turn_roaming_off",
        "disable_roaming",
        "simulate_network_search",
    ]
    syncs: list[int] = []
    original = Environment.sync

    def counting(env: Environment) -> None:
        syncs.append(len(env.actions))
        original(env)

    monkeypatch.setattr(Environment, "sync", counting)
    fresh.make_env(tid)
    # the sync of the new environment, then after set_user_info, set_data_usage and disable_roaming (agent side)
    assert len(syncs) == 4
    fresh.make_env(tid)
    assert len(syncs) == 4  # built once
