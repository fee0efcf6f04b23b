"""One wiring of Router + ScoringCore (``manager/build.py``): offline scoring routes each sample once, and the
process pool starts at build time only when a reward the run can reach runs in worker processes."""

from __future__ import annotations

import textwrap

import pytest

from verl_rewards.manager import routing
from verl_rewards.manager.reward_manager import ContributionRewardManager
from verl_rewards.offline import score_samples
from verl_rewards.scoring.executors.process import ProcessRunner
from verl_rewards.scoring.sample import Sample

PROCESS_REWARD = textwrap.dedent(
    """
    from verl_rewards.rewards.decorators import reward

    @reward(name="build_test_in_process", executor="process")
    def build_test_in_process(final_response: str) -> float:
        return float(len(final_response))
    """
)


def test_offline_scoring_routes_each_sample_once(monkeypatch):
    calls: list[object] = []
    real = routing._row_choice

    def counted(sample):
        calls.append(sample)
        return real(sample)

    monkeypatch.setattr(routing, "_row_choice", counted)
    rows = [
        {"data_source": "qa", "reward_model": {"ground_truth": "Paris"}, "reward_fn": "qa_em" if i % 2 else None}
        for i in range(6)
    ]
    samples = [Sample.from_text(row, "paris" if i < 3 else "Rome") for i, row in enumerate(rows)]
    result = score_samples(samples, {"reward_fn": "qa_f1"})
    assert result.rewards == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    assert len(calls) == len(samples) and {id(s) for s in calls} == {id(s) for s in samples}


@pytest.fixture
def pool_starts(monkeypatch):
    """Every ProcessRunner.start the build makes (recorded; no worker process is spawned)."""
    started: list[ProcessRunner] = []
    monkeypatch.setattr(ProcessRunner, "start", lambda self: started.append(self))
    return started


@pytest.fixture(scope="module")
def process_reward(tmp_path_factory):
    """One file for the module: a reward name is registered once per process."""
    path = tmp_path_factory.mktemp("build") / "in_process_rewards.py"
    path.write_text(PROCESS_REWARD)
    return str(path)


def test_a_registered_but_unreachable_process_reward_starts_no_pool(pool_starts, process_reward):
    manager = ContributionRewardManager(reward_fn="qa_em", modules=[process_reward])
    assert manager.router.named("build_test_in_process").executor == "process"  # registered, not reachable
    assert pool_starts == []


def test_a_reachable_process_reward_starts_the_pool_at_build(pool_starts, process_reward):
    ContributionRewardManager(reward_fn="build_test_in_process", modules=[process_reward])
    assert len(pool_starts) == 1
    ContributionRewardManager(reward_fn_by_source={"src": "build_test_in_process"}, modules=[process_reward])
    assert len(pool_starts) == 2


def test_executor_process_starts_the_pool_only_for_a_reward_that_can_run_there(pool_starts):
    ContributionRewardManager(reward_fn="qa_em", executor="process")  # a registered sync reward: it can
    assert len(pool_starts) == 1


def test_the_manager_routes_each_sample_once(monkeypatch, small_tokenizer_dir, small_tokenizer):
    """verl's run_single, one trajectory at a time: the keys come from the configuration, each sample is routed
    once, when it is scored."""
    import asyncio

    from verl_rewards.batching import streaming_item

    from manager_support import build_manager, enc

    calls: list[object] = []
    real = routing._row_choice
    monkeypatch.setattr(routing, "_row_choice", lambda sample: calls.append(sample) or real(sample))
    tok = small_tokenizer
    mgr = build_manager(small_tokenizer_dir, tok, "exact_match", {"contribution.type": "C0"})
    assert calls == []  # building the manager routes no sample
    items = [
        streaming_item(
            enc(tok, "what is 6*7?"),
            enc(tok, answer),
            {"data_source": "test", "reward_model": {"ground_truth": "42"}, "extra_info": {"index": i}},
        )
        for i, answer in enumerate(["42", "41", "42"])
    ]

    async def score_all() -> list:
        return await asyncio.gather(*(mgr.run_single(item) for item in items))

    out = asyncio.run(score_all())
    assert [o["reward_extra_info"]["base_score"] for o in out] == [1.0, 0.0, 1.0]
    assert [s.sample_id for s in calls] == [0, 1, 2]  # type: ignore[attr-defined]
