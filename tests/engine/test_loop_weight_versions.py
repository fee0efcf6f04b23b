"""The normal-mode loops (``tau2_agent``, ``tau_bench_agent``) carry the weights' versions verl's server client puts
in every generation's ``extra_fields``: the first generation's ``min_global_steps``, the last one's
``max_global_steps``. verl's V1 trainer reads both from each trajectory (``agent_loop_tq.py`` tags) and casts them
to int (``trainer_base.py``, ``_compute_metrics``): a loop that dropped them would stop every V1 run at its first
step, and in the async modes they are what measures a trajectory's staleness.

The server here stamps its answers as verl's ``LLMServerClient.generate`` does (``global_steps`` and min = max =
the version), with the version moving on between turns, as it does when the trainer syncs weights mid-trajectory
(partial rollout); run through verl's real ``AgentLoopWorker._run_agent_loop``.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np

from agent_loop_support import ScriptedLLM, hermes, make_worker, run_row
from tau2_support import require_domain as require_tau2
from tau_bench_support import require_domain as require_tau_bench

FIRST_VERSION = 4


class VersionedLLM(ScriptedLLM):
    """Each generation answered under the next weights version: 4, 5, 6, ..."""

    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self.versions: list[int] = []

    async def generate(self, request_id, prompt_ids, sampling_params, **kwargs):
        out = await super().generate(request_id, prompt_ids, sampling_params, **kwargs)
        version = FIRST_VERSION + len(self.versions)
        self.versions.append(version)
        out.extra_fields = {"global_steps": version, "min_global_steps": version, "max_global_steps": version}
        return out


def _assert_versions(out, llm: VersionedLLM) -> None:
    assert len(llm.versions) >= 2, "the scenario must span several generations"
    ef = out.extra_fields
    assert (ef["min_global_steps"], ef["max_global_steps"]) == (llm.versions[0], llm.versions[-1])
    # what verl's _compute_metrics does with the trajectory's tags
    assert np.array([ef["min_global_steps"], ef["max_global_steps"]], dtype=int).tolist() == [
        FIRST_VERSION,
        FIRST_VERSION + len(llm.versions) - 1,
    ]


def test_tau2_agent_carries_the_first_and_last_weights_version(small_tokenizer, small_tokenizer_dir, tmp_path):
    from verl_rewards.tau2.data import task_row, write_tool_config

    airline = require_tau2("airline")
    tools = write_tool_config(airline, tmp_path / "airline.yaml", mode="normal")
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps({"19": ["I want to cancel reservation Z7GOZK.", "Yes.", "Thanks ###STOP###"]}))
    worker = make_worker(str(tools), small_tokenizer, small_tokenizer_dir, {"backend": "scripted", "scripts": scripts})
    worker.llm_client = VersionedLLM(small_tokenizer)
    agent = [
        ("", [("get_reservation_details", {"reservation_id": "Z7GOZK"})]),
        ("Do you confirm (yes/no)?", []),
        ("Done.", []),
    ]
    worker.llm_client.queue.append([hermes(t, c) for t, c in agent])
    row = task_row(airline, airline.task("19"), 0, "test", str(airline.data_dir.parent), mode="normal")
    out = asyncio.run(run_row(worker, row, "versions"))
    assert out.extra_fields["termination"] == "user_stop"
    _assert_versions(out, worker.llm_client)


def test_tau_bench_agent_carries_the_first_and_last_weights_version(small_tokenizer, small_tokenizer_dir, tmp_path):
    from verl_rewards.tau_bench.data import task_row, tool_config_text

    retail = require_tau_bench("retail")
    tools = tmp_path / "tools.yaml"
    tools.write_text(tool_config_text(retail))
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps({"test/5": ["I want to return my water bottle.", "Yes.", "Thanks! ###STOP###"]}))
    user = {"backend": "scripted", "scripts": str(scripts)}
    worker = make_worker(str(tools), small_tokenizer, small_tokenizer_dir, user, section="tau_bench")
    worker.llm_client = VersionedLLM(small_tokenizer)
    worker.llm_client.queue.append([hermes("Please confirm (yes/no).", []), hermes("Thank you.", [])])
    row = task_row(retail, retail.task("test/5"), 0, str(retail.data_dir.parent), "normal")
    out = asyncio.run(run_row(worker, row, "versions"))
    assert out.extra_fields["termination"] == "user_stop"
    _assert_versions(out, worker.llm_client)
