"""The one input resolver: the fields a reward (registered or a plain ``compute_score``) gets by parameter name.

Predefined fields:

============== ==========================================================================================
``final_response`` the decoded rollout: the response with special tokens skipped, unless the reward or the
                   run's ``decode.*`` keys ask for the prompt too or for special tokens (ToolRL does)
``solution_str``   the same text (verl's name for it)
``trajectory``     the rollout's messages: ``tool_extra_fields["messages"]`` when the agent loop recorded them,
                   else the prompt messages plus the response as one assistant message
``id``             the trajectory id (``tool_extra_fields["trajectory_id"]``, else ``uid``/``session_id``/index)
``env``            a pooled environment (rewards declared with ``env_cls`` + ``pool_size``)
``prompt``         the decoded prompt text; ``messages``: the prompt as a chat list (``raw_prompt``)
``data_source``, ``ground_truth``, ``step``, ``prev_step_dict``, ``cur_step_dict``, ``extra_info``
============== ==========================================================================================

Any other parameter is looked up in the task row: first its top-level columns, then ``extra_info`` keys,
then ``reward_model`` keys (so a parquet column or an ``extra_info`` key ``max_length`` reaches a reward
parameter ``max_length``); ``reward.reward_kwargs.score_kwargs`` constants win over those row fields. A reward
that takes ``**kwargs`` also gets every verl-style field (:data:`VERL_FIELDS`, as verl's own managers pass
them) and the constants. A required parameter with no source is a :class:`RewardInputError` on the first
sample, naming the parameter and the fields that exist.

Every value a reward receives is its own copy (:func:`private_copies`): verl's GRPO repeat shares one
``reward_model`` / ``extra_info`` object between a prompt's rollouts, and the engine reads the step dicts for the
contribution term, so a reward that edits its inputs must change nothing but its copies.
"""

from __future__ import annotations

import copy
import logging
import pickle
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .contract import RewardInputError
from .sample import Sample

if TYPE_CHECKING:
    from .contract import ScoringContext
    from .spec import RewardSpec

PREDEFINED = (
    "final_response",
    "solution_str",
    "trajectory",
    "id",
    "env",
    "prompt",
    "messages",
    "data_source",
    "ground_truth",
    "step",
    "prev_step_dict",
    "cur_step_dict",
    "extra_info",
)
#: what verl's managers pass a ``compute_score``; a reward taking ``**kwargs`` gets all of them
VERL_FIELDS = ("data_source", "solution_str", "ground_truth", "extra_info", "step", "prev_step_dict", "cur_step_dict")
_HIDDEN_COLUMNS = frozenset({"tool_extra_fields", "__num_turns__", "prompt_len", "response_len", "raw_prompt"})
_IMMUTABLE = (str, bytes, int, float, bool, complex, type(None))
logger = logging.getLogger("verl_rewards")
_uncopyable_logged: set[str] = set()


def private_copies(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` with every mutable value deep-copied, in one pass so values that shared an object still share
    their copy. A value that cannot be copied (neither pickled nor deep-copied) is passed as it is, logged once."""
    mutable = {k: v for k, v in kwargs.items() if not isinstance(v, _IMMUTABLE)}
    if not mutable:
        return dict(kwargs)
    try:
        copies = pickle.loads(pickle.dumps(mutable, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - an unpicklable value: copy value by value
        copies = {}
        for key, value in mutable.items():
            try:
                copies[key] = copy.deepcopy(value)
            except Exception:  # noqa: BLE001 - passed as it is
                copies[key] = value
                if key not in _uncopyable_logged:
                    _uncopyable_logged.add(key)
                    logger.warning(
                        "verl-rewards: input %r (%s) cannot be copied; the reward gets the original",
                        key,
                        type(value).__name__,
                    )
    return {**kwargs, **copies}


def _as_messages(value: Any) -> list[dict[str, Any]] | None:
    if hasattr(value, "tolist") and not isinstance(value, list | dict):
        value = value.tolist()
    if isinstance(value, list) and all(isinstance(m, Mapping) for m in value):
        return [dict(m) for m in value]
    return None


def trajectory_id(sample: Sample) -> str:
    """A stable id of the rollout: the agent loop's trajectory id, else uid + session (or index)."""
    tool_extra = sample.tool_extra
    if tool_extra.get("trajectory_id") is not None:
        return str(tool_extra["trajectory_id"])
    uid = sample.row.get("uid")
    session = sample.row.get("session_id", sample.row.get("index", sample.extra_info.get("index")))
    if uid is not None:
        return f"{uid}/{session}" if session is not None else str(uid)
    return str(sample.sample_id)


def row_fields(sample: Sample) -> dict[str, Any]:
    """Task-row fields other than the predefined ones, in lookup order (columns, extra_info, reward_model)."""
    out: dict[str, Any] = {}
    reward_model = sample.row.get("reward_model")
    if isinstance(reward_model, Mapping):
        out.update({k: v for k, v in reward_model.items()})
    out.update(sample.extra_info)
    out.update({k: v for k, v in sample.row.items() if k not in _HIDDEN_COLUMNS})
    return out


def available_names(sample: Sample | None = None) -> list[str]:
    names = set(PREDEFINED)
    if sample is not None:
        names |= set(row_fields(sample))
    return sorted(names)


def missing_inputs(spec: RewardSpec, fields: Iterable[str]) -> list[str]:
    """The required parameters of ``spec`` that nothing fills: not a predefined input, not a fixed keyword
    argument, not one of ``fields`` (the row's fields and the ``score_kwargs`` constants). ``verl-rewards check``
    asks the same of every row before the first step."""
    given = set(fields)
    return [n for n in spec.required if n not in PREDEFINED and n not in spec.fixed_kwargs and n not in given]


def resolve_inputs(spec: RewardSpec, sample: Sample, text: str, ctx: ScoringContext) -> dict[str, Any]:
    """Keyword arguments for ``spec`` on ``sample`` (``env`` is added by the caller); see the module doc."""
    constants = ctx.score_kwargs
    tool_extra = sample.tool_extra
    row: dict[str, Any] | None = None
    kwargs: dict[str, Any] = {}
    if spec.accepts_any:
        kwargs.update({name: getattr(sample, name) for name in VERL_FIELDS if name != "solution_str"})
        kwargs["solution_str"] = text
        kwargs.update(constants)
    for name in spec.params:
        if name == "env" or name in kwargs:
            continue
        if name in ("final_response", "solution_str"):
            kwargs[name] = text
        elif name == "trajectory":
            recorded = _as_messages(tool_extra.get("messages"))
            if recorded is None:
                prompt = _as_messages(sample.row.get("raw_prompt")) or []
                recorded = prompt + [{"role": "assistant", "content": text}]
            kwargs[name] = recorded
        elif name == "id":
            kwargs[name] = trajectory_id(sample)
        elif name == "prompt":
            kwargs[name] = ctx.decode_prompt(sample)
        elif name == "messages":
            kwargs[name] = _as_messages(sample.row.get("raw_prompt")) or []
        elif name in ("data_source", "ground_truth", "step", "prev_step_dict", "cur_step_dict", "extra_info"):
            kwargs[name] = getattr(sample, name)
        else:
            if row is None:
                row = {**row_fields(sample), **constants}
            if name in row:
                kwargs[name] = row[name]
    missing = [] if row is None else missing_inputs(spec, row)
    if missing:
        raise RewardInputError(
            f"reward {spec.name!r} requires parameter(s) {missing} that no field provides; "
            f"available fields: {available_names(sample)} (constants: reward.reward_kwargs.score_kwargs)"
        )
    return private_copies(kwargs)
