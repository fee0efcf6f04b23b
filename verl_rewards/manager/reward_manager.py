"""``ContributionRewardManager``: verl's reward-loop manager ``contribution`` (and a legacy batch adapter).

verl 0.9 calls :meth:`ContributionRewardManager.run_single` once per trajectory inside its
``RewardLoopWorker`` actors; verl <= 0.7 called ``manager(data, return_dict=True)`` on a whole batch.
Both adapters hand rows to the same :class:`~verl_rewards.manager.core.ScoringCore`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from typing import Any

import torch
from verl import DataProto
from verl.experimental.reward_loop.reward_manager import register
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from ..scoring.contract import RESPONSE_DECODE
from ..scoring.sample import sample_from_row, samples_from_batch
from .build import build_scoring
from .config import MANAGER_NAME, ManagerConfig, to_plain

logger = logging.getLogger("verl_rewards")

NAME = MANAGER_NAME


def place_on_last_token(responses: torch.Tensor, valid_lengths: torch.Tensor, scores: list[float]) -> torch.Tensor:
    """A float32 tensor shaped like ``responses`` with each score on its row's last valid response token.

    A row with no valid response token gets no reward rather than wrapping around to the last padded
    position (which ``index - 1`` would do).
    """
    out = torch.zeros(responses.shape, dtype=torch.float32)
    lengths = valid_lengths.to(torch.long).cpu()
    values = torch.tensor(scores, dtype=torch.float32)
    rows = torch.nonzero(lengths > 0, as_tuple=True)[0]
    if rows.numel():
        out[rows, lengths[rows] - 1] = values[rows]
    return out


def _verl_default_score() -> Callable[..., Any]:
    from verl.utils.reward_score import default_compute_score

    return default_compute_score


@register(NAME)
class ContributionRewardManager(RewardManagerBase):
    """Decode each rollout, score it, add ``beta * R_contrib``, and report every component.

    Configured through ``reward.reward_kwargs`` (see :mod:`verl_rewards.manager.config`).
    """

    def __init__(
        self,
        config: Any = None,
        tokenizer: Any = None,
        compute_score: Callable[..., Any] | None = None,
        reward_router_address: str | None = None,
        reward_model_tokenizer: Any = None,
        num_examine: int = 0,
        reward_fn_key: str = "data_source",
        **reward_kwargs: Any,
    ):
        super().__init__(config, tokenizer, compute_score)
        self.reward_router_address = reward_router_address
        self.reward_model_tokenizer = reward_model_tokenizer
        self.num_examine = num_examine
        self.reward_fn_key = reward_fn_key
        if config is not None:
            reward_section = config.get("reward", {}) if hasattr(config, "get") else {}
            kwargs = to_plain(reward_section.get("reward_kwargs", {}) or {})
            custom_path = (reward_section.get("custom_reward_function") or {}).get("path")
            custom = compute_score if custom_path else None
            default = compute_score if (compute_score is not None and not custom_path) else None
            custom_path = str(custom_path) if custom_path else None  # file, file:// or pkg:// (load_module)
        else:  # legacy construction: kwargs are the manager's reward_kwargs, compute_score is the user's
            kwargs = dict(reward_kwargs)
            custom = compute_score
            default = None
            custom_path = None
        self.settings = ManagerConfig.from_reward_kwargs(kwargs)
        scoring = build_scoring(
            self.settings,
            tokenizer,
            custom=custom,
            default=default or _verl_default_score(),
            custom_path=custom_path,
            family_tokenizer=tokenizer,
        )
        self.router, self.core = scoring.router, scoring.core
        logger.info(
            "verl-rewards: contribution manager ready (contribution: %s; timeout_s=%s, on_error=%s)",
            self.settings.contribution.describe(),
            self.settings.timeout_s,
            self.settings.on_error,
        )

    # --------------------------------------------------------- reward-loop API (verl 0.9)
    async def run_single(self, data: DataProto) -> dict:
        """Score the last output of one trajectory: ``{"reward_score", "reward_extra_info"}``."""
        b = data.batch  # the last row, read in place: slicing a DataProto costs more than scoring a short reward
        row = {k: v[-1] for k, v in data.non_tensor_batch.items()}
        sample = sample_from_row(b["prompts"][-1], b["responses"][-1], b["attention_mask"][-1], row, data.meta_info)
        result = await self.core.score(sample)
        return {"reward_score": result.reward, "reward_extra_info": result.extra}

    @classmethod
    def assemble_rm_scores(cls, data: DataProto, scores: list[float]) -> torch.Tensor:
        """Colocated path: scores on the last valid response token, none for empty responses."""
        prompt_width = data.batch["prompts"].size(1)
        valid = data.batch["attention_mask"][:, prompt_width:].sum(dim=1)
        return place_on_last_token(data.batch["responses"], valid, scores)

    # ---------------------------------------------------------- legacy batch API (verl <= 0.7)
    def __call__(self, data: DataProto, return_dict: bool = False) -> torch.Tensor | dict[str, Any]:
        """Score a whole padded batch; returns the token-level reward tensor (and extras with ``return_dict``)."""
        if "rm_scores" in data.batch.keys():
            if return_dict:
                keys = data.meta_info.get("reward_extra_keys", [])
                return {
                    "reward_tensor": data.batch["rm_scores"],
                    "reward_extra_info": {k: data.non_tensor_batch[k] for k in keys},
                }
            return data.batch["rm_scores"]
        samples = samples_from_batch(data)

        async def score_all() -> list:
            return await asyncio.gather(*(self.core.score(s) for s in samples))

        results = _run_coroutine(score_all())
        valid = torch.tensor([s.response_length for s in samples], dtype=torch.long)
        reward_tensor = place_on_last_token(data.batch["responses"], valid, [r.reward for r in results])
        self._print_examples(samples, results)
        if not return_dict:
            return reward_tensor
        keys = self.core.extra_keys
        extra = {k: [r.extra.get(k, 0.0) for r in results] for k in keys}
        return {"reward_tensor": reward_tensor, "reward_extra_info": extra}

    def _print_examples(self, samples: list, results: list) -> None:
        if self.num_examine <= 0:
            return
        shown: dict[str, int] = {}
        for sample, result in zip(samples, results, strict=True):
            n = shown.get(sample.data_source, 0)
            if n >= self.num_examine:
                continue
            shown[sample.data_source] = n + 1
            text = self.core.context.decode_now(sample, RESPONSE_DECODE)
            print(f"[{sample.data_source}] reward={result.reward:.4f} extra={result.extra}\n[response] {text[:2000]}")

    def extra_keys(self) -> list[str]:
        """The extra keys this manager has declared or emitted so far."""
        return self.core.extra_keys


def _run_coroutine(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, even when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


try:  # the legacy registry (verl <= 0.7 looked managers up here)
    from verl.workers.reward_manager import register as _legacy_register

    _legacy_register(NAME)(ContributionRewardManager)  # type: ignore[arg-type]
except Exception as _exc:  # noqa: BLE001 - the legacy registry is optional
    logger.debug("verl-rewards: legacy reward-manager registry unavailable: %s", _exc)
