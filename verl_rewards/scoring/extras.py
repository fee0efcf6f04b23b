"""The layout of a sample's reward extras, shared by the manager (which writes it) and the metric hooks (which read it).

verl assembles a batch's extra columns from the keys of its *first* sample and indexes every other sample
with them (``RewardLoopManager.compute_rm_score`` in ``verl/experimental/reward_loop/reward_loop.py`` and the
agent loop's ``_postprocess``), so every sample of a run must report exactly the same keys, whatever the
timing, the worker that scored it or its data source. The key set is therefore fixed when the manager is
built: the base keys, the configured ``extra_keys`` and the keys of the rewards the run's configuration can reach
(:meth:`~verl_rewards.manager.routing.Router.declared_keys`).

* A declared key that a sample did not report holds ``0.0`` (``""`` for a key its reward declares as text, such
  as ``termination``) and is named in the sample's ``reward_extra_absent`` text (comma-separated). ``0.0`` rather
  than NaN/None because verl's GDPO estimator (``algorithm.adv_estimator=gdpo``) converts the columns it uses to
  float32: a group whose samples did not report a component gets zero advantage from it, never NaN. Metrics skip
  absent values (:func:`present_columns`) and text.
* Components a reward returns without declaring them travel as JSON text in ``reward_extra_undeclared`` and
  are still logged by the metric hooks; at most :data:`MAX_UNDECLARED_NAMES` distinct names are kept per
  process (a name per sample, e.g. an id inside a key, is capped with an error message), each at most
  :data:`MAX_NAME_CHARS` characters long.
* Every value leaves as text or as a finite number within :data:`~verl_rewards.coerce.MAX_MAGNITUDE` (read by
  :func:`~verl_rewards.coerce.read_float`): anything else (NaN, an infinity, a 400-digit integer, an object) is
  dropped, so a declared key holds ``0.0`` and is listed absent, and counted in ``extra_dropped`` together with
  undeclared names over the length limit. ``None`` is a value the sample did not report (absent, not counted).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..coerce import read_float

logger = logging.getLogger("verl_rewards")

#: number of values dropped from the sample's extras (not finite, out of range, not storable; over-long names)
DROPPED_KEY = "extra_dropped"
BASE_EXTRA_KEYS = (
    "base_score",
    "contrib",
    "reward_error",
    "reward_timeout",
    "step_dict_error",
    "step_error",
    DROPPED_KEY,
)
#: text column: comma-separated declared keys the sample did not report (their 0.0 is a placeholder)
ABSENT_KEY = "reward_extra_absent"
#: text column: JSON object of components the reward returned without declaring them
UNDECLARED_KEY = "reward_extra_undeclared"
#: distinct undeclared component names kept per process
MAX_UNDECLARED_NAMES = 64
#: longest undeclared component name kept (a longer one is dropped and counted in ``extra_dropped``)
MAX_NAME_CHARS = 128
_DROP = object()


def storable(value: Any) -> Any:
    """``value`` as it may leave the manager (text, ``None``, or a number within the finite-number rule, Python
    ``bool``/``int``/``float`` kept as they are), else a marker meaning "drop it"."""
    if value is None or isinstance(value, str):
        return value
    number = read_float(value)
    if number is None:
        return _DROP
    return value if type(value) in (bool, int, float) else number


class ExtraKeys:
    """The run's fixed extra keys, and how one sample's components are laid onto them (see the module doc).

    ``text``: the declared keys that hold text; a sample that did not report one gets ``""`` rather than ``0.0``.
    """

    def __init__(self, declared: Iterable[str], text: Iterable[str] = ()):
        keys = dict.fromkeys(BASE_EXTRA_KEYS)
        for key in declared:
            if not isinstance(key, str) or not key or "," in key or key in (ABSENT_KEY, UNDECLARED_KEY):
                raise ValueError(f"invalid extra key {key!r}: a non-empty name without commas, not a reserved name")
            keys.setdefault(key, None)
        self.declared: tuple[str, ...] = tuple(keys)
        self.text: frozenset[str] = frozenset(text) & set(self.declared)
        self.names: tuple[str, ...] = (*self.declared, ABSENT_KEY, UNDECLARED_KEY)
        self._undeclared: set[str] = set()
        self._lock = threading.Lock()
        self._capped = False
        self._long_name_logged = False

    def row(self, extra: Mapping[str, Any], source: str = "reward") -> dict[str, Any]:
        """One sample's extras with exactly :attr:`names` as keys (values checked, see the module doc)."""
        out: dict[str, Any] = {}
        absent = []
        dropped = 0
        for key in self.declared:
            value = storable(extra[key]) if key in extra and key != DROPPED_KEY else None
            dropped += value is _DROP
            if value is None or value is _DROP:
                out[key] = "" if key in self.text else 0.0
                if key != DROPPED_KEY:
                    absent.append(key)
            else:
                out[key] = value
        out[ABSENT_KEY] = ",".join(absent)
        rest = {}
        for key, value in extra.items():
            if key in out:
                continue
            kept = storable(value)
            if kept is _DROP or len(key) > MAX_NAME_CHARS:
                dropped += 1
                if len(key) > MAX_NAME_CHARS:
                    self._log_long_name(key, source)
            else:
                rest[key] = kept
        out[UNDECLARED_KEY] = self._pack(rest, source) if rest else ""
        out[DROPPED_KEY] = dropped
        return out

    def _log_long_name(self, key: str, source: str) -> None:
        if self._long_name_logged:
            return
        self._long_name_logged = True
        logger.error(
            "verl-rewards: %s returned an extra key of %d characters (starting %r); names longer than %d characters "
            "are dropped (counted in extra_dropped). Return short, stable component names.",
            source,
            len(key),
            key[:40],
            MAX_NAME_CHARS,
        )

    def _pack(self, rest: Mapping[str, Any], source: str) -> str:
        kept = {}
        for key, value in rest.items():
            if key not in self._undeclared:
                with self._lock:
                    if len(self._undeclared) >= MAX_UNDECLARED_NAMES:
                        if not self._capped:
                            self._capped = True
                            logger.error(
                                "verl-rewards: %s returned more than %d distinct undeclared extra keys (latest %r); "
                                "a reward that puts an id or a value into a key name produces a new key per sample. "
                                "Further new names are dropped. Return stable names and declare them "
                                "(reward.reward_kwargs.extra_keys or @reward(extra_keys=...)).",
                                source,
                                MAX_UNDECLARED_NAMES,
                                key,
                            )
                        continue
                    if key not in self._undeclared:
                        self._undeclared.add(key)
                        logger.warning(
                            "verl-rewards: %s returned extra key %r, which is not among the run's extra keys (those "
                            "of the rewards its configuration reaches); it is logged from the %s column. Declare it "
                            "(reward.reward_kwargs.extra_keys=[%s] or @reward(extra_keys=...)) to give it a column of "
                            "its own, e.g. for algorithm.gdpo_reward_keys.",
                            source,
                            key,
                            UNDECLARED_KEY,
                            key,
                        )
            kept[key] = value
        return json.dumps(kept, default=str) if kept else ""


