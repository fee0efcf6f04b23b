"""tau-bench v1's data hash, as a :class:`~verl_rewards.engine.state.Codec` for our copy-on-write DB state.

tau-bench (``tau_bench/envs/base.py``: ``to_hashable``, ``consistent_hash``) hashes its data as the sha256 hex
digest of ``str()`` of a rebuilt value: every dict becomes a tuple of ``(key, value)`` pairs sorted by key,
every list a tuple in order, every set a sorted tuple; other values stay as they are. So ``1``, ``1.0`` and
``True`` hash differently, list order matters and dict key order does not.

:class:`TupleCodec` produces exactly that text from per-record pieces, so a state that differs from the shared
base in a few records re-serialises only those records.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..engine.state import Codec


def to_hashable(value: Any) -> Any:
    """The value rebuilt as tau-bench hashes it: dicts as sorted ``(key, value)`` tuples, lists as tuples."""
    if isinstance(value, dict):
        return tuple((key, to_hashable(item)) for key, item in sorted(value.items()))
    if isinstance(value, list):
        return tuple(to_hashable(item) for item in value)
    if isinstance(value, set):
        return tuple(sorted(to_hashable(item) for item in value))
    return value


def data_hash(data: Any) -> str:
    """tau-bench's ``get_data_hash`` of a whole (plain) data dict: O(data size)."""
    return hashlib.sha256(str(to_hashable(data)).encode("utf-8")).hexdigest()


def tuple_text(parts: list[str]) -> str:
    """Python's ``str`` of a tuple whose elements have the texts ``parts`` (``(x,)`` for one element)."""
    if len(parts) == 1:
        return "(" + parts[0] + ",)"
    return "(" + ", ".join(parts) + ")"


class TupleCodec(Codec):
    """The DB text of tau-bench's hash, assembled from record texts (see the module doc)."""

    def record(self, value: Any) -> str:
        return str(to_hashable(value))

    def sort_keys(self, keys: list[Any]) -> list[Any]:
        return sorted(keys)

    def collection(self, items: list[tuple[Any, str]], is_list: bool) -> str:
        if is_list:
            return tuple_text([text for _, text in items])
        return tuple_text([f"({key!r}, {text})" for key, text in items])

    def document(self, collections: list[tuple[str, str]]) -> str:
        return tuple_text([f"({name!r}, {text})" for name, text in collections])


TUPLE_CODEC = TupleCodec()
