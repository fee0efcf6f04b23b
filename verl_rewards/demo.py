"""``verl-rewards demo``: one GRPO reward step through verl's real reward loop on a CPU machine.

It builds a tokenizer locally, starts a local Ray cluster, scores a GRPO batch (prompts x rollout.n) with the
``contribution`` manager inside verl's own ``RewardLoopManager`` / ``RewardLoopWorker`` actors, computes GRPO
advantages with verl's ``compute_grpo_outcome_advantage``, and prints the training metrics a user would see
from ``compute_data_metrics`` — ``critic/*`` and ``reward_extra/*``. Nothing is downloaded.

The toy task is arithmetic with a small answer format: ``<think>…</think><answer>N</answer>``. Each rollout
also carries ``prev_step_dict`` / ``cur_step_dict`` as a multi-turn tool agent would record them.
"""

from __future__ import annotations

import os
import random
import re
import tempfile
from typing import Any

ANSWER = re.compile(r"<answer>\s*(-?\d{1,12})\s*</answer>")


def arith_reward(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict | None = None) -> dict:
    """Demo scoring function: correctness (0/1) plus 0.2 for the answer format; components as extras."""
    text = solution_str[-4096:]
    match = ANSWER.search(text)
    fmt = 1.0 if (match and text.lstrip().startswith("<think>")) else 0.0
    acc = 1.0 if (match and match.group(1) == str(ground_truth)) else 0.0
    return {"score": acc + 0.2 * fmt, "acc": acc, "format": fmt}


def _rollouts(n_prompts: int, rollout_n: int, seed: int) -> list[dict[str, Any]]:
    """A scripted policy's GRPO group outputs with varied correctness, format and tool progress."""
    rng = random.Random(seed)
    rows = []
    for p in range(n_prompts):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        uid = f"prompt-{p}"
        for k in range(rollout_n):
            kind = rng.random()
            guess = a + b if kind < 0.5 else a + b + rng.choice([-10, -1, 1, 7])
            if kind < 0.8:
                response = f"<think> {a} plus {b} </think><answer>{guess}</answer>"
            else:
                response = f"The answer might be {guess}."
            prev_v = round(rng.random() * 0.5, 2)
            rows.append(
                {
                    "uid": uid,
                    "prompt": f"What is {a} + {b}?",
                    "response": response,
                    "ground_truth": str(a + b),
                    "prev_step_dict": {"bb_hash": f"bb-{p}-0", "value_est": prev_v},
                    "cur_step_dict": {
                        "bb_hash": f"bb-{p}-{k % 2}",
                        "value_est": round(prev_v + rng.uniform(-0.2, 0.4), 2),
                    },
                }
            )
    return rows


class DemoArgumentError(ValueError):
    """A demo setting that cannot work (checked before Ray starts)."""


