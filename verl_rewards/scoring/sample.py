"""One rollout as the scoring function sees it, read from a verl ``DataProto`` row.

Two tensor layouts reach a reward manager in verl 0.9:

* the trainer batch (legacy ``__call__`` and the colocated reward path): prompts left-padded to a common
  width, responses right-padded, ``attention_mask`` over ``[prompts | responses]``;
* the agent loop's streaming call (``run_single``): one trajectory per call, with ``prompt_len`` and
  ``response_len`` given as non-tensor fields; when a trajectory has several outputs they are padded on
  the right, so those lengths are the only reliable bounds.

Multi-turn responses interleave model and tool tokens; ``attention_mask`` covers both, so the decoded
response is the whole trajectory text after the prompt (tool outputs included), as verl's own managers do.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..coerce import read_float
from ..step_dicts import MAX_STEP, read_step_dict

STEP_DICT_KEYS = ("prev_step_dict", "cur_step_dict")


@dataclass
class Sample:
    """Everything the manager knows of one rollout before decoding."""

    prompt_ids: Any  # 1-D tensor (or list) of the valid prompt tokens
    response_ids: Any  # 1-D tensor (or list) of the valid response tokens
    data_source: str
    ground_truth: Any
    extra_info: dict[str, Any]
    step: int
    prev_step_dict: Any
    cur_step_dict: Any
    sample_id: Any = None
    row: dict[str, Any] = field(default_factory=dict)
    #: already decoded text (offline scoring); when set, no token ids are decoded
    response_text: str | None = None
    prompt_text: str | None = None
    #: a step dict was present but unusable (bad JSON, too deep, wrong type): the defaults were used
    step_dict_error: bool = False
    #: a step field was present but not a training step (inf, NaN text, a 400-digit integer, negative): skipped
    step_error: bool = False
    #: what the agent loop recorded (``tool_extra_fields``, parsed when it is JSON text)
    tool_extra: dict[str, Any] = field(default_factory=dict)
    #: the row, the agent loop or ``extra_info`` gave step dicts (even empty ones: a trajectory with no tool turn)
    has_step_dicts: bool = False

    @property
    def response_length(self) -> int:
        return len(self.response_ids)

    @classmethod
    def from_text(cls, row: Mapping[str, Any], response: str, prompt: str = "") -> Sample:
        """A sample whose text is already decoded (offline scoring of saved rollouts)."""
        row = dict(row)
        extra_info = _as_dict(row.get("extra_info"))
        prev, cur, malformed = step_dicts(row, {}, extra_info)
        step, step_error = read_step(row, {}, extra_info)
        return cls(
            prompt_ids=[],
            response_ids=[],
            data_source=str(row.get("data_source") or ""),
            ground_truth=_ground_truth(row),
            extra_info=extra_info,
            step=step,
            prev_step_dict=prev,
            cur_step_dict=cur,
            sample_id=row.get("uid", row.get("index", extra_info.get("index"))),
            row=row,
            response_text=response,
            prompt_text=prompt,
            step_dict_error=malformed,
            step_error=step_error,
            tool_extra=_as_dict(row.get("tool_extra_fields")),
            has_step_dicts=has_step_dicts(row, {}, extra_info),
        )


def _scalar(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _as_dict(value: Any) -> dict[str, Any]:
    value = _scalar(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def find_step_dict(
    name: str, row: Mapping[str, Any], tool_extra: Mapping[str, Any], extra_info: Mapping[str, Any]
) -> tuple[Any, bool]:
    """``prev_step_dict``/``cur_step_dict`` from the top level, ``tool_extra_fields`` or ``extra_info``.

    Returns ``(step_dict, malformed)`` as :func:`~verl_rewards.step_dicts.read_step_dict` does.
    """
    for source in (row, tool_extra, extra_info):
        if name in source:
            value = _scalar(source[name])
            if value is not None:
                return read_step_dict(value)
    return {}, False


def has_step_dicts(row: Mapping[str, Any], tool_extra: Mapping[str, Any], extra_info: Mapping[str, Any]) -> bool:
    """Whether any of the three places holds a step dict that is not ``None`` (what :func:`find_step_dict` reads)."""
    return any(
        _scalar(source.get(name)) is not None
        for source in (row, tool_extra, extra_info)
        for name in STEP_DICT_KEYS
        if name in source
    )


def step_dicts(
    row: Mapping[str, Any], tool_extra: Mapping[str, Any], extra_info: Mapping[str, Any]
) -> tuple[Any, Any, bool]:
    """Both step dicts of a row and whether either was malformed."""
    prev, bad_prev = find_step_dict("prev_step_dict", row, tool_extra, extra_info)
    cur, bad_cur = find_step_dict("cur_step_dict", row, tool_extra, extra_info)
    return prev, cur, bad_prev or bad_cur


def _int_or_none(value: Any) -> int | None:
    """A whole number in ``[-MAX_STEP, MAX_STEP]`` (truncated), else None; never raises."""
    out = read_float(_scalar(value), maximum=MAX_STEP, bools=False, text=True)
    return None if out is None else int(out)


def read_step(row: Mapping[str, Any], meta_info: Mapping[str, Any], extra_info: Mapping[str, Any]) -> tuple[int, bool]:
    """The global training step: ``global_steps`` column (V1), batch meta_info, else extra_info, else 0; and
    whether a field before the one used held something that is not a step (an infinity, a 400-digit integer,
    a negative number, text): such a field is skipped and flagged (``step_error``), never an exception.
    ``None`` and NaN (a missing value in a table column) are simply absent."""
    bad = False
    for value in (
        row.get("global_steps"),
        row.get("step"),
        meta_info.get("global_steps"),
        meta_info.get("global_step"),
        extra_info.get("global_step"),
        extra_info.get("step"),
    ):
        value = _scalar(value)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        step = _int_or_none(value)
        if step is not None and step >= 0:
            return step, bad
        bad = True
    return 0, bad


def _ground_truth(row: Mapping[str, Any]) -> Any:
    rm = _as_dict(row.get("reward_model"))
    if "ground_truth" in rm:
        return rm["ground_truth"]
    return _scalar(row.get("ground_truth"))


def sample_from_row(
    prompts: Any,
    responses: Any,
    attention_mask: Any,
    row: Mapping[str, Any],
    meta_info: Mapping[str, Any] | None = None,
) -> Sample:
    """Build a :class:`Sample` from one row's tensors (1-D) and its non-tensor fields."""
    meta_info = meta_info or {}
    row = {k: _scalar(v) for k, v in row.items()}
    prompt_width = int(prompts.shape[-1])
    prompt_len = _int_or_none(row.get("prompt_len"))
    response_len = _int_or_none(row.get("response_len"))
    if prompt_len is not None and response_len is not None:
        # streaming layout: each part starts at index 0 and may be right-padded
        prompt_ids = prompts[:prompt_len]
        response_ids = responses[:response_len]
    else:
        valid_prompt = int(attention_mask[:prompt_width].sum())
        prompt_ids = prompts[prompt_width - valid_prompt :]
        valid = int(attention_mask[prompt_width:].sum())
        response_ids = responses[:valid]

    tool_extra = _as_dict(row.get("tool_extra_fields"))
    extra_info = _as_dict(row.get("extra_info"))
    # same view of extra_info as verl's naive manager gives a verl-style scoring function
    extra_info.update(tool_extra)
    extra_info["num_turns"] = row.get("__num_turns__")
    extra_info["rollout_reward_scores"] = row.get("reward_scores", {})

    data_source = row.get("data_source")
    sample_id = row.get("uid", row.get("index", extra_info.get("index")))
    prev, cur, malformed = step_dicts(row, tool_extra, extra_info)
    step, step_error = read_step(row, meta_info, extra_info)
    return Sample(
        prompt_ids=prompt_ids,
        response_ids=response_ids,
        data_source="" if data_source is None else str(data_source),
        ground_truth=_ground_truth(row),
        extra_info=extra_info,
        step=step,
        prev_step_dict=prev,
        cur_step_dict=cur,
        sample_id=sample_id,
        row=row,
        step_dict_error=malformed,
        step_error=step_error,
        tool_extra=tool_extra,
        has_step_dicts=has_step_dicts(row, tool_extra, extra_info),
    )


def samples_from_batch(data: Any) -> list[Sample]:
    """Every row of a verl ``DataProto`` as a :class:`Sample`."""
    batch = data.batch
    prompts, responses, mask = batch["prompts"], batch["responses"], batch["attention_mask"]
    ntb = data.non_tensor_batch
    n = len(data)
    short = {k: len(v) for k, v in ntb.items() if len(v) != n}
    if short:
        raise ValueError(f"non_tensor_batch column(s) {short} do not have one value per row (batch of {n} rows)")
    meta = dict(data.meta_info or {})
    out = []
    for i in range(n):
        row = {k: v[i] for k, v in ntb.items()}
        out.append(sample_from_row(prompts[i], responses[i], mask[i], row, meta))
    return out
