"""Helpers for tests of our verl agent loops (``tau2_agent``, ``tau_bench_agent``): verl's real
``AgentLoopWorker`` built without Ray, with a scripted stand-in for the LLM server (real tokenizer, real parser)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from verl_support import compose_verl_config


def hermes(text: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    blocks = "".join("<tool_call>\n" + json.dumps({"name": n, "arguments": a}) + "\n</tool_call>" for n, a in calls)
    return text + blocks + "<|im_end|>"


class ScriptedLLM:
    """Stands in for verl's LLM server: each new request id takes the next queued script of completions."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.queue: list[list[str]] = []
        self.by_request: dict[str, list[str]] = {}
        self.prompts: dict[str, list[list[int]]] = {}

    async def generate(self, request_id: str, prompt_ids: list[int], sampling_params: dict, **_: Any):
        from verl.workers.rollout.replica import TokenOutput

        if request_id not in self.by_request:
            self.by_request[request_id] = list(self.queue.pop(0))
        self.prompts.setdefault(request_id, []).append(list(prompt_ids))
        turns = self.by_request[request_id]
        text = turns.pop(0) if turns else "Nothing more.<|im_end|>"
        return TokenOutput(token_ids=self.tokenizer.encode(text, add_special_tokens=False), stop_reason="completed")


def configured(tool_config: str, section: str = "tau2", root: str | None = None) -> tuple[str, str]:
    """A copy of ``tool_config`` whose tools name their data folder (``config.data_dir``), as a run configures it
    (a dataset row's ``data_dir`` never chooses it), and that folder: ``root``, else the tests' data of the tools'
    domain."""
    import yaml

    data = yaml.safe_load(Path(tool_config).read_text(encoding="utf-8"))
    if root is None:
        domain = data["tools"][0]["config"]["domain"]
        if section == "tau2":
            from tau2_support import require_data

            root = str(require_data(domain))
        else:
            from tau_bench_support import require_domain

            root = str(require_domain(domain).data_dir)
    for tool in data["tools"]:
        tool["config"]["data_dir"] = root
    path = Path(tool_config).with_suffix(".configured.yaml")
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path), root


def make_worker(
    tool_config: str, tokenizer, tokenizer_dir: str, user: dict[str, Any], section: str = "tau2", **settings: Any
):
    """verl's AgentLoopWorker (built without Ray) with a scripted LLM server and the normal-mode settings under
    ``actor_rollout_ref.rollout.custom.<section>`` (the data folder in them and in the tools' config unless given:
    :func:`configured`)."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.tools.tool_registry import load_all_tools
    from verl.utils import omega_conf_to_dataclass
    from verl.utils.dataset.rl_dataset import RLHFDataset

    tool_config, root = configured(tool_config, section)
    settings.setdefault("data_dir", root)
    overrides = [f"+actor_rollout_ref.rollout.custom.{section}.user.{k}={v}" for k, v in user.items()]
    overrides += [f"+actor_rollout_ref.rollout.custom.{section}.{k}={v}" for k, v in settings.items()]
    cfg = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={tokenizer_dir}",
            "actor_rollout_ref.rollout.name=vllm",
            "actor_rollout_ref.rollout.multi_turn.enable=True",
            f"actor_rollout_ref.rollout.multi_turn.tool_config_path={tool_config}",
            "actor_rollout_ref.rollout.multi_turn.format=hermes",
            "actor_rollout_ref.rollout.multi_turn.max_assistant_turns=30",
            "actor_rollout_ref.rollout.multi_turn.max_tool_response_length=100000",
            "data.max_prompt_length=65536",
            "data.max_response_length=32768",
            *overrides,
        ]
    )
    worker = object.__new__(AgentLoopWorker)
    worker.config = cfg
    worker.llm_client = ScriptedLLM(tokenizer)
    worker.teacher_client = None
    worker.reward_loop_worker_handles = None
    worker.rollout_config = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
    worker.tokenizer, worker.processor, worker.hf_model_type = tokenizer, None, None
    worker.dataset_cls, worker.mm_processor_kwargs = RLHFDataset, {}
    worker.distillation_enabled = False
    worker.tools = load_all_tools(tool_config, None)
    return worker


def segments(out, tokenizer) -> tuple[list[str], list[str]]:
    """The response decoded as runs of trained (mask 1) and untrained (mask 0) tokens."""
    ids = out.response_ids[0].tolist() if out.response_ids.dim() == 2 else out.response_ids.tolist()
    mask = out.response_mask[0].tolist() if out.response_mask.dim() == 2 else out.response_mask.tolist()
    attn = out.attention_mask[0].tolist()[-len(ids) :]
    runs: dict[int, list[str]] = {0: [], 1: []}
    cur, start = None, 0
    for i, (m, a) in enumerate(zip(mask, attn, strict=True)):
        m = m if a else -1
        if m != cur:
            if cur in (0, 1):
                runs[cur].append(tokenizer.decode(ids[start:i]))
            cur, start = m, i
    if cur in (0, 1):
        runs[cur].append(tokenizer.decode(ids[start:]))
    return runs[1], runs[0]


# ------------------------------------------------------------------------- solo mode (verl's tool_agent loop)
#: one scripted assistant turn: its text and its tool calls
Turn = tuple[str, list[tuple[str, dict[str, Any]]]]


class ScriptedServer:
    """Stands in for verl's LLM server: each new request id takes the next queued script."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.queue: list[list[Turn]] = []
        self.by_request: dict[str, list[Turn]] = {}

    async def generate(self, request_id: str, prompt_ids: list[int], sampling_params: dict, **_: Any):
        from verl.workers.rollout.replica import TokenOutput

        if request_id not in self.by_request:
            self.by_request[request_id] = list(self.queue.pop(0))
        turns = self.by_request[request_id]
        text, calls = turns.pop(0) if turns else ("Nothing more to do.", [])
        ids = self.tokenizer.encode(hermes(text, calls), add_special_tokens=False)
        return TokenOutput(token_ids=ids, stop_reason="completed")


