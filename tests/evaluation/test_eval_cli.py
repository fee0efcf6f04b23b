"""``verl-rewards eval`` on dumps written by verl's own ``_dump_generations`` (legacy and V1 trainers), on tau2
results files (checked against tau2's formula computed independently), with --json, --plot, --baseline, and
bad input (exit code 2 and one clear line, never a traceback)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from verl_rewards.cli import main

from eval_support import PROMPTS, TAU, N, validation_inputs
from tau2_support import require_data

GT = {u: json.dumps({"task_id": "t1" if u == "t3" else u}) for u in PROMPTS}  # t3 repeats t1's prompt
TEXT = {u: f"ticket for {'t1' if u == 't3' else u}" for u in PROMPTS}


def _legacy_dump(folder: Path, step: int, inputs, outputs, gts, scores, extras) -> Path:
    """verl's legacy-trainer ``RayPPOTrainer._dump_generations`` (its background writer included)."""
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer

    trainer = object.__new__(RayPPOTrainer)
    trainer.global_steps = step
    trainer._init_dump_executor()
    trainer._dump_generations(inputs, outputs, gts, scores, extras, str(folder))
    trainer._shutdown_dump_executor()
    return folder / f"{step}.jsonl"


def _v1_dump(folder: Path, step: int, inputs, outputs, gts, scores, extras) -> Path:
    """verl's V1 ``PPOTrainer._dump_generations`` (the ``sync`` trainer mode's class)."""
    from verl.trainer.ppo.v1 import get_trainer_cls

    trainer = object.__new__(get_trainer_cls("sync"))
    trainer.global_steps = step
    trainer._init_dump_executor()
    trainer._dump_generations(inputs, outputs, gts, scores, extras, str(folder))
    trainer._shutdown_dump_executor()
    return folder / f"{step}.jsonl"


def _validation_dump_args(uids, infos):
    inputs = [TEXT[u] for u in uids]
    return inputs, [f"answer {i}" for i in range(len(uids))], [GT[u] for u in uids], list(infos["reward"]), infos


