"""A batch order that does not depend on which rollout finished first: verl's sync replay buffer, sorted by row.

verl's V1 trainer reads each step's batch from TransferQueue in the order the trajectories were stored, which is
the order they finished; its uids are fresh ``uuid4`` values. Two runs with the same seeds therefore train on the
same samples in a different order, and the update's float sums (the loss over the batch, the gradient over its
rows) differ in the last bits, which Adam and sampling then amplify. :class:`OrderedReplayBuffer` is verl's own
``ReplayBuffer`` (``verl/trainer/ppo/v1/replay_buffer.py``), plugged in through verl's public setting
``trainer.v1.sampler.custom_sampler`` (:data:`SAMPLER_OVERRIDES`): after verl samples a batch it is put in the
order of the rows' ``index``, then each row's rollouts by ``session_id``. It also polls TransferQueue every
:data:`POLL_S` seconds instead of verl's 2 s, which on a CPU run is most of a step's waiting.
"""

from __future__ import annotations

from typing import Any

import transfer_queue as tq
from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer

#: seconds between two looks at TransferQueue while a batch is being generated (verl's default: 2.0)
POLL_S = 0.2
#: the Hydra overrides that select the ordered buffer (verl's sync trainer mode only)
SAMPLER_OVERRIDES = (
    "trainer.v1.sampler.custom_sampler.path=pkg://verl_rewards.cpu.sampler",
    "trainer.v1.sampler.custom_sampler.name=OrderedReplayBuffer",
)


def trajectory_order(keys: list[str], indexes: list[int]) -> list[str]:
    """``keys`` (verl's ``{uid}_{session_id}_{output}``) sorted by their row's index, then session and output."""

    def rank(pair: tuple[str, int]) -> tuple[int, int, int, str]:
        key, index = pair
        uid, _, rest = key.partition("_")
        session, _, output = rest.partition("_")
        return (index, _number(session), _number(output), uid)

    return [key for key, _ in sorted(zip(keys, indexes, strict=True), key=rank)]


def _number(text: str) -> int:
    return int(text) if text.isdigit() else -1


def _as_list(values: Any) -> list[int]:
    """The ``index`` field of a TransferQueue batch (a tensor, or a stack of Python values) as ints."""
    if hasattr(values, "tolist"):
        values = values.tolist()
    return [int(v[0] if isinstance(v, list) else v) for v in values]


class OrderedReplayBuffer(ReplayBuffer):
    """verl's sync ``ReplayBuffer`` whose batches come sorted by row and rollout (see the module doc)."""

    def __init__(self, **kwargs: Any) -> None:  # verl passes every argument by name
        kwargs.setdefault("poll_interval", POLL_S)
        super().__init__(**kwargs)

    def sample(self, global_steps: int, partition_id: str, batch_size: int) -> tuple[Any, dict]:
        batch, metrics = super().sample(global_steps=global_steps, partition_id=partition_id, batch_size=batch_size)
        if not batch.keys:
            return batch, metrics
        fields = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["index"])
        return batch.select_keys(trajectory_order(list(batch.keys), _as_list(fields["index"]))), metrics
