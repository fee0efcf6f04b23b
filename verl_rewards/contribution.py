"""Contribution rewards: C-0 (the blackboard changed) and C-1 (the critic's value estimate rose).

The manager adds ``beta * R_contrib`` to whatever the scoring function returned. ``R_contrib`` is computed
from two *step dicts* that the rollout leaves in the batch: ``prev_step_dict`` (state before the agent's
step) and ``cur_step_dict`` (state after it). Missing dicts or fields take these defaults
(``bb_hash`` ``"{}"``, ``value_est`` ``0.0``), so a rollout that records nothing earns no contribution.

A rollout may also record one step per assistant turn: when both sides are lists of equal length, the
contribution is the sum over the turns (C-0 counts turns that changed the blackboard; C-1 sums the positive
value deltas).

Configuration (Hydra first, environment variables as fallback, explicit config wins):

=========================================  =====================  ======================================
Hydra key                                  environment fallback   meaning
=========================================  =====================  ======================================
``reward.reward_kwargs.contribution.type``  ``CONTRIBUTION=1`` +   ``C0``, ``C1`` or ``none``
                                            ``CONTRIB_TYPE``
``reward.reward_kwargs.contribution.beta``  ``BETA``               weight of ``R_contrib`` (finite float)
=========================================  =====================  ======================================
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .coerce import finite_float, parse_bool

DEFAULT_BB_HASH = "{}"
DEFAULT_VALUE_EST = 0.0
DEFAULT_BETA = 0.05
CONTRIB_TYPES = ("C0", "C1", "none")
_MAX_STEP_DICT_CHARS = 1_000_000


class ContributionConfigError(ValueError):
    """Raised when the contribution configuration is invalid (at manager build time)."""


def _as_text(value: Any) -> str:
    if value is None:
        return DEFAULT_BB_HASH
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _as_float(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return float(value or 0.0)
    try:
        out = float(value)
    except (TypeError, ValueError):
        return DEFAULT_VALUE_EST
    return out if math.isfinite(out) else DEFAULT_VALUE_EST


def contrib_binary(prev_bb: Any, cur_bb: Any) -> int:
    """C-0: 1 if the blackboard state changed between the two steps, else 0.

    The arguments are the steps' ``bb_hash`` values (usually hash strings; dicts are compared by their
    canonical JSON). ``None`` means the empty blackboard ``"{}"``.
    """
    return int(_as_text(prev_bb) != _as_text(cur_bb))


def contrib_value_delta(prev_v: Any, cur_v: Any) -> float:
    """C-1: the positive part of the change of the critic's value estimate, ``max(cur - prev, 0)``.

    Values that are missing, non-numeric or not finite count as 0.0.
    """
    return max(_as_float(cur_v) - _as_float(prev_v), 0.0)


def read_step_dict(value: Any) -> tuple[dict[str, Any] | list[dict[str, Any]], bool]:
    """Normalise a step dict found in a batch: a dict, a list of dicts, or their JSON text.

    Returns ``(step_dict, malformed)``. Anything unusable (unparsable, oversized or too deeply nested text, a
    value of another type, non-dict turns) becomes ``{}`` or ``{}`` turns, which mean "use the defaults", and
    sets ``malformed`` so the sample can be flagged. ``None``, NaN and empty text are simply absent.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return {}, False
    if isinstance(value, str):
        if not value.strip():
            return {}, False
        if len(value) > _MAX_STEP_DICT_CHARS:
            return {}, True
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {}, True
    if hasattr(value, "tolist") and not isinstance(value, Mapping):
        value = value.tolist()
    if isinstance(value, Mapping):
        return dict(value), False
    if isinstance(value, list | tuple):
        turns = [dict(v) if isinstance(v, Mapping) else {} for v in value]
        return turns, not all(isinstance(v, Mapping) for v in value)
    return {}, True


def parse_step_dict(value: Any) -> dict[str, Any] | list[dict[str, Any]]:
    """:func:`read_step_dict` without the malformed flag."""
    return read_step_dict(value)[0]