def _run(capsys, *argv):
    capsys.readouterr()  # drop what verl's dump printed
    code = main(["eval", *map(str, argv)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def _json(capsys, *argv) -> dict:
    code, out, err = _run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def _tau_only(sources, uids, infos):
    rows = [i for i, s in enumerate(sources) if s == TAU]
    return [uids[i] for i in rows], {k: [v[i] for i in rows] for k, v in infos.items()}


def test_legacy_validation_dump_groups_by_prompt_text(tmp_path, capsys):
    uids, infos = _tau_only(*validation_inputs())
    path = _legacy_dump(tmp_path, 7, *_validation_dump_args(uids, infos))
    assert json.loads(path.read_text().splitlines()[0]).keys() >= {"input", "gts", "score", "step", "base_score"}

    data = _json(capsys, path, "--data-source", TAU)
    (entry,) = data["inputs"]
    assert entry["step"] == 7 and entry["reward_key"] == "base_score"
    tau = entry["sources"][TAU]
    # a legacy dump has no uid: t3 repeats t1's prompt and ground truth, so both form one task of 8 trials
    assert tau["num_tasks"] == 2 and tau["num_trials"] == 12
    assert tau["min_trials"] == 4 and tau["max_trials"] == 8
    assert tau["pass_k"] == pytest.approx(
        {"1": (3 / 8 + 1) / 2, "2": (3 / 28 + 1) / 2, "3": (1 / 56 + 1) / 2, "4": (0 + 1) / 2}
    )
    assert any("has only 4 trial(s)" in w for w in tau["warnings"])


def test_v1_validation_dump_keeps_prompt_uids_and_one_trial_per_session(tmp_path, capsys):
    uids, infos = _tau_only(*validation_inputs())
    keys, session = [], {}
    for uid in uids:
        session[uid] = session.get(uid, -1) + 1
        keys.append(f"{uid}_{session[uid]}_0")
    # a multi-output session: t1's first session also wrote an earlier output (index 0, final index 1);
    # V1 dumps every output with the values of the session's final sample
    first = keys.index("t1_0_0")
    keys[first] = "t1_0_1"
    order = list(range(len(uids))) + [first]
    keys.append("t1_0_0")
    inputs, outputs, gts, scores, _ = _validation_dump_args([uids[i] for i in order], {"reward": infos["reward"]})
    scores = [infos["reward"][i] for i in order]
    extras = {k: [v[i] for i in order] for k, v in infos.items()} | {"uid": keys}
    path = _v1_dump(tmp_path, 3, inputs, outputs, gts, scores, extras)

    data = _json(capsys, path, "--data-source", TAU)
    tau = data["inputs"][0]["sources"][TAU]
    assert tau["num_tasks"] == 3 and tau["num_trials"] == 12  # t3 stays its own task; the extra output is no trial
    expected = {1: (3 / 4 + 1 + 0) / 3, 2: (3 / 6 + 1 + 0) / 3, 3: (1 / 4 + 1 + 0) / 3, 4: (0 + 1 + 0) / 3}
    assert tau["pass_k"] == pytest.approx({str(k): v for k, v in expected.items()})
    assert tau["termination"] == pytest.approx({"agent_stop": 9 / 12, "max_steps": 2 / 12, "user_stop": 1 / 12})
    assert tau["db_match_rate"] == pytest.approx(0.7)
    assert tau["action_accuracy"] == pytest.approx({"read": 0.8, "write": 0.7})
    assert tau["components"] == pytest.approx({"communicate": 0.9, "db": 0.7})


def _tau2_results(rewards: dict[str, list], num_trials: int = 4) -> dict:
    """A tau2-bench ``Results`` document (``tau2 run`` output) with the fields ``compute_metrics`` reads."""
    sims = []
    for task_id, trials in rewards.items():
        for trial, item in enumerate(trials):
            reward, term = item if isinstance(item, tuple) else (item, "agent_stop")
            info = (
                None
                if term == "infrastructure_error"
                else {
                    "reward": reward,
                    "db_check": {"db_match": reward == 1.0, "db_reward": float(reward == 1.0)},
                    "action_checks": [
                        {
                            "action": {"action_id": "a", "name": "get_user_details", "arguments": {}},
                            "action_match": True,
                            "action_reward": 1.0,
                            "tool_type": "read",
                        },
                        {
                            "action": {"action_id": "b", "name": "cancel_reservation", "arguments": {}},
                            "action_match": reward == 1.0,
                            "action_reward": float(reward == 1.0),
                            "tool_type": "write",
                        },
                    ],
                    "reward_basis": ["DB", "COMMUNICATE"],
                    "reward_breakdown": {"DB": float(reward == 1.0), "COMMUNICATE": 1.0},
                }
            )
            sims.append(
                {
                    "id": f"{task_id}-{trial}",
                    "task_id": task_id,
                    "trial": trial,
                    "termination_reason": term,
                    "reward_info": info,
                    "start_time": "",
                    "end_time": "",
                    "duration": 1.0,
                    "messages": [],
                }
            )
    return {
        "info": {
            "git_commit": "x",
            "num_trials": num_trials,
            "max_steps": 30,
            "max_errors": 10,
            "user_info": {"implementation": "user_simulator", "llm": "u"},
            "agent_info": {"implementation": "llm_agent", "llm": "a"},
            "environment_info": {"domain_name": "airline", "policy": ""},
        },
        "tasks": [{"id": t} for t in rewards],
        "simulations": sims,
    }


def tau2_reference_pass_hat_ks(results: dict) -> dict[int, float]:
    """tau2's formula, independently: drop infrastructure errors, success = reward within 1e-6 of 1,
    k up to min(num_trials, fewest trials of a task), mean over tasks of C(c, k) / C(n, k)."""
    rows = [
        {
            "task_id": s["task_id"],
            "reward": (s["reward_info"] or {}).get("reward"),
            "termination": s["termination_reason"],
        }
        for s in results["simulations"]
    ]
    df = pd.DataFrame(rows)
    df = df[df.termination != "infrastructure_error"]
    df["success"] = df.reward.apply(lambda r: r is not None and (1 - 1e-6) <= r <= (1 + 1e-6))
    max_k = min(results["info"]["num_trials"], int(df.task_id.value_counts().min()))
    counts = df.groupby("task_id")["success"].agg(["size", "sum"])
    return {
        k: float(
            sum(math.comb(int(c), k) / math.comb(int(n), k) for n, c in counts.itertuples(index=False)) / len(counts)
        )
        for k in range(1, max_k + 1)
    }


def test_tau2_results_file_gives_tau2s_pass_k(tmp_path, capsys):
    results = _tau2_results(
        {
            "0": [1.0, 1.0, 0.0, 1.0],
            "1": [1.0, 0.9999995, 1.0, 1.0],  # within tau2's tolerance
            "2": [0.0, 0.0, 1.0, (None, "infrastructure_error")],  # a run that never happened: 3 trials left
            "3": [1.0, 1.0, 1.0, 1.0],
        }
    )
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    reference = tau2_reference_pass_hat_ks(results)
    assert sorted(reference) == [1, 2, 3]

    data = _json(capsys, path)
    s = data["inputs"][0]["sources"]["tau2/airline"]
    assert s["pass_k"] == pytest.approx({str(k): v for k, v in reference.items()})
    assert s["infra_errors"] == 1 and s["num_trials"] == 15 and s["expected_trials"] == 4
    assert s["action_accuracy"] == pytest.approx({"read": 1.0, "write": 11 / 15})
    assert s["db_match_rate"] == pytest.approx(11 / 15)
    assert s["components"] == pytest.approx({"communicate": 1.0, "db": 11 / 15})
    assert any("infrastructure_error" in w for w in s["warnings"])


def test_folder_of_steps_json_file_plot_and_baseline(tmp_path, capsys):
    sources, uids, infos = validation_inputs()
    dumps = tmp_path / "val"
    args = _validation_dump_args(uids, infos)
    _legacy_dump(dumps, 20, *args)
    failing = {k: list(v) for k, v in infos.items()}
    failing["base_score"] = [0.0] * len(uids)
    _legacy_dump(dumps, 10, *_validation_dump_args(uids, failing))
    baseline = tmp_path / "tau2_results.json"
    baseline.write_text(json.dumps(_tau2_results({"0": [1.0, 0.0, 0.0, 0.0], "1": [1.0] * 4})))

    out_json, out_png = tmp_path / "out" / "eval.json", tmp_path / "out" / "eval.png"
    code, out, err = _run(
        capsys, dumps, "--data-source", "tau2/airline", "--baseline", baseline, "--json", out_json, "--plot", out_png
    )
    assert code == 0, err
    data = json.loads(out_json.read_text())
    assert [d["step"] for d in data["inputs"]] == [10, 20]  # numeric step order
    assert data["inputs"][0]["sources"]["tau2/airline"]["pass_k"]["1"] == 0.0
    step20 = data["inputs"][1]["sources"]["tau2/airline"]["metrics"]
    assert data["diff"][1]["sources"]["tau2/airline"]["pass^1"] == pytest.approx(step20["pass^1"] - (1 / 4 + 1) / 2)
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in out_png.parent.iterdir() if p.name.startswith(".")]  # no temporary files left

    code, out, _ = _run(capsys, dumps, "--data-source", "tau2/airline", "--baseline", baseline)
    assert code == 0
    assert "(step 10)" in out and "(step 20)" in out and "baseline" in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("pass^1 ") and "+" in ln)
    assert line.split()[-1] == f"{step20['pass^1'] - 0.625:+.4f}"


