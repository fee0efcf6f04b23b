"""The learning run's measure: a model's sampled policy on fixed validation rows, scored by our manager, drawn the way
verl's validation in ``verl-rewards learn`` draws it.

Each row's prompt ids come from verl's Continuous Token builder (what verl's single-turn agent loop sends), each
trial is sampled by the ``hf_cpu`` server class (:class:`~.rollout.HFCpuServer`, without Ray) with the seed the
smoke policy loop gives validation trial ``t`` of the row (:func:`~.policy.trajectory_key`: the rollout seed,
``"val"``, the row's ``extra_info.index``, ``t``), and the samples are scored by the manager's scoring core
(:func:`verl_rewards.offline.score_samples`, decoding the token ids as the manager does) with the run's reward
kwargs. So the same model gives the same numbers here as in verl's validation of the run (``val-core/...``), and
before SFT, after SFT and after GRPO are measured on the same rows with the same random draws.

Success (pass^k) is a reward at the row's gold reward (:func:`verl_rewards.gold.gold_reward`: ToolRL's top of
format + correctness for a tool-call row, of format alone for a text answer).

Every sample has its own seed, so an evaluation is the same whether it runs in one process or in parts: :class:`Pool`
runs evaluations in worker processes (one torch thread each, as the rollout server) beside the training, each split
into parts of rows that :func:`merge` joins back.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from ..cpu.names import ROLLOUT_NAME
from ..cpu.policy import sample_seed, trajectory_key
from ..evaluation.passk import TOLERANCE, pass_hat_ks


@dataclass(frozen=True)
class Sampling:
    """How validation samples (verl's ``rollout.val_kwargs`` and lengths of the run)."""

    seed: int
    trials: int
    temperature: float
    prompt_length: int
    response_length: int
    max_new_tokens: int | None = None
    top_p: float = 1.0
    top_k: int = -1


@dataclass(frozen=True)
class Evaluation:
    """Rewards of every trial of every row (``rewards[row][trial]``), each row's gold reward and the sampled
    response token ids (``responses[row][trial]``; what makes two evaluations the same draw)."""

    rewards: tuple[tuple[float, ...], ...]
    targets: tuple[float, ...]
    responses: tuple[tuple[tuple[int, ...], ...], ...] = ()

    @property
    def mean_reward(self) -> float:
        values = [r for row in self.rewards for r in row]
        return math.fsum(values) / len(values) if values else float("nan")

    def pass_hat(self) -> dict[int, float]:
        """pass^k for k = 1..trials (tau-bench's definition: all k of k trials drawn from the n succeed)."""
        trials = min((len(row) for row in self.rewards), default=0)
        successes = {
            str(i): [r >= target - TOLERANCE for r in row]
            for i, (row, target) in enumerate(zip(self.rewards, self.targets, strict=True))
        }
        return pass_hat_ks(successes, trials)

    def summary(self) -> dict[str, float]:
        out = {"reward": self.mean_reward}
        out.update({f"pass^{k}": v for k, v in self.pass_hat().items()})
        return out


def _row_target(row: Mapping[str, Any]) -> float:
    from ..gold import gold_reward, row_info

    return gold_reward(row_info(row))


def _prompt_ids(builder: Any, row: Mapping[str, Any], prompt_length: int) -> list[int]:
    ids = builder.build_initial_tokens([dict(m) for m in row["prompt"]], tools=None)
    if len(ids) > prompt_length:
        raise ValueError(f"a validation prompt has {len(ids)} tokens, more than the run's {prompt_length}")
    return [int(t) for t in ids]


def evaluate(
    model_dir: str, rows: Sequence[Mapping[str, Any]], sampling: Sampling, reward_kwargs: Mapping[str, Any]
) -> Evaluation:
    """Sample ``sampling.trials`` responses per row from the model in ``model_dir`` and score them (module doc)."""
    import torch
    from transformers import AutoConfig, AutoTokenizer
    from verl.utils.tokenizer.continuous_token_wiring import create_continuous_token_builder

    from ..cpu.rollout import HFCpuServer
    from ..offline import score_samples
    from ..scoring.sample import Sample

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model_type = getattr(AutoConfig.from_pretrained(model_dir), "model_type", None)
    builder = create_continuous_token_builder(
        tokenizer, hf_model_type=model_type, chat_template_kwargs={}, mm_processor_kwargs={}, processor=None
    )
    engine = {ROLLOUT_NAME: {"max_new_tokens": sampling.max_new_tokens}} if sampling.max_new_tokens else {}
    config = SimpleNamespace(
        prompt_length=sampling.prompt_length,
        response_length=sampling.response_length,
        max_model_len=None,
        engine_kwargs=engine,
    )
    server = HFCpuServer(config, SimpleNamespace(local_path=model_dir, path=model_dir))
    params = {"temperature": sampling.temperature, "top_p": sampling.top_p, "top_k": sampling.top_k,
              "repetition_penalty": 1.0, "logprobs": True}  # fmt: skip

    async def sample_all() -> list[Sample]:
        samples = []
        for row in rows:
            prompt = _prompt_ids(builder, row, sampling.prompt_length)
            index = int((row.get("extra_info") or {}).get("index", 0))
            for trial in range(sampling.trials):
                seed = sample_seed(*trajectory_key(sampling.seed, "val", 0, index, trial), 0)
                out = await server.generate(prompt, {**params, "seed": seed}, request_id=f"{index}-{trial}")
                response = list(out.token_ids)[: sampling.response_length]
                samples.append(
                    Sample(
                        prompt_ids=torch.tensor(prompt),
                        response_ids=torch.tensor(response, dtype=torch.long),
                        data_source=str(row["data_source"]),
                        ground_truth=row["reward_model"]["ground_truth"],
                        extra_info=dict(row.get("extra_info") or {}),
                        step=0,
                        prev_step_dict={},
                        cur_step_dict={},
                        sample_id=f"{index}-{trial}",
                        row=dict(row),
                    )
                )
        return samples

    samples = asyncio.run(sample_all())
    result = score_samples(samples, reward_kwargs, tokenizer)
    rewards = [float(r) for r in result.rewards]
    per_row = tuple(tuple(rewards[i * sampling.trials : (i + 1) * sampling.trials]) for i in range(len(rows)))
    tokens = [tuple(int(t) for t in s.response_ids.tolist()) for s in samples]
    responses = tuple(tuple(tokens[i * sampling.trials : (i + 1) * sampling.trials]) for i in range(len(rows)))
    return Evaluation(per_row, tuple(_row_target(row) for row in rows), responses)


def merge(parts: Sequence[Evaluation]) -> Evaluation:
    """The evaluation of consecutive parts of the rows, joined in row order."""
    return Evaluation(
        tuple(row for part in parts for row in part.rewards),
        tuple(target for part in parts for target in part.targets),
        tuple(row for part in parts for row in part.responses),
    )


class Pool:
    """Evaluations in worker processes (spawned: no state shared with Ray or the caller), so that the caller goes on
    training while a model is measured: :meth:`submit` returns at once with a function that waits for the result."""

    def __init__(self, workers: int = 2) -> None:
        self._executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))

    def submit(
        self,
        model_dir: str,
        rows: Sequence[Mapping[str, Any]],
        sampling: Sampling,
        reward_kwargs: Mapping[str, Any],
        parts: int = 1,
    ) -> Callable[[], Evaluation]:
        """Evaluate ``model_dir`` on ``rows`` in ``parts`` jobs of consecutive rows (as many workers as are free run
        them at once)."""
        size = math.ceil(len(rows) / max(1, parts)) or 1
        chunks = [[dict(r) for r in rows[i : i + size]] for i in range(0, len(rows), size)]
        futures = [self._executor.submit(evaluate, model_dir, chunk, sampling, dict(reward_kwargs)) for chunk in chunks]
        return lambda: merge([f.result() for f in futures])

    def close(self) -> None:
        """Stop the workers; a job not started is dropped (an evaluation of a run that failed)."""
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
