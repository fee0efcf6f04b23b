"""``verl-rewards check``: verl's real config composed and validated as ``main_ppo`` does, our manager, agent loops
and data routing built from it, without Ray or a model. Every failure is one line naming its stage (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from verl_rewards.cli import main

from repo_paths import REPO
from tau2_support import require_domain


@pytest.fixture(scope="module")
def rlla(tmp_path_factory):
    """ToolRL's shipped sample as train and val parquet (``prepare toolrl``)."""
    from verl_rewards.toolrl.data import SAMPLE_PATH, prepare_toolrl

    out = tmp_path_factory.mktemp("rlla")
    prepare_toolrl(SAMPLE_PATH, out, split="train")
    prepare_toolrl(SAMPLE_PATH, out, split="test")
    return out


def base(tokenizer_dir, data_dir, *extra: str) -> list[str]:
    """A small GRPO run that verl's validate_config accepts, through the package's config group."""
    return [
        "hydra.searchpath=[pkg://verl_rewards.configs]",
        "+verl_rewards=contribution",
        "algorithm.adv_estimator=grpo",
        f"data.train_files={data_dir}/train.parquet",
        f"data.val_files={data_dir}/test.parquet",
        "data.train_batch_size=4",
        "data.max_prompt_length=512",
        "data.max_response_length=128",
        f"actor_rollout_ref.model.path={tokenizer_dir}",
        "actor_rollout_ref.actor.ppo_mini_batch_size=4",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.n=2",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1",
        "trainer.n_gpus_per_node=1",
        "trainer.nnodes=1",
        *extra,
    ]


def tau2_normal(tokenizer_dir, out_dir, root, *extra: str) -> list[str]:
    """:func:`base` for the normal-mode rows and tool config ``prepare tau2`` wrote to ``out_dir`` (data: ``root``)."""
    t2 = "+actor_rollout_ref.rollout.custom.tau2"
    return base(
        tokenizer_dir,
        out_dir,
        *extra,
        f"+reward.reward_kwargs.tau2.data_dir={root}",
        f"actor_rollout_ref.rollout.multi_turn.tool_config_path={out_dir}/tool_config.yaml",
        "actor_rollout_ref.rollout.multi_turn.enable=True",
        "actor_rollout_ref.rollout.agent.default_agent_loop=tau2_agent",
        "data.return_raw_chat=True",
        f"{t2}.user.backend=scripted",
        f"{t2}.data_dir={root}",
    )


def run_check(capsys, overrides: list[str], verbose: bool = True) -> tuple[int, str, str]:
    code = main(["check", *(["-v"] if verbose else []), "--", *overrides])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("verl-rewards check:")]
    assert len(lines) == 1, err[-3000:]
    return lines[0]


def test_a_good_config_prints_the_manager_loop_data_and_routing(capsys, small_tokenizer_dir, rlla):
    code, out, err = run_check(capsys, base(small_tokenizer_dir, rlla, "reward.reward_kwargs.contribution.type=none"))
    assert code == 0, err[-3000:]
    assert out.startswith("verl-rewards check: ok")
    assert "V1 PPOTrainerSync (trainer_mode=sync)" in out
    assert "reward manager: contribution (ContributionRewardManager); contribution: none" in out
    assert f"data.train_files: {rlla}/train.parquet (24 rows)" in out
    assert "rlla (48 rows) -> the toolrl family" in out
    assert "contribution: rlla" not in out


@pytest.mark.parametrize("kind", ["C0", "C1", "C2"])
def test_a_term_that_can_never_fire_is_one_line_naming_the_data_source_and_the_fix(
    capsys, small_tokenizer_dir, rlla, kind
):
    """ToolRL's rows are played by verl's single_turn_agent, which records no step dicts: C-0 / C-1 / C-2 would
    add 0 to every sample."""
    code, out, err = run_check(
        capsys, base(small_tokenizer_dir, rlla, f"reward.reward_kwargs.contribution.type={kind}")
    )
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith("verl-rewards check: error: contribution: data source 'rlla': agent loop single_turn_agent")
    assert f"{kind.lower()} ({kind}," in line and "can never fire" in line
    assert "reward.reward_kwargs.contribution.type=none" in line and "tau2_agent" in line


