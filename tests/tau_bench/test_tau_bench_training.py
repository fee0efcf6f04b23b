"""Training on tau-bench (v1) with verl's tool agent loop, instruction mode: dataset, tool config, tool adapters,
step dicts and the reward, through verl's real ``ToolAgentLoop`` (only the LLM server is scripted) and verl's
reward manager loader."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from verl_rewards.batching import padded_batch
from verl_rewards.contribution import compute_contribution
from verl_rewards.tau_bench.data import TOOL_CONFIG_NAME, prepare_tau_bench
from verl_rewards.tau_bench.verl_scorer import TauBenchOptions, score_tau_bench

from agent_loop_support import _worker, run_row
from repo_paths import REPO
from tau_bench_support import gold_calls, gold_trajectory, require_domain, trajectory
from verl_support import compose_verl_config

TASKS = {("retail", "train/3"), ("retail", "test/19"), ("airline", "test/14")}
KINDS = ("correct", "wrong", "transfer")


def _wrong_call(domain, task_id: str) -> tuple[str, dict[str, Any]]:
    """A write that succeeds but is not asked for."""
    user_id = domain.task(task_id).user_id
    if domain.name == "airline":
        return "send_certificate", {"user_id": user_id, "amount": 100}
    address = {"address1": "1 Wrong Way", "address2": "", "city": "X", "state": "NV", "country": "USA", "zip": "0"}
    return "modify_user_address", {"user_id": user_id, **address}


def script(domain, task_id: str, kind: str) -> list[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """One tool call per turn; a text reply ends the episode (instruction mode)."""
    calls = gold_calls(domain, task_id)
    reads = [c for c in calls if domain.tool_kinds()[c[0]] != "write"]
    outputs = domain.task(task_id).outputs
    if kind == "correct":
        return [*[("Working.", [c]) for c in calls], ("Done. " + " ".join(outputs), [])]
    if kind == "wrong":
        return [*[("Looking.", [c]) for c in reads], ("Fixing.", [_wrong_call(domain, task_id)]), ("Done.", [])]
    return [
        *[("Looking.", [c]) for c in reads],
        ("Handing over.", [("transfer_to_human_agents", {"summary": "s"})]),
        ("Anything else?", []),
    ]


@pytest.fixture(scope="module")
def domains():
    return {name: require_domain(name) for name in ("retail", "airline")}


@pytest.fixture(scope="module")
def prepared(domains, tmp_path_factory):
    out = tmp_path_factory.mktemp("tau_bench_data")
    root = domains["retail"].data_dir.parent
    return {
        "retail": prepare_tau_bench(
            root, "retail", out / "retail", ["train", "test"], mode="instruction", progress=False
        ),
        "airline": prepare_tau_bench(root, "airline", out / "airline", ["test"], mode="instruction", progress=False),
    }


def _rows(report) -> dict[str, dict]:
    rows = [r for path in report.files.values() for r in pq.read_table(path).to_pylist()]
    return {r["extra_info"]["task_id"]: r for r in rows}


# -------------------------------------------------------------------------------------------------- dataset
def test_prepare_writes_rows_and_a_tool_config_verl_loads(prepared, domains):
    from verl.tools.tool_registry import initialize_tools_from_config

    from verl_rewards.tau_bench.verl_tools import TauBenchTool

    assert prepared["retail"].rows == {"train": 500, "test": 115} and prepared["airline"].rows == {"test": 50}
    for name, report in prepared.items():
        domain = domains[name]
        rows = pq.read_table(report.files["test"]).to_pylist()
        assert [r["extra_info"]["task_id"] for r in rows] == domain.split("test")
        row = rows[19]
        task = domain.task(row["extra_info"]["task_id"])
        assert row["data_source"] == f"tau_bench/{name}" and row["agent_name"] == "tool_agent"
        assert row["prompt"] == [
            {"role": "system", "content": domain.policy},
            {"role": "user", "content": task.instruction},
        ]
        gt = row["reward_model"]["ground_truth"]
        assert gt["task_id"] == task.id and json.loads(gt["actions"]) == list(task.actions)
        extra = row["extra_info"]
        assert (extra["mode"], extra["user_id"]) == ("instruction", task.user_id)
        assert extra["instruction"] == task.instruction and extra["outputs"] == list(task.outputs)
        assert extra["tools_kwargs"]["calculate"]["create_kwargs"]["task_id"] == task.id
        tools = initialize_tools_from_config(report.tool_config)
        assert all(type(t) is TauBenchTool for t in tools)
        # the schemas the model sees are tau-bench's own, nested items included
        assert [t.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for t in tools] == domain.tools_info
    assert not [p for p in (prepared["retail"].files["train"],) if ".tmp" in p]


def test_rlhf_dataset_reads_the_rows(prepared, small_tokenizer):
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    cfg = OmegaConf.create({"filter_overlong_prompts": False, "max_prompt_length": 100000})
    ds = RLHFDataset(data_files=[prepared["retail"].files["train"]], tokenizer=small_tokenizer, config=cfg)
    item = ds[3]
    assert item["data_source"] == "tau_bench/retail" and item["extra_info"]["task_id"] == "train/3"
    assert [m["role"] for m in item["raw_prompt"]] == ["system", "user"]


def test_prepare_cli_is_all_or_nothing(domains, tmp_path, capsys):
    from verl_rewards.cli import main

    root = str(domains["retail"].data_dir.parent)
    out = tmp_path / "out"
    assert (
        main(["prepare", "tau_bench", "--data-dir", root, "--domain", "retail", "--split", "dev", "--out", str(out)])
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == ["dev.parquet", TOOL_CONFIG_NAME]
    assert len(pq.read_table(out / "dev.parquet")) == 20
    assert yaml.safe_load((out / TOOL_CONFIG_NAME).read_text())["tools"][0]["config"]["domain"] == "retail"
    assert (
        main(
            [
                "prepare",
                "tau_bench",
                "--data-dir",
                root,
                "--domain",
                "airline",
                "--split",
                "test,train",
                "--out",
                str(tmp_path / "air"),
            ]
        )
        == 2
    )
    assert "no split 'train'; available: ['test']" in capsys.readouterr().err
    assert not (tmp_path / "air").exists()
    assert (
        main(["prepare", "tau_bench", "--data-dir", str(tmp_path / "none"), "--domain", "retail", "--out", str(out)])
        == 2
    )
    assert "tau-bench data for domain 'retail' not found" in capsys.readouterr().err


# --------------------------------------------------------------------------- ToolAgentLoop, scripted policy
@pytest.fixture(scope="module")
def rollouts(prepared, domains, small_tokenizer, small_tokenizer_dir):
    results = {}

    async def go() -> None:
        for name in ("retail", "airline"):
            worker = _worker(name, prepared[name], small_tokenizer, small_tokenizer_dir)
            rows = _rows(prepared[name])
            for dname, task_id in sorted(TASKS):
                if dname != name:
                    continue
                for kind in KINDS:
                    row = rows[task_id]
                    worker.llm_client.queue.append(script(domains[name], task_id, kind))
                    results[(name, task_id, kind)] = await run_row(worker, row, f"{name}-{task_id}")

    asyncio.run(go())
    return results


@pytest.mark.parametrize("kind", KINDS)
def test_tool_agent_loop_episode_step_dicts_and_reward(rollouts, domains, kind):
    for (name, task_id, k), out in rollouts.items():
        if k != kind:
            continue
        domain = domains[name]
        calls = gold_calls(domain, task_id)
        writes = [c for c in calls if domain.tool_kinds()[c[0]] == "write"]
        n_reads = len(calls) - len(writes)
        ef = out.extra_fields
        prev, cur = ef["prev_step_dict"], ef["cur_step_dict"]
        assert [p["bb_hash"] for p in prev[1:]] == [c["bb_hash"] for c in cur[:-1]]  # nothing changes between turns
        values = [c["value_est"] for c in cur]
        assert values == sorted(values) and all(0.0 <= v <= 1.0 for v in values)
        assert ef["db_hash"] == cur[-1]["bb_hash"]
        messages = ef["messages"]
        options = TauBenchOptions(data_dir=str(domain.data_dir))
        got = score_tau_bench(messages, f"tau_bench/{name}", {}, {"task_id": task_id}, options)
        if kind == "correct":
            assert len(prev) == len(calls) and ef["termination"] is None  # the text reply ended the loop
            assert compute_contribution("C0", prev, cur) == len(writes)
            assert compute_contribution("C1", prev, cur) == pytest.approx(1.0)
            assert ef["db_hash"] == domain.gold_hash(task_id)
            assert got == {
                "reward": 1.0,
                "tb_r_actions": 1.0,
                "tb_r_outputs": 1.0,
                "tb_outputs_found": 1.0,
                "tb_done": 1.0,
                "tb_transfer": 0.0,
                "termination": "agent_reply",
                "user_error": 0.0,
            }, (name, task_id)
        elif kind == "wrong":
            assert compute_contribution("C0", prev, cur) == 1 and compute_contribution("C1", prev, cur) == 0.0
            assert got["reward"] == 0.0 and got["tb_r_actions"] == 0.0 and got["tb_done"] == 1.0
        else:
            assert ef["termination"] == "transfer" and len(prev) == n_reads + 1
            assert messages[-2]["tool_calls"][0]["function"]["name"] == "transfer_to_human_agents"
            assert messages[-1]["content"] == "Transfer successful"  # frozen at the transfer
            assert got["tb_transfer"] == 1.0 and got["tb_done"] == 1.0 and got["reward"] == 0.0


# ---------------------------------------------------------------------------------- the manager's reward
def test_manager_routes_tau_bench_sources_and_reports_components(domains, small_tokenizer, small_tokenizer_dir):
    from verl.trainer.ppo.reward import load_reward_manager

    retail = domains["retail"]
    root = retail.data_dir.parent
    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={small_tokenizer_dir}",
            "reward.reward_manager.name=contribution",
            f"+reward.reward_kwargs.tau_bench.data_dir={root}",
        ]
    )
    manager = load_reward_manager(config, small_tokenizer)
    items = [
        ("test/19", gold_trajectory(retail, "test/19")),
        ("test/19", gold_trajectory(retail, "test/19")[:-1] + [{"role": "assistant", "content": "Only 54.04."}]),
        ("train/3", trajectory(retail, "train/3", [], final="Sorry.")),
        ("train/3", trajectory(retail, "train/3", gold_calls(retail, "train/3"), final=None)),  # never replied
    ]
    tok = small_tokenizer
    batch = padded_batch(
        [tok.encode("instruction", add_special_tokens=False)] * len(items),
        [tok.encode("reply", add_special_tokens=False)] * len(items),
        {
            "data_source": ["tau_bench/retail"] * len(items),
            "reward_model": [{"ground_truth": {"task_id": t}} for t, _ in items],
            "extra_info": [{"task_id": t} for t, _ in items],
            "tool_extra_fields": [{"messages": m} for _, m in items],
        },
        pad_token_id=tok.pad_token_id,
    )
    extra = manager(batch, return_dict=True)["reward_extra_info"]
    assert extra["reward_error"] == [0, 0, 0, 0]
    assert extra["base_score"] == [1.0, 0.0, 0.0, 0.0]
    assert extra["tb_r_actions"] == [1.0, 1.0, 0.0, 1.0]
    assert extra["tb_r_outputs"] == [1.0, 0.0, 1.0, 1.0]
    assert extra["tb_outputs_found"] == [1.0, 0.5, 1.0, 1.0]
    assert extra["tb_done"] == [1.0, 1.0, 1.0, 0.0]


# ---------------------------------------------------------------------------------------------- recipe
@pytest.mark.slow
def test_tau_bench_recipe_composes_against_verl_config():
    import os
    import subprocess
    import sys

    from verl_rewards.manager.config import ManagerConfig
    from verl_rewards.tau_bench.normal import TauBenchNormalSettings

    repo = REPO
    script = repo / "recipes/tau_bench_grpo/run_tau_bench_grpo.sh"
    env = {k: v for k, v in os.environ.items() if k not in ("CONTRIBUTION", "CONTRIB_TYPE", "BETA")}
    env.update({"DOMAIN": "airline", "DATA_DIR": "/data/tba", "TAU_BENCH_DATA_DIR": "/data/tb", "MODE": "instruction"})
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(
        ["bash", str(script), "--cfg", "job"], env=env, capture_output=True, text=True, timeout=240, cwd=str(repo)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cfg = yaml.safe_load(proc.stdout)
    mt = cfg["actor_rollout_ref"]["rollout"]["multi_turn"]
    assert cfg["actor_rollout_ref"]["rollout"]["agent"]["default_agent_loop"] == "tool_agent"
    assert mt["tool_config_path"] == "/data/tba/tool_config.yaml" and mt["max_parallel_calls"] == 1
    assert cfg["data"]["train_files"] == "/data/tba/test.parquet"  # airline has only a test split
    kwargs = cfg["reward"]["reward_kwargs"]
    assert kwargs["tau_bench"]["data_dir"] == "/data/tb"  # validated (must exist) when the manager is built
    assert ManagerConfig.from_reward_kwargs(kwargs, environ={}).contribution.type == "C1"
    bad = subprocess.run(
        ["bash", str(script), "--cfg", "job"],
        env={**env, "DOMAIN": "telecom"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "DOMAIN must be retail or airline" in bad.stderr
    no_user = subprocess.run(
        ["bash", str(script), "--cfg", "job"], env={**env, "MODE": "normal"}, capture_output=True, text=True, timeout=60
    )  # normal mode is the default
    assert no_user.returncode == 2 and "USER_BASE_URL" in no_user.stderr
    normal = subprocess.run(
        ["bash", str(script), "--cfg", "job"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**env, "MODE": "normal", "USER_BASE_URL": "http://10.0.0.7:8000/v1", "USER_MODEL": "user-llm"},
        cwd=str(repo),
    )
    assert normal.returncode == 0, normal.stderr[-3000:]
    rollout = yaml.safe_load(normal.stdout)["actor_rollout_ref"]["rollout"]
    assert rollout["agent"]["default_agent_loop"] == "tau_bench_agent"
    settings = TauBenchNormalSettings.from_mapping(rollout["custom"]["tau_bench"])
    assert settings.user.endpoint.base_url == "http://10.0.0.7:8000/v1" and settings.user.endpoint.model == "user-llm"
    assert settings.max_num_steps == 30 and settings.data_dir == "/data/tb"
