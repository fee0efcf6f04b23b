"""tau2 and tau-bench as rewards of the contribution manager: task id from the row, trajectory from the
rollout's recorded messages, components as extras, options from reward.reward_kwargs.tau2."""

from __future__ import annotations

import pytest

from tau2_support import require_data, tau2_manager, tau2_rows


@pytest.mark.parametrize(("domain", "task_id"), [("airline", "1"), ("retail", "1"), ("mock", "create_task_1")])
def test_gold_scores_one_wrong_and_unfinished_score_zero(small_tokenizer_dir, small_tokenizer, domain, task_id):
    root = require_data(domain)
    from verl_rewards.tau2 import load_domain
    from verl_rewards.tau2.scripted import gold_trajectory, scripted_trajectory

    dom = load_domain(domain, root)
    gold = gold_trajectory(dom, task_id)
    wrong = scripted_trajectory(dom, task_id, [])  # does nothing
    mgr = tau2_manager(small_tokenizer_dir, small_tokenizer, [f"tau2.data_dir={root}", "tau2.nl_policy=skip"])
    out = mgr(
        tau2_rows(
            small_tokenizer,
            domain,
            [(task_id, gold, "agent_stop"), (task_id, wrong, "agent_stop"), (task_id, gold, "max_steps")],
        ),
        return_dict=True,
    )
    extra = out["reward_extra_info"]
    assert extra["reward_error"] == [0, 0, 0]
    assert extra["base_score"][0] == 1.0
    assert extra["db_match"][0] == 1.0
    assert extra["base_score"][2] == 0.0  # only agent/user stop can score
    writers = {spec["name"] for spec in dom.tool_specs() if spec["mutates_state"]}
    if any(a.name in writers for a in (dom.tasks[task_id].evaluation_criteria.actions or [])):
        assert extra["base_score"][1] == 0.0 and extra["db_match"][1] == 0.0
    for key in ("tau2_db", "tau2_env_assertion", "tau2_action", "tau2_communicate", "tau2_nl_assertion"):
        assert len(extra[key]) == 3
        assert extra[key][0] == 1.0 and extra[key][2] == 0.0  # gold passes every component; early stop none


def test_tau_bench_variant_and_bad_options(small_tokenizer_dir, small_tokenizer):
    root = require_data("airline")
    from verl_rewards.manager import ManagerConfigError
    from verl_rewards.tau2 import load_domain
    from verl_rewards.tau2.scripted import gold_trajectory, scripted_trajectory

    dom = load_domain("airline", root)
    task_id = next(
        t
        for t, task in dom.tasks.items()
        if any(a.name == "cancel_reservation" for a in (task.evaluation_criteria.actions or []))
    )
    mgr = tau2_manager(small_tokenizer_dir, small_tokenizer, [f"tau2.data_dir={root}", "tau2.reward=tau_bench"])
    out = mgr(
        tau2_rows(
            small_tokenizer,
            "airline",
            [
                (task_id, gold_trajectory(dom, task_id), "agent_stop"),
                (task_id, scripted_trajectory(dom, task_id, []), "agent_stop"),
            ],
        ),
        return_dict=True,
    )
    assert out["reward_extra_info"]["base_score"] == [1.0, 0.0]
    assert out["reward_extra_info"]["tb_r_actions"] == [1.0, 0.0]
    with pytest.raises(ManagerConfigError, match="nl_policy"):
        tau2_manager(small_tokenizer_dir, small_tokenizer, ["tau2.nl_policy=maybe"])


def test_task_id_from_extra_info_ground_truth_dict_or_json_text():
    from verl_rewards.tau2.verl_scorer import Tau2InputError, task_id_of

    assert task_id_of("ignored", {"task_id": 5}) == "5"
    assert task_id_of({"task_id": "create_task_1"}, {}) == "create_task_1"
    assert task_id_of('{"task_id": "7", "evaluation_criteria": {"actions": []}}', {}) == "7"
    assert task_id_of("12", {}) == "12"
    with pytest.raises(Tau2InputError, match="no task id"):
        task_id_of(None, {})