def test_a_critic_term_needs_a_critic(capsys, small_tokenizer_dir, rlla, tmp_path):
    from verl_rewards.cpu.model import build_tiny_qwen2

    tiny_model = build_tiny_qwen2(tmp_path / "critic", [])
    critic = ["reward.reward_kwargs.contribution.type=C1", "+reward.reward_kwargs.contribution.value_source=critic"]
    code, out, err = run_check(capsys, base(small_tokenizer_dir, rlla, *critic))
    assert code == 2
    line = one_line(err)
    assert line.startswith(
        "verl-rewards check: error: contribution: reward.reward_kwargs.contribution: term(s) c1 read the critic"
    )
    assert "algorithm.adv_estimator=grpo" in line and "algorithm.adv_estimator=gae" in line
    gae = [
        "algorithm.adv_estimator=gae",
        "critic.ppo_micro_batch_size_per_gpu=1",
        f"critic.model.path={tiny_model}",
    ]
    code, out, err = run_check(capsys, base(small_tokenizer_dir, rlla, *critic, *gae))
    assert code == 0, err[-3000:]
    assert "contribution: c1 from the critic's values (added before the advantage)" in out


def test_without_verbose_a_good_config_prints_its_verdict_alone(capsys, small_tokenizer_dir, rlla):
    no_terms = "reward.reward_kwargs.contribution.type=none"  # rlla rows record no step dicts (stage contribution)
    code, out, err = run_check(capsys, base(small_tokenizer_dir, rlla, no_terms), verbose=False)
    assert code == 0, err[-3000:]
    assert len(out.splitlines()) == 1 and out.startswith("verl-rewards check: ok ("), out[-3000:]


def test_an_unknown_trainer_mode_lists_the_usable_modes_not_the_retired_ones(capsys, small_tokenizer_dir, rlla):
    code, out, err = run_check(capsys, base(small_tokenizer_dir, rlla, "trainer.v1.trainer_mode=nope"))
    line = one_line(err)
    assert code == 2 and line.startswith("verl-rewards check: error: trainer: ValueError: "), err[-3000:]
    assert "'sync'" in line and "reward_extra" not in line


@pytest.mark.parametrize(
    ("extra", "stage", "message"),
    [
        (["reward.reward_kwargs.contribution.type=C3"], "reward manager", "unknown contribution type 'C3'"),
        (["+reward.reward_kwargs.toolrl.with_length=maybe"], "reward manager", "'with_length' must be a boolean"),
        (["reward.reward_kwargs.timeot_s=5"], "compose", "timeot_s"),
        (["+reward.reward_kwargs.timeot_s=5"], "reward manager", "unknown key(s) ['timeot_s']"),
        (["reward.reward_manager.name=contributon"], "reward manager", "contributon"),
        (["reward.custom_reward_function.path=/nonexistent/fn.py"], "reward manager", "/nonexistent/fn.py"),
        (["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=null"], "validate_config", "ppo_micro_batch_size"),
        (["trainer.v1.trainer_mode=sync_reward_extra"], "trainer", "sync_reward_extra"),
        (["actor_rollout_ref.rollout.agent.default_agent_loop=tau2_agnt"], "agent loop", "'tau2_agnt'"),
        (["actor_rollout_ref.rollout.agent.default_agent_loop=tau2_agent"], "agent loop tau2_agent", "user.backend"),
        (["actor_rollout_ref.rollout.multi_turn.tool_config_path=/nonexistent.yaml"], "tools", "/nonexistent.yaml"),
        (["data.val_files=/nonexistent/test.parquet"], "data", "/nonexistent/test.parquet does not exist"),
        (["+reward.reward_kwargs.reward_fn_by_source={rlla: nope}"], "reward manager", "nope"),
    ],
    ids=[
        "contrib-C3",
        "toolrl-option",
        "hydra-key-typo",
        "reward_kwargs-typo",
        "manager-name-typo",
        "custom-fn-missing",
        "verl-validate_config",
        "retired-trainer-mode",
        "agent-loop-typo",
        "tau2-loop-without-user",
        "tool-config-missing",
        "data-missing",
        "unknown-reward",
    ],
)
def test_a_start_up_error_is_one_line_naming_its_stage(capsys, small_tokenizer_dir, rlla, extra, stage, message):
    code, out, err = run_check(capsys, base(small_tokenizer_dir, rlla, *extra))
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"verl-rewards check: error: {stage}: "), line
    assert message in line, line