def _text(value: Any) -> str:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return value if isinstance(value, str) else ""


def present_columns(columns: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    """Per key, the values of the samples that reported it (absent placeholders dropped, undeclared unpacked).

    ``columns`` maps key -> one value per sample (a batch's extra columns). Without the layout's text columns
    every value counts as reported.
    """
    cols = {k: list(v.tolist() if isinstance(v, np.ndarray) else v) for k, v in columns.items()}
    absent_col = cols.pop(ABSENT_KEY, None)
    packed_col = cols.pop(UNDECLARED_KEY, None)
    if absent_col is not None:
        absent_sets = [frozenset(t.split(",")) if (t := _text(a)) else frozenset() for a in absent_col]
        cols = {
            k: [v for v, absent in zip(vals, absent_sets, strict=False) if k not in absent] for k, vals in cols.items()
        }
    for packed in packed_col or ():
        text = _text(packed)
        if not text:
            continue
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict):
            for k, v in parsed.items():
                cols.setdefault(str(k), []).append(v)
    return cols


def rows_to_columns(rows: Iterable[Mapping[str, Any] | None]) -> dict[str, list[Any]]:
    """Per-sample extra dicts to columns; a key a row lacks is marked absent for that row."""
    present = [r for r in rows if isinstance(r, Mapping)]
    keys = list(dict.fromkeys(k for r in present for k in r))
    cols: dict[str, list[Any]] = {str(k): [r.get(k, 0.0) for r in present] for k in keys if k != ABSENT_KEY}
    cols[ABSENT_KEY] = [
        ",".join([*filter(None, _text(r.get(ABSENT_KEY)).split(",")), *(str(k) for k in keys if k not in r)])
        for r in present
    ]
    return cols
