"""The scoring contract every layer above relies on: how a rollout is decoded, what a scorer receives and returns.

* :class:`DecodeConfig`: whether the text a reward sees includes the prompt and special tokens.
* :class:`ScoringContext`: what a scorer may use besides the sample, frozen for a run: the decoder, the
  constant keyword arguments (``reward.reward_kwargs.score_kwargs``), the default executor, the call timeout
  and the process executor (created on first use).
* :class:`Scorer`: one guarded call for one sample (``run(sample, ctx) -> ScoreResult``); the engine adds the
  time limit, the fallback and the contribution term.
* :class:`RewardInputError` (a reward needs an input nothing provides) and :class:`ConfigError` (a bad option,
  raised when a run is built) are setup errors, never turned into fallback scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .decoding import DecodeBatcher
    from .result import ScoreResult
    from .sample import Sample


class ConfigError(ValueError):
    """An option of a run (``reward.reward_kwargs.*``) is invalid; raised when the run is built."""


class RewardInputError(TypeError):
    """A reward requires a parameter that no field provides (a setup error, never a fallback)."""


@dataclass(frozen=True)
class DecodeConfig:
    """How a rollout becomes text. ``None`` fields defer to the reward's own preference (then the defaults:
    response only, special tokens skipped)."""

    include_prompt: bool | None = None
    skip_special_tokens: bool | None = None

    def over(self, preferred: DecodeConfig) -> DecodeConfig:
        """This config where set, else ``preferred`` (the run's ``decode.*`` keys over a reward's choice)."""
        return DecodeConfig(
            include_prompt=preferred.include_prompt if self.include_prompt is None else self.include_prompt,
            skip_special_tokens=preferred.skip_special_tokens
            if self.skip_special_tokens is None
            else self.skip_special_tokens,
        )


#: the response alone with special tokens skipped (what ``final_response`` means)
RESPONSE_DECODE = DecodeConfig(include_prompt=False, skip_special_tokens=True)


def _as_list(ids: Any) -> list[int]:
    return ids.tolist() if hasattr(ids, "tolist") else list(ids)


@dataclass(frozen=True)
class ScoringContext:
    """What a scorer gets besides the sample (see the module doc)."""

    decoder: DecodeBatcher
    decode: DecodeConfig = DecodeConfig()  # the run's ``decode.*`` keys (win over a reward's preference)
    score_kwargs: Mapping[str, Any] = field(default_factory=dict)
    executor: str = "thread"
    timeout_s: float | None = None
    process_runner: Callable[[], Any] | None = None

    def _text_or_ids(self, sample: Sample, preferred: DecodeConfig) -> tuple[str | None, list[int], bool]:
        decode = self.decode.over(preferred)
        include_prompt = bool(decode.include_prompt)
        if sample.response_text is not None:
            text = (sample.prompt_text or "") + sample.response_text if include_prompt else sample.response_text
            return text, [], True
        skip = True if decode.skip_special_tokens is None else decode.skip_special_tokens
        ids = _as_list(sample.response_ids)
        if include_prompt:
            ids = _as_list(sample.prompt_ids) + ids
        return None, ids, skip

    def decode_now(self, sample: Sample, preferred: DecodeConfig) -> str:
        """The sample's text in the calling thread."""
        text, ids, skip = self._text_or_ids(sample, preferred)
        return text if text is not None else self.decoder.decode_now(ids, skip)

    async def decode_text(self, sample: Sample, preferred: DecodeConfig) -> str:
        """The sample's text; concurrent samples share one batched decode off the event loop."""
        text, ids, skip = self._text_or_ids(sample, preferred)
        return text if text is not None else await self.decoder.decode(ids, skip)

    def decode_prompt(self, sample: Sample) -> str:
        """The prompt's text (special tokens skipped)."""
        if sample.prompt_text is not None:
            return sample.prompt_text
        return self.decoder.decode_now(_as_list(sample.prompt_ids), True)


class Scorer:
    """A reward as the engine runs it: its name, the extra keys it may report and one guarded call.

    :meth:`run` bounds the reward's call by ``ctx.timeout_s`` itself (raising ``TimeoutError``), counted from when
    its executor starts the call; the engine adds no time limit of its own.
    """

    name: str = "scorer"
    extra_keys: tuple[str, ...] = ()
    #: the extra keys that hold text (absent: ``""``, not ``0.0``)
    text_keys: tuple[str, ...] = ()

    async def run(self, sample: Sample, ctx: ScoringContext) -> ScoreResult:
        raise NotImplementedError