@pytest.fixture(scope="module")
def first_step(rlla, tmp_path_factory):
    """What crashed the first step while ``check`` passed: a row naming an unregistered reward in extra_info, a reward
    with a required parameter nothing provides, modules that call sys.exit at import."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path_factory.mktemp("first_step")
    rows = pq.read_table(rlla / "train.parquet").to_pylist()
    rows[3]["extra_info"] = {**rows[3]["extra_info"], "reward_fn": "qa_emm"}
    (out / "badfn").mkdir()
    for split in ("train", "test"):
        pq.write_table(pa.Table.from_pylist(rows), out / "badfn" / f"{split}.parquet")
    (out / "needs.py").write_text(
        "from verl_rewards.rewards.decorators import reward\n\n\n"
        "@reward(name='check_needs_rubric')\n"
        "def needs_rubric(final_response: str, rubric: str) -> float:\n"
        "    return float(rubric in final_response)\n"
    )
    (out / "exits.py").write_text("import sys\n\nsys.exit(3)\n")
    return out


FIRST_STEP = {
    "row-reward_fn": (
        ["data.train_files={d}/badfn/train.parquet", "data.val_files={d}/badfn/test.parquet"],
        "routing",
        "badfn/train.parquet row 3: extra_info.reward_fn 'qa_emm' is not a registered reward",
    ),
    "required-parameter": (
        ["+reward.reward_kwargs.modules=[{d}/needs.py]", "+reward.reward_kwargs.reward_fn=check_needs_rubric"],
        "inputs",
        "train.parquet row 0 (rlla): reward 'check_needs_rubric' requires ['rubric']",
    ),
    "score_kwargs-rubric": (  # the same reward with the constant: passes
        [
            "+reward.reward_kwargs.modules=[{d}/needs.py]",
            "+reward.reward_kwargs.reward_fn=check_needs_rubric",
            "+reward.reward_kwargs.score_kwargs.rubric=x",
        ],
        None,
        "rows: 48 read: reward_fn fields, the inputs of 48 one-turn rows' rewards, load options",
    ),
    "adv_estimator": (["algorithm.adv_estimator=grpoo"], "algorithm", "algorithm.adv_estimator='grpoo' is not an"),
    "nl-judge": (
        ["+reward.reward_kwargs.tau2.nl_policy=require"],
        "reward manager",
        "needs reward.reward_kwargs.tau2.judge",
    ),
    "score_kwargs-input": (
        ["+reward.reward_kwargs.score_kwargs.ground_truth=42"],
        "reward manager",
        "score_kwargs.ground_truth: ['ground_truth'] are per-sample inputs",
    ),
    "sys.exit-module": (
        ["+reward.reward_kwargs.modules=[{d}/exits.py]"],
        "reward manager",
        "exits.py: it called sys.exit(3) at import",
    ),
    "sys.exit-custom-fn": (
        ["reward.custom_reward_function.path={d}/exits.py"],
        "reward manager",
        "a module it imports called sys.exit(3) at import",
    ),
}


@pytest.mark.parametrize("case", list(FIRST_STEP))
def test_what_crashes_the_first_step_is_one_line_naming_the_key_or_row(
    capsys, small_tokenizer_dir, rlla, first_step, case
):
    extra, stage, message = FIRST_STEP[case]
    no_contribution = "reward.reward_kwargs.contribution.type=none"  # single-turn rows record no step dicts
    given = (e.format(d=first_step) for e in extra)
    code, out, err = run_check(capsys, base(small_tokenizer_dir, rlla, no_contribution, *given))
    if stage is None:
        assert code == 0 and message in out, err[-3000:]
        return
    assert code == 2 and out == "", err[-3000:]
    line = one_line(err)
    assert line.startswith(f"verl-rewards check: error: {stage}: "), line
    assert message in line, line


def test_tau2_normal_mode_checks_tools_loop_settings_and_routing(capsys, small_tokenizer_dir, tmp_path):
    from verl_rewards.tau2.data import prepare_tau2

    root = require_domain("airline").data_dir.parent
    out_dir = tmp_path / "airline"
    prepare_tau2(root, "airline", out_dir, ["train", "test"], mode="normal")
    t2 = "+actor_rollout_ref.rollout.custom.tau2"
    overrides = tau2_normal(small_tokenizer_dir, out_dir, root)
    code, out, err = run_check(capsys, overrides)
    assert code == 0, err[-3000:]
    assert f"tools: 14 from {out_dir}/tool_config.yaml" in out
    assert "agent loop: tau2_agent (user: scripted)" in out
    assert "tau2/airline (50 rows) -> the tau2 family" in out
    assert "contribution: tau2/airline: step dicts from agent loop tau2_agent" in out
    # without -v: the verdict line alone, none of the tool schemas verl prints while it builds the tools
    code, out, err = run_check(capsys, overrides, verbose=False)
    assert code == 0 and len(out.splitlines()) == 1 and len(err.splitlines()) < 20, (out + err)[-3000:]
    # the same run with a user-backend typo fails on the loop's own settings
    overrides[-2] = f"{t2}.user.backend=scriptd"
    code, out, err = run_check(capsys, overrides)
    assert code == 2 and "agent loop tau2_agent: " in one_line(err) and "'scriptd'" in err


def test_a_real_run_stops_where_the_trainer_builds_the_reward_loop_manager():
    """``main_ppo``'s task runner builds verl's ``RewardLoopManager`` before any reward worker: the plugin makes it
    reject what every worker's manager build would reject, instead of the workers failing one by one."""
    from verl.experimental.reward_loop import RewardLoopManager

    from verl_rewards import plugin
    from verl_rewards.manager import ManagerConfigError
    from verl_rewards.manager.config import check_trainer_config
    from verl_rewards.verl_config import compose_config

    assert plugin.STATUS["manager_startup_check"] == "ok"
    bad = compose_config(["reward.reward_manager.name=contribution", "+reward.reward_kwargs.contribution.type=C3"])
    with pytest.raises(ManagerConfigError, match="unknown contribution type 'C3'"):
        RewardLoopManager(bad)  # raises before Ray is touched
    bad_section = compose_config(
        ["reward.reward_manager.name=contribution", "+reward.reward_kwargs.tau_bench.data_dir=/nonexistent"]
    )
    with pytest.raises(ManagerConfigError, match="tau_bench.data_dir"):
        RewardLoopManager(bad_section)
    check_trainer_config(compose_config(["reward.reward_manager.name=contribution"]))  # a good config passes
    # another manager's kwargs are its own business
    check_trainer_config(compose_config(["reward.reward_manager.name=naive", "+reward.reward_kwargs.anything=1"]))


