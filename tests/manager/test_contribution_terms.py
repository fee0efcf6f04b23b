"""C-2 potential-based shaping, beta schedules, combined terms (verl's loader and reward loop), env short forms,
build-time errors naming the key."""

from __future__ import annotations

import math

import pytest

from verl_rewards.contribution import BetaSchedule, ContributionConfig, compute_contribution, contrib_potential
from verl_rewards.manager import ManagerConfigError
from verl_rewards.manager.config import ManagerConfig

from manager_support import build_manager, make_batch

COMBINED = (
    "[{type: C0, beta: 0.05},"
    " {type: C2, beta: 0.1, gamma: 0.9, schedule: linear, beta_end: 0.0, start_step: 10, end_step: 20}]"
)
# per-turn step dicts: the blackboard changes on turn 1 only; the potential goes 0.2 -> 0.5 -> 0.8
PREV = [{"bb_hash": "a", "value_est": 0.2}, {"bb_hash": "b", "value_est": 0.5}]
CUR = [{"bb_hash": "b", "value_est": 0.5}, {"bb_hash": "b", "value_est": 0.8}]


def _phi_turns(values):
    """Contiguous per-turn step dicts for potentials ``values`` (turn t goes from values[t] to values[t+1])."""
    prev = [{"value_est": v} for v in values[:-1]]
    cur = [{"value_est": v} for v in values[1:]]
    return prev, cur


# ------------------------------------------------------------------------------------------------------ C-2
def test_c2_single_pair_is_gamma_phi_cur_minus_phi_prev():
    assert contrib_potential(0.2, 0.5, gamma=0.9) == pytest.approx(0.9 * 0.5 - 0.2)
    assert compute_contribution("C2", {"value_est": 0.2}, {"value_est": 0.5}, gamma=0.9) == pytest.approx(0.25)
    # a potential that falls is a penalty (C-1 would give 0)
    assert compute_contribution("C2", {"value_est": 0.6}, {"value_est": 0.4}) == pytest.approx(-0.2)
    assert compute_contribution("C1", {"value_est": 0.6}, {"value_est": 0.4}) == 0.0


def test_c2_sums_over_turns_with_gamma_below_one():
    prev, cur = _phi_turns([0.0, 0.3, 0.6, 0.4])
    # (0.9*0.3 - 0) + (0.9*0.6 - 0.3) + (0.9*0.4 - 0.6) = 0.27 + 0.24 - 0.24
    assert compute_contribution("C2", prev, cur, gamma=0.9) == pytest.approx(0.27)


@pytest.mark.parametrize("values", [[0.1, 0.7, 0.2, 0.9], [0.5, 0.5], [1.0, 0.0, 3.5, -2.0, 0.25]])
def test_c2_telescopes_to_last_minus_first_for_gamma_one(values):
    prev, cur = _phi_turns(values)
    assert compute_contribution("C2", prev, cur, gamma=1.0) == pytest.approx(values[-1] - values[0])
    # C-1 on the same turns farms every rise: never less than the net change
    assert compute_contribution("C1", prev, cur) >= compute_contribution("C2", prev, cur) - 1e-12


def test_c2_reads_the_configured_potential_key_and_counts_missing_values():
    cfg = ContributionConfig.from_config({"type": "C2", "beta": 1.0, "gamma": 0.5, "potential_key": "progress"}, {})
    prev = [{"progress": 0.4}, {"progress": "bad"}, {"value_est": 9.0}]
    cur = [{"progress": 1.0}, {"progress": float("nan")}, {"progress": 0.2}]
    out = cfg.evaluate(prev, cur, step=0)
    # (0.5*1.0 - 0.4) + (0.5*0 - 0) + (0.5*0.2 - 0): the unreadable and absent potentials count as 0.0
    assert out.extras["contrib_c2"] == pytest.approx(0.2)
    assert out.extras["contrib_missing"] == 3.0
    assert out.bonus == pytest.approx(0.2)
    # no step dicts at all: both sides of the single pair are missing
    assert cfg.evaluate(None, None, step=0).extras == {"contrib_c2": 0.0, "beta_c2": 1.0, "contrib_missing": 2.0}


# ------------------------------------------------------------------------------------------------ schedules
@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        (BetaSchedule(0.1), {0: 0.1, 10: 0.1, 10_000: 0.1}),
        (
            BetaSchedule(0.1, "linear", beta_end=0.02, start_step=10, end_step=20),
            {0: 0.1, 10: 0.1, 11: 0.092, 15: 0.06, 19: 0.028, 20: 0.02, 500: 0.02},
        ),
        (
            BetaSchedule(0.1, "cosine", beta_end=0.0, start_step=10, end_step=20),
            {0: 0.1, 10: 0.1, 15: 0.05, 20: 0.0, 21: 0.0, 12: 0.1 - 0.1 * (1 - math.cos(math.pi * 0.2)) / 2},
        ),
        (
            BetaSchedule(0.0, "linear", beta_end=0.2, start_step=0, end_step=4),  # warm-up: beta can rise
            {0: 0.0, 1: 0.05, 4: 0.2, 5: 0.2},
        ),
        (
            BetaSchedule(0.1, "exp", beta_end=0.0, start_step=10, half_life=5),
            {0: 0.1, 10: 0.1, 15: 0.05, 20: 0.025, 25: 0.0125},
        ),
        (BetaSchedule(0.1, "exp", beta_end=0.02, half_life=1), {0: 0.1, 1: 0.06, 2: 0.04}),
    ],
)
def test_schedules_at_boundary_steps(schedule, expected):
    assert {step: schedule.at(step) for step in expected} == pytest.approx(expected)


