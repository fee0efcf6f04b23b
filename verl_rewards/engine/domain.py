"""What a loaded benchmark domain offers, whichever benchmark it is: the one :class:`Domain` protocol that tau2's
``Domain`` (:mod:`verl_rewards.tau2.domain`) and tau-bench's ``TauBenchDomain`` (:mod:`verl_rewards.tau_bench.domain`)
both satisfy, as tau2-bench keeps one environment interface under its ``domains/``. The gold policy, ``export-sft``
and the prepare helpers read a domain only through it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Domain(Protocol):
    """A loaded domain: shared and read-only, its tasks by id, its splits by name; environments start from it."""

    @property
    def name(self) -> str: ...

    @property
    def data_dir(self) -> Path: ...

    @property
    def policy(self) -> str: ...

    @property
    def tasks(self) -> Mapping[str, Any]: ...

    @property
    def splits(self) -> Mapping[str, list[str]]: ...

    @property
    def terminate_tools(self) -> frozenset[str]: ...

    def task(self, task_id: Any) -> Any:
        """The task of that id (KeyError naming the domain when it has none)."""
        ...

    def split(self, name: str) -> list[str]:
        """The task ids of a split."""
        ...

    def tool_kinds(self) -> dict[str, str]:
        """Each agent tool's kind (``read``, ``write``, ``think``, ...)."""
        ...

    def make_env(self, task_id: Any = None) -> Any:
        """A fresh environment started from the task's initial state."""
        ...

    def gold_hash(self, task_id: Any) -> str:
        """The hash of the DB after the task's gold actions."""
        ...
