"""C-1 from the critic (``contribution.value_source: critic``): the term over the critic's values at the assistant
turns, its configuration, and verl's V1 trainer adding it to the token-level reward its advantage sees."""

from __future__ import annotations

import pytest
import torch

from verl_rewards.contribution import ContributionConfig, ContributionConfigError
from verl_rewards.critic_terms import apply_critic_terms, critic_terms_of, critic_value_delta, turn_value_points

from verl_support import compose_verl_config

# mask: agent tokens 1, tool / user tokens 0; the 9s sit on untrained tokens and must never be read
MASK = torch.tensor(
    [
        [1, 1, 0, 0, 1, 1, 1, 0, 1],  # three turns
        [1, 1, 1, 0, 0, 0, 0, 0, 0],  # one turn, the value falls
        [0, 0, 0, 0, 0, 0, 0, 0, 0],  # no trained token
        [1, 1, 1, 0, 0, 0, 0, 0, 0],  # one turn, the value rises
    ]
)
VALUES = torch.tensor(
    [
        [0.1, 0.9, 9.0, 9.0, 0.4, 0.2, 0.3, 9.0, 0.8],
        [0.5, 0.2, 0.1, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0],
        [9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0],
        [0.0, 0.5, 1.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0],
    ]
)
EXPECTED_R = [0.3 + 0.4, 0.0, 0.0, 1.0]  # row 0: V(turn starts) 0.1, 0.4, 0.8, then V(last trained) 0.8


def test_the_points_are_the_turn_starts_and_the_last_trained_token():
    points = turn_value_points(VALUES, MASK)
    for got, want in zip(points, [[0.1, 0.4, 0.8, 0.8], [0.5, 0.1], [], [0.0, 1.0]], strict=True):
        assert got.tolist() == pytest.approx(want)
    assert critic_value_delta(VALUES, MASK).tolist() == pytest.approx(EXPECTED_R)


def test_the_bonus_lands_on_the_last_trained_token_and_the_scores_stay():
    scores = torch.zeros(4, 9)
    scores[:, -1] = 1.0  # verl puts the manager's score on the last response token
    batch = {"values": VALUES, "response_mask": MASK, "token_level_rewards": scores}
    term = ContributionConfig.from_config({"type": "C1", "beta": 0.5, "value_source": "critic"}).terms[0]
    rows = apply_critic_terms(batch, [term], step=3)
    rewards = batch["token_level_rewards"]
    assert rewards is not scores and scores.sum().item() == 4.0  # a new tensor: the scores are not touched
    assert rewards[0, 8].item() == pytest.approx(1.0 + 0.5 * 0.7)
    assert rewards[1, 2].item() == 0.0 and rewards[3, 2].item() == pytest.approx(0.5)
    assert (rewards - scores).abs().sum().item() == pytest.approx(0.5 * sum(EXPECTED_R))
    assert [r["contrib_c1"] for r in rows] == pytest.approx(EXPECTED_R)
    assert [r["beta_c1"] for r in rows] == [0.5] * 4
    assert [r["contrib"] for r in rows] == pytest.approx([0.5 * x for x in EXPECTED_R])


def test_value_source_is_a_c1_key_validated_with_the_term():
    config = ContributionConfig.from_config(
        {"terms": [{"type": "C1", "beta": 0.1, "value_source": "critic"}, {"type": "C0", "beta": 0.05}]}
    )
    assert [t.name for t in config.critic_terms] == ["c1"] and [t.name for t in config.step_terms] == ["c0"]
    assert config.extra_keys == ("contrib_c0", "beta_c0")  # the manager computes (and declares) only C-0
    assert "c1=C1 beta=0.1 value_source=critic" in config.describe()
    assert ContributionConfig.from_config({"type": "C1"}).terms[0].value_source == "progress"  # today's default
    with pytest.raises(ContributionConfigError, match=r"contribution\.value_source applies to C1 terms only"):
        ContributionConfig.from_config({"type": "C0", "value_source": "critic"})
    with pytest.raises(ContributionConfigError, match=r"terms\[0\]\.value_source: 'critics' is not one of"):
        ContributionConfig.from_config({"terms": [{"type": "C1", "value_source": "critics"}]})


def test_the_trainer_reads_the_critic_terms_from_its_config():
    config = compose_verl_config(
        ["+reward.reward_kwargs.contribution.terms=[{type: C1, beta: 0.2, value_source: critic}]"]
    )
    (term,) = critic_terms_of(config)
    assert (term.name, term.schedule.beta, term.from_critic) == ("c1", 0.2, True)
    assert critic_terms_of(compose_verl_config(["+reward.reward_kwargs.contribution.type=C1"])) == ()