def test_other_sources_need_a_threshold_for_pass_k(tmp_path, capsys):
    rows = [
        {"input": f"q{i // 4}", "gts": "x", "score": s, "step": 1, "data_source": "rlla"}
        for i, s in enumerate([3.0, 3.0, 1.0, 3.0, 0.0, 3.0, 3.0, 3.0])
    ]
    path = tmp_path / "1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = _json(capsys, path)["inputs"][0]["sources"]["rlla"]
    assert s["pass_k"] == {} and s["task_reward"] == pytest.approx(19 / 8) and s["success_rule"] is None
    s = _json(capsys, path, "--success-threshold", "3")["inputs"][0]["sources"]["rlla"]
    assert s["pass_k"]["1"] == pytest.approx(6 / 8) and s["pass_k"]["4"] == 0.0
    assert s["pass_k"]["3"] == pytest.approx((1 / 4 + 1 / 4) / 2)
    note = _json(capsys, path)["inputs"][0]["notes"]
    assert any("`score`" in n for n in note)  # no base_score column: the total is used, and said so


@pytest.mark.parametrize(
    ("content", "argv", "message"),
    [
        ("", (), "empty (no JSON rows)"),
        ('{"input": "a", "score": 1.0}\n{"input": "b", "sc', (), ":2: not valid JSON"),
        ('{"output": "a", "score": 1.0}\n', (), "no grouping key"),
        ('{"input": "a", "output": "x"}\n', (), "no numeric task reward"),
        (
            "".join(json.dumps({"input": "a", "score": 1.0, "step": 1}) + "\n" for _ in range(4)),
            ("--data-source", "tau2/mock", "--k", "5"),
            "pass^5 needs at least 5 trials per task, but task",
        ),
        ('{"input": "a", "score": 1.0}\n', ("--k", "0"), "--k must be at least 1"),
    ],
    ids=["empty", "truncated", "no-grouping-key", "no-reward", "n-below-k", "k-zero"],
)
def test_bad_input_exits_2_with_a_clear_message(tmp_path, capsys, content, argv, message):
    path = tmp_path / "1.jsonl"
    path.write_text(content)
    code, out, err = _run(capsys, path, *argv)
    assert code == 2
    assert err.startswith("verl-rewards eval: error: ") and message in err and len(err.strip().splitlines()) == 1


