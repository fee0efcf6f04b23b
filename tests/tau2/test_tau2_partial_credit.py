"""tau2.partial_credit: a dense score from the evaluator's checks, next to the binary reward (which stays the task
reward), through verl's loader; bad options fail at build."""

from __future__ import annotations

import pytest

from verl_rewards.batching import padded_batch
from verl_rewards.scoring.contract import ConfigError

from tau2_support import mock_dir, mock_task
from verl_support import compose_verl_config

CREATE = ("create_task", {"user_id": "user_1", "title": "Alpha"})
COMPLETE = ("update_task_status", {"task_id": "task_1", "status": "completed"})
CRITERIA = {
    "actions": [
        {"action_id": "0", "name": CREATE[0], "arguments": CREATE[1]},
        {"action_id": "1", "name": COMPLETE[0], "arguments": COMPLETE[1]},
    ],
    "env_assertions": [
        {
            "env_type": "assistant",
            "func_name": "assert_task_status",
            "arguments": {"task_id": "task_1", "expected_status": "completed"},
        },
        {
            "env_type": "assistant",
            "func_name": "assert_number_of_tasks",
            "arguments": {"user_id": "user_1", "expected_number": 2},
        },
    ],
    "communicate_info": ["Alpha", "XYZ-7"],
    "reward_basis": ["DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE"],
}
# the same gold actions, judged on ACTION only: env assertions are not evaluated, no communicate_info
ACTION_ONLY = {"actions": CRITERIA["actions"], "reward_basis": ["ACTION"]}


@pytest.fixture(scope="module")
def partial_dir(tmp_path_factory):
    return mock_dir(tmp_path_factory.mktemp("partial"), [mock_task("full", CRITERIA), mock_task("acts", ACTION_ONLY)])


def _score(tokenizer_dir, tok, data_dir, partial, items):
    from verl.trainer.ppo.reward import load_reward_manager

    from verl_rewards.tau2 import load_domain
    from verl_rewards.tau2.scripted import scripted_trajectory

    overrides = [
        f"actor_rollout_ref.model.path={tokenizer_dir}",
        "reward.reward_manager.name=contribution",
        f"+reward.reward_kwargs.tau2.data_dir={data_dir}",
    ]
    if partial is not None:
        overrides.append(f"+reward.reward_kwargs.tau2.partial_credit={partial}")
    mgr = load_reward_manager(compose_verl_config(overrides), tok)
    dom = load_domain("mock", data_dir)
    n = len(items)
    batch = padded_batch(
        [tok.encode("ticket", add_special_tokens=False)] * n,
        [tok.encode("done", add_special_tokens=False)] * n,
        {
            "data_source": ["tau2/mock"] * n,
            "reward_model": [{"ground_truth": {"task_id": t}} for t, _, _, _ in items],
            "extra_info": [{"task_id": t} for t, _, _, _ in items],
            "tool_extra_fields": [
                {"messages": scripted_trajectory(dom, t, calls, final_text=text), "termination": term}
                for t, calls, text, term in items
            ],
        },
        pad_token_id=tok.pad_token_id,
    )
    return mgr(batch, return_dict=True)["reward_extra_info"]


ITEMS = [
    ("full", [CREATE, COMPLETE], "Created Alpha, reference XYZ-7.", "agent_stop"),  # everything right
    ("full", [COMPLETE], "Alpha is done, reference XYZ-7.", "agent_stop"),  # half the actions and assertions
    ("full", [COMPLETE], "Done.", "agent_stop"),  # ... and nothing communicated
    ("full", [CREATE, COMPLETE], "Created Alpha, reference XYZ-7.", "max_steps"),  # early stop: no checks run
    ("acts", [COMPLETE], "Done.", "agent_stop"),  # only action checks exist: their share is the score
]


def test_partial_credit_is_reported_next_to_the_binary_reward(small_tokenizer_dir, small_tokenizer, partial_dir):
    extra = _score(
        small_tokenizer_dir, small_tokenizer, partial_dir, "{action: 0.7, env_assertion: 0.2, communicate: 0.1}", ITEMS
    )
    assert extra["reward_error"] == [0] * 5
    assert extra["base_score"] == [1.0, 0.0, 0.0, 0.0, 0.0]  # the task reward stays binary
    assert extra["tau2_partial_credit"] == pytest.approx(
        [
            1.0,
            0.7 * 0.5 + 0.2 * 0.5 + 0.1 * 1.0,
            0.7 * 0.5 + 0.2 * 0.5 + 0.1 * 0.0,
            0.0,
            0.5,  # env assertions not evaluated and no communicate_info: renormalised over actions alone
        ]
    )
    assert all("tau2_partial_credit" not in a.split(",") for a in extra["reward_extra_absent"])


def test_partial_credit_weights_and_true_for_the_defaults(small_tokenizer_dir, small_tokenizer, partial_dir):
    items = ITEMS[1:3]
    defaults = _score(small_tokenizer_dir, small_tokenizer, partial_dir, "true", items)
    assert defaults["tau2_partial_credit"] == pytest.approx([0.55, 0.45])
    only_communicate = _score(small_tokenizer_dir, small_tokenizer, partial_dir, "{communicate: 1.0}", items)
    assert only_communicate["tau2_partial_credit"] == pytest.approx([1.0, 0.0])
    off = _score(small_tokenizer_dir, small_tokenizer, partial_dir, None, items)
    assert off["tau2_partial_credit"] == [0.0, 0.0]  # declared for every run, absent when off
    assert all("tau2_partial_credit" in a.split(",") for a in off["reward_extra_absent"])
    assert off["base_score"] == defaults["base_score"] == [0.0, 0.0]


@pytest.mark.parametrize(
    ("partial", "message"),
    [
        ("maybe", "tau2.partial_credit must be true/false or weights"),
        ({"action": 0.7, "actions": 0.3}, "unknown key(s) ['actions'] in reward.reward_kwargs.tau2.partial_credit"),
        ({"action": -0.1, "communicate": 1}, "tau2.partial_credit.action: a weight must be >= 0"),
        ({"action": "x"}, "tau2.partial_credit.action: expected a number"),
        ({"action": 0, "communicate": 0}, "tau2.partial_credit: at least one weight must be > 0"),
    ],
)
def test_bad_partial_credit_fails_at_build(partial, message):
    from verl_rewards.tau2.verl_scorer import make_scorer

    with pytest.raises(ConfigError) as info:  # the family validates its own section when it is built
        make_scorer({"partial_credit": partial})
    assert message in str(info.value)


def test_partial_credit_needs_the_tau2_reward():
    from verl_rewards.tau2.verl_scorer import make_scorer

    with pytest.raises(ConfigError, match="partial_credit needs tau2.reward=tau2"):
        make_scorer({"reward": "tau_bench", "partial_credit": True})
