"""``hf_cpu``: a rollout backend for verl that runs transformers on the CPU (smoke runs, CI, laptops).

Three parts, as verl's vLLM backend has them (``verl/workers/rollout/replica.py``, ``.../vllm_rollout/``):

* :class:`HFCpuServer`, a Ray actor holding a copy of the policy: verl's token-in-token-out ``generate``
  (``transformers`` ``generate`` honouring ``temperature``, ``top_p``, ``top_k``, ``max_tokens`` and
  ``stop_token_ids``; real log-probs of the sampled tokens, computed like the actor computes them:
  ``log_softmax(logits / temperature)``; ``extra_fields["global_steps"]``, the weights' version, which verl's
  server client turns into the trajectory's ``min_global_steps`` / ``max_global_steps``), ``update_weights`` and
  the control calls verl makes on a server. Memory calls (sleep, wake-up, KV cache) are no-ops on a CPU; the
  partial-rollout calls of the async trainers are real: ``abort_all_requests`` stops the generations in flight
  (they return their tokens so far with ``stop_reason="aborted"``, which verl's ``FullyAsyncLLMServerClient``
  resumes) and holds new requests (or refuses them, ``reject_request=True``) until ``resume_generation``;
* :class:`HFCpuReplica`, registered as ``hf_cpu`` in verl's public ``RolloutReplicaRegistry``: starts one server;
* :class:`HFCpuServerAdapter`, the worker-side adapter (verl's private ``_ROLLOUT_REGISTRY``, reached through
  :mod:`verl_rewards.verl_compat`): hands the actor's current weights to the server after every update, so the
  rollout always samples from the weights being trained.

A request whose ``sampling_params`` carry :data:`FORCED_RESPONSE_KEY` is not sampled: the server scores the given
response tokens under its current weights and returns them with their log-probs (the ``script`` rollout policy,
:mod:`verl_rewards.cpu.policy`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Iterable
from typing import Any

import ray
import torch
from transformers import StoppingCriteria, StoppingCriteriaList
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutReplica, TokenOutput
from verl.workers.rollout.utils import ensure_async_iterator

from .. import verl_compat
from .names import ROLLOUT_NAME

logger = logging.getLogger("verl_rewards.cpu")

#: sampling_params key of a scripted response: the token ids to score instead of sampling
FORCED_RESPONSE_KEY = "verl_rewards_forced_response_ids"


class _AbortCriteria(StoppingCriteria):
    """A ``transformers`` stopping criterion: stop every sequence once ``abort_all_requests`` set the event."""

    def __init__(self, event: threading.Event) -> None:
        super().__init__()
        self.event = event

    def __call__(self, input_ids: torch.Tensor, scores: Any, **_: Any) -> torch.Tensor:
        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool)


def server_name(replica_rank: int) -> str:
    return f"verl_rewards_hf_cpu_server_{replica_rank}"


def _load_model(path: str) -> Any:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32, attn_implementation="sdpa")
    model.eval()
    return model


def _eos_ids(model: Any, path: str) -> list[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), getattr(model, "config", None)):
        value = getattr(source, "eos_token_id", None) if source is not None else None
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(path)
        if tok.eos_token_id is not None:
            ids.add(int(tok.eos_token_id))
    except Exception:  # noqa: BLE001 - a model dir without a tokenizer still has its generation config
        pass
    return sorted(ids)


def token_log_probs(logits: torch.Tensor, token_ids: torch.Tensor, temperature: float) -> list[float]:
    """Log-probs of ``token_ids`` under ``logits`` (``[n, vocab]``), scaled by ``temperature`` as verl's actor
    scales them (``logits / temperature``; 0 means greedy and is read as 1)."""
    scale = temperature if temperature and temperature > 0 else 1.0
    logp = torch.log_softmax(logits.float() / scale, dim=-1)
    return logp.gather(-1, token_ids.view(-1, 1)).view(-1).tolist()


class HFCpuServer:
    """The rollout server (a Ray actor): one transformers model on the CPU, one request at a time."""

    def __init__(self, config: Any, model_config: Any, replica_rank: int = 0) -> None:
        torch.set_num_threads(max(1, int(os.environ.get("VERL_REWARDS_ROLLOUT_THREADS", "1"))))
        self.config = config
        self.model_config = model_config
        self.replica_rank = replica_rank
        path = getattr(model_config, "local_path", None) or model_config.path
        self.model = _load_model(path)
        self.eos_ids = _eos_ids(self.model, path)
        self.global_steps = 0
        self.weight_updates = 0
        self.aborted = 0
        self._lock = threading.Lock()
        #: set by abort_all_requests: generations in flight stop at their next token
        self._abort = threading.Event()
        self._paused = False
        self._reject = False
        self._in_flight = 0
        self._resumed: asyncio.Event | None = None

    # -- verl's server interface -------------------------------------------------------------------------------
    async def generate(
        self,
        prompt_ids: list[int],
        sampling_params: dict[str, Any],
        request_id: str,
        image_data: Any = None,
        video_data: Any = None,
        audio_data: Any = None,
        mm_processor_kwargs: Any = None,
        priority: int = 0,
        **_: Any,
    ) -> TokenOutput:
        params = dict(sampling_params)
        prompt = [int(t) for t in prompt_ids]
        max_tokens = self._max_tokens(prompt, params)
        forced = params.pop(FORCED_RESPONSE_KEY, None)
        cap = self._turn_cap()
        if forced is None and cap:
            max_tokens = min(max_tokens, cap)
        if not await self._admitted():
            return TokenOutput(token_ids=[], log_probs=[], stop_reason="aborted", extra_fields=self._version())
        self._in_flight += 1
        try:
            if forced is not None:
                forced_ids = [int(t) for t in forced][:max_tokens]
                ids, logps, version = await asyncio.to_thread(self._score, prompt, forced_ids, params)
                stop = "completed"
            else:
                ids, logps, stop, version = await asyncio.to_thread(self._sample, prompt, params, max_tokens)
        finally:
            self._in_flight -= 1
        return TokenOutput(token_ids=ids, log_probs=logps, stop_reason=stop, extra_fields={"global_steps": version})

    def _version(self) -> dict[str, Any]:
        return {"global_steps": int(self.global_steps)}

    async def _admitted(self) -> bool:
        """Wait while generation is paused (``abort_all_requests`` .. ``resume_generation``); False when the
        pause refuses requests (``reject_request=True``: the replica is leaving the load balancer)."""
        while self._paused:
            if self._reject:
                return False
            await self._resume_event().wait()
        return True

    def _resume_event(self) -> asyncio.Event:
        if self._resumed is None:  # created on the actor's own event loop
            self._resumed = asyncio.Event()
        return self._resumed

    def _turn_cap(self) -> int | None:
        """``rollout.engine_kwargs.hf_cpu.max_new_tokens``: a cap on sampled tokens per turn (scripted turns are
        never cut by it), so a random model's turns stay short on a CPU."""
        kwargs = getattr(self.config, "engine_kwargs", None) or {}
        section: Any = kwargs.get(ROLLOUT_NAME) if hasattr(kwargs, "get") else None
        value = section.get("max_new_tokens") if hasattr(section, "get") else None
        return int(value) if value else None

    def _max_tokens(self, prompt: list[int], params: dict[str, Any]) -> int:
        cfg = self.config
        total = getattr(cfg, "max_model_len", None) or (cfg.prompt_length + cfg.response_length)
        room = int(total) - len(prompt)
        if room < 1:
            raise ValueError(f"prompt of {len(prompt)} tokens leaves no room within the model length {total}")
        wanted = params.pop("max_tokens", None) or params.pop("max_new_tokens", None)
        if wanted is None:
            wanted = min(cfg.response_length, cfg.prompt_length + cfg.response_length - len(prompt))
        return max(1, min(int(wanted), room))

    def _sample(self, prompt: list[int], params: dict[str, Any], max_tokens: int) -> tuple[list[int], list, str, int]:
        from transformers import GenerationConfig

        temperature = float(params.get("temperature", 1.0) or 0.0)
        top_p = float(params.get("top_p", 1.0) or 1.0)
        top_k = int(params.get("top_k", -1) or -1)
        stops = sorted(set(self.eos_ids) | {int(t) for t in params.get("stop_token_ids") or []})
        greedy = temperature <= 0
        gen = GenerationConfig(
            max_new_tokens=max_tokens,
            do_sample=not greedy,
            temperature=None if greedy else temperature,
            top_p=None if greedy or top_p >= 1.0 else top_p,
            top_k=None if greedy or top_k <= 0 else top_k,
            eos_token_id=None if params.get("ignore_eos") else (stops or None),
            pad_token_id=stops[0] if stops else 0,
            repetition_penalty=float(params.get("repetition_penalty", 1.0) or 1.0),
        )
        with self._lock, torch.no_grad():
            if params.get("seed") is not None:
                torch.manual_seed(int(params["seed"]))
            input_ids = torch.tensor([prompt], dtype=torch.long)
            out = self.model.generate(
                input_ids=input_ids,
                attention_mask=torch.ones_like(input_ids),
                generation_config=gen,
                return_dict_in_generate=True,
                output_logits=True,
                stopping_criteria=StoppingCriteriaList([_AbortCriteria(self._abort)]),
            )
            version = int(self.global_steps)
        ids = out.sequences[0, len(prompt) :]
        logits = torch.stack([step[0] for step in out.logits]) if out.logits else torch.zeros(0, 1)
        ids = ids[: logits.shape[0]]
        logps = token_log_probs(logits, ids, temperature) if len(ids) else []
        token_ids = ids.tolist()
        if token_ids and token_ids[-1] in stops:
            stop = "completed"
        elif self._abort.is_set() and len(token_ids) < max_tokens:
            stop = "aborted"
            self.aborted += 1
        else:
            stop = "length"
        return token_ids, logps, stop, version

    def _score(self, prompt: list[int], forced: list[int], params: dict[str, Any]) -> tuple[list[int], list, int]:
        if not forced:
            return [], [], int(self.global_steps)
        temperature = float(params.get("temperature", 1.0) or 0.0)
        with self._lock, torch.no_grad():
            ids = torch.tensor([prompt + forced], dtype=torch.long)
            logits = self.model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0]
            version = int(self.global_steps)
        # logits at position i predict token i + 1
        pred = logits[len(prompt) - 1 : len(prompt) - 1 + len(forced)]
        return forced, token_log_probs(pred, torch.tensor(forced), temperature), version

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]], global_steps: int | None = None) -> int:
        """Load the actor's weights (HF names); returns how many tensors were loaded."""
        state = dict(named_tensors)
        own = self.model.state_dict()
        unknown = [k for k in state if k not in own]
        if unknown:
            raise KeyError(f"hf_cpu: the actor sent weights the rollout model does not have: {unknown[:5]}")
        with self._lock, torch.no_grad():
            for name, tensor in state.items():
                own[name].copy_(tensor.to(own[name].dtype))
        self.weight_updates += 1
        if global_steps is not None:
            self.global_steps = int(global_steps)
        return len(state)

    def set_global_steps(self, global_steps: int) -> None:
        self.global_steps = int(global_steps)

    def stats(self) -> dict[str, int]:
        return {
            "weight_updates": self.weight_updates,
            "global_steps": self.global_steps,
            "aborted": self.aborted,
            "paused": int(self._paused),
        }

    async def wake_up(self, tags: Any = None) -> None:
        return None

    async def sleep(self) -> None:
        return None

    async def clear_kv_cache(self) -> None:
        return None

    async def release_kv_cache(self) -> None:
        return None

    async def resume_kv_cache(self) -> None:
        return None

    async def abort_all_requests(self, reject_request: bool = False) -> dict[str, Any]:
        """Stop the generations in flight (partial tokens, ``stop_reason="aborted"``) and hold new requests until
        :meth:`resume_generation`; with ``reject_request`` new requests are answered ``aborted`` at once."""
        self._paused, self._reject = True, bool(reject_request)
        self._resume_event().clear()
        self._abort.set()
        return {"aborted_count": self._in_flight, "request_ids": []}

    async def resume_generation(self) -> None:
        self._abort.clear()
        self._paused, self._reject = False, False
        self._resume_event().set()

    async def wait_for_requests_to_drain(self) -> None:
        return None

    async def start_profile(self, **_: Any) -> None:
        return None

    async def stop_profile(self) -> None:
        return None