def check_demo_args(n_prompts: int, rollout_n: int, num_workers: int, contrib_type: str, beta: float) -> None:
    """Raise :class:`DemoArgumentError` naming the first setting the demo cannot run with."""
    from .contribution import ContributionConfig, ContributionConfigError

    for name, value in (("prompts", n_prompts), ("n", rollout_n), ("workers", num_workers)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise DemoArgumentError(f"--{name} must be a positive integer, got {value!r}")
    try:  # the manager's own rules for both settings
        ContributionConfig.from_config({"type": contrib_type}, environ={})
    except ContributionConfigError as exc:
        raise DemoArgumentError(f"--contrib-type: {exc}") from None
    try:
        ContributionConfig.from_config({"type": "none", "beta": beta}, environ={})
    except ContributionConfigError:
        raise DemoArgumentError(f"--beta must be a finite number >= 0, got {beta!r}") from None


def run_demo(
    workdir: str | None = None,
    n_prompts: int = 8,
    rollout_n: int = 4,
    contrib_type: str = "C1",
    beta: float = 0.05,
    num_workers: int = 2,
    seed: int = 0,
    verbose: bool = True,
) -> dict[str, float]:
    """Run the demo and return the metrics dict; prints a report when ``verbose``.

    Raises :class:`DemoArgumentError` for a setting it cannot run with, before anything starts. Without
    ``workdir`` the demo's files (its tokenizer) go to a temporary folder removed when it ends.
    """
    check_demo_args(n_prompts, rollout_n, num_workers, contrib_type, beta)
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="verl_rewards_demo_") as tmp:
            return run_demo(tmp, n_prompts, rollout_n, contrib_type, beta, num_workers, seed, verbose)
    import numpy as np
    import ray
    import torch
    import verl  # noqa: F401 - loads this package's plugin (entry point)
    from transformers import AutoTokenizer
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager
    from verl.trainer.ppo import metric_utils
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage
    from verl.trainer.ppo.reward import extract_reward

    from .batching import padded_batch
    from .local_tokenizer import build_small_tokenizer
    from .verl_config import compose_config

    tok_dir = build_small_tokenizer(os.path.join(workdir, "tokenizer"))
    tok = AutoTokenizer.from_pretrained(tok_dir)
    rows = _rollouts(n_prompts, rollout_n, seed)

    prompts = [
        tok.apply_chat_template([{"role": "user", "content": r["prompt"]}], add_generation_prompt=True, tokenize=False)
        for r in rows
    ]
    prompt_ids: list[list[int]] = [tok.encode(p, add_special_tokens=False) for p in prompts]
    response_ids = [tok.encode(r["response"], add_special_tokens=False) + [tok.eos_token_id] for r in rows]
    batch = padded_batch(
        prompt_ids,
        response_ids,
        {
            "data_source": ["demo/arith"] * len(rows),
            "reward_model": [{"style": "rule", "ground_truth": r["ground_truth"]} for r in rows],
            "extra_info": [{"index": i} for i in range(len(rows))],
            "uid": [r["uid"] for r in rows],
            "prev_step_dict": [r["prev_step_dict"] for r in rows],
            "cur_step_dict": [r["cur_step_dict"] for r in rows],
        },
        pad_token_id=tok.pad_token_id,
        meta_info={"global_steps": 1},
    )

    config = compose_config(
        [
            f"actor_rollout_ref.model.path={tok_dir}",
            "algorithm.adv_estimator=grpo",
            f"actor_rollout_ref.rollout.n={rollout_n}",
            "reward.reward_manager.name=contribution",
            f"reward.num_workers={num_workers}",
            "reward.custom_reward_function.path=pkg://verl_rewards.demo",
            "reward.custom_reward_function.name=arith_reward",
            f"+reward.reward_kwargs.contribution.type={contrib_type}",
            f"+reward.reward_kwargs.contribution.beta={beta}",
        ]
    )
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        manager = RewardLoopManager(config)
        scored = manager.compute_rm_score(batch)
        for w in manager.reward_loop_workers:
            ray.kill(w)
    finally:
        if started:
            ray.shutdown()

    batch = batch.union(scored)
    reward_tensor, extras = extract_reward(batch)
    prompt_width = batch.batch["prompts"].shape[1]
    response_mask = batch.batch["attention_mask"][:, prompt_width:].clone()
    advantages, returns = compute_grpo_outcome_advantage(
        token_level_rewards=reward_tensor, response_mask=response_mask, index=np.array(batch.non_tensor_batch["uid"])
    )
    batch.batch["token_level_scores"] = reward_tensor
    batch.batch["token_level_rewards"] = reward_tensor
    batch.batch["response_mask"] = response_mask
    batch.batch["advantages"] = advantages
    batch.batch["returns"] = returns
    batch.non_tensor_batch.update({k: np.asarray(v) for k, v in extras.items()})
    metrics = metric_utils.compute_data_metrics(batch=batch, use_critic=False)
    metrics = {k: float(v) for k, v in metrics.items() if isinstance(v, int | float | np.floating | np.integer)}
    if verbose:
        _report(rows, reward_tensor, extras, advantages, metrics, torch)
    return metrics


def _report(rows, reward_tensor, extras, advantages, metrics, torch) -> None:
    seq = reward_tensor.sum(-1)
    print("verl-rewards demo: one GRPO reward step through verl's RewardLoopManager (local Ray, CPU)\n")
    print(f"{'uid':<10} {'response':<48} {'base':>6} {'contrib':>8} {'reward':>7} {'adv':>7}")
    for i, r in enumerate(rows[:12]):
        adv = advantages[i][advantages[i] != 0]
        adv_v = float(adv[0]) if adv.numel() else 0.0
        print(
            f"{r['uid']:<10} {r['response'][:48]:<48} {float(extras['base_score'][i]):>6.2f} "
            f"{float(extras['contrib'][i]):>8.3f} {float(seq[i]):>7.3f} {adv_v:>7.3f}"
        )
    if len(rows) > 12:
        print(f"... ({len(rows) - 12} more rows)")
    print("\ntraining metrics (compute_data_metrics):")
    for key in sorted(metrics):
        if key.startswith(("critic/score", "critic/rewards", "critic/advantages", "reward_extra/")):
            print(f"  {key:<40} {metrics[key]:.4f}")
