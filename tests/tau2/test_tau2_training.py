"""Training on tau2 with verl's tool agent loop: dataset builder, tool config, tool adapters, reward, recipe.

The rollouts run verl's real ``AgentLoopWorker._run_agent_loop`` → ``ToolAgentLoop`` → our tools →
``_agent_loop_postprocess`` → (Ray tests) the streaming reward call to verl's ``RewardLoopWorker`` actors with
the ``contribution`` manager. Only the LLM server is scripted: it answers each generation request with the
next turn of a fixed script (text plus hermes ``<tool_call>`` blocks).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from verl_rewards.contribution import compute_contribution
from verl_rewards.tau2.data import DONE_TOOL, TOOL_CONFIG_NAME, prepare_tau2
from verl_rewards.tau2.scripted import gold_calls

from agent_loop_support import Turn, _agent_data, _turn, _worker, configured, run_row
from recipe_support import compose_script
from repo_paths import REPO
from tau2_support import require_domain
from verl_support import compose_verl_config

BETA = 0.1

# (domain, task) -> a wrong write that succeeds but is not asked for
WRONG = {
    ("airline", "14"): ("send_certificate", {"user_id": "mohamed_silva_9265", "amount": 100}),
    ("airline", "7"): ("send_certificate", {"user_id": "daiki_muller_1116", "amount": 50}),
    ("retail", "59"): (
        "modify_user_address",
        {
            "user_id": "yusuf_taylor_7149",
            "address1": "1 Wrong Way",
            "address2": "",
            "city": "Nowhere",
            "state": "NV",
            "country": "USA",
            "zip": "00000",
        },
    ),
    ("retail", "72"): (
        "modify_user_address",
        {
            "user_id": "ivan_khan_7475",
            "address1": "2 Wrong Way",
            "address2": "",
            "city": "Nowhere",
            "state": "NV",
            "country": "USA",
            "zip": "00001",
        },
    ),
}
KINDS = ("correct", "wrong", "incomplete")


# ----------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def tau2_root() -> Path:
    airline = require_domain("airline")
    require_domain("retail")
    return airline.data_dir.parent


@pytest.fixture(scope="module")
def prepared(tau2_root, tmp_path_factory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("tau2_data")
    return {
        d: prepare_tau2(tau2_root, d, out / d, ["train", "test"], mode="solo", progress=False)
        for d in ("airline", "retail")
    }


def _domain(name: str):
    return require_domain(name)


def _writes(domain, calls) -> list[bool]:
    kinds = domain.tool_kinds()
    return [kinds.get(name) == "write" for name, _, _ in calls]


def script(domain_name: str, task_id: str, kind: str) -> list[Turn]:
    """The scripted policy: one tool call per turn, ``done`` alone in the last tool turn."""
    domain = _domain(domain_name)
    calls = gold_calls(domain, task_id)
    writes = _writes(domain, calls)
    first_write = writes.index(True)
    info = domain.task(task_id).evaluation_criteria.communicate_info or ()
    if kind == "correct":
        turns = [("Working on it.", [(n, a)]) for n, a, _ in calls]
        return [*turns, ("All done. " + " ".join(f"{s}." for s in info), [(DONE_TOOL, {})]), ("Goodbye.", [])]
    if kind == "wrong":
        reads = [("Looking.", [(n, a)]) for n, a, _ in calls[:first_write]]
        return [*reads, ("Fixing.", [WRONG[(domain_name, task_id)]]), ("Done.", [(DONE_TOOL, {})])]
    # incomplete: stops talking after the first write, never calls done
    return [*[("Working.", [(n, a)]) for n, a, _ in calls[: first_write + 1]], ("I will finish this later.", [])]


def _rows(report) -> dict[str, dict]:
    rows = pq.read_table(report.files["train"]).to_pylist() + pq.read_table(report.files["test"]).to_pylist()
    return {r["extra_info"]["task_id"]: r for r in rows}


def run_rollouts(prepared, tokenizer, tokenizer_dir, handles=None) -> dict[tuple[str, str, str], Any]:
    """Every (domain, task, kind) of :data:`WRONG` x :data:`KINDS` through the real agent loop."""
    results = {}

    async def go() -> None:
        for domain in ("airline", "retail"):
            worker = _worker(domain, prepared[domain], tokenizer, tokenizer_dir, handles)
            rows = _rows(prepared[domain])
            for (dname, task_id), _ in WRONG.items():
                if dname != domain:
                    continue
                for kind in KINDS:
                    row = rows[task_id]
                    worker.llm_client.queue.append(script(domain, task_id, kind))
                    results[(domain, task_id, kind)] = await run_row(worker, row, f"{domain}-{task_id}")

    asyncio.run(go())
    return results


@pytest.fixture(scope="module")
def rollouts(prepared, small_tokenizer, small_tokenizer_dir):
    return run_rollouts(prepared, small_tokenizer, small_tokenizer_dir)


def expected(domain_name: str, task_id: str, kind: str) -> dict[str, Any]:
    """Expected termination, base reward, C-0 and C-1 of a scripted rollout (recipe: default max_steps)."""
    domain = _domain(domain_name)
    writes = _writes(domain, gold_calls(domain, task_id))
    n_writes = sum(writes)
    if kind == "correct":
        return {"termination": "agent_stop", "reward": 1.0, "c0": n_writes, "c1": 1.0, "turns": len(writes) + 1}
    first = writes.index(True)
    if kind == "wrong":
        return {"termination": "agent_stop", "reward": 0.0, "c0": 1, "c1": 0.0, "turns": first + 2}
    return {"termination": None, "reward": 0.0, "c0": 1, "c1": 1 / n_writes, "turns": first + 1}


def _state(step: dict) -> tuple:
    return step["bb_hash"], step["value_est"]


# -------------------------------------------------------------------------------------------- dataset
def test_prepare_writes_rows_and_tool_config_verl_loads(prepared):
    from verl.tools.tool_registry import initialize_tools_from_config

    from verl_rewards.tau2.verl_tools import Tau2DoneTool, Tau2Tool

    for name, report in prepared.items():
        domain = _domain(name)
        assert report.rows == {"train": len(domain.split("train")), "test": len(domain.split("test"))}
        rows = pq.read_table(report.files["train"]).to_pylist()
        assert [r["extra_info"]["task_id"] for r in rows] == domain.split("train")
        row = rows[0]
        assert row["data_source"] == f"tau2/{name}" and row["agent_name"] == "tool_agent"
        system, user = row["prompt"]
        assert system["role"] == "system" and "`done`" in system["content"]
        assert domain.policy.strip()[:200] in system["content"]
        assert user["role"] == "user" and "Reason for contact" in user["content"]
        gt = row["reward_model"]["ground_truth"]
        assert gt["task_id"] == row["extra_info"]["task_id"]
        assert json.loads(gt["evaluation_criteria"]) == domain.task(gt["task_id"]).raw["evaluation_criteria"]
        assert [r["extra_info"]["index"] for r in rows] == list(range(len(rows)))
        tool_names = [*(s["function"]["name"] for s in domain.spec.agent_tool_schemas()), DONE_TOOL]
        kwargs = row["extra_info"]["tools_kwargs"]
        assert sorted(kwargs) == sorted(tool_names)
        assert kwargs[DONE_TOOL]["create_kwargs"] == {
            "domain": name,
            "task_id": gt["task_id"],
            "data_dir": str(domain.data_dir.parent),
        }

        tools = initialize_tools_from_config(report.tool_config)
        assert [t.name for t in tools] == tool_names
        assert all(type(t) is (Tau2DoneTool if t.name == DONE_TOOL else Tau2Tool) for t in tools)
        schemas = {t.name: t.tool_schema.function for t in tools}
        assert all(s.description for s in schemas.values())
    airline = {
        t.name: t
        for t in initialize_tools_from_config(
            configured(prepared["airline"].tool_config, root=prepared["airline"].data_dir)[0]
        )
    }
    book = airline["book_reservation"].tool_schema.function.parameters
    assert book.properties["cabin"].enum == ["business", "economy", "basic_economy"]
    assert book.properties["flights"].type == "array" and book.properties["total_baggages"].type == "integer"
    assert book.model_dump()["$defs"]["FlightInfo"]["properties"]["flight_number"]["type"] == "string"
    assert set(book.required) == set(book.properties)
    retail = yaml.safe_load(Path(prepared["retail"].tool_config).read_text())["tools"]
    cancel = next(t for t in retail if t["config"]["openai_schema"]["function"]["name"] == "cancel_pending_order")
    reason = cancel["config"]["openai_schema"]["function"]["parameters"]["properties"]["reason"]
    assert reason["type"] == "string" and "'ordered by mistake'" in reason["description"]  # tau2 gives no enum


def test_rlhf_dataset_reads_the_rows(prepared, small_tokenizer):
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    cfg = OmegaConf.create({"filter_overlong_prompts": False, "max_prompt_length": 100000})
    ds = RLHFDataset(data_files=[prepared["retail"].files["test"]], tokenizer=small_tokenizer, config=cfg)
    item = ds[0]
    assert item["agent_name"] == "tool_agent" and item["data_source"] == "tau2/retail"
    assert [m["role"] for m in item["raw_prompt"]] == ["system", "user"]
    assert item["tools_kwargs"]["done"]["create_kwargs"]["task_id"] == item["extra_info"]["task_id"]


def test_prepare_cli(tau2_root, tmp_path, capsys):
    from verl_rewards.cli import main

    out = tmp_path / "mock"
    assert (
        main(
            [
                "prepare",
                "tau2",
                "--data-dir",
                str(tau2_root),
                "--domain",
                "retail",
                "--out",
                str(out),
                "--split",
                "all",
                "--mode",
                "solo",
            ]
        )
        == 0
    )
    assert len(pq.read_table(out / "all.parquet")) == len(_domain("retail").tasks)
    assert (out / TOOL_CONFIG_NAME).is_file()
    assert (
        main(
            [
                "prepare",
                "tau2",
                "--data-dir",
                str(tau2_root),
                "--domain",
                "retail",
                "--out",
                str(out),
                "--split",
                "nope",
            ]
        )
        == 2
    )
    assert "no split 'nope'" in capsys.readouterr().err
    assert (
        main(["prepare", "tau2", "--data-dir", str(tmp_path / "missing"), "--domain", "airline", "--out", str(out)])
        == 2
    )
    assert "not found" in capsys.readouterr().err
    assert main(["prepare", "tau2", "--data-dir", str(tau2_root), "--domain", "nope", "--out", str(out)]) == 2
    assert "unknown tau2 domain" in capsys.readouterr().err


# ------------------------------------------------------------------------------- tool adapters, by hand
def test_tool_adapters_share_state_record_steps_and_end_episodes(prepared):
    from verl.tools.tool_registry import initialize_tools_from_config

    from verl_rewards.engine.verl_tools import ENDED_OBSERVATION, SESSIONS
    from verl_rewards.tau2 import evaluate_trajectory
    from verl_rewards.tau2.verl_tools import NOT_RUN_WITH_DONE

    domain = _domain("airline")
    tools = {
        t.name: t
        for t in initialize_tools_from_config(
            configured(prepared["airline"].tool_config, root=prepared["airline"].data_dir)[0]
        )
    }
    row = _rows(prepared["airline"])["7"]
    gold = [(n, a) for n, a, _ in gold_calls(domain, "7")]  # 2 reads, update, cancel XEHM4B, cancel 59XX6W

    async def go():
        ad = _agent_data(row, "req-7")
        h0 = domain.make_env("7").get_data_hash()
        await _turn(tools, ad, gold[:2])  # two reads in one turn: one step, nothing changes
        ef = ad.extra_fields
        assert ef["prev_step_dict"] == ef["cur_step_dict"] == [{"turn": 0, "bb_hash": h0, "value_est": 0.0}]
        await _turn(tools, ad, gold[2:4])  # update + cancel: one step, 2 of 3 gold writes matched
        assert ef["cur_step_dict"][1]["value_est"] == pytest.approx(2 / 3)
        assert ef["cur_step_dict"][1]["bb_hash"] != ef["prev_step_dict"][1]["bb_hash"] == h0
        answers = await _turn(tools, ad, [gold[4], (DONE_TOOL, {})], "Finished.")
        assert answers[0] == NOT_RUN_WITH_DONE  # calls sent with done are not run (tau2 drops them)
        assert ef["termination"] == "agent_stop" and len(ef["prev_step_dict"]) == 3
        assert _state(ef["cur_step_dict"][2]) == _state(ef["prev_step_dict"][2]) == _state(ef["cur_step_dict"][1])
        frozen = ef["messages"]
        assert frozen is not ad.messages
        assert [c["function"]["name"] for c in frozen[-2]["tool_calls"]] == [DONE_TOOL]
        assert frozen[-2]["content"] == "Finished."
        assert await _turn(tools, ad, [gold[4]]) == [ENDED_OBSERVATION]
        assert len(ef["prev_step_dict"]) == 3 and ef["messages"] is frozen
        assert [a["name"] for a in ef["action_log"]] == [n for n, _ in gold[:4]]
        result = evaluate_trajectory(domain, "7", frozen, termination=ef["termination"], nl_policy="skip")
        assert result.predicted_env.get_data_hash() == ef["db_hash"]  # the reward's replay reaches the tools' state
        assert result.reward == 0.0 and result.db_match is False  # 59XX6W was never cancelled

        # a successful transfer ends the episode as tau2's user would (user_stop); later calls are refused
        ad2 = _agent_data(row, "req-7b")
        await _turn(tools, ad2, [("transfer_to_human_agents", {"summary": "wants a refund"})])
        assert ad2.extra_fields["termination"] == "user_stop"
        assert await _turn(tools, ad2, [gold[0]]) == [ENDED_OBSERVATION]
        assert SESSIONS.get(ad) is not None and SESSIONS.get(ad2) is not None
        return SESSIONS.key(ad), SESSIONS.key(ad2)

    keys = asyncio.run(go())
    gc.collect()
    assert all(SESSIONS._sessions.get(k) is None for k in keys)  # dropped with their agent_data


def test_tool_adapter_errors_are_answers(prepared):
    from verl.tools.tool_registry import initialize_tools_from_config

    tools = {
        t.name: t
        for t in initialize_tools_from_config(
            configured(prepared["retail"].tool_config, root=prepared["retail"].data_dir)[0]
        )
    }
    row = dict(_rows(prepared["retail"])["72"])
    row["extra_info"] = {**row["extra_info"], "tools_kwargs": {}}

    async def go():
        ad = _agent_data(row, "req-no-kwargs")
        text = (await _turn(tools, ad, [("get_order_details", {"order_id": "#W5270061"})]))[0]
        assert text.startswith("Error: cannot start the tau2 episode") and "task_id" in text
        tool = tools["get_order_details"]
        iid, _ = await tool.create(create_kwargs={})
        response, _, _ = await tool.execute(iid, {"order_id": "#W5270061"})
        assert response.text.startswith("Error:")

    asyncio.run(go())


# --------------------------------------------------------------------------- ToolAgentLoop, scripted policy
@pytest.mark.parametrize("kind", KINDS)
def test_tool_agent_loop_step_dicts_and_local_reward(rollouts, kind, tau2_root):
    from verl_rewards.tau2 import evaluate_trajectory
    from verl_rewards.tau2.verl_scorer import Tau2Options, score_tau2

    options = Tau2Options(data_dir=str(tau2_root), default_termination="max_steps")
    for (domain_name, task_id, k), out in rollouts.items():
        if k != kind:
            continue
        want = expected(domain_name, task_id, kind)
        ef = out.extra_fields
        prev, cur = ef["prev_step_dict"], ef["cur_step_dict"]
        assert len(prev) == len(cur) == want["turns"], (domain_name, task_id)
        assert ef["termination"] == want["termination"]
        assert [_state(p) for p in prev[1:]] == [_state(c) for c in cur[:-1]]  # nothing changes between turns
        assert [p["turn"] for p in prev] == [c["turn"] for c in cur] == list(range(want["turns"]))
        values = [c["value_est"] for c in cur]
        assert values == sorted(values) and all(0.0 <= v <= 1.0 for v in values)
        assert compute_contribution("C0", prev, cur) == want["c0"]
        assert compute_contribution("C1", prev, cur) == pytest.approx(want["c1"])
        assert ef["trajectory_id"] and ef["db_hash"] == cur[-1]["bb_hash"]
        # the reward replays the recorded messages on a fresh env and reaches the state the tools produced
        messages = ef["messages"]
        replay = evaluate_trajectory(_domain(domain_name), task_id, messages, nl_policy="skip")
        assert replay.predicted_env.get_data_hash() == ef["db_hash"]
        extra_info = {**ef, "task_id": task_id}
        got = score_tau2(messages, f"tau2/{domain_name}", {"task_id": task_id}, extra_info, options)
        assert got["reward"] == want["reward"], (domain_name, task_id, kind, got)
        if kind != "incomplete":
            assert got["tau2_db"] == got["db_match"] == want["reward"]
        if kind == "correct":
            assert messages[-2]["tool_calls"][0]["function"]["name"] == DONE_TOOL  # frozen at done
            assert out.extra_fields["tool_rewards"] == [0.0] * want["turns"]
        if kind == "incomplete":
            assert messages[-1] == {"role": "assistant", "content": "I will finish this later.<|im_end|>"}


# ------------------------------------------------------------------------- Ray: verl's real reward loop
@pytest.mark.ray
@pytest.mark.parametrize("contrib_type", ["C0", "C1"])
def test_reward_loop_scores_tool_agent_rollouts(
    ray_cluster, prepared, small_tokenizer, small_tokenizer_dir, tau2_root, contrib_type
):
    import ray
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    config = compose_verl_config(
        [
            f"actor_rollout_ref.model.path={small_tokenizer_dir}",
            "reward.reward_manager.name=contribution",
            "reward.num_workers=2",
            f"+reward.reward_kwargs.contribution.type={contrib_type}",
            f"+reward.reward_kwargs.contribution.beta={BETA}",
            f"+reward.reward_kwargs.tau2.data_dir={tau2_root}",
            "+reward.reward_kwargs.tau2.default_termination=max_steps",
        ]
    )
    manager = RewardLoopManager(config)
    try:
        outs = run_rollouts(prepared, small_tokenizer, small_tokenizer_dir, manager.reward_loop_worker_handles)
    finally:
        for worker in manager.reward_loop_workers:
            ray.kill(worker)
    assert len(outs) == len(WRONG) * len(KINDS)
    for (domain_name, task_id, kind), out in outs.items():
        want = expected(domain_name, task_id, kind)
        info = out.extra_fields["reward_extra_info"]
        assert info["reward_error"] == 0 and info["reward_timeout"] == 0, (domain_name, task_id, kind, info)
        assert info["base_score"] == want["reward"], (domain_name, task_id, kind, info)
        contrib = want[contrib_type.lower()]
        assert info[f"contrib_{contrib_type.lower()}"] == pytest.approx(contrib)
        assert out.reward_score == pytest.approx(want["reward"] + BETA * contrib)
        assert {"db_match", "tau2_db", "tau2_action", "tau2_communicate", "tau2_env_assertion"} <= set(info)
        if kind != "incomplete":
            assert info["tau2_db"] == info["db_match"] == want["reward"]


# ---------------------------------------------------------------------------------------------- recipe
@pytest.mark.slow
def test_tau2_recipe_composes_against_verl_config(tmp_path):
    from verl_rewards.manager.config import ManagerConfig
    from verl_rewards.tau2.verl_scorer import Tau2Options

    data = str(tmp_path)  # tau2.data_dir must exist when the manager is built
    cfg = compose_script(
        "recipes/tau2_grpo/run_tau2_grpo.sh",
        {"DOMAIN": "retail", "MODE": "solo", "DATA_DIR": "/data/t2r", "TAU2_DATA_DIR": data},
        "trainer.total_epochs=2",
    )
    rollout = cfg["actor_rollout_ref"]["rollout"]
    assert rollout["agent"]["default_agent_loop"] == "tool_agent"
    mt = rollout["multi_turn"]
    assert mt["enable"] is True and mt["tool_config_path"] == "/data/t2r/tool_config.yaml"
    assert mt["format"] == "hermes" and mt["max_parallel_calls"] == 1 and mt["max_tool_response_length"] == 4096
    assert cfg["data"]["train_files"] == "/data/t2r/train.parquet"
    assert cfg["data"]["val_files"] == "/data/t2r/test.parquet"
    assert cfg["data"]["max_prompt_length"] == 6144  # the recipe's value wins over run_grpo.sh's
    assert cfg["data"]["train_batch_size"] == 8 and cfg["actor_rollout_ref"]["rollout"]["n"] == 8
    assert cfg["reward"]["reward_manager"]["name"] == "contribution"
    assert cfg["algorithm"]["adv_estimator"] == "grpo" and cfg["trainer"]["total_epochs"] == 2
    kwargs = cfg["reward"]["reward_kwargs"]
    settings = ManagerConfig.from_reward_kwargs(kwargs, environ={})
    assert settings.contribution.type == "C1" and settings.contribution.terms[0].schedule.beta == 0.1
    options = Tau2Options.from_config(kwargs["tau2"])
    assert options.data_dir == data and options.default_termination == "max_steps"
    bad = subprocess.run(
        ["bash", str(REPO / "recipes/tau2_grpo/run_tau2_grpo.sh"), "--cfg", "job"],
        env={**os.environ, "DOMAIN": "banking"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "DOMAIN must be airline, retail, telecom, banking_knowledge or mock" in bad.stderr


def test_store_evicts_finished_sessions_first_and_fails_an_evicted_live_one_visibly(prepared):
    from verl.tools.tool_registry import initialize_tools_from_config

    from verl_rewards.engine.verl_tools import EVICTED_FLAG, SESSIONS

    tools = {
        t.name: t
        for t in initialize_tools_from_config(
            configured(prepared["airline"].tool_config, root=prepared["airline"].data_dir)[0]
        )
    }
    row = _rows(prepared["airline"])["7"]
    domain = _domain("airline")
    read = [(n, a) for n, a, _ in gold_calls(domain, "7")][:1]
    saved = SESSIONS.max_sessions

    async def go():
        SESSIONS.max_sessions = len(SESSIONS) + 2
        finished, live, newer = _agent_data(row, "ev-a"), _agent_data(row, "ev-b"), _agent_data(row, "ev-c")
        await _turn(tools, finished, [(DONE_TOOL, {})])
        await _turn(tools, live, read)
        await _turn(tools, newer, read)  # store full: the finished session goes, the live ones stay
        assert SESSIONS.get(finished) is None and SESSIONS.get(live) is not None
        assert live.extra_fields["termination"] is None
        newest = _agent_data(row, "ev-d")
        await _turn(tools, newest, read)  # only live sessions left: the oldest is evicted, visibly
        assert live.extra_fields["termination"] == "infrastructure_error" and live.extra_fields[EVICTED_FLAG]
        answer = await _turn(tools, live, read)
        assert answer[0].startswith("Error: cannot start the tau2 episode") and "evicted" in answer[0]
        assert SESSIONS.get(live) is None  # never restarted on a fresh environment
        assert [a["name"] for a in live.extra_fields["action_log"]] == [read[0][0]]  # its record is kept
        return [finished, live, newer, newest]

    try:
        keep = asyncio.run(go())
    finally:
        SESSIONS.max_sessions = saved
    del keep
    gc.collect()
