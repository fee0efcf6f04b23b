"""Contribution rewards: ``beta * R_contrib`` terms added to the task reward.

The manager adds ``sum_i beta_i(step) * R_i`` to whatever the scoring function returned. Each ``R_i`` is
computed from two *step dicts* that the rollout leaves in the batch: ``prev_step_dict`` (state before the
agent's step) and ``cur_step_dict`` (state after it). Missing dicts or fields take these defaults
(``bb_hash`` ``"{}"``, ``value_est`` / potential ``0.0``), so a rollout that records nothing earns no contribution.

* **C-0** ``contrib_binary``: 1 if the blackboard hash changed, else 0.
* **C-1** ``contrib_value_delta``: ``max(v(cur) - v(prev), 0)`` of the step dicts' ``value_est`` (the environment's
  progress), or with ``value_source: critic`` of the critic's value ``V`` at the first token of each assistant turn
  and at the last trained token (:mod:`verl_rewards.critic_terms`: computed in the trainer, before the advantage,
  in runs with a critic).
* **C-2** ``contrib_potential``: potential-based shaping ``gamma * phi(cur) - phi(prev)`` with ``phi`` read from
  ``potential_key`` (default ``value_est``) and ``gamma`` in (0, 1] (Ng, Harada & Russell, 1999: a shaping term
  of this form leaves the optimal policy unchanged, which C-1's positive part does not guarantee).

A rollout may also record one step per assistant turn: when both sides are lists of equal length, ``R`` is the
sum over the turns (C-0 counts turns that changed the blackboard; C-1 sums the positive value deltas; C-2 sums
``gamma * phi(s_{t+1}) - phi(s_t)``, which telescopes to ``phi(last) - phi(first)`` for ``gamma = 1`` when the
turns are contiguous). Value reads that are missing or not finite count as 0.0 and are counted
(``contrib_missing``).

β follows a schedule over the training step ``t`` (``b0 = beta``, ``b1 = beta_end``, default 0, ``s`` =
``start_step``, default 0; β is ``b0`` up to ``s``):

* ``constant``: ``b0``;
* ``linear``: ``b0 + (b1 - b0) * p`` with ``p = (t - s) / (end_step - s)`` clipped to [0, 1];
* ``cosine``: ``b0 + (b1 - b0) * (1 - cos(pi * p)) / 2``;
* ``exp``: ``b1 + (b0 - b1) * 0.5 ** ((t - s) / half_life)``.

Configuration (``reward.reward_kwargs.contribution``; Hydra first, environment variables as fallback for the
one-term form, explicit config wins): either one term given by the section's own keys (``type`` — or
``CONTRIBUTION=1`` + ``CONTRIB_TYPE`` — ``beta`` or ``BETA``, ``schedule``, ``beta_end``, ``start_step``,
``end_step``, ``half_life``, for C-1 ``value_source`` (``progress``, the default, or ``critic``), and for C-2
``gamma``, ``potential_key``), or ``terms``: a list of such mappings,
each with an optional ``name`` (default the lowercase type) that names its extras ``contrib_<name>`` (``R``
before β) and ``beta_<name>`` (β in use). Every value is validated when the manager is built.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .coerce import MAX_MAGNITUDE, finite_float, parse_bool, read_float
from .step_dicts import MAX_STEP, step_pairs

DEFAULT_BB_HASH = "{}"
DEFAULT_VALUE_EST = 0.0
DEFAULT_BETA = 0.05
DEFAULT_GAMMA = 1.0
DEFAULT_POTENTIAL_KEY = "value_est"
VALUE_SOURCES = ("progress", "critic")
DEFAULT_VALUE_SOURCE = "progress"
CONTRIB_TYPES = ("C0", "C1", "C2", "none")
SECTION = "reward.reward_kwargs.contribution"
_NAME_RE = re.compile(r"[a-z0-9_]{1,32}")


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
    out = read_float(value, text=True)
    return DEFAULT_VALUE_EST if out is None else out


def contrib_binary(prev_bb: Any, cur_bb: Any) -> int:
    """C-0: 1 if the blackboard state changed between the two steps, else 0.

    The arguments are the steps' ``bb_hash`` values (usually hash strings; dicts are compared by their
    canonical JSON). ``None`` means the empty blackboard ``"{}"``.
    """
    return int(_as_text(prev_bb) != _as_text(cur_bb))


def contrib_value_delta(prev_v: Any, cur_v: Any) -> float:
    """C-1: the positive part of the change of the critic's value estimate, ``max(cur - prev, 0)``.

    Values that are missing, non-numeric, not finite or out of range count as 0.0.
    """
    return max(_as_float(cur_v) - _as_float(prev_v), 0.0)


def _read_value(step: Mapping[str, Any], key: str) -> tuple[float, bool]:
    """``step[key]`` as C-1 / C-2 read it, and whether it was missing (absent, ``None``, non-numeric, not finite
    or beyond :data:`~verl_rewards.coerce.MAX_MAGNITUDE`, a 400-digit integer included)."""
    out = read_float(step.get(key), text=True)
    return (DEFAULT_VALUE_EST, True) if out is None else (out, False)


def contrib_potential(prev_phi: Any, cur_phi: Any, gamma: float = DEFAULT_GAMMA) -> float:
    """C-2: the potential-based shaping term ``gamma * phi(cur) - phi(prev)`` (Ng, Harada & Russell, 1999).

    Potentials that are missing, non-numeric, not finite or out of range count as 0.0, as in C-1.
    """
    return gamma * _as_float(cur_phi) - _as_float(prev_phi)


def _term_value(kind: str, pairs: list, gamma: float, potential_key: str) -> tuple[float, int]:
    """``R_contrib`` of one term over the step pairs, and how many value reads were missing (C-1 / C-2)."""
    total, missing = 0.0, 0
    for prev, cur in pairs:
        if kind == "C0":
            total += contrib_binary(prev.get("bb_hash", DEFAULT_BB_HASH), cur.get("bb_hash", DEFAULT_BB_HASH))
            continue
        key = potential_key if kind == "C2" else DEFAULT_POTENTIAL_KEY
        prev_v, prev_missing = _read_value(prev, key)
        cur_v, cur_missing = _read_value(cur, key)
        missing += prev_missing + cur_missing
        total += gamma * cur_v - prev_v if kind == "C2" else max(cur_v - prev_v, 0.0)
    return float(total), missing


def compute_contribution(
    contrib_type: str,
    prev_step_dict: Any,
    cur_step_dict: Any,
    *,
    gamma: float = DEFAULT_GAMMA,
    potential_key: str = DEFAULT_POTENTIAL_KEY,
) -> float:
    """``R_contrib`` of one sample for ``contrib_type`` (``C0``, ``C1``, ``C2`` or ``none``), before beta.

    ``gamma`` and ``potential_key`` apply to C-2 only.
    """
    kind = normalise_type(contrib_type)
    if kind == "none":
        return 0.0
    return _term_value(kind, step_pairs(prev_step_dict, cur_step_dict), gamma, potential_key)[0]


def normalise_type(value: Any, source: str = f"{SECTION}.type or CONTRIB_TYPE") -> str:
    """Canonical contribution type; raises :class:`ContributionConfigError` for unknown values."""
    if value is None or value is False:
        return "none"
    text = str(value).strip()
    upper = text.upper().replace("-", "")
    if upper in ("C0", "C1", "C2"):
        return upper
    if upper in ("NONE", "OFF", "0", "FALSE", ""):
        return "none"
    raise ContributionConfigError(f"{source}: unknown contribution type {value!r}: expected one of C0, C1, C2, none")


# ---------------------------------------------------------------------------------------------- beta schedules
@dataclass(frozen=True)
class BetaSchedule:
    """β as a function of the training step (see the module doc for the formulas)."""

    beta: float = DEFAULT_BETA
    kind: str = "constant"
    beta_end: float = 0.0
    start_step: int = 0
    end_step: int | None = None
    half_life: float | None = None

    def at(self, step: Any) -> float:
        """β in use at training ``step``: any number, read by the finite-number rule (beyond :data:`MAX_STEP`,
        an infinity included, it is :data:`MAX_STEP`; NaN or a non-number is a step before the schedule)."""
        t = read_float(step, maximum=MAX_STEP, bools=False, clamp=True)
        if self.kind == "constant" or t is None or t <= self.start_step:
            return self.beta
        if self.kind == "exp":
            decay = 0.5 ** ((t - self.start_step) / float(self.half_life or 1.0))
            return self.beta_end + (self.beta - self.beta_end) * decay
        end = self.end_step if self.end_step is not None else self.start_step
        if t >= end:
            return self.beta_end
        progress = (t - self.start_step) / (end - self.start_step)
        if self.kind == "cosine":
            progress = (1.0 - math.cos(math.pi * progress)) / 2.0
        return self.beta + (self.beta_end - self.beta) * progress


@dataclass(frozen=True)
class ContributionTerm:
    """One ``beta * R_contrib`` term: its type, name (``contrib_<name>`` / ``beta_<name>`` extras), β schedule
    and, for C-2, ``gamma`` and ``potential_key``."""

    type: str
    name: str
    schedule: BetaSchedule = field(default_factory=BetaSchedule)
    gamma: float = DEFAULT_GAMMA
    potential_key: str = DEFAULT_POTENTIAL_KEY
    value_source: str = DEFAULT_VALUE_SOURCE

    @property
    def from_critic(self) -> bool:
        """A C-1 term over the critic's values: computed in the trainer, not from step dicts."""
        return self.value_source == "critic"

    @property
    def reads_values(self) -> bool:
        return self.type in ("C1", "C2") and not self.from_critic

    @property
    def step_field(self) -> str | None:
        """The step-dict field this term reads (None for a critic term, which reads none)."""
        if self.from_critic:
            return None
        return {"C0": "bb_hash", "C1": DEFAULT_POTENTIAL_KEY}.get(self.type, self.potential_key)


