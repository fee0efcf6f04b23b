"""Copy-on-write database state for tau2 domains.

A domain DB is a dict of *collections* (``"users"``, ``"orders"``, ...). A collection is either a dict of
records keyed by id, or a list of records (telecom). The loaded, normalised base DB is shared and never
mutated; every environment keeps an overlay of the records its tools touched. Scoring therefore costs time
proportional to the actions taken, not to the DB size (the airline DB is 7 MB), while
:meth:`DBState.full_hash` still reproduces tau2's ``get_db_hash`` byte for byte when someone asks for it.

Contract for tool code: read with :meth:`DBState.get` / :meth:`DBState.items` and never mutate what they
return; mutate only what :meth:`DBState.write` returns; add records with :meth:`DBState.insert`.

How the whole DB becomes text for its hash is a :class:`Codec`: tau2's sorted-key JSON (:data:`JSON_CODEC`, the
default) or tau-bench v1's tuple text (``verl_rewards.tau_bench.hashing``). The overlay machinery is the same.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Collection, Iterator
from typing import Any

_MISSING = object()


def canonical_json(value: Any) -> str:
    """tau2's canonical text of a value: sorted keys, default separators, ASCII, ``str`` for the rest."""
    return json.dumps(value, sort_keys=True, default=str)


def dict_hash(value: Any) -> str:
    """sha256 of :func:`canonical_json` — equal to tau2's ``get_dict_hash``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


class Codec:
    """The text a DB hash is taken of, built from per-record texts so unchanged records are serialised once.

    This default is tau2's: ``json.dumps(db, sort_keys=True, default=str)``. A subclass changes the four pieces.
    Two values must get equal :meth:`record` texts exactly when they hash equal.
    """

    def record(self, value: Any) -> str:
        """Text of one record (or of any value)."""
        return canonical_json(value)

    def sort_keys(self, keys: list[Any]) -> list[Any]:
        """Record keys of a dict collection in the order the document lists them."""
        return sorted(keys, key=str)

    def collection(self, items: list[tuple[Any, str]], is_list: bool) -> str:
        """Text of a collection from its ``(key, record text)`` pairs, already in document order."""
        if is_list:
            return "[" + ", ".join(text for _, text in items) + "]"
        return "{" + ", ".join(json.dumps(k) + ": " + text for k, text in items) + "}"

    def document(self, collections: list[tuple[str, str]]) -> str:
        """Text of the whole DB from its ``(collection name, text)`` pairs, sorted by name."""
        return "{" + ", ".join(json.dumps(name) + ": " + text for name, text in collections) + "}"


JSON_CODEC = Codec()


class BaseDB:
    """An immutable, normalised DB shared by every environment of one domain.

    It pre-serialises each record once so that a full tau2-compatible hash of a modified state only
    re-serialises the records that changed.
    """

    def __init__(self, data: dict[str, Any], codec: Codec = JSON_CODEC):
        self.data = data
        self.codec = codec
        self._chunks: dict[str, Any] | None = None
        self._collection_texts: dict[str, str] = {}
        self._hash: str | None = None

    def _serialised(self) -> dict[str, Any]:
        if self._chunks is None:
            text = self.codec.record
            chunks: dict[str, Any] = {}
            for name, coll in self.data.items():
                if isinstance(coll, dict):
                    chunks[name] = {k: text(v) for k, v in coll.items()}
                elif isinstance(coll, list):
                    chunks[name] = {i: text(v) for i, v in enumerate(coll)}
                else:
                    chunks[name] = text(coll)
            self._chunks = chunks
        return self._chunks

    def collection_text(self, name: str) -> str:
        """Text of an unmodified base collection (cached)."""
        hit = self._collection_texts.get(name)
        if hit is None:
            chunks = self._serialised()[name]
            coll = self.data[name]
            if isinstance(coll, list):
                hit = self.codec.collection(list(chunks.items()), True)
            elif isinstance(coll, dict):
                hit = self.codec.collection([(k, chunks[k]) for k in self.codec.sort_keys(list(coll))], False)
            else:
                hit = chunks
            self._collection_texts[name] = hit
        return hit

    def full_hash(self) -> str:
        if self._hash is None:
            if self.codec is JSON_CODEC:
                self._hash = dict_hash(self.data)
            else:
                names = sorted(self.data)
                text = self.codec.document([(n, self.collection_text(n)) for n in names])
                self._hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return self._hash


_ATOMS = (str, int, float, bool, type(None))


def clone_data(value: Any) -> Any:
    """Deep copy of a record: dicts and lists rebuilt, immutable scalars shared, anything else ``copy.deepcopy``
    (several times faster than ``copy.deepcopy`` on JSON-like records, the first-write cost of every call)."""
    if type(value) is dict:
        return {k: v if type(v) in _ATOMS else clone_data(v) for k, v in value.items()}
    if type(value) is list:
        return [v if type(v) in _ATOMS else clone_data(v) for v in value]
    if type(value) in _ATOMS:
        return value
    return copy.deepcopy(value)


class DBState:
    """One environment's view of a :class:`BaseDB`: the base plus an overlay of touched records."""

    def __init__(self, base: BaseDB):
        self.base = base
        # collection -> {key: record | _MISSING}; for list collections keys are indices
        self._overlay: dict[str, dict[Any, Any]] = {}
        # collection -> keys added after the base, in insertion order (dict collections)
        self._added: dict[str, list[Any]] = {}
        # list collections that grew: collection -> appended records
        self._appended: dict[str, list[Any]] = {}
        self._scalars: dict[str, Any] = {}

    # ------------------------------------------------------------------ reads
    def collection_names(self) -> list[str]:
        return list(self.base.data.keys())

    def get(self, collection: str, key: Any, default: Any = None) -> Any:
        """The record ``key`` of ``collection`` (read-only), or ``default``."""
        over = self._overlay.get(collection)
        if over is not None and key in over:
            rec = over[key]
            return default if rec is _MISSING else rec
        coll = self.base.data[collection]
        if type(coll) is dict:
            return coll.get(key, default)
        if isinstance(coll, list):
            n = len(coll)
            if isinstance(key, int) and 0 <= key < n:
                return coll[key]
            app = self._appended.get(collection, [])
            if isinstance(key, int) and n <= key < n + len(app):
                return app[key - n]
            return default
        return coll.get(key, default)

    def contains(self, collection: str, key: Any) -> bool:
        return self.get(collection, key, _MISSING) is not _MISSING

    def keys(self, collection: str) -> Iterator[Any]:
        """Keys in DB order (base order, then inserted keys)."""
        coll = self.base.data[collection]
        over = self._overlay.get(collection, {})
        if isinstance(coll, list):
            yield from range(len(coll) + len(self._appended.get(collection, [])))
            return
        for k in coll:
            if over.get(k, None) is not _MISSING:
                yield k
        for k in self._added.get(collection, []):
            if over.get(k, None) is not _MISSING:
                yield k

    def items(self, collection: str) -> Iterator[tuple[Any, Any]]:
        """``(key, record)`` in DB order, what ``keys`` and ``get`` give, read in one pass (the domains' tools
        scan collections this way: it is their inner loop)."""
        coll = self.base.data[collection]
        over = self._overlay.get(collection)
        if isinstance(coll, list):
            if not over:  # appended records are in the overlay too
                yield from enumerate(coll)
                return
            for i in range(len(coll) + len(self._appended.get(collection, ()))):
                rec = over.get(i, coll[i] if i < len(coll) else None)
                yield i, (None if rec is _MISSING else rec)
            return
        if not over:
            yield from coll.items()
            return
        for k, rec in coll.items():
            hit = over.get(k, rec)
            if hit is not _MISSING:
                yield k, hit
        for k in self._added.get(collection, ()):
            hit = over.get(k)
            if hit is not _MISSING:
                yield k, hit

    def values(self, collection: str) -> Iterator[Any]:
        for _, v in self.items(collection):
            yield v

    def size(self, collection: str) -> int:
        return sum(1 for _ in self.keys(collection))

    # ----------------------------------------------------------------- writes
    def write(self, collection: str, key: Any) -> Any:
        """A private, mutable copy of record ``key`` (KeyError if absent). Mutate only this."""
        over = self._overlay.setdefault(collection, {})
        if key in over:
            rec = over[key]
            if rec is _MISSING:
                raise KeyError(key)
            return rec
        rec = self.get(collection, key, _MISSING)
        if rec is _MISSING:
            raise KeyError(key)
        rec = clone_data(rec)
        over[key] = rec
        return rec

    def insert(self, collection: str, key: Any, record: Any) -> None:
        """Add (or replace) record ``key`` in a dict collection; new keys go to the end in DB order."""
        existed = key in self.base.data[collection] or self.contains(collection, key)  # the cheap test first
        self._overlay.setdefault(collection, {})[key] = record
        if not existed and key not in self._added.get(collection, []):
            self._added.setdefault(collection, []).append(key)

    def append(self, collection: str, record: Any) -> int:
        """Append a record to a list collection; returns its index."""
        app = self._appended.setdefault(collection, [])
        app.append(record)
        idx = len(self.base.data[collection]) + len(app) - 1
        self._overlay.setdefault(collection, {})[idx] = record
        return idx

    # ------------------------------------------------------------- comparison
    def touched(self) -> dict[str, set[Any]]:
        """Keys of every record this state has written or added, per collection."""
        out: dict[str, set[Any]] = {}
        for name, over in self._overlay.items():
            out.setdefault(name, set()).update(over.keys())
        return out

    def same_as(self, other: DBState) -> bool:
        """True when both states hold equal data. O(touched records) when both share one base."""
        if self.base is not other.base:
            return self.full_hash() == other.full_hash()
        for name in set(self._overlay) | set(other._overlay):
            # Dict collections are dumped with sorted keys, so the insertion order of new keys does not matter;
            # inserted keys live in the overlay and are compared one by one below.
            if len(self._appended.get(name, [])) != len(other._appended.get(name, [])):
                return False
            keys = set(self._overlay.get(name, {})) | set(other._overlay.get(name, {}))
            for k in keys:
                a = self.get(name, k, _MISSING)
                b = other.get(name, k, _MISSING)
                if a is _MISSING or b is _MISSING:
                    if a is not b:
                        return False
                    continue
                if a is b:
                    continue
                if self.base.codec.record(a) != self.base.codec.record(b):
                    return False
        return True

    def to_dict(self, names: Collection[str] | None = None) -> dict[str, Any]:
        """The full state as plain data (O(DB size); for hashing, dumps and debugging); ``names``: only these
        collections. Every container is the caller's own (the records are shared: read them only)."""
        out: dict[str, Any] = {}
        for name, coll in self.base.data.items():
            if names is not None and name not in names:
                continue
            merged = self._merged(name)
            if merged is coll and isinstance(coll, (dict, list)):
                merged = dict(coll) if isinstance(coll, dict) else list(coll)
            out[name] = merged
        return out

    def freeze(self) -> BaseDB:
        """The current state as a new shared :class:`BaseDB` (unchanged records are shared, not copied).

        The records this state wrote become base records: do not write to this state afterwards. A collection this
        state never touched is the base's own (read-only) container; a touched one is :meth:`_merged`'s new one (a
        task's initial state is frozen once, on its first use).
        """
        return BaseDB({name: self._merged(name) for name in self.base.data})

    def _merged(self, name: str) -> Any:
        """Collection ``name`` as this state reads it (what :meth:`keys` and :meth:`get` give), built with dict and
        list operations: the base's own container when this state never touched it, else the base's container copied
        with the overlay laid over it (base keys keep their place, inserted keys follow in insertion order, appended
        list records after the base's)."""
        coll = self.base.data[name]
        over = self._overlay.get(name)
        if over is None and name not in self._added and name not in self._appended:
            return coll
        if isinstance(coll, dict):
            merged = dict(coll)
            if over:  # inserted keys enter the overlay in the order they enter _added
                merged.update(over)
                if _MISSING in over.values():
                    for key in [k for k, rec in over.items() if rec is _MISSING]:
                        del merged[key]
            return merged
        if isinstance(coll, list):
            items = list(coll)
            items.extend(self._appended.get(name, ()))  # appended records are in the overlay too
            size = len(items)
            for i, rec in (over or {}).items():
                if isinstance(i, int) and 0 <= i < size:
                    items[i] = None if rec is _MISSING else rec
            return items
        return coll

    def full_hash(self) -> str:
        """tau2-compatible sha256 of the whole DB. Re-serialises only touched records."""
        if not self._overlay:
            return self.base.full_hash()
        h = hashlib.sha256()
        h.update(self._full_text().encode("utf-8"))
        return h.hexdigest()

    def _full_text(self) -> str:
        base = self.base
        codec = base.codec
        chunks = base._serialised()
        texts: list[tuple[str, str]] = []
        for name in sorted(base.data.keys()):
            coll = base.data[name]
            over = self._overlay.get(name, {})
            if not over and not self._added.get(name) and not self._appended.get(name):
                texts.append((name, base.collection_text(name)))
            elif isinstance(coll, list):
                items = []
                for i in self.keys(name):
                    text = codec.record(self.get(name, i)) if i in over or i >= len(coll) else chunks[name][i]
                    items.append((i, text))
                texts.append((name, codec.collection(items, True)))
            elif isinstance(coll, dict):
                items = []
                for k in codec.sort_keys(list(self.keys(name))):
                    text = codec.record(self.get(name, k)) if k in over or k not in coll else chunks[name][k]
                    items.append((k, text))
                texts.append((name, codec.collection(items, False)))
            else:
                texts.append((name, chunks[name]))
        return codec.document(texts)
