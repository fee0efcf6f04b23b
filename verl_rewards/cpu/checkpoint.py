"""``cpu_gloo``: a checkpoint engine that sends the trainer's weights to standalone rollout servers over gloo.

verl's ``separate_async`` trainer refuses the in-process ``naive`` engine (its rollout runs in other processes, on
other devices) and ships engines built on NCCL, NIXL, HCCL or Mooncake, none of which runs on a CPU. This engine
is the same contract (``verl/checkpoint_engine/base.py``: ``prepare`` -> ``build_topology`` ->
``init_process_group`` -> ``send_weights`` / ``receive_weights`` -> ``finalize``, driven by verl's
``CheckpointEngineManager``) over a torch gloo process group of its own: actor rank 0 broadcasts, every rollout
worker receives; the other actor ranks only walk the weight generator (producing a weight is collective over the
actor group). The group has its own ``TCPStore`` served by actor rank 0, so it never touches the trainer's default
process group. Registered with verl's public ``CheckpointEngineRegistry`` when ``VERL_PLATFORM=cpu``.

Each bucket is three broadcasts: a header (``[metadata bytes, payload bytes, is_last]``), the metadata as JSON
(name, shape, dtype and offsets of every chunk; verl's ``TensorMeta``) and the payload. Chunking and re-assembly are
verl's own ``split_weight_chunks`` / ``merge_weight_chunks``.
"""

from __future__ import annotations

import asyncio
import datetime
import json
from collections.abc import AsyncGenerator, Iterable
from typing import Any

import torch
import torch.distributed as dist
from verl.checkpoint_engine.base import CheckpointEngine, TensorMeta, merge_weight_chunks, split_weight_chunks
from verl.workers.rollout.utils import ensure_async_iterator

from .names import CHECKPOINT_BACKEND

#: seconds a member waits for the others (store connection and each broadcast)
TIMEOUT_S = 600.0
#: metadata text a receiver accepts for one bucket
MAX_METADATA_BYTES = 64 << 20


def _master_address() -> str:
    import ray

    return str(ray.util.get_node_ip_address()).strip("[]")


def _meta_json(metas: list[TensorMeta]) -> bytes:
    rows = [
        [m.name, list(m.shape), str(m.dtype).removeprefix("torch."), m.chunk_offset, m.chunk_size, m.offset]
        for m in metas
    ]
    return json.dumps(rows).encode("utf-8")


def _meta_from_json(data: bytes) -> list[TensorMeta]:
    out = []
    for name, shape, dtype, chunk_offset, chunk_size, offset in json.loads(data.decode("utf-8")):
        kind = getattr(torch, str(dtype), None)
        if not isinstance(kind, torch.dtype):
            raise ValueError(f"cpu_gloo: unknown dtype {dtype!r} for {name!r}")
        out.append(TensorMeta(str(name), torch.Size(shape), kind, int(chunk_offset), int(chunk_size), int(offset)))
    return out


def _plain(tensor: torch.Tensor) -> torch.Tensor:
    """A weight as a contiguous CPU tensor (a DTensor gathered to its full value)."""
    full = tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor
    return full.detach().to("cpu").contiguous()