# which term keys apply to which type / schedule: a key that does not apply is an error, never ignored
_TYPE_KEYS = {"C0": set(), "C1": {"value_source"}, "C2": {"gamma", "potential_key"}}
_SCHEDULE_KEYS = {
    "constant": set(),
    "linear": {"beta_end", "start_step", "end_step"},
    "cosine": {"beta_end", "start_step", "end_step"},
    "exp": {"beta_end", "start_step", "half_life"},
}
SCHEDULES = tuple(_SCHEDULE_KEYS)
TERM_KEYS = frozenset(
    {"type", "name", "beta", "schedule", "gamma", "potential_key", "value_source"}.union(*_SCHEDULE_KEYS.values())
)


def _number(value: Any, source: str, *, positive: bool = False, maximum: float | None = None) -> float:
    try:
        return finite_float(value, positive=positive, maximum=maximum)
    except ValueError as exc:
        raise ContributionConfigError(f"{source}: {exc}") from None


def _non_negative(value: Any, source: str) -> float:
    out = _number(value, source, maximum=MAX_MAGNITUDE)
    if out < 0:
        raise ContributionConfigError(f"{source}: must be >= 0, got {value!r} (a negative weight rewards the opposite)")
    return out


def _step_number(value: Any, source: str) -> int:
    out = _number(value, source, maximum=MAX_STEP)
    if out < 0 or not out.is_integer():
        raise ContributionConfigError(f"{source}: expected a training step (an integer >= 0), got {value!r}")
    return int(out)


