"""Options of the ToolRL reward family and how they are read from a config mapping or the environment.

Every ToolRL variant is a field of the frozen dataclass :class:`ToolRLOptions`. The Hydra key of a field
is ``+reward.reward_kwargs.toolrl.<field>``; when a key is absent, ToolRL's own environment variable applies
(on only when its value is exactly ``"1"``). An explicit config value always wins over the environment.

Ranges below are with every other option off, ``step`` being the trainer's global step.

``with_length`` (env ``WITHLENGTH``)
    Adds R_length in [0, 1] (words of the last think block / L, rounded to 2 places, capped at 1).
    Off: length is 0.0 and the total lies in [-3, 4].
``schedule_length`` (env ``SCHEDULELENGTH``)
    Only with ``with_length``: L = 256*step/105 + 384 instead of 512 (384 at step 0, 640 at step 105,
    uncapped afterwards, exactly as ToolRL).
``correct_max1`` (env ``CORRECTMAX1``)
    Correctness range [-1, 1] instead of [-3, 3] (total in [-1, 2]).
``max1_step30_max3`` (env ``MAX1STEP30MAX3``)
    Format: halved from step 30 on ([0, 1] before, [0, 0.5] after). Correctness: divided by 3 before
    step 30 ([-1, 1]), full range from step 30 on ([-3, 3]).
``schedule_reward`` (env ``SCHEDULEREWARD``)
    Applied after ``max1_step30_max3``. Format: max = max(1, 2 - (2 - max)*step/150),
    min = min(-1, -2 + (2 + min)*step/150): [-2, 2] at step 0, [-1, 1.5] at 75, [-1, 1] from 150 on, so
    the format reward is never 0 again. Correctness: max = min(3, (max - 2)*step/150 + 2),
    min = max(-3, (min + 2)*step/150 - 2): [-2, 2] at step 0, [-3, 3] from 150 on. With
    ``correct_max1`` the correctness max *falls* (2 - step/150) and the min *rises*; they meet at 0 at
    step 300 and cross afterwards (ToolRL's behaviour, kept).
``refined_reward`` (env ``REFINEDREWARD``)
    Name and parameter-key matching become strict ordered list equality (1 or 0) instead of a multiset
    Jaccard index. Range unchanged.
``intermediate_reward`` (env ``INTERMEDIATEREWARD``)
    One point per ground-truth call, only for an exactly equal predicted call; no per-parameter credit.
    Range unchanged.
``coarse_reward`` (env ``COARSEREWARD``)
    Correctness is the max when the parsed calls equal the ground truth, else the min. Range unchanged.
``chat_template`` (``"auto"`` | ``"qwen"`` | ``"llama"``; env fallback ``EXPERIMENT_NAME``)
    Which assistant-turn markers cut the prediction out of ``solution_str`` (see
    :mod:`verl_rewards.toolrl.extraction`). When the key is absent, ``EXPERIMENT_NAME`` decides as in
    ToolRL (case-sensitive, ``"llama"`` tested before ``"qwen"``). **Difference from ToolRL:** an
    ``EXPERIMENT_NAME`` containing neither word (e.g. ``"Qwen2.5-3B"``) does not raise
    ``NotImplementedError``; it falls back to ``"auto"``.

Config values must be booleans. Hydra strings ``"true"``/``"false"``/``"1"``/``"0"`` (any case) and the
integers 0/1 are accepted; ``None`` counts as absent. Anything else raises ``ValueError`` naming the key.
Unknown keys raise :class:`UnknownOptionError` (both a ``TypeError`` and a ``ValueError``) listing the valid
names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from .. import coerce

ChatTemplate = Literal["auto", "qwen", "llama"]
CHAT_TEMPLATES: tuple[str, ...] = ("auto", "qwen", "llama")

#: Option field -> ToolRL environment variable read when the config lacks the key.
ENV_VARS: dict[str, str] = {
    "with_length": "WITHLENGTH",
    "schedule_length": "SCHEDULELENGTH",
    "correct_max1": "CORRECTMAX1",
    "max1_step30_max3": "MAX1STEP30MAX3",
    "schedule_reward": "SCHEDULEREWARD",
    "refined_reward": "REFINEDREWARD",
    "intermediate_reward": "INTERMEDIATEREWARD",
    "coarse_reward": "COARSEREWARD",
}
EXPERIMENT_NAME_VAR = "EXPERIMENT_NAME"


class UnknownOptionError(TypeError, ValueError):
    """An option name that ToolRL does not have (catchable as ``TypeError`` or ``ValueError``)."""


@dataclass(frozen=True)
class ToolRLOptions:
    """The ToolRL reward variants; all off and ``chat_template="auto"`` by default (see module docs)."""

    with_length: bool = False
    schedule_length: bool = False
    correct_max1: bool = False
    max1_step30_max3: bool = False
    schedule_reward: bool = False
    refined_reward: bool = False
    intermediate_reward: bool = False
    coarse_reward: bool = False
    chat_template: ChatTemplate = "auto"

    def __post_init__(self) -> None:
        for name in ENV_VARS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"ToolRL option {name!r} must be a bool, got {getattr(self, name)!r}")
        if self.chat_template not in CHAT_TEMPLATES:
            raise ValueError(
                f"ToolRL option 'chat_template' must be one of {CHAT_TEMPLATES}, got {self.chat_template!r}"
            )

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Valid option names, in declaration order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
    ) -> ToolRLOptions:
        """Build options from a config mapping, falling back to ToolRL's env vars for absent keys.

        ``environ`` defaults to ``os.environ`` (read at call time, like ToolRL, which reads the variables
        on every scoring call).
        """
        env = os.environ if environ is None else environ
        cfg = {} if config is None else config
        if not isinstance(cfg, Mapping):
            raise ValueError(f"ToolRL config must be a mapping or None, got {type(cfg).__name__}")
        valid = cls.field_names()
        unknown = sorted(str(k) for k in cfg if k not in valid)
        if unknown:
            raise UnknownOptionError(f"unknown ToolRL option(s) {unknown}; valid names: {', '.join(valid)}")
        values: dict[str, Any] = {}
        for name, var in ENV_VARS.items():
            raw = cfg.get(name)
            values[name] = env.get(var) == "1" if raw is None else parse_bool(raw, name)
        raw_template = cfg.get("chat_template")
        if raw_template is None:
            values["chat_template"] = template_from_experiment_name(env.get(EXPERIMENT_NAME_VAR, ""))
        else:
            values["chat_template"] = parse_chat_template(raw_template)
        return cls(**values)

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments for :func:`verl_rewards.toolrl.compute_score`."""
        return asdict(self)


def parse_bool(value: Any, key: str) -> bool:
    """A config value as a boolean, with the package's one set of spellings (:func:`verl_rewards.coerce.parse_bool`)."""
    try:
        return coerce.parse_bool(value)
    except ValueError:
        raise ValueError(
            f"ToolRL option {key!r} must be a boolean (true/false/1/0/yes/no/on/off), got {value!r}"
        ) from None


def parse_chat_template(value: Any) -> ChatTemplate:
    """Validate a ``chat_template`` config value (case-insensitive)."""
    if isinstance(value, str) and value.strip().lower() in CHAT_TEMPLATES:
        return value.strip().lower()  # type: ignore[return-value]
    raise ValueError(f"ToolRL option 'chat_template' must be one of {CHAT_TEMPLATES}, got {value!r}")


def template_from_experiment_name(experiment_name: str) -> ChatTemplate:
    """ToolRL's ``EXPERIMENT_NAME`` rule: "llama" first, then "qwen", case-sensitive; else "auto"."""
    if "llama" in experiment_name:
        return "llama"
    if "qwen" in experiment_name:
        return "qwen"
    return "auto"