def test_beta_in_use_follows_the_sample_step():
    cfg = ContributionConfig.from_config(
        {
            "terms": [
                {"type": "C0", "beta": 0.2, "schedule": "linear", "beta_end": 0.0, "start_step": 0, "end_step": 10},
            ]
        },
        {},
    )
    changed = ({"bb_hash": "a"}, {"bb_hash": "b"})
    assert [cfg.evaluate(*changed, step=s).bonus for s in (0, 5, 10)] == pytest.approx([0.2, 0.1, 0.0])
    assert cfg.evaluate(*changed, step=5).extras == pytest.approx({"contrib_c0": 1.0, "beta_c0": 0.1})
    assert cfg.extra_keys == ("contrib_c0", "beta_c0")  # C-0 reads no values: no contrib_missing


# ------------------------------------------------------------------------------------ config and short forms
def test_env_short_form_contrib_type_c2():
    settings = ManagerConfig.from_reward_kwargs({}, environ={"CONTRIBUTION": "1", "CONTRIB_TYPE": "C2", "BETA": "0.2"})
    (term,) = settings.contribution.terms
    assert (term.type, term.name, term.schedule.beta, term.gamma, term.potential_key) == (
        "C2",
        "c2",
        0.2,
        1.0,
        "value_est",
    )
    assert settings.contribution.extra_keys == ("contrib_c2", "beta_c2", "contrib_missing")
    # "C-2" is the same type; Hydra keys next to the env switch: gamma and a schedule for the one term
    settings = ManagerConfig.from_reward_kwargs(
        {"contribution": {"gamma": 0.99, "schedule": "exp", "half_life": 100}},
        environ={"CONTRIBUTION": "yes", "CONTRIB_TYPE": "c-2"},
    )
    (term,) = settings.contribution.terms
    assert (term.type, term.gamma, term.schedule.kind, term.schedule.beta) == ("C2", 0.99, "exp", 0.05)


def test_terms_with_the_same_type_need_their_own_names():
    cfg = ContributionConfig.from_config(
        {
            "terms": [
                {"type": "C2", "beta": 0.1, "name": "c2_value"},
                {"type": "C2", "beta": 0.1, "name": "c2_progress", "potential_key": "progress", "gamma": 0.95},
            ]
        },
        {"CONTRIBUTION": "1", "CONTRIB_TYPE": "C0"},
    )  # terms win over the env short form
    assert cfg.type == "C2+C2"
    assert cfg.extra_keys == (
        "contrib_c2_value",
        "beta_c2_value",
        "contrib_c2_progress",
        "beta_c2_progress",
        "contrib_missing",
    )


@pytest.mark.parametrize(
    ("contribution", "message"),
    [
        ({"type": "C0", "schedule": "step"}, "contribution.schedule: unknown schedule 'step'"),
        ({"type": "C0", "beta": -0.1}, "contribution.beta: must be >= 0"),
        ({"type": "C0", "schedule": "linear", "beta_end": -1, "end_step": 5}, "contribution.beta_end: must be >= 0"),
        (
            {"type": "C0", "schedule": "linear", "start_step": 10, "end_step": 5},
            "contribution.end_step (5) must be after start_step (10)",
        ),
        ({"type": "C0", "schedule": "cosine", "start_step": 10, "end_step": 10}, "must be after start_step"),
        ({"type": "C0", "schedule": "linear"}, "contribution.end_step is required by schedule 'linear'"),
        ({"type": "C0", "schedule": "exp"}, "contribution.half_life (in steps) is required"),
        ({"type": "C0", "schedule": "exp", "half_life": 0}, "contribution.half_life: expected a positive number"),
        ({"type": "C0", "end_step": 5}, "contribution.end_step does not apply to schedule 'constant'"),
        ({"type": "C0", "schedule": "linear", "end_step": 2.5}, "contribution.end_step: expected a training step"),
        ({"type": "C2", "gamma": 1.5}, "contribution.gamma: expected a number <= 1"),
        ({"type": "C2", "gamma": 0}, "contribution.gamma: expected a positive number"),
        ({"type": "C0", "gamma": 0.9}, "contribution.gamma applies to C2 terms only"),
        ({"type": "C2", "potential_key": ""}, "contribution.potential_key must be a step-dict field name"),
        ({"type": "none", "beta": -1}, "contribution.beta: must be >= 0"),  # checked even while off
        ({"terms": [{"type": "C0"}, {"type": "C1", "beta": "x"}]}, "contribution.terms[1].beta: expected a number"),
        ({"terms": [{"type": "C0"}, {"type": "C0"}]}, "contribution.terms[1].name: a term named 'c0' already"),
        ({"terms": [{"type": "C0", "name": "Bad Name"}]}, "contribution.terms[0].name: 'Bad Name' must be"),
        ({"terms": [{"type": "none"}]}, "contribution.terms[0].type: a term needs a type C0, C1 or C2"),
        ({"terms": [{"type": "C5"}]}, "contribution.terms[0].type: unknown contribution type 'C5'"),
        (
            {"terms": [{"type": "C0", "betta": 1}]},
            "unknown key(s) ['betta'] in reward.reward_kwargs.contribution.terms[0]",
        ),
        ({"terms": ["C0"]}, "contribution.terms[0] must be a mapping"),
        ({"terms": {"type": "C0"}}, "contribution.terms must be a list"),
        ({"type": "C0", "terms": [{"type": "C1"}]}, "contribution.terms excludes the one-term keys ['type']"),
    ],
)
def test_bad_contribution_config_fails_at_build_naming_the_key(contribution, message):
    with pytest.raises(ManagerConfigError) as info:
        ManagerConfig.from_reward_kwargs({"contribution": contribution}, environ={})
    assert message in str(info.value)
    assert "reward.reward_kwargs.contribution" in str(info.value)