def _build_term(entry: Mapping[str, Any], where: str, beta_fallback: tuple[Any, str] | None = None) -> ContributionTerm:
    """Validate one term mapping; ``where`` names it in errors (``...contribution`` or ``...terms[1]``)."""
    given = {k: v for k, v in entry.items() if v is not None}
    unknown = sorted(set(given) - TERM_KEYS)
    if unknown:
        raise ContributionConfigError(f"unknown key(s) {unknown} in {where}; valid: {sorted(TERM_KEYS)}")
    kind = normalise_type(given.get("type"), f"{where}.type")
    if kind == "none":
        raise ContributionConfigError(f"{where}.type: a term needs a type C0, C1 or C2, got {given.get('type')!r}")
    schedule_kind = str(given.get("schedule", "constant")).strip().lower()
    if schedule_kind not in _SCHEDULE_KEYS:
        raise ContributionConfigError(
            f"{where}.schedule: unknown schedule {given['schedule']!r}; expected one of {list(_SCHEDULE_KEYS)}"
        )
    wrong_type = sorted(set(given) & {"gamma", "potential_key", "value_source"} - _TYPE_KEYS[kind])
    if wrong_type:
        owner = "C1" if wrong_type[0] == "value_source" else "C2"
        raise ContributionConfigError(f"{where}.{wrong_type[0]} applies to {owner} terms only (this term is {kind})")
    own = _SCHEDULE_KEYS[schedule_kind]
    wrong_schedule = sorted(set(given) & set().union(*_SCHEDULE_KEYS.values()) - own)
    if wrong_schedule:
        raise ContributionConfigError(
            f"{where}.{wrong_schedule[0]} does not apply to schedule {schedule_kind!r} (its keys: {sorted(own)})"
        )
    if "beta" in given:
        beta = _non_negative(given["beta"], f"{where}.beta")
    elif beta_fallback is not None:
        beta = _non_negative(*beta_fallback)
    else:
        beta = DEFAULT_BETA
    start = _step_number(given.get("start_step", 0), f"{where}.start_step")
    end_step = half_life = None
    if schedule_kind in ("linear", "cosine"):
        if "end_step" not in given:
            raise ContributionConfigError(f"{where}.end_step is required by schedule {schedule_kind!r}")
        end_step = _step_number(given["end_step"], f"{where}.end_step")
        if end_step <= start:
            raise ContributionConfigError(f"{where}.end_step ({end_step}) must be after start_step ({start})")
    if schedule_kind == "exp":
        if "half_life" not in given:
            raise ContributionConfigError(f"{where}.half_life (in steps) is required by schedule 'exp'")
        half_life = _number(given["half_life"], f"{where}.half_life", positive=True)
    schedule = BetaSchedule(
        beta=beta,
        kind=schedule_kind,
        beta_end=_non_negative(given.get("beta_end", 0.0), f"{where}.beta_end"),
        start_step=start,
        end_step=end_step,
        half_life=half_life,
    )
    name = str(given.get("name", kind.lower())).strip()
    if not _NAME_RE.fullmatch(name) or name == "missing":
        raise ContributionConfigError(
            f"{where}.name: {name!r} must be 1-32 characters of a-z, 0-9, _ (and not 'missing'); "
            "it names the extras contrib_<name> and beta_<name>"
        )
    gamma = _number(given.get("gamma", DEFAULT_GAMMA), f"{where}.gamma", positive=True, maximum=1.0)
    potential_key = given.get("potential_key", DEFAULT_POTENTIAL_KEY)
    if not isinstance(potential_key, str) or not potential_key:
        raise ContributionConfigError(f"{where}.potential_key must be a step-dict field name, got {potential_key!r}")
    source = str(given.get("value_source", DEFAULT_VALUE_SOURCE)).strip().lower()
    if source not in VALUE_SOURCES:
        raise ContributionConfigError(
            f"{where}.value_source: {given['value_source']!r} is not one of {list(VALUE_SOURCES)} (progress: the "
            "step dicts' value_est; critic: the critic's values, in runs with a critic)"
        )
    return ContributionTerm(kind, name, schedule, gamma, potential_key, source)