def _worker(domain: str, report, tokenizer, tokenizer_dir: str, handles=None):
    """verl's AgentLoopWorker with our tools (their config naming the data folder: :func:`configured`) and a scripted
    server (built without Ray)."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.tools.tool_registry import load_all_tools
    from verl.utils import omega_conf_to_dataclass
    from verl.utils.dataset.rl_dataset import RLHFDataset

    tool_config = configured(report.tool_config, root=report.data_dir)[0]
    cfg = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={tokenizer_dir}",
            "actor_rollout_ref.rollout.name=vllm",
            "actor_rollout_ref.rollout.agent.default_agent_loop=tool_agent",
            "actor_rollout_ref.rollout.multi_turn.enable=True",
            f"actor_rollout_ref.rollout.multi_turn.tool_config_path={tool_config}",
            "actor_rollout_ref.rollout.multi_turn.format=hermes",
            "actor_rollout_ref.rollout.multi_turn.max_assistant_turns=20",
            "actor_rollout_ref.rollout.multi_turn.max_tool_response_length=100000",
            "data.max_prompt_length=32768",
            "data.max_response_length=32768",
        ]
    )
    worker = object.__new__(AgentLoopWorker)
    worker.config = cfg
    worker.llm_client = ScriptedServer(tokenizer)
    worker.teacher_client = None
    worker.reward_loop_worker_handles = handles
    worker.rollout_config = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
    worker.tokenizer, worker.processor, worker.hf_model_type = tokenizer, None, None
    worker.dataset_cls, worker.mm_processor_kwargs = RLHFDataset, {}
    worker.distillation_enabled = False
    worker.tools = load_all_tools(tool_config, None)
    return worker


def _agent_data(row: dict, request_id: str):
    from verl.experimental.agent_loop.tool_agent_loop import AgentData

    return AgentData(
        messages=list(row["prompt"]),
        image_data=None,
        video_data=None,
        audio_data=None,
        mm_processor_kwargs=None,
        metrics={},
        request_id=request_id,
        tools_kwargs=row["extra_info"]["tools_kwargs"],
    )


async def _turn(tools: dict, agent_data, calls: list[tuple[str, dict]], content: str = "") -> list[str]:
    """One assistant turn as ToolAgentLoop runs it: message, create/execute/release per call, tool answers."""
    agent_data.messages.append(
        {
            "role": "assistant",
            "content": content,
            "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls],
        }
    )

    async def one(name: str, args: dict) -> str:
        tool = tools[name]
        create = agent_data.tools_kwargs.get(name, {}).get("create_kwargs", {})
        iid, _ = await tool.create(create_kwargs=create)
        try:
            response, _, _ = await tool.execute(iid, args, agent_data=agent_data)
        finally:
            await tool.release(iid)
        return response.text

    answers = await asyncio.gather(*(one(n, a) for n, a in calls))
    agent_data.messages.extend({"role": "tool", "content": text} for text in answers)
    return answers


async def run_row(worker, row: dict[str, Any], uid: str) -> Any:
    """One dataset row (as ``prepare`` writes it) through verl's real ``AgentLoopWorker._run_agent_loop``, the way
    verl's rollout hands a row to the row's ``agent_name`` loop (training step 1)."""
    kwargs = {
        "data_source": row["data_source"],
        "reward_model": row["reward_model"],
        "extra_info": row["extra_info"],
        "raw_prompt": row["prompt"],
        "tools_kwargs": row["extra_info"]["tools_kwargs"],
        "interaction_kwargs": {},
        "index": row["extra_info"].get("index", 0),
        "uid": uid,
    }
    traj = {"step": 1, "sample_index": 0, "rollout_n": 0, "validate": False}
    return await worker._run_agent_loop({"temperature": 1.0}, traj, agent_name=row["agent_name"], trace=False, **kwargs)
