"""C-1 from the critic: ``beta * sum_turns max(V(s_t+1) - V(s_t), 0)``, added in the trainer before the advantage.

A contribution term with ``value_source: critic`` (:mod:`verl_rewards.contribution`) reads the critic's values
instead of the step dicts. They exist only in the trainer, after verl computes them and before it computes the
advantage, so the term is not the reward manager's: the V1 trainer hook (:func:`verl_rewards.metrics.install_v1_hooks`)
applies it to the batch the advantage estimator gets.

* **States.** ``s_t`` is the state at the first token of the t-th assistant turn (a run of ``response_mask`` 1:
  the agent's own tokens; tool results and user messages are 0), and the state after the last turn is read at
  the last trained token. ``V(s)`` is verl's ``values`` at that token: the critic's estimate from the sequence
  before it (verl shifts the critic's output by one token).
* **Term.** ``R = sum_t max(V(s_t+1) - V(s_t), 0)`` over those points (a response without a trained token: 0);
  each term adds ``beta(step) * R`` to ``token_level_rewards`` at the last trained token, so GAE, which skips the
  TD error of untrained tokens, sees it. The total reward verl logs (``critic/rewards/*``) includes it; the
  manager's ``critic/score/*`` does not, as with verl's KL penalty.
* **Extras.** Each row reports ``contrib_<name>`` (``R``), ``beta_<name>`` (β in use) and its ``contrib`` grows by
  the bonus, so ``reward_extra/contrib_<name>/mean|max|min`` is logged like every term.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .contribution import ContributionConfig, ContributionTerm


def last_trained(mask: torch.Tensor) -> torch.Tensor:
    """Per row, the index of the last token with mask 1 (-1 for a row without one)."""
    positions = torch.arange(mask.size(-1), device=mask.device).expand_as(mask)
    return torch.where(mask.bool(), positions, torch.full_like(positions, -1)).max(dim=-1).values


def turn_value_points(values: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
    """Per row, ``V`` at the first token of each assistant turn, then at the last trained token."""
    trained = mask.bool()
    before = torch.zeros_like(trained)
    before[:, 1:] = trained[:, :-1]
    starts = trained & ~before
    last = last_trained(mask)
    points = []
    for i in range(values.size(0)):
        if last[i] < 0:
            points.append(values.new_zeros(0))
            continue
        idx = torch.nonzero(starts[i], as_tuple=True)[0]
        points.append(torch.cat([values[i, idx], values[i, last[i] : last[i] + 1]]).float())
    return points


def critic_value_delta(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``R`` of every row: the positive changes of ``V`` between consecutive turn points, summed (float32)."""
    out = torch.zeros(values.size(0), dtype=torch.float32)
    for i, p in enumerate(turn_value_points(values.detach(), mask)):
        if p.numel() > 1:
            out[i] = torch.nan_to_num(p.diff().clamp(min=0.0), nan=0.0, posinf=0.0, neginf=0.0).sum()
    return out


def apply_critic_terms(batch: Any, terms: Sequence[ContributionTerm], step: Any) -> list[dict[str, float]]:
    """Add every critic term to ``batch["token_level_rewards"]`` (in place) from ``batch["values"]`` and
    ``batch["response_mask"]``; returns each row's extras (``contrib_<name>``, ``beta_<name>``, ``contrib``: the
    bonus added). ``batch``: a TensorDict or a dict of ``(rows, response length)`` tensors."""
    values, mask = batch["values"], batch["response_mask"]
    rewards = batch["token_level_rewards"].clone()  # verl may alias it with the scores: never add to those
    r = critic_value_delta(values, mask)
    last = last_trained(mask)
    bonus = torch.zeros_like(r)
    rows: list[dict[str, float]] = [{} for _ in range(r.size(0))]
    for term in terms:
        beta = float(term.schedule.at(step))
        bonus += beta * r
        for i, row in enumerate(rows):
            row[f"contrib_{term.name}"] = float(r[i])
            row[f"beta_{term.name}"] = beta
    has = last >= 0
    if has.any():
        index = torch.nonzero(has, as_tuple=True)[0]
        rewards[index, last[index]] += bonus[index].to(rewards.dtype).to(rewards.device)
    batch["token_level_rewards"] = rewards
    for i, row in enumerate(rows):
        row["contrib"] = float(bonus[i]) if has[i] else 0.0
    return rows


_CONFIGS: dict[int, tuple[Any, tuple[ContributionTerm, ...]]] = {}


def critic_terms_of(config: Any) -> tuple[ContributionTerm, ...]:
    """The ``value_source: critic`` terms of a trainer config's ``reward.reward_kwargs.contribution`` (parsed once
    per config object; the manager validates the section when it is built)."""
    hit = _CONFIGS.get(id(config))
    if hit is not None and hit[0] is config:
        return hit[1]
    from omegaconf import OmegaConf

    section: Any = OmegaConf.select(config, "reward.reward_kwargs.contribution", default=None)
    if OmegaConf.is_config(section):
        section = OmegaConf.to_container(section, resolve=True)
    terms = ContributionConfig.from_config(section).critic_terms
    _CONFIGS[id(config)] = (config, terms)
    return terms
