"""The CPU backend's parts for verl's async trainer modes, without Ray: the hf_cpu server's partial-rollout calls
(abort, hold or refuse, resume; the weights' version in every answer), the ``cpu_gloo`` checkpoint engine between
two real processes, and the CPU trainers registered in verl's V1 registry."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
from types import SimpleNamespace

import pytest
import torch

from verl_rewards.cpu.model import build_tiny_qwen2
from verl_rewards.cpu.rollout import HFCpuServer

TEXTS = ["Find the order and cancel it.", '{"name": "cancel_order", "arguments": {"order_id": "#W1"}}'] * 20


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_qwen2(tmp_path_factory.mktemp("tiny"), TEXTS)


def _server(model_dir):
    cfg = SimpleNamespace(prompt_length=64, response_length=16, max_model_len=None, engine_kwargs={})
    return HFCpuServer(cfg, SimpleNamespace(local_path=model_dir, path=model_dir))


def _request(server, **params):
    params = {"temperature": 0, "ignore_eos": True, "max_tokens": 6, **params}
    return server.generate(prompt_ids=[5, 6, 7], sampling_params=params, request_id="r")


def test_every_answer_carries_the_weights_version(model_dir):
    server = _server(model_dir)
    assert asyncio.run(_request(server)).extra_fields == {"global_steps": 0}
    state = {k: v.clone() for k, v in server.model.state_dict().items()}
    server.update_weights(list(state.items()), global_steps=3)
    out = asyncio.run(_request(server))
    assert out.extra_fields == {"global_steps": 3} and out.stop_reason == "length"


def test_an_abort_holds_new_requests_until_generation_resumes(model_dir):
    server = _server(model_dir)

    async def scenario():
        assert (await server.abort_all_requests())["aborted_count"] == 0
        held = asyncio.create_task(_request(server))
        for _ in range(20):  # the request runs until it waits for the resume
            await asyncio.sleep(0)
        assert not held.done() and server.stats()["paused"] == 1
        await server.resume_generation()
        return await held

    out = asyncio.run(scenario())
    assert len(out.token_ids) == 6 and out.stop_reason == "length"


def test_an_abort_with_reject_answers_aborted_at_once(model_dir):
    server = _server(model_dir)

    async def scenario():
        await server.abort_all_requests(reject_request=True)
        refused = await _request(server)
        await server.resume_generation()
        return refused, await _request(server)

    refused, after = asyncio.run(scenario())
    assert (refused.token_ids, refused.stop_reason) == ([], "aborted")
    assert len(after.token_ids) == 6


def test_a_generation_in_flight_stops_at_the_abort_with_its_tokens_so_far(model_dir):
    """What verl's FullyAsyncLLMServerClient resumes: the tokens so far, their log-probs, ``aborted``."""
    server = _server(model_dir)
    asyncio.run(server.abort_all_requests())
    # the generation was admitted before the abort (in flight): it stops after its first token
    ids, logps, stop, version = server._sample([5, 6, 7], {"temperature": 0, "ignore_eos": True}, 12)
    assert (len(ids), len(logps), stop, version) == (1, 1, "aborted", 0)
    assert server.stats()["aborted"] == 1
    asyncio.run(server.resume_generation())
    ids, _, stop, _ = server._sample([5, 6, 7], {"temperature": 0, "ignore_eos": True}, 12)
    assert (len(ids), stop) == (12, "length")


# ------------------------------------------------------------------------------------------------------ cpu_gloo
WEIGHTS = {
    "embed.weight": torch.arange(40, dtype=torch.float32).reshape(10, 4),  # 160 bytes: chunked over two buckets
    "norm.weight": torch.tensor([1.5, -2.0, 3.25], dtype=torch.bfloat16),
    "position": torch.tensor([7, 8, 9], dtype=torch.int64),
    "bias": torch.tensor([0.5], dtype=torch.float32),
}
BUCKET = 64  # bytes: several buckets, one weight larger than a bucket


def _engine_process(role: str, pipe) -> None:
    from verl_rewards.cpu.checkpoint import CpuGlooCheckpointEngine

    engine = CpuGlooCheckpointEngine(BUCKET, is_master=role == "actor", host="127.0.0.1")
    pipe.send(engine.prepare())
    engine.init_process_group(**pipe.recv())

    async def send() -> None:
        await engine.send_weights(iter(WEIGHTS.items()), global_steps=2)

    async def receive() -> dict:
        # plain values through the pipe (a tensor would be shared through a file the exiting process removes)
        return {
            name: (tensor.dtype, tuple(tensor.shape), tensor.double().tolist())
            async for name, tensor in engine.receive_weights(global_steps=2)
        }

    received = asyncio.run(receive()) if role == "rollout" else asyncio.run(send())
    engine.finalize()
    pipe.send(received)


@pytest.mark.slow  # two spawned processes, each importing verl
def test_cpu_gloo_sends_the_actors_weights_to_a_rollout_worker():
    from verl_rewards.cpu.checkpoint import CpuGlooCheckpointEngine

    ctx = mp.get_context("spawn")
    pipes, procs = [], []
    for role in ("actor", "rollout"):
        mine, theirs = ctx.Pipe()
        proc = ctx.Process(target=_engine_process, args=(role, theirs))
        proc.start()
        pipes.append(mine)
        procs.append(proc)
    try:
        metadata = [pipe.recv() for pipe in pipes]
        assert metadata[1] is None and metadata[0]["host"] == "127.0.0.1"
        actor_kwargs, rollout_kwargs = CpuGlooCheckpointEngine.build_topology(1, 1, metadata)
        pipes[0].send({k: v[0] for k, v in actor_kwargs.items()})
        pipes[1].send({k: v[0] for k, v in rollout_kwargs.items()})
        sent, received = (pipe.recv() for pipe in pipes)
    finally:
        for proc in procs:
            proc.join(timeout=120)
    assert sent is None and [p.exitcode for p in procs] == [0, 0]
    assert list(received) == list(WEIGHTS)
    for name, tensor in WEIGHTS.items():
        assert received[name] == (tensor.dtype, tuple(tensor.shape), tensor.double().tolist()), name


def test_cpu_gloo_topology_puts_actor_rank_0_first_and_leaves_the_other_actors_out():
    from verl_rewards.cpu.checkpoint import CpuGlooCheckpointEngine

    master = {"host": "127.0.0.1", "port": 1}
    actor, rollout = CpuGlooCheckpointEngine.build_topology(3, 2, [master, None, None, None, None])
    assert actor["rank"] == [0, -1, -1] and rollout["rank"] == [1, 2]
    assert actor["world_size"] == [3] * 3 and rollout["world_size"] == [3] * 2
    with pytest.raises(RuntimeError, match="actor rank 0"):
        CpuGlooCheckpointEngine.build_topology(1, 1, [None, None])