def test_bad_paths_and_results_files_exit_2(tmp_path, capsys):
    assert _run(capsys, tmp_path / "missing.jsonl")[0] == 2
    (tmp_path / "empty_dir").mkdir()
    code, _, err = _run(capsys, tmp_path / "empty_dir")
    assert code == 2 and "no verl dump" in err
    not_results = tmp_path / "r.json"
    not_results.write_text(json.dumps({"foo": 1}))
    code, _, err = _run(capsys, not_results)
    assert code == 2 and "not a tau2 Results file" in err
    bad_sim = tmp_path / "s.json"
    bad_sim.write_text(json.dumps({**_tau2_results({"0": [1.0]}), "simulations": [{"reward_info": None}]}))
    code, _, err = _run(capsys, bad_sim)
    assert code == 2 and "simulations[0] has no task_id" in err


def test_manager_extras_through_verl_dump_to_eval(tmp_path, capsys, small_tokenizer_dir, small_tokenizer):
    """The contribution manager scores tau2 rollouts (gold, idle, cut off); verl dumps its extras; eval reads
    termination, DB match and the scored components back."""
    root = require_data("mock")
    from verl_rewards.tau2 import load_domain
    from verl_rewards.tau2.scripted import gold_trajectory, scripted_trajectory

    from tau2_support import tau2_manager as _manager
    from tau2_support import tau2_rows as _rows

    dom = load_domain("mock", root)
    task = "create_task_1"
    gold, idle = gold_trajectory(dom, task), scripted_trajectory(dom, task, [])
    items = [
        (task, gold, "agent_stop"),
        (task, gold, "agent_stop"),
        (task, idle, "agent_stop"),
        (task, gold, "max_steps"),
    ]
    mgr = _manager(small_tokenizer_dir, small_tokenizer, [f"tau2.data_dir={root}"])
    out = mgr(_rows(small_tokenizer, "mock", items), return_dict=True)
    extras = {k: np.array(v).tolist() for k, v in out["reward_extra_info"].items()}
    assert extras["termination"] == ["agent_stop", "agent_stop", "agent_stop", "max_steps"]
    assert extras["tau2_basis"][3] == "" and extras["tau2_basis"][0]
    scores = out["reward_tensor"].sum(-1).tolist()
    path = _legacy_dump(tmp_path, 1, ["ticket"] * 4, ["..."] * 4, [task] * 4, scores, {"reward": scores, **extras})

    s = _json(capsys, path, "--data-source", "tau2/mock")["inputs"][0]["sources"]["tau2/mock"]
    assert s["num_tasks"] == 1 and s["num_trials"] == N
    assert s["pass_k"]["1"] == pytest.approx(2 / 4) and s["pass_k"]["3"] == 0.0
    assert s["termination"] == {"agent_stop": 0.75, "max_steps": 0.25}
    assert s["db_match_rate"] == pytest.approx(2 / 3)  # the cut-off run's DB is not checked, as in tau2
    assert set(s["components"]) == {c.strip().lower() for c in extras["tau2_basis"][0].split(",")}