def _pairs(prev: Any, cur: Any) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    prev, cur = parse_step_dict(prev), parse_step_dict(cur)
    if isinstance(prev, list) and isinstance(cur, list):
        if len(prev) == len(cur):
            return list(zip(prev, cur, strict=True))
        # mismatched per-turn records: compare the first "before" with the last "after"
        return [(prev[0] if prev else {}, cur[-1] if cur else {})]
    if isinstance(prev, list):
        prev = prev[0] if prev else {}
    if isinstance(cur, list):
        cur = cur[-1] if cur else {}
    return [(prev, cur)]


def compute_contribution(contrib_type: str, prev_step_dict: Any, cur_step_dict: Any) -> float:
    """``R_contrib`` of one sample for ``contrib_type`` (``C0``, ``C1`` or ``none``)."""
    kind = normalise_type(contrib_type)
    if kind == "none":
        return 0.0
    total = 0.0
    for prev, cur in _pairs(prev_step_dict, cur_step_dict):
        if kind == "C0":
            total += contrib_binary(prev.get("bb_hash", DEFAULT_BB_HASH), cur.get("bb_hash", DEFAULT_BB_HASH))
        else:
            total += contrib_value_delta(
                prev.get("value_est", DEFAULT_VALUE_EST), cur.get("value_est", DEFAULT_VALUE_EST)
            )
    return float(total)


def normalise_type(value: Any) -> str:
    """Canonical contribution type; raises :class:`ContributionConfigError` for unknown values."""
    if value is None or value is False:
        return "none"
    text = str(value).strip()
    upper = text.upper().replace("-", "")
    if upper in ("C0", "C1"):
        return upper
    if upper in ("NONE", "OFF", "0", "FALSE", ""):
        return "none"
    raise ContributionConfigError(
        f"unknown contribution type {value!r}: expected one of C0, C1, none "
        "(reward.reward_kwargs.contribution.type or CONTRIB_TYPE)"
    )


def _parse_beta(value: Any, source: str) -> float:
    try:
        return finite_float(value)
    except ValueError as exc:
        raise ContributionConfigError(f"{source}: {exc}") from None


def _env_switch(value: str) -> bool:
    try:
        return parse_bool(value or "0")
    except ValueError:
        raise ContributionConfigError(
            f"CONTRIBUTION={value!r} is not a switch: use 1/0, true/false, yes/no or on/off"
        ) from None


@dataclass(frozen=True)
class ContributionConfig:
    """Validated contribution settings: ``type`` in C0/C1/none and a finite ``beta``."""

    type: str = "none"
    beta: float = DEFAULT_BETA

    @property
    def enabled(self) -> bool:
        return self.type != "none"

    @classmethod
    def from_config(
        cls, section: Mapping[str, Any] | None, environ: Mapping[str, str] | None = None
    ) -> ContributionConfig:
        """Build from ``reward.reward_kwargs.contribution`` with the GRPO scripts' environment variables as fallback.

        Explicit keys win. Without a ``type`` key, contribution is on only when ``CONTRIBUTION`` is a true switch
        (1/true/yes/on; another value than those or 0/false/no/off is an error), and its type then comes from
        ``CONTRIB_TYPE`` (default C0). Without a ``beta`` key, ``BETA`` (default 0.05).
        Unknown keys in the section are an error, so a typo cannot silently disable the term.
        """
        env = os.environ if environ is None else environ
        section = dict(section or {})
        unknown = set(section) - {"type", "beta"}
        if unknown:
            raise ContributionConfigError(
                f"unknown key(s) {sorted(unknown)} in reward.reward_kwargs.contribution; valid: type, beta"
            )
        if "type" in section and section["type"] is not None:
            kind = normalise_type(section["type"])
        elif _env_switch(env.get("CONTRIBUTION", "0")):
            kind = normalise_type(env.get("CONTRIB_TYPE", "C0"))
        else:
            kind = "none"
        if "beta" in section and section["beta"] is not None:
            beta = _parse_beta(section["beta"], "reward.reward_kwargs.contribution.beta")
        else:
            beta = _parse_beta(env.get("BETA", DEFAULT_BETA), "BETA")
        return cls(type=kind, beta=beta)