def test_bad_terms_fail_when_verl_builds_the_manager(small_tokenizer_dir, small_tokenizer):
    bad = "[{type: C2, beta: 0.1, schedule: linear, start_step: 50, end_step: 10}]"
    with pytest.raises(ManagerConfigError, match=r"contribution\.terms\[0\]\.end_step \(10\) must be after"):
        build_manager(small_tokenizer_dir, small_tokenizer, "exact_match", {"contribution.terms": bad})


# --------------------------------------------------------------------- combined terms through verl's real parts
def _check_combined(scores, extras):
    """Both samples at step 15: beta_c0 = 0.05 (constant), beta_c2 = 0.05 (halfway from 0.1 to 0.0)."""
    c2 = (0.9 * 0.5 - 0.2) + (0.9 * 0.8 - 0.5)
    assert list(extras["contrib_c0"]) == [1.0, 0.0]
    assert list(extras["contrib_c2"]) == pytest.approx([c2, 0.0])
    assert list(extras["beta_c0"]) == pytest.approx([0.05, 0.05])
    assert list(extras["beta_c2"]) == pytest.approx([0.05, 0.05])
    assert list(extras["contrib_missing"]) == [0.0, 2.0]  # the second sample recorded no step dicts
    assert list(extras["contrib"]) == pytest.approx([0.05 * 1 + 0.05 * c2, 0.0])
    assert list(extras["base_score"]) == [1.0, 0.0]
    assert list(scores) == pytest.approx([1.0 + 0.05 + 0.05 * c2, 0.0])
    keys = {"contrib", "contrib_c0", "beta_c0", "contrib_c2", "beta_c2", "contrib_missing"}
    for absent in extras["reward_extra_absent"]:  # every sample reports every contribution key
        assert not keys & set(absent.split(","))


def test_combined_terms_through_verls_loader(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"contribution.terms": COMBINED})
    assert {"contrib_c0", "beta_c0", "contrib_c2", "beta_c2", "contrib_missing"} <= set(mgr.extra_keys())
    batch = make_batch(
        tok, ["q", "q"], ["42", "7"], prev_step_dict=[PREV, None], cur_step_dict=[CUR, None], global_steps=[15, 15]
    )
    out = mgr(batch, return_dict=True)
    _check_combined(out["reward_tensor"].sum(-1).tolist(), out["reward_extra_info"])


@pytest.mark.ray
def test_combined_terms_through_verls_reward_loop(ray_cluster, small_tokenizer_dir, small_tokenizer):
    import ray
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager
    from verl.trainer.ppo.reward import extract_reward

    from verl_rewards.batching import padded_batch

    from manager_support import SCORE_FNS
    from verl_support import compose_verl_config

    tok = small_tokenizer
    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={small_tokenizer_dir}",
            "reward.reward_manager.name=contribution",
            "reward.num_workers=2",
            f"reward.custom_reward_function.path={SCORE_FNS}",
            "reward.custom_reward_function.name=exact_match",
            f"+reward.reward_kwargs.contribution.terms={COMBINED}",
        ]
    )
    manager = RewardLoopManager(config)
    try:
        batch = padded_batch(
            [tok.encode("q", add_special_tokens=False)] * 2,
            [tok.encode(r, add_special_tokens=False) for r in ("42", "7")],
            {
                "data_source": ["t", "t"],
                "reward_model": [{"ground_truth": "42"}] * 2,
                "extra_info": [{"index": 0}, {"index": 1}],
                "prev_step_dict": [PREV, None],
                "cur_step_dict": [CUR, None],
                "global_steps": [15, 15],
            },
            pad_token_id=tok.pad_token_id,
        )
        scores, extras = extract_reward(batch.union(manager.compute_rm_score(batch)))
        _check_combined(scores.sum(-1).tolist(), {k: v.tolist() for k, v in extras.items()})
    finally:
        for worker in manager.reward_loop_workers:
            ray.kill(worker)