@pytest.mark.ray
def test_v1_trainer_adds_the_term_before_the_advantage_and_logs_it(ray_cluster):
    """verl's own ``_compute_advantage`` and ``_compute_metrics`` (V1, GAE) over TransferQueue rows holding the
    manager's scores and the critic's values: the advantage is GAE of the scores plus the bonus."""
    import transfer_queue as tq
    from transfer_queue.metadata import KVBatchMeta
    from verl.trainer.ppo.core_algos import compute_gae_advantage_return
    from verl.trainer.ppo.v1 import get_trainer_cls
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    beta = 0.5
    config = compose_verl_config(
        [
            "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
            "algorithm.adv_estimator=gae",
            f"+reward.reward_kwargs.contribution.terms=[{{type: C1, beta: {beta}, value_source: critic}}]",
        ]
    )
    lengths = [9, 3, 9, 3]
    tq.init(config.transfer_queue)
    try:
        rows, keys, tags = [], [], []
        for i, n in enumerate(lengths):
            score = torch.zeros(n)
            score[-1] = 1.0
            rows.append(
                {
                    "uid": f"g{i}",
                    "prompts": torch.arange(4),
                    "responses": torch.arange(n),
                    "response_mask": MASK[i, :n].clone(),
                    "rm_scores": score,
                    "values": VALUES[i, :n].clone(),
                    "num_turns": 2,
                    "extra_fields": {"reward_extra_info": {"base_score": 1.0, "contrib": 0.0}},
                }
            )
            keys.append(f"g{i}_0_0")
            tags.append({"status": "success", "min_global_steps": 0, "max_global_steps": 0, "is_padding": False})
        tq.kv_batch_put(keys=keys, fields=list_of_dict_to_tensordict(rows), tags=tags, partition_id="train")
        meta = KVBatchMeta(keys=keys, tags=tags, partition_id="train")
        trainer = object.__new__(get_trainer_cls("sync"))
        trainer.config = config
        trainer.use_critic = True
        trainer.global_steps = 1
        trainer._rollout_moe_lb_metrics_accumulator = None
        trainer._get_n_gpus_for_throughput = lambda: 1
        trainer._compute_advantage(meta, {})
        got = tq.kv_batch_get(keys=keys, partition_id="train", select_fields=["advantages", "token_level_rewards"])
        advantages = [a.tolist() for a in got["advantages"].unbind(0)]
        rewards = [r.tolist() for r in got["token_level_rewards"].unbind(0)]
        metrics: dict = {}
        trainer._compute_metrics(meta, metrics, {"step": 1.0}, global_steps=1, epoch=0)
    finally:
        tq.close()
    scores = torch.zeros(4, 9)
    for i, n in enumerate(lengths):
        scores[i, n - 1] = 1.0
    expected_rewards = scores.clone()
    expected_rewards[0, 8] += beta * EXPECTED_R[0]
    expected_rewards[3, 2] += beta * EXPECTED_R[3]
    for i, n in enumerate(lengths):
        assert rewards[i] == pytest.approx(expected_rewards[i, :n].tolist())
    padded_mask = MASK.clone()
    padded_values = VALUES * padded_mask.bool()
    for i, n in enumerate(lengths):
        padded_mask[i, n:] = 0
    want, _ = compute_gae_advantage_return(expected_rewards, padded_values, padded_mask, gamma=1.0, lam=1.0)
    without, _ = compute_gae_advantage_return(scores, padded_values, padded_mask, gamma=1.0, lam=1.0)
    for i, n in enumerate(lengths):
        assert advantages[i] == pytest.approx(want[i, :n].tolist(), abs=1e-5)
    assert not torch.allclose(want, without)  # the bonus changed the advantage
    assert metrics["reward_extra/contrib_c1/mean"] == pytest.approx(sum(EXPECTED_R) / 4)
    assert metrics["reward_extra/contrib_c1/max"] == pytest.approx(1.0)
    assert metrics["reward_extra/beta_c1/mean"] == pytest.approx(beta)
    assert metrics["reward_extra/contrib/mean"] == pytest.approx(beta * sum(EXPECTED_R) / 4)
    assert metrics["critic/score/mean"] == pytest.approx(1.0)  # the manager's scores
    assert metrics["critic/rewards/mean"] == pytest.approx(1.0 + beta * sum(EXPECTED_R) / 4)  # what GAE saw


def test_a_run_whose_critic_terms_cannot_run_stops_at_start_up():
    """verl's task runner builds the RewardLoopManager before any worker: no critic, or the legacy trainer (whose
    advantage step the terms do not hook), stops the run there."""
    from verl.experimental.reward_loop import RewardLoopManager

    from verl_rewards.manager import ManagerConfigError
    from verl_rewards.manager.config import check_trainer_config

    critic = [
        "reward.reward_manager.name=contribution",
        "+reward.reward_kwargs.contribution.terms=[{type: C1, beta: 0.1, value_source: critic}]",
    ]
    with pytest.raises(ManagerConfigError, match=r"algorithm.adv_estimator=grpo\): use algorithm.adv_estimator=gae"):
        RewardLoopManager(compose_verl_config([*critic, "algorithm.adv_estimator=grpo"]))
    with pytest.raises(ManagerConfigError, match="V1 trainer adds before the advantage: use trainer.use_v1=True"):
        check_trainer_config(compose_verl_config([*critic, "algorithm.adv_estimator=gae", "trainer.use_v1=False"]))
    check_trainer_config(compose_verl_config([*critic, "algorithm.adv_estimator=gae"]))  # a critic, V1: fine
