"""C-1 from the critic on a real multi-turn layout: tau2 airline task 29's gold episode in solo mode through verl's
real ``AgentLoopWorker`` (``tool_agent`` with our tools), padded as the trainer's batch holds it, whose
``response_mask`` marks the agent's own tokens and
not the tool results between them. The critic term must read ``V`` at the first token of each assistant turn and at
the last trained token; here those positions are found independently, by locating each scripted completion's tokens
in the response, and the values are seeded random numbers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import torch
from test_step_dicts_both_modes import _agent_calls, _domain, _row_and_tools

from verl_rewards.critic_terms import apply_critic_terms, critic_value_delta, turn_value_points
from verl_rewards.gold import gold_assistant_turns

from agent_loop_support import hermes, make_worker, run_row


@pytest.fixture(scope="module")
def rollout(small_tokenizer, small_tokenizer_dir, tmp_path_factory) -> dict[str, Any]:
    domain = _domain("tau2", "airline")
    root = domain.data_dir.parent
    row, tools = _row_and_tools("tau2", domain, "29", "solo", tmp_path_factory.mktemp("critic_points"))
    completions = [hermes(t.get("content") or "", _agent_calls([t])) for t in gold_assistant_turns(row, str(root))]
    # verl's tool_agent asks again after the `done` tool's result: the scripted server's answer once its script is
    # over, a reply without tool calls, ends the loop (a fifth assistant turn)
    completions.append("Nothing more.<|im_end|>")
    worker = make_worker(tools, small_tokenizer, small_tokenizer_dir, {"backend": "scripted"})
    worker.llm_client.queue.append(list(completions))
    out = asyncio.run(run_row(worker, row, "critic-points"))
    return {"out": out, "completions": completions, "tokenizer": small_tokenizer}


def _turn_spans(response_ids: list[int], completions: list[list[int]]) -> list[tuple[int, int]]:
    """(first, last) position of each completion's tokens, found in order in the response."""
    spans, at = [], 0
    for ids in completions:
        while response_ids[at : at + len(ids)] != ids:
            at += 1
            assert at < len(response_ids), "a scripted completion is missing from the response"
        spans.append((at, at + len(ids) - 1))
        at += len(ids)
    return spans


def test_the_term_reads_v_at_each_assistant_turn_and_after_the_last(rollout):
    out, tok = rollout["out"], rollout["tokenizer"]
    completions = [tok.encode(c, add_special_tokens=False) for c in rollout["completions"]]
    ids, mask = out.response_ids[0].tolist(), out.response_mask[0].tolist()  # padded, as the trainer's batch
    spans = _turn_spans(ids, completions)
    assert len(spans) == 5  # several assistant turns with tool results between them
    trained = [i for i, m in enumerate(mask) if m]
    assert trained == [i for a, b in spans for i in range(a, b + 1)]  # the agent's tokens, nothing else

    values = torch.rand(1, len(ids), generator=torch.Generator().manual_seed(0))
    mask_t = torch.tensor([mask])
    want = [float(values[0, a]) for a, _ in spans] + [float(values[0, spans[-1][1]])]
    assert turn_value_points(values, mask_t)[0].tolist() == pytest.approx(want)
    r = sum(max(b - a, 0.0) for a, b in zip(want, want[1:], strict=False))
    assert r > 0
    assert critic_value_delta(values, mask_t).tolist() == pytest.approx([r])

    from verl_rewards.contribution import ContributionConfig

    term = ContributionConfig.from_config({"type": "C1", "beta": 0.5, "value_source": "critic"}).terms[0]
    batch = {"values": values, "response_mask": mask_t, "token_level_rewards": torch.zeros(1, len(ids))}
    (row,) = apply_critic_terms(batch, [term], step=1)
    assert row["contrib_c1"] == pytest.approx(r) and row["contrib"] == pytest.approx(0.5 * r)
    rewards = batch["token_level_rewards"][0]
    assert rewards[spans[-1][1]].item() == pytest.approx(0.5 * r)  # on the last trained token, nowhere else
    assert rewards.abs().sum().item() == pytest.approx(0.5 * r)