def _env_switch(value: str) -> bool:
    try:
        return parse_bool(value or "0")
    except ValueError:
        raise ContributionConfigError(
            f"CONTRIBUTION={value!r} is not a switch: use 1/0, true/false, yes/no or on/off"
        ) from None


@dataclass(frozen=True)
class ContributionResult:
    """One sample's contribution: ``bonus`` (added to the task reward) and its extras."""

    bonus: float
    extras: dict[str, float]


@dataclass(frozen=True)
class ContributionConfig:
    """Validated contribution settings: the terms (none when contribution is off)."""

    terms: tuple[ContributionTerm, ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.terms)

    @property
    def type(self) -> str:
        """``none``, the type of the single term, or the terms' types joined by ``+``."""
        return "+".join(t.type for t in self.terms) or "none"

    def describe(self) -> str:
        """One line for the logs."""
        if not self.terms:
            return "none"
        parts = []
        for t in self.terms:
            s = t.schedule
            text = f"{t.name}={t.type} beta={s.beta:g}"
            if s.kind != "constant":
                text += f"->{s.beta_end:g} ({s.kind} from step {s.start_step})"
            if t.type == "C2":
                text += f" gamma={t.gamma:g} potential={t.potential_key}"
            if t.from_critic:
                text += " value_source=critic"
            parts.append(text)
        return "; ".join(parts)

    @property
    def step_terms(self) -> tuple[ContributionTerm, ...]:
        """The terms the manager computes from step dicts (all but the critic terms)."""
        return tuple(t for t in self.terms if not t.from_critic)

    @property
    def critic_terms(self) -> tuple[ContributionTerm, ...]:
        """The C-1 terms over the critic's values, which the trainer adds before the advantage."""
        return tuple(t for t in self.terms if t.from_critic)

    @property
    def extra_keys(self) -> tuple[str, ...]:
        """The extras every sample reports for the step-dict terms (declared when the manager is built); the
        critic terms' ``contrib_<name>`` / ``beta_<name>`` are logged by the trainer hook."""
        keys = [k for t in self.step_terms for k in (f"contrib_{t.name}", f"beta_{t.name}")]
        if any(t.reads_values for t in self.terms):
            keys.append("contrib_missing")
        return tuple(keys)

    def evaluate(self, prev_step_dict: Any, cur_step_dict: Any, step: int) -> ContributionResult:
        """``sum_i beta_i(step) * R_i`` of one sample over the step-dict terms, with ``contrib_<name>``,
        ``beta_<name>``, ``contrib_missing`` (the critic terms are added in the trainer)."""
        if not self.step_terms:
            return ContributionResult(0.0, {})
        pairs = step_pairs(prev_step_dict, cur_step_dict)
        bonus, missing, extras = 0.0, 0, {}
        for term in self.step_terms:
            value, term_missing = _term_value(term.type, pairs, term.gamma, term.potential_key)
            beta = term.schedule.at(step)
            bonus += beta * value
            missing += term_missing
            extras[f"contrib_{term.name}"] = value
            extras[f"beta_{term.name}"] = beta
        if "contrib_missing" in self.extra_keys:
            extras["contrib_missing"] = float(missing)
        return ContributionResult(float(bonus), extras)

    @classmethod
    def single(cls, contrib_type: str, beta: float = DEFAULT_BETA, **term: Any) -> ContributionConfig:
        """The one-term form (``none`` gives no term)."""
        if normalise_type(contrib_type) == "none":
            return cls()
        return cls((_build_term({"type": contrib_type, "beta": beta, **term}, SECTION),))

    @classmethod
    def from_config(
        cls, section: Mapping[str, Any] | None, environ: Mapping[str, str] | None = None
    ) -> ContributionConfig:
        """Build from ``reward.reward_kwargs.contribution`` with the GRPO scripts' environment variables as fallback.

        ``terms`` (a list of term mappings) is the general form and excludes the one-term keys. Otherwise the
        section itself is the one term; explicit keys win. Without a ``type`` key, contribution is on only when
        ``CONTRIBUTION`` is a true switch (1/true/yes/on; another value than those or 0/false/no/off is an
        error), and its type then comes from ``CONTRIB_TYPE`` (default C0). Without a ``beta`` key, ``BETA``
        (default 0.05). Unknown keys are an error, so a typo cannot silently disable a term.
        """
        env = os.environ if environ is None else environ
        section = {k: v for k, v in dict(section or {}).items() if v is not None}
        unknown = sorted(set(section) - TERM_KEYS - {"terms"})
        if unknown:
            raise ContributionConfigError(
                f"unknown key(s) {unknown} in {SECTION}; valid: {sorted(TERM_KEYS | {'terms'})}"
            )
        if "terms" in section:
            return cls._from_terms(section)
        if "type" in section:
            kind = normalise_type(section["type"], f"{SECTION}.type")
        elif _env_switch(env.get("CONTRIBUTION", "0")):
            kind = normalise_type(env.get("CONTRIB_TYPE", "C0"), "CONTRIB_TYPE")
        else:
            kind = "none"
        beta_fallback = (env.get("BETA", DEFAULT_BETA), "BETA")
        if kind == "none":
            # the other keys still have to be valid: a bad beta must not wait for the day the term is turned on
            placeholder = "C2" if {"gamma", "potential_key"} & set(section) else "C0"
            placeholder = "C1" if "value_source" in section else placeholder
            _build_term({**section, "type": placeholder}, SECTION, beta_fallback)
            return cls()
        return cls((_build_term({**section, "type": kind}, SECTION, beta_fallback),))

    @classmethod
    def _from_terms(cls, section: Mapping[str, Any]) -> ContributionConfig:
        entries = section["terms"]
        others = sorted(set(section) - {"terms"})
        if others:
            raise ContributionConfigError(
                f"{SECTION}.terms excludes the one-term keys {others}: put them into the terms (or set them to null)"
            )
        if not isinstance(entries, list | tuple):
            raise ContributionConfigError(f"{SECTION}.terms must be a list of term mappings, got {entries!r}")
        terms = []
        for i, entry in enumerate(entries):
            where = f"{SECTION}.terms[{i}]"
            if not isinstance(entry, Mapping):
                raise ContributionConfigError(f"{where} must be a mapping like {{type: C0, beta: 0.05}}, got {entry!r}")
            terms.append(_build_term(entry, where))
        names = [t.name for t in terms]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ContributionConfigError(
                    f"{SECTION}.terms[{i}].name: a term named {name!r} already exists; give each term of the same "
                    "type its own name (it names the extras contrib_<name> and beta_<name>)"
                )
        return cls(tuple(terms))