class HFCpuReplica(RolloutReplica):
    """One ``hf_cpu`` server per replica, next to the hybrid actor/rollout workers (which own no GPU)."""

    async def launch_servers(self) -> None:
        name = server_name(self.replica_rank)
        server: Any = (
            ray.remote(HFCpuServer)
            .options(name=name, max_concurrency=self.max_concurrency, num_cpus=0)
            .remote(config=self.config, model_config=self.model_config, replica_rank=self.replica_rank)
        )
        await server.stats.remote()  # wait for the model to load; errors surface here
        self.servers = [server]
        verl_compat.set_replica_server(self, server, f"hf_cpu://replica-{self.replica_rank}")

    def rollout_worker_use_gpu(self) -> bool:
        return False


def load_replica() -> type[RolloutReplica]:
    return HFCpuReplica


class HFCpuServerAdapter(BaseRollout):
    """Worker-side adapter: passes the actor's weights to this replica's server (rank 0 of the replica only)."""

    def __init__(self, config: Any, model_config: Any, device_mesh: Any, replica_rank: int = -1) -> None:
        super().__init__(config, model_config, device_mesh)
        rank = int(os.environ.get("RANK", "0"))
        world = max(1, self.config.tensor_model_parallel_size * self.config.data_parallel_size)
        self.replica_rank = rank // world if replica_rank == -1 else replica_rank
        self.is_leader = rank % world == 0
        self._server: Any = None

    def _handle(self) -> Any:
        if self._server is None:
            self._server = ray.get_actor(server_name(self.replica_rank))
        return self._server

    async def resume(self, tags: list[str]) -> None:
        return None

    async def release(self) -> None:
        return None

    async def update_weights(  # type: ignore[override]
        self, weights: Any, global_steps: int | None = None, wire_format: str = "named_tensors", **kwargs: Any
    ) -> None:
        if wire_format != "named_tensors":
            raise NotImplementedError(f"hf_cpu takes wire_format='named_tensors', got {wire_format!r}")
        if kwargs.get("peft_config") is not None:
            raise NotImplementedError("hf_cpu: LoRA adapters are not supported; merge them (model.lora.merge=True)")
        named = []
        async for name, tensor in ensure_async_iterator(weights):  # the cpu_gloo engine yields asynchronously
            full = tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor
            named.append((name, full.detach().to("cpu").clone()))
        if not self.is_leader:
            return
        await self._handle().update_weights.remote(named, global_steps)
