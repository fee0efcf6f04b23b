"""Building the contribution manager with verl's own loader, and padded batches for it (shared by tests)."""

from __future__ import annotations

from verl_rewards.batching import padded_batch

from repo_paths import SUPPORT
from verl_support import compose_verl_config

SCORE_FNS = str(SUPPORT / "score_fns.py")


def build_manager(tokenizer_dir, tokenizer, fn_name=None, kwargs=None, extra=()):
    from verl.trainer.ppo.reward import load_reward_manager

    overrides = [
        f"actor_rollout_ref.model.path={tokenizer_dir}",
        "reward.reward_manager.name=contribution",
        *extra,
    ]
    if fn_name:
        overrides += [
            f"reward.custom_reward_function.path={SCORE_FNS}",
            f"reward.custom_reward_function.name={fn_name}",
        ]
    for key, value in (kwargs or {}).items():
        overrides.append(f"+reward.reward_kwargs.{key}={value}")
    return load_reward_manager(compose_verl_config(overrides), tokenizer)


def enc(tok, text):
    return tok.encode(text, add_special_tokens=False)


def make_batch(tok, prompts, responses, **non_tensor):
    n = len(prompts)
    fields = {
        "data_source": ["test"] * n,
        "reward_model": [{"ground_truth": g} for g in non_tensor.pop("gts", ["42"] * n)],
        "extra_info": [{"index": i} for i in range(n)],
        **non_tensor,
    }
    return padded_batch(
        [enc(tok, p) for p in prompts],
        [enc(tok, r) for r in responses],
        fields,
        pad_token_id=tok.pad_token_id,
    )
