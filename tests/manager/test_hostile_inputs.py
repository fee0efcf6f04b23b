"""Hostile inputs never crash a step, never poison GDPO and never give one sample another's inputs or score.

Every number that enters a score, a step, a β schedule or a component is read by one finite-number rule
(``verl_rewards.coerce.read_float``); what it rejects is flagged, never an exception.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from verl_rewards.coerce import MAX_MAGNITUDE
from verl_rewards.contribution import BetaSchedule
from verl_rewards.metrics import gdpo_columns, reward_extra_metrics
from verl_rewards.scoring.extras import ABSENT_KEY, UNDECLARED_KEY

from manager_support import build_manager, make_batch
from repo_paths import SUPPORT
from verl_support import compose_verl_config

HOSTILE = str(SUPPORT / "hostile_fns.py")
HUGE = 10**400  # a Python int no float can hold


def _hostile(tokenizer_dir, tok, fn, kwargs=None, extra=()):
    return build_manager(
        tokenizer_dir,
        tok,
        kwargs=kwargs,
        extra=[f"reward.custom_reward_function.path={HOSTILE}", f"reward.custom_reward_function.name={fn}", *extra],
    )


def _all_float32_finite(extras):
    for key, values in extras.items():
        nums = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        assert np.isfinite(np.asarray(nums, dtype=np.float64)).all(), key
        assert (np.abs(np.asarray(nums, dtype=np.float64)) <= MAX_MAGNITUDE).all(), key


# ------------------------------------------------------------------------------------------------ item 1
def test_huge_values_and_steps_are_flagged_never_a_crash(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    terms = "[{type: C1, beta: 0.5}, {type: C2, beta: 0.1, schedule: exp, half_life: 10}]"
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"contribution.terms": terms})
    cur = [
        '{"value_est": 1' + "0" * 400 + "}",  # JSON text holding a 401-digit integer
        {"value_est": HUGE},
        {"value_est": 0.5},
        {"value_est": 0.5},
        {"value_est": 0.5},
        {"value_est": 0.5},
    ]
    batch = make_batch(
        tok,
        ["q"] * 6,
        ["42"] * 6,
        prev_step_dict=[{"value_est": 0.0}] * 6,
        cur_step_dict=cur,
        global_steps=[3, 3, math.inf, None, None, None],
        step=[None, None, None, HUGE, None, None],
    )
    batch.non_tensor_batch["extra_info"][4] = {"index": 4, "step": math.inf}
    batch.non_tensor_batch["extra_info"][5] = {"index": 5, "step": 7}
    out = mgr(batch, return_dict=True)
    info = out["reward_extra_info"]
    assert info["reward_error"] == [0] * 6
    assert info["contrib_missing"] == [2.0, 2.0, 0.0, 0.0, 0.0, 0.0]  # the huge value: missing (0.0) for C1 and C2
    assert info["contrib_c1"] == [0.0, 0.0, 0.5, 0.5, 0.5, 0.5]
    assert info["step_error"] == [0, 0, 1, 1, 1, 0]  # inf / huge steps: flagged, the next source (here 0) used
    assert info["beta_c2"] == pytest.approx([0.1 * 0.5**0.3] * 2 + [0.1] * 3 + [0.1 * 0.5**0.7])
    expected = [1.0, 1.0, 1.3, 1.3, 1.3, 1.0 + 0.25 + 0.1 * 0.5**0.7 * 0.5]
    assert out["reward_tensor"].sum(-1).tolist() == pytest.approx(expected)


def test_an_infinite_step_in_meta_info_is_flagged(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match")
    batch = make_batch(tok, ["q", "q"], ["42", "7"])
    batch.meta_info["global_steps"] = math.inf
    info = mgr(batch, return_dict=True)["reward_extra_info"]
    assert info["step_error"] == [1, 1] and info["reward_error"] == [0, 0]


@pytest.mark.parametrize("kind", ["constant", "linear", "cosine", "exp"])
def test_beta_schedules_take_any_step(kind):
    keys = {"linear": {"end_step": 10}, "cosine": {"end_step": 10}, "exp": {"half_life": 5.0}}.get(kind, {})
    schedule = BetaSchedule(beta=1.0, kind=kind, beta_end=0.25, **keys)
    end = 1.0 if kind == "constant" else 0.25
    assert schedule.at(HUGE) == pytest.approx(end)
    assert schedule.at(math.inf) == pytest.approx(end)
    assert schedule.at(math.nan) == 1.0  # not a step: beta, as before the schedule starts
    assert schedule.at(-(10**400)) == 1.0


# ------------------------------------------------------------------------------------------------ item 2
def _gdpo(tok, mgr, responses, uids):
    from verl.trainer.ppo.ray_trainer import compute_advantage

    batch = make_batch(tok, ["q"] * len(responses), responses, uid=uids)
    out = mgr(batch, return_dict=True)
    width = batch.batch["prompts"].shape[1]
    batch.batch["token_level_rewards"] = out["reward_tensor"]
    batch.batch["response_mask"] = batch.batch["attention_mask"][:, width:]
    batch.non_tensor_batch.update({k: np.array(v) for k, v in out["reward_extra_info"].items()})  # as verl does
    algo = compose_verl_config(["algorithm.adv_estimator=gdpo", "+algorithm.gdpo_reward_keys=[quality]"]).algorithm
    data = compute_advantage(batch, adv_estimator="gdpo", config=algo)
    return out["reward_extra_info"], data.batch["advantages"]


def test_non_finite_and_huge_components_are_dropped_and_flagged_so_gdpo_stays_finite(
    small_tokenizer_dir, small_tokenizer
):
    tok = small_tokenizer
    mgr = _hostile(small_tokenizer_dir, tok, "bad_component")
    responses = ["42", "nan", "42", "7", "huge", "inf", "f32max", "42"]
    info, adv = _gdpo(tok, mgr, responses, ["a"] * 4 + ["b"] * 4)
    assert torch.isfinite(adv).all()
    assert info["extra_dropped"] == [0, 1, 0, 0, 1, 1, 1, 0]
    assert info["quality"] == [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    assert ["quality" in absent.split(",") for absent in info[ABSENT_KEY]] == [bool(d) for d in info["extra_dropped"]]
    assert info["steps"] == [2] * 8 and info["reward_error"] == [0] * 8  # the rest of the sample is kept
    _all_float32_finite(info)


def test_gdpo_columns_and_metrics_skip_a_huge_value_instead_of_failing():
    infos = [{"quality": HUGE, "steps": 2}, {"quality": 1.0, "steps": 4}, {"quality": math.nan, "steps": 3}]
    assert gdpo_columns(infos, ["quality"])["quality"].tolist() == [0.0, 1.0, 0.0]
    metrics = reward_extra_metrics({"quality": [HUGE, 1.0, math.nan], "steps": [2, 4, 3]})
    assert metrics["reward_extra/quality/mean"] == 1.0
    assert metrics["reward_extra/steps/mean"] == 3.0  # the other keys of the batch are still logged


# ------------------------------------------------------------------------------------------------ item 6
def test_an_undecodable_token_id_fails_only_its_own_sample(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match")
    batch = make_batch(tok, ["q"] * 4, ["42"] * 4)
    width = batch.batch["prompts"].shape[1]
    batch.batch["responses"][1, 0] = -5
    batch.batch["responses"][3, 0] = 2**32
    batch.batch["input_ids"][:, width:] = batch.batch["responses"]
    out = mgr(batch, return_dict=True)
    assert out["reward_extra_info"]["reward_error"] == [0, 1, 0, 1]
    assert out["reward_tensor"].sum(-1).tolist() == [1.0, 0.0, 1.0, 0.0]


# ----------------------------------------------------------------------------------------------- item 14
def test_a_reward_cannot_change_its_own_contribution_term(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = _hostile(small_tokenizer_dir, tok, "mutates_step_dict", {"contribution.type": "C1", "contribution.beta": 1.0})
    steps = [{"value_est": 0.2}, [{"value_est": 0.1}, {"value_est": 0.3}]]
    batch = make_batch(tok, ["q", "q"], ["a", "b"], prev_step_dict=[{"value_est": 0.2}, [{}, {}]], cur_step_dict=steps)
    out = mgr(batch, return_dict=True)
    assert out["reward_extra_info"]["contrib_c1"] == pytest.approx([0.0, 0.4])
    assert out["reward_tensor"].sum(-1).tolist() == pytest.approx([0.0, 0.4])
    assert steps == [{"value_est": 0.2}, [{"value_est": 0.1}, {"value_est": 0.3}]]  # the batch is unchanged


def test_grpo_repeated_rows_sharing_objects_do_not_see_each_others_changes(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = _hostile(small_tokenizer_dir, tok, "pops_ground_truth")
    shared_rm = {"ground_truth": {"answer": "42"}}  # verl's repeat(interleave=True) shares these objects
    shared_info = {"tags": ["t"]}
    batch = make_batch(tok, ["q"] * 4, ["x"] * 4)
    for i in range(4):
        batch.non_tensor_batch["reward_model"][i] = shared_rm
        batch.non_tensor_batch["extra_info"][i] = shared_info
    first = mgr(batch, return_dict=True)
    again = mgr(batch, return_dict=True)
    assert first["reward_tensor"].sum(-1).tolist() == [1.0] * 4
    assert again["reward_tensor"].sum(-1).tolist() == [1.0] * 4
    assert shared_rm == {"ground_truth": {"answer": "42"}} and shared_info == {"tags": ["t"]}


# ----------------------------------------------------------------------------------------------- item 16
def test_an_undeclared_component_name_is_capped(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = _hostile(small_tokenizer_dir, tok, "long_key")
    info = mgr(make_batch(tok, ["q", "q"], ["a", "b"]), return_dict=True)["reward_extra_info"]
    assert [json.loads(u) for u in info[UNDECLARED_KEY]] == [{"fine": 2.0}] * 2
    assert info["extra_dropped"] == [1, 1]


def test_a_row_reward_fn_that_is_not_a_name_is_absent_or_a_flagged_failure(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"modules": f"[{HOSTILE}]"})
    batch = make_batch(tok, ["q"] * 5, ["42", "42", "x", "42", "42"], reward_fn=[None] * 5)
    for i, value in enumerate([math.nan, np.array(["hostile_one", "x"]), "hostile_one", None, np.float64("nan")]):
        batch.non_tensor_batch["reward_fn"][i] = value
    out = mgr(batch, return_dict=True)
    assert out["reward_extra_info"]["reward_error"] == [0, 1, 0, 0, 0]
    assert out["reward_tensor"].sum(-1).tolist() == [1.0, 0.0, 1.0, 1.0, 1.0]


def test_contrib_is_never_inf_when_the_total_overflows(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"contribution.type": "C1", "contribution.beta": 1e30})
    batch = make_batch(
        tok,
        ["q", "q"],
        ["42", "42"],
        prev_step_dict=[{"value_est": 0.0}] * 2,
        cur_step_dict=[{"value_est": 1e30}, {"value_est": 1e-30}],
    )
    out = mgr(batch, return_dict=True)
    info = out["reward_extra_info"]
    assert info["reward_error"] == [1, 0]
    assert info["contrib"] == pytest.approx([0.0, 1.0])  # no bonus was added to the fallback
    assert out["reward_tensor"].sum(-1).tolist() == pytest.approx([0.0, 2.0])
    _all_float32_finite(info)


def test_json_text_tool_extra_fields_give_the_recorded_trajectory(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = _hostile(small_tokenizer_dir, tok, "recorded_trajectory")
    recorded = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "call"},
            {"role": "assistant", "content": "done"},
        ],
        "trajectory_id": "traj-7",
        "termination": "agent_stop",
    }
    batch = make_batch(tok, ["q", "q"], ["a", "b"], tool_extra_fields=[json.dumps(recorded), recorded])
    out = mgr(batch, return_dict=True)
    assert out["reward_tensor"].sum(-1).tolist() == [1.0, 1.0]


def test_record_trajectory_flags_only_the_sample_whose_messages_are_not_json(small_tokenizer_dir, small_tokenizer):
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"record_trajectory": "true"})
    good = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "42"}]
    looped: dict = {"role": "assistant", "content": "42"}
    looped["reply_to"] = looped  # a custom loop's message that contains itself
    tuple_key = {"role": "assistant", "content": "42", "meta": {("turn", 1): "x"}}  # a key that is not text
    fields = [{"messages": good}, {"messages": [looped]}, {"messages": [tuple_key]}]
    out = mgr(make_batch(tok, ["q"] * 3, ["42"] * 3, tool_extra_fields=fields), return_dict=True)
    info = out["reward_extra_info"]
    assert out["reward_tensor"].sum(-1).tolist() == [1.0, 1.0, 1.0]  # every sample keeps its score
    assert info["trajectory_error"] == [0, 1, 1] and info["reward_error"] == [0, 0, 0]
    assert json.loads(info["trajectory_json"][0])["messages"] == good
    assert info["trajectory_json"][1:] == ["", ""]
    assert ["trajectory_json" in absent for absent in info["reward_extra_absent"]] == [False, True, True]
