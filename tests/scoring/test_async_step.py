"""Which step a reward reads in verl 0.9.1's V1 trainer, in every mode.

verl's agent loop scores a trajectory as soon as it ends (``AgentLoopWorker._compute_score``), with the prompt's
own fields as the row: ``global_steps`` is the trainer step at which the prompt was dispatched to the rollout
(``PPOTrainer._next_train_batch``). The weights' versions it was generated with are ``min_global_steps`` /
``max_global_steps`` in ``tool_extra_fields`` (verl's server client). The step that trains on it is chosen later by
the replay buffer (in the async modes it can be later than the dispatch step), so no reward can know it. β
schedules read the dispatch step, the step verl itself counts a sample's staleness from (``replay_buffer.py``).
"""

from __future__ import annotations

import torch

from verl_rewards.contribution import ContributionConfig
from verl_rewards.scoring.sample import sample_from_row


def _v1_row(global_steps: int, min_version: int, max_version: int) -> dict:
    """The non-tensor fields of verl's streaming reward call for one trajectory of a V1 run."""
    return {
        "data_source": "rlla",
        "global_steps": global_steps,
        "tool_extra_fields": {
            "min_global_steps": min_version,
            "max_global_steps": max_version,
            "prev_step_dict": {"bb_hash": "a"},
            "cur_step_dict": {"bb_hash": "b"},
        },
        "prompt_len": 2,
        "response_len": 2,
    }


def test_the_step_is_the_dispatch_step_not_a_weights_version():
    ids = torch.tensor([[5, 6]])
    sample = sample_from_row(ids[0], ids[0], torch.ones(4, dtype=torch.long), _v1_row(3, 1, 2))
    assert (sample.step, sample.step_error) == (3, False)
    assert sample.tool_extra["min_global_steps"] == 1 and sample.extra_info["max_global_steps"] == 2


def test_a_beta_schedule_reads_the_dispatch_step():
    """β(t) = t / 1000 (linear from 0 at step 0 to 1 at step 1000): a sample dispatched at step 3, generated with
    weights 1 to 2, gets β(3) whichever step later trains on it."""
    config = ContributionConfig.single("C0", beta=0.0, schedule="linear", beta_end=1.0, end_step=1000)
    ids = torch.tensor([5, 6])
    sample = sample_from_row(ids, ids, torch.ones(4, dtype=torch.long), _v1_row(3, 1, 2))
    result = config.evaluate(sample.prev_step_dict, sample.cur_step_dict, sample.step)
    assert result.extras == {"contrib_c0": 1.0, "beta_c0": 0.003}
    assert result.bonus == 0.003
