"""ToolRL as a built-in scorer of the ``contribution`` manager (data sources containing ``"rlla"``), and as the
registered reward ``toolrl``.

Built-in route: options come from ``reward.reward_kwargs.toolrl.*`` (ToolRL's environment variables fill absent
keys) and are validated once when the manager is built. Like ToolRL's own manager, the prompt and response are
decoded together with special tokens kept, and the prediction is the text after the last assistant header.

Registered reward ``toolrl`` (``verl-rewards score FILE --reward toolrl``, ``reward_fn: toolrl``): it scores the
response alone, decoded without special tokens, which is the assistant turn of a single-turn rollout and exactly
what verl's rollout dumps hold in ``output``; options come from ToolRL's environment variables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..rewards.decorators import reward
from ..scoring.contract import ConfigError, DecodeConfig, Scorer
from ..scoring.families import Family
from ..scoring.runner import RewardScorer
from ..scoring.spec import spec_from_callable
from .extraction import detect_chat_template
from .options import ToolRLOptions
from .scoring import score_with_options

EXTRA_KEYS = ("format", "correctness", "length")
REWARD_NAME = "toolrl"


def matches(data_source: str) -> bool:
    """ToolRL's rule: any data source containing ``"rlla"``."""
    return "rlla" in data_source


def make_scorer(section: Mapping[str, Any] | None, tokenizer: Any = None) -> Scorer:
    """A :class:`Scorer` for ToolRL with the run's options.

    With ``chat_template="auto"`` the assistant markers come from the tokenizer's chat template (Qwen/ChatML or
    Llama 3); a tokenizer whose template uses neither is an error when the manager is built.
    """
    try:
        options = ToolRLOptions.from_config(section)
        if options.chat_template == "auto" and getattr(tokenizer, "chat_template", None) is not None:
            options = dataclasses.replace(options, chat_template=detect_chat_template(tokenizer))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"reward.reward_kwargs.toolrl: {exc}") from None

    def toolrl_score(solution_str: str, ground_truth: Any, step: int = 0) -> dict[str, float]:
        return score_with_options(solution_str, str(ground_truth), step, options)

    decode = DecodeConfig(include_prompt=True, skip_special_tokens=False)
    return RewardScorer(spec_from_callable(toolrl_score, name="toolrl", decode=decode, extra_keys=EXTRA_KEYS))


@reward(name=REWARD_NAME, extra_keys=EXTRA_KEYS)
def toolrl(final_response: str, ground_truth: Any, step: int = 0) -> dict[str, float]:
    """ToolRL's reward of a response (special tokens skipped) with ToolRL's environment-variable options."""
    return score_with_options(final_response, str(ground_truth), step, ToolRLOptions.from_config(None))


FAMILY = Family(name="toolrl", matches=matches, make_scorer=make_scorer, extra_keys=EXTRA_KEYS)
