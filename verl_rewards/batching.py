"""Build verl ``DataProto`` batches the way verl's trainer lays them out (for the demo, tests, benchmarks).

Prompts are left-padded to a common width, responses right-padded; ``attention_mask`` covers
``[prompts | responses]`` and ``position_ids`` count valid tokens, as in a real rollout batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch


def padded_batch(
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    non_tensor: Mapping[str, Sequence[Any]],
    pad_token_id: int,
    prompt_width: int | None = None,
    response_width: int | None = None,
    meta_info: Mapping[str, Any] | None = None,
) -> Any:
    """A ``DataProto`` with ``prompts``, ``responses``, ``input_ids``, ``attention_mask``, ``position_ids``."""
    from verl import DataProto

    n = len(prompt_ids)
    if len(response_ids) != n:
        raise ValueError("prompt_ids and response_ids must have the same length")
    pw = prompt_width or max(1, max(len(p) for p in prompt_ids))
    rw = response_width or max(1, max(len(r) for r in response_ids))
    prompts = torch.full((n, pw), pad_token_id, dtype=torch.long)
    responses = torch.full((n, rw), pad_token_id, dtype=torch.long)
    mask = torch.zeros((n, pw + rw), dtype=torch.long)
    for i, (p, r) in enumerate(zip(prompt_ids, response_ids, strict=True)):
        p, r = list(p)[-pw:], list(r)[:rw]
        if p:
            prompts[i, pw - len(p) :] = torch.tensor(p)
            mask[i, pw - len(p) : pw] = 1
        if r:
            responses[i, : len(r)] = torch.tensor(r)
            mask[i, pw : pw + len(r)] = 1
    input_ids = torch.cat([prompts, responses], dim=1)
    position_ids = torch.clamp(torch.cumsum(mask, dim=1) - 1, min=0)
    tensors = {
        "prompts": prompts,
        "responses": responses,
        "input_ids": input_ids,
        "attention_mask": mask,
        "position_ids": position_ids,
    }
    arrays = {}
    for key, values in non_tensor.items():
        arr = np.empty(n, dtype=object)
        arr[:] = list(values)
        arrays[key] = arr
    return DataProto.from_dict(tensors=tensors, non_tensors=arrays, meta_info=dict(meta_info or {}))


def streaming_item(prompt_ids: Sequence[int], response_ids: Sequence[int], fields: Mapping[str, Any]) -> Any:
    """One trajectory as verl's agent loop sends it to ``run_single`` (unpadded, with lengths)."""
    from verl import DataProto

    p = torch.tensor(list(prompt_ids), dtype=torch.long)
    r = torch.tensor(list(response_ids), dtype=torch.long)
    ids = torch.cat([p, r])
    tensors = {
        "prompts": p.unsqueeze(0),
        "responses": r.unsqueeze(0),
        "input_ids": ids.unsqueeze(0),
        "attention_mask": torch.ones_like(ids).unsqueeze(0),
        "position_ids": torch.arange(len(ids)).unsqueeze(0),
    }
    arrays: dict[str, np.ndarray] = {}
    for key, value in {**fields, "prompt_len": len(p), "response_len": len(r)}.items():
        arr = np.empty(1, dtype=object)
        arr[0] = value
        arrays[key] = arr
    return DataProto.from_dict(tensors=tensors, non_tensors=arrays)