@pytest.mark.slow
def test_check_1_in_a_recipe_names_c3(tmp_path):
    """The issue's case: ``CONTRIB_TYPE=C3`` composed without complaint; ``CHECK=1`` names it, one line, exit 2."""
    env = {k: v for k, v in os.environ.items() if k not in ("CONTRIBUTION", "CONTRIB_TYPE", "BETA", "MODE")}
    env.update(CHECK="1", CONTRIBUTION="1", CONTRIB_TYPE="C3", DATA_DIR=str(tmp_path))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(
        ["bash", str(REPO / "recipes/toolrl_grpo/run_toolrl_grpo.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(REPO),
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    line = one_line(proc.stderr)
    assert line.startswith("verl-rewards check: error: reward manager: ") and "'C3'" in line
    assert proc.stdout == ""


def test_tau2_solo_mode_gets_its_step_dicts_from_the_tools(capsys, small_tokenizer_dir, tmp_path):
    from verl_rewards.tau2.data import prepare_tau2

    root = require_domain("airline").data_dir.parent
    out_dir = tmp_path / "airline_solo"
    prepare_tau2(root, "airline", out_dir, ["train", "test"], mode="solo")
    tools = [
        f"actor_rollout_ref.rollout.multi_turn.tool_config_path={out_dir}/tool_config.yaml",
        "actor_rollout_ref.rollout.multi_turn.enable=True",
        "data.return_raw_chat=True",
    ]
    c1 = ["reward.reward_kwargs.contribution.type=C1", f"+reward.reward_kwargs.tau2.data_dir={root}"]
    code, out, err = run_check(capsys, base(small_tokenizer_dir, out_dir, *c1, *tools))
    assert code == 0, err[-3000:]
    assert "contribution: tau2/airline: step dicts from agent loop tool_agent with the tau2 tools" in out
    # a C-2 term whose potential no loop records can never fire either
    c2 = ["reward.reward_kwargs.contribution.type=C2", "+reward.reward_kwargs.contribution.potential_key=phi"]
    code, out, err = run_check(capsys, base(small_tokenizer_dir, out_dir, *c2, *tools))
    line = one_line(err)
    assert code == 2 and "data source 'tau2/airline': agent loop tool_agent with the tau2 tools records only" in line
    assert "c2 (C2, reads phi)" in line


def test_rows_asking_for_an_endpoint_a_credential_or_a_cache_folder_are_refused(capsys, small_tokenizer_dir, tmp_path):
    """Rows are data, configs are code: the issue's row passed ``check``, and at run time the worker posted the
    knowledge base to the row's URL. The same dataset without those keys passes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from verl_rewards.tau2.data import prepare_tau2

    root = require_domain("banking_knowledge").data_dir.parent
    out_dir = tmp_path / "bank"
    prepare_tau2(root, "banking_knowledge", out_dir, ["all"], retrieval="bm25")
    overrides = tau2_normal(
        small_tokenizer_dir,
        out_dir,
        root,
        f"data.train_files={out_dir}/all.parquet",
        f"data.val_files={out_dir}/all.parquet",
    )
    code, out, err = run_check(capsys, overrides)
    assert code == 0, err[-3000:]
    assert "tau2/banking_knowledge (194 rows) -> the tau2 family" in out
    rows = pq.read_table(out_dir / "all.parquet").to_pylist()
    asks = {"embeddings_base_url": "http://127.0.0.1:9/v1", "embeddings_api_key_env": "MY_SECRET_TOKEN"}
    rows[5]["extra_info"]["domain_options"] = {**rows[5]["extra_info"]["domain_options"], **asks}
    pq.write_table(pa.Table.from_pylist(rows), out_dir / "all.parquet")
    code, out, err = run_check(capsys, overrides)
    line = one_line(err)
    assert code == 2 and line.startswith("verl-rewards check: error: data: data.train_files: "), line
    assert (
        "all.parquet row 5: extra_info.domain_options asks for ['embeddings_api_key_env', 'embeddings_base_url']"
        in line
    )
    assert "set them in the tool config's domain_options" in line