class CpuGlooCheckpointEngine(CheckpointEngine):
    """verl's checkpoint-engine contract over a private gloo group (see the module docstring)."""

    def __init__(self, bucket_size: int, is_master: bool = False, host: str | None = None, **_: Any) -> None:
        self.bucket_size = max(1, int(bucket_size))
        self.is_master = is_master
        #: where actor rank 0 serves the group's store (``checkpoint_engine.engine_kwargs.cpu_gloo.host``;
        #: default this node's address, which the rollout nodes can reach)
        self.host = host
        self.rank = -1
        self.world_size = 0
        self.store: Any = None
        self.group: Any = None

    # -- topology ---------------------------------------------------------------------------------------------
    def prepare(self) -> Any:
        """Actor rank 0 starts the group's store on a free port and hands its address to the others."""
        if not self.is_master:
            return None
        host = self.host or _master_address()
        self.store = dist.TCPStore(
            host, 0, None, True, timeout=datetime.timedelta(seconds=TIMEOUT_S), wait_for_workers=False
        )
        return {"host": host, "port": int(self.store.port)}

    @classmethod
    def build_topology(
        cls, actor_wg_world_size: int, rollout_world_size: int, metadata: list[Any]
    ) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
        master = metadata[0]
        if not isinstance(master, dict):
            raise RuntimeError("cpu_gloo: actor rank 0 must be the checkpoint engine master")
        world = 1 + rollout_world_size
        actor: dict[str, list[Any]] = {
            "rank": [0] + [-1] * (actor_wg_world_size - 1),
            "world_size": [world] * actor_wg_world_size,
            "master": [master] * actor_wg_world_size,
        }
        rollout: dict[str, list[Any]] = {
            "rank": list(range(1, world)),
            "world_size": [world] * rollout_world_size,
            "master": [master] * rollout_world_size,
        }
        return actor, rollout

    def init_process_group(self, rank: int, world_size: int, master: dict[str, Any]) -> None:  # type: ignore[override]
        self.rank, self.world_size = int(rank), int(world_size)
        if self.rank < 0:
            return
        timeout = datetime.timedelta(seconds=TIMEOUT_S)
        if self.store is None:
            self.store = dist.TCPStore(str(master["host"]), int(master["port"]), None, False, timeout=timeout)
        self.group = dist.ProcessGroupGloo(
            dist.PrefixStore(CHECKPOINT_BACKEND, self.store), self.rank, world_size, timeout
        )

    def finalize(self) -> None:
        self.group = None
        self.store = None
        self.rank, self.world_size = -1, 0

    # -- transfer ---------------------------------------------------------------------------------------------
    def _broadcast(self, tensor: torch.Tensor) -> None:
        opts = dist.BroadcastOptions()
        opts.rootRank = 0
        self.group.broadcast([tensor], opts).wait()

    async def _send_bucket(self, metas: list[TensorMeta], payload: list[torch.Tensor], is_last: bool) -> None:
        meta = torch.frombuffer(bytearray(_meta_json(metas)), dtype=torch.uint8)
        data = torch.cat(payload) if payload else torch.zeros(0, dtype=torch.uint8)
        header = torch.tensor([meta.numel(), data.numel(), int(is_last)], dtype=torch.int64)
        for part in (header, meta, data):
            if part.numel():
                await asyncio.to_thread(self._broadcast, part)

    @torch.no_grad()
    async def send_weights(self, weights: Iterable[tuple[str, torch.Tensor]], global_steps: int | None = None) -> None:
        if self.rank < 0:  # not in the group: still walk the generator, each weight is collective over the actors
            async for _ in ensure_async_iterator(weights):
                pass
            return
        if self.rank != 0:
            raise RuntimeError("cpu_gloo: rollout workers do not send weights")

        async def plain() -> AsyncGenerator[tuple[str, torch.Tensor], None]:
            async for name, tensor in ensure_async_iterator(weights):
                yield name, _plain(tensor)

        metas: list[TensorMeta] = []
        payload: list[torch.Tensor] = []
        offset = 0
        async for meta, chunk in split_weight_chunks(plain(), self.bucket_size):  # type: ignore[arg-type]
            if offset and offset + meta.chunk_size > self.bucket_size:
                await self._send_bucket(metas, payload, is_last=False)
                metas, payload, offset = [], [], 0
            meta.offset = offset
            metas.append(meta)
            payload.append(chunk.clone())  # type: ignore[union-attr]
            offset += meta.chunk_size
        await self._send_bucket(metas, payload, is_last=True)

    async def _chunks(self) -> AsyncGenerator[tuple[TensorMeta, torch.Tensor], None]:
        if self.rank < 1:
            raise RuntimeError("cpu_gloo: only rollout workers receive weights")
        while True:
            header = torch.zeros(3, dtype=torch.int64)
            await asyncio.to_thread(self._broadcast, header)
            meta_len, data_len, is_last = (int(v) for v in header.tolist())
            if not 0 <= meta_len <= MAX_METADATA_BYTES or data_len < 0:
                raise RuntimeError(f"cpu_gloo: a bucket header out of range: {header.tolist()}")
            meta = torch.zeros(meta_len, dtype=torch.uint8)
            data = torch.zeros(data_len, dtype=torch.uint8)
            for part in (meta, data):
                if part.numel():
                    await asyncio.to_thread(self._broadcast, part)
            for tensor_meta in _meta_from_json(meta.numpy().tobytes()):
                start = int(tensor_meta.offset)
                # a copy of its own: verl's merge views the bytes as the weight's dtype, which needs an aligned start
                yield tensor_meta, data[start : start + tensor_meta.chunk_size].clone()
            if is_last:
                return

    @torch.no_grad()
    async def receive_weights(  # type: ignore[override]
        self, global_steps: int | None = None
    ) -> AsyncGenerator[tuple[str, torch.Tensor], None]:
        async for name, weight in merge_weight_chunks(self._chunks(), self.bucket_size):  # type: ignore[arg-type]
            yield name, weight


def register(module: Any) -> None:
    """Add ``cpu_gloo`` to verl's ``CheckpointEngineRegistry`` (``verl.checkpoint_engine.base``)."""
    module.CheckpointEngineRegistry.register(CHECKPOINT_BACKEND)(CpuGlooCheckpointEngine)
