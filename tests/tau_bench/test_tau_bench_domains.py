"""tau-bench (v1) retail and airline on tau-bench's own data: hashes, tools, reward, user simulator prompt.

Expected tool outputs and hashes were produced by running tau-bench's own code (sierra-research/tau-bench
59a200c) on the shipped data and are pinned here as facts; ``gold_data_hashes.json`` ships tau-bench's hashes.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from verl_rewards.tau_bench import STOP_TOKEN, load_domain, tau_bench_reward, user_system_prompt
from verl_rewards.tau_bench.user import GREETING, user_history

from tau_bench_support import call_message, gold_calls, gold_hashes, gold_trajectory, require_domain, trajectory

PROMPT_SHA256 = "2bf7376aff730d1e615a73f908c20560f9be03764dc1d44aeeb2a4f3eaf40741"  # tau-bench's, instruction "INSTR"
BARE_PROMPT_SHA256 = "e91c58ad775ec163b5268895820e52a1ee2945683f8e0cec29ada50ba260fef3"  # without an instruction
SPLIT_SIZES = {"retail": {"train": 500, "test": 115, "dev": 20}, "airline": {"test": 50}}


@pytest.fixture(scope="module")
def retail():
    return require_domain("retail")


@pytest.fixture(scope="module")
def airline():
    return require_domain("airline")


def _domains(retail, airline):
    return {"retail": retail, "airline": airline}


# ------------------------------------------------------------------------------------------- data and hash
def test_initial_and_every_gold_hash_equal_tau_benchs(retail, airline):
    checked = 0
    for name, domain in _domains(retail, airline).items():
        want = gold_hashes(domain)
        assert {s: len(ids) for s, ids in domain.splits.items()} == SPLIT_SIZES[name]
        assert domain.make_env().get_data_hash() == want["initial_data_hash"]
        for split, ids in domain.splits.items():
            assert [domain.gold_hash(t) for t in ids] == want[f"gold_{split}"], (name, split)
            checked += len(ids)
    assert checked == 685


def test_gold_trajectory_of_every_task_scores_one(retail, airline):
    for domain in (retail, airline):
        for task_id in domain.tasks:
            result = tau_bench_reward(domain, task_id, gold_trajectory(domain, task_id))
            assert result.reward == 1.0, (domain.name, task_id, result.info, result.details)
            task = domain.task(task_id)
            if task.outputs:
                assert result.info == {"r_outputs": 1.0, "outputs": dict.fromkeys(task.outputs, True)}
            else:
                assert result.info == {"r_actions": 1.0, "gt_data_hash": domain.gold_hash(task_id)}
            # scoring replays on a fresh episode: the cached gold state and the shared base stay as they were
            assert domain.gold_hash(task_id) == gold_hashes(domain)[f"gold_{task.split}"][task.index]


def _last_effective_write(domain, task_id):
    """Index (in gold_calls) of the last gold write that succeeded (so changed the data), or None."""
    env = domain.make_env(task_id)
    kinds = domain.tool_kinds()
    last = None
    for i, (name, args) in enumerate(gold_calls(domain, task_id)):
        if not env.step(name, args).startswith("Error:") and kinds.get(name) == "write":
            last = i
    return last


def test_dropping_the_last_write_scores_zero(retail, airline):
    dropped = 0
    for domain in (retail, airline):
        for task_id in domain.tasks:
            last = _last_effective_write(domain, task_id)
            if last is None:
                continue
            calls = gold_calls(domain, task_id)
            outputs = domain.task(task_id).outputs
            messages = trajectory(domain, task_id, calls[:last] + calls[last + 1 :], final=" ".join(outputs) or "ok")
            result = tau_bench_reward(domain, task_id, messages)
            assert result.reward == 0.0 and result.details["r_actions"] == 0.0, (domain.name, task_id)
            dropped += 1
    assert dropped == 685 - 5 - 11 - 1 - 20  # every task whose gold changes the data


def test_hash_counts_types_order_and_absent_keys(airline):
    env = airline.make_env()
    assert env.step("send_certificate", {"user_id": "mia_li_3668", "amount": 100}) == (
        "Certificate certificate_3221322 added to user mia_li_3668 with amount 100."
    )
    assert env.get_data_hash() == "23f5024909f362d714a1d35be38e819e8c909dcd6c268fc70ad6b9df93ff923c"
    assert env.step("send_certificate", {"user_id": "mia_li_3668", "amount": 100.0}).endswith("amount 100.0.")
    assert env.get_data_hash() == "d7fdc560d153e66728dde369e2ddbe179975d5ede67bd88fc8e09940fcab3d55"
    other = airline.make_env()
    other.step("send_certificate", {"user_id": "mia_li_3668", "amount": 100.0})
    assert other.get_data_hash() != "23f5024909f362d714a1d35be38e819e8c909dcd6c268fc70ad6b9df93ff923c"  # 100 != 100.0
    cancel = airline.make_env()
    out = json.loads(cancel.step("cancel_reservation", {"reservation_id": "NO6JO3"}))
    assert out["status"] == "cancelled" and list(out)[-1] == "status"  # the key is added, at the end
    assert out["payment_history"][-1] == {"payment_id": "credit_card_1955700", "amount": -2504}
    assert cancel.get_data_hash() == "c2a59ad1905fce1debe673bffc7318cdd412e537c3368023ed7efb5e9b8741fc"
    assert airline.make_env().get_data_hash() == gold_hashes(airline)["initial_data_hash"]  # base untouched


# ------------------------------------------------------------------------------------------------ tools
@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("10/3", "3.33"),
        ("2 * 3", "6.0"),
        ("2**3", "8.0"),
        (" 1+1", "2.0"),
        ("-(3)", "-3.0"),
        ("2.675", "2.67"),
        ("1e3", "Error: invalid characters in expression"),
        ("1/0", "Error: division by zero"),
        ("1//0", "Error: integer division or modulo by zero"),
        ("", "Error: invalid syntax (<string>, line 0)"),
        ("()", "Error: float() argument must be a string or a real number, not 'tuple'"),
        ("(1)(2)", "Error: 'int' object is not callable"),
        ("((1)", "Error: '(' was never closed (<string>, line 1)"),
        (
            "01",
            "Error: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal "
            "integers (<string>, line 1)",
        ),
    ],
)
def test_calculate_matches_tau_bench_without_eval(retail, expression, expected):
    assert retail.make_env().step("calculate", {"expression": expression}) == expected


def test_calculate_bounds_huge_powers(retail):
    assert retail.make_env().step("calculate", {"expression": "9**9**9"}).startswith("Error: integer larger than")


def test_retail_tool_outputs_and_errors(retail):
    env = retail.make_env()
    step = env.step
    assert step("find_user_id_by_email", {"email": "NOAH.BROWN7922@EXAMPLE.COM"}) == "noah_brown_6181"
    assert step("find_user_id_by_name_zip", {"first_name": "noah", "last_name": "BROWN", "zip": "80279"}) == (
        "noah_brown_6181"
    )
    user = step("get_user_details", {"user_id": "noah_brown_6181"})
    assert user.startswith(
        '{"name": {"first_name": "Noah", "last_name": "Brown"}, "address": {"address1": '
        '"986 Sunset Drive", "address2": "Suite 259", "city": "Denver", "country"'
    )
    assert "user_id" not in json.loads(user)
    assert step("get_user_details", {"user_id": "nope"}) == "Error: user not found"
    assert step("get_product_details", {"product_id": "6086499569"}) == "Error: product not found"
    assert step("list_all_product_types", {}).startswith('{"Action Camera": "3377618313", "Air Purifier": "3821016478"')
    assert step("get_order_details", {"order_id": ["x"]}) == "Error: unhashable type: 'list'"
    assert step("find_user_id_by_email", {"email": 5}) == "Error: 'int' object has no attribute 'lower'"
    assert step("cancel_pending_order", {"order_id": "#W0000000", "reason": "no longer needed"}) == (
        "Error: order not found"
    )
    # Python's own messages for wrong parameter names, with tau-bench's class names
    assert step("get_user_details", {}) == (
        "Error: GetUserDetails.invoke() missing 1 required positional argument: 'user_id'"
    )
    assert step("get_user_details", {"user_id": "x", "foo": 1}) == (
        "Error: GetUserDetails.invoke() got an unexpected keyword argument 'foo'"
    )
    assert step("get_user_details", {"data": 1, "user_id": "x"}) == (
        "Error: tau_bench.envs.retail.tools.get_user_details.GetUserDetails.invoke() got multiple values for "
        "keyword argument 'data'"
    )
    assert step("modify_user_address", {"user_id": "x"}) == (
        "Error: ModifyUserAddress.invoke() missing 6 required positional arguments: 'address1', 'address2', "
        "'city', 'state', 'country', and 'zip'"
    )
    assert step("think", {"thought": "x"}) == ""
    assert step("nope", {}) == "Unknown action nope"
    assert step("transfer_to_human_agents", {}) == (
        "Error: TransferToHumanAgents.invoke() missing 1 required positional argument: 'summary'"
    )
    assert env.done  # any transfer call ends the episode
    assert env.get_data_hash() == gold_hashes(retail)["initial_data_hash"]  # nothing above wrote
    assert [a["error"] for a in env.actions][-3:] == [False, True, True]


def test_retail_v1_semantics_differ_from_tau2(retail):
    # train/7: modify_pending_order_items stores the unrounded price difference
    env = retail.make_env("train/7")
    for name, args in gold_calls(retail, "train/7"):
        env.step(name, args)
    order_id = retail.task("train/7").actions[0]["kwargs"]["order_id"]
    text = env.step("get_order_details", {"order_id": order_id})
    assert '"amount": 173.82999999999993' in text and '"status": "pending (item modified)"' in text
    # v1 needs exactly "pending": a modified order cannot be modified again
    assert env.step(
        "modify_pending_order_address",
        {"order_id": order_id, "address1": "a", "address2": "b", "city": "c", "state": "d", "country": "e", "zip": "f"},
    ) == ("Error: non-pending order cannot be modified")


def test_airline_tool_outputs_and_quirks(airline):
    env = airline.make_env()
    step = env.step
    assert step("list_all_airports", {}).startswith('{"SFO": "San Francisco", "JFK": "New York", "LAX": ')
    assert step("get_reservation_details", {"reservation_id": "ZZZZZZ"}) == "Error: user not found"  # sic
    direct = json.loads(step("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}))
    assert direct[0]["flight_number"] == "HAT069" and list(direct[0])[:3] == ["flight_number", "origin", "destination"]
    assert "dates" not in direct[0] and "date" not in direct[0]
    legs = json.loads(step("search_onestop_flight", {"origin": "LGA", "destination": "SFO", "date": "2024-05-20"}))
    first, second = next(pair for pair in legs if [p["flight_number"] for p in pair] == ["HAT002", "HAT009"])
    assert (first["date"], second["date"]) == ("2024-05-20", "2024-05-21")
    hat009 = airline.base_db.data["flights"]["HAT009"]["dates"]
    assert second["prices"] == hat009["2024-05-20"]["prices"]  # leg two shows the first day's data (quirk)
    assert step("search_onestop_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-xx"}) == "[]"
    assert step("update_reservation_passengers", {"reservation_id": "NO6JO3", "passengers": []}) == (
        "Error: number of passengers does not match"
    )
    booking = {
        "user_id": "mia_li_3668",
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": "first",
        "flights": [{"flight_number": "HAT069", "date": "2024-05-20"}],
        "passengers": [{"first_name": "a", "last_name": "b", "dob": "1990-01-01"}],
        "payment_methods": [{"payment_id": "x", "amount": 1}],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    assert step("book_reservation", booking) == "Error: 'first'"  # a KeyError on the unknown cabin


def test_fourth_certificate_crashes_the_episode_and_scores_zero(airline):
    env = airline.make_env("test/0")
    for amount in (100, 100.0, 5):
        assert env.step("send_certificate", {"user_id": "mia_li_3668", "amount": amount}).startswith("Certificate")
    assert env.get_data_hash() == "47869b8a83dbaf406962cf40c41937b63d66298cb2a0ea0f12996dd774bc3bb3"
    assert env.step("send_certificate", {"user_id": "mia_li_3668", "amount": 1}).startswith("Error: tool send_cert")
    assert env.crashed
    calls = [("send_certificate", {"user_id": "mia_li_3668", "amount": a}) for a in (1, 2, 3, 4)]
    result = tau_bench_reward(airline, "test/0", trajectory(airline, "test/0", calls))
    assert result.reward == 0.0 and result.details["crash"]


def test_deeply_nested_arguments_are_refused_not_run(airline):
    env = airline.make_env("test/0")
    deep: object = "x"
    for _ in range(500):
        deep = [deep]
    passengers = [{"first_name": deep, "last_name": "Li", "dob": "1990-04-05"}]
    observation = env.step("update_reservation_passengers", {"reservation_id": "NO6JO3", "passengers": passengers})
    assert observation.startswith("Error: arguments of update_reservation_passengers nest deeper than 100 levels")
    assert env.crashed and env.get_data_hash() == gold_hashes(airline)["initial_data_hash"]


# ----------------------------------------------------------------------------------------------- reward
def test_outputs_rule(retail):
    task_id = "test/19"  # outputs 54.04 and 41.64, gold ends with a return
    task = retail.task(task_id)
    assert list(task.outputs) == ["54.04", "41.64"]
    calls = gold_calls(retail, task_id)

    def score(*texts: str, tail: list | None = None) -> object:
        messages = trajectory(retail, task_id, calls, final=None)
        messages += [{"role": "assistant", "content": t} for t in texts] + (tail or [])
        return tau_bench_reward(retail, task_id, messages)

    ok = score("Refunds: $54.04 AND $41.64.")
    assert ok.reward == 1.0 and ok.info == {"r_outputs": 1.0, "outputs": {"54.04": True, "41.64": True}}
    split = score("The first is 54.04.", "The second is 41.64.")  # each output in its own message: fine
    assert split.reward == 1.0
    one = score("Only 54.04 here.")
    assert one.reward == 0.0 and one.info == {"r_outputs": 0.0, "outputs": {"54.04": True, "41.64": False}}
    assert "r_actions" not in one.info and one.details["r_actions"] == 1.0 and one.details["outputs_found"] == 0.5
    # commas are removed from the message only
    assert score("5,4.04 and 4,1.64").reward == 1.0
    # text sent along with a tool call never reaches the user; user text does not count either
    with_call = trajectory(retail, task_id, calls, final=None)
    with_call.append(call_message("think", {"thought": "54.04 41.64"}, "t", content="54.04 41.64"))
    with_call += [
        {"role": "tool", "tool_call_id": "t", "content": ""},
        {"role": "user", "content": "54.04 41.64"},
        {"role": "assistant", "content": "Done."},
    ]
    assert tau_bench_reward(retail, task_id, with_call).info["r_outputs"] == 0.0


def test_thousands_separator_matches(retail):
    task_id = "test/16"  # output 8276.23
    messages = trajectory(retail, task_id, gold_calls(retail, task_id), final="Your refund is $8,276.23 in total.")
    assert tau_bench_reward(retail, task_id, messages).reward == 1.0


def test_wrong_data_scores_zero_and_reports_the_gold_hash(retail):
    messages = trajectory(retail, "dev/0", [], final="Sorry.")
    result = tau_bench_reward(retail, "dev/0", messages)
    assert result.reward == 0.0
    assert result.info == {"r_actions": 0.0, "gt_data_hash": gold_hashes(retail)["gold_dev"][0]}
    assert result.actions == [dict(a) for a in retail.task("dev/0").actions]


def test_episode_end_rules(retail):
    task_id = "dev/0"
    calls = gold_calls(retail, task_id)
    # no final text reply: the agent ran out of turns, no reward
    unfinished = trajectory(retail, task_id, calls, final=None)
    result = tau_bench_reward(retail, task_id, unfinished)
    assert result.reward == 0.0 and result.details["done"] is False and result.details["r_actions"] == 1.0
    assert tau_bench_reward(retail, task_id, unfinished, terminated=True).reward == 1.0
    # a user ###STOP### (normal mode) ends it, even with the user having the last word
    stopped = [*unfinished, {"role": "assistant", "content": "Done."}, {"role": "user", "content": f"Ok {STOP_TOKEN}"}]
    assert tau_bench_reward(retail, task_id, stopped).details["ended_by"] == "user_stop"
    # a transfer ends it at once: later calls are not part of the episode
    transfer = trajectory(retail, task_id, [("transfer_to_human_agents", {"summary": "s"}), *calls], final="x")
    result = tau_bench_reward(retail, task_id, transfer)
    assert result.details["ended_by"] == "transfer" and result.details["r_actions"] == 0.0 and result.reward == 0.0


def test_unknown_task_and_domain_errors(retail, tmp_path):
    with pytest.raises(KeyError, match="'<split>/<index>'"):
        retail.task("7")
    with pytest.raises(KeyError, match="unknown tau-bench domain"):
        load_domain("telecom", tmp_path)
    with pytest.raises(FileNotFoundError, match="tau-bench data for domain 'retail' not found"):
        load_domain("retail", tmp_path)


# ------------------------------------------------------------------------------------------ user simulator
def test_user_simulator_prompt_is_tau_benchs():
    prompt = user_system_prompt("INSTR")
    assert len(prompt) == 847
    assert hashlib.sha256(prompt.encode()).hexdigest() == PROMPT_SHA256
    assert hashlib.sha256(user_system_prompt(None).encode()).hexdigest() == BARE_PROMPT_SHA256
    assert "satisified" in prompt
    assert prompt.startswith("You are a user interacting with an agent.\n\nInstruction: INSTR\n")
    history = user_history("INSTR", ["How can I help?"], ["I want a refund.", "###STOP###"])
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user", "assistant"]
    assert history[1]["content"] == GREETING and history[3]["content"] == "How can I help?"
    pending = user_history("INSTR", ["How can I help?"], ["I want a refund."])
    assert pending[-1] == {"role": "user", "content": "How can I help?"}
    with pytest.raises(ValueError):
        user_history("INSTR", ["a", "b"], ["r"])


def test_rows_carry_the_gold_hash_and_the_reward_reads_it_back():
    """``prepare`` writes every task's ``gt_data_hash`` (equal to tau-bench's own, all 685 tasks); the scorer reads
    it back, so a first call for a task hashes no DB (the domain's hash cache stays empty)."""
    from verl_rewards.tau_bench.data import task_row
    from verl_rewards.tau_bench.domain import TauBenchDomain
    from verl_rewards.tau_bench.verl_scorer import TauBenchOptions, gold_hash_of, score_tau_bench

    checked = 0
    for name in ("retail", "airline"):
        built = TauBenchDomain(name, require_domain(name).data_dir)
        want = gold_hashes(built)
        for split, ids in built.splits.items():
            rows = [task_row(built, built.task(t), i, str(built.data_dir), "instruction") for i, t in enumerate(ids)]
            assert [gold_hash_of(r["reward_model"]["ground_truth"]) for r in rows] == want[f"gold_{split}"]
            checked += len(rows)
    assert checked == 685
    retail = require_domain("retail")
    scorer_domain = load_domain("retail", retail.data_dir)
    task_id = next(t for t in retail.split("test") if not retail.task(t).outputs)
    row = task_row(retail, retail.task(task_id), 0, str(retail.data_dir), "instruction")
    before = dict(scorer_domain._gold_hashes)
    messages = gold_trajectory(retail, task_id)
    options = TauBenchOptions(data_dir=str(retail.data_dir))
    scored = score_tau_bench(
        messages, "tau_bench/retail", row["reward_model"]["ground_truth"], row["extra_info"], options
    )
    assert scored["reward"] == 1.0 and scored["tb_r_actions"] == 1.0
    fresh = TauBenchDomain("retail", retail.data_dir)
    result = tau_bench_reward(fresh, task_id, messages, gold_hash=gold_hash_of(row["reward_model"]["ground_truth"]))
    assert result.info == {"r_actions": 1.0, "gt_data_hash": want_hash(retail, task_id)}
    assert fresh._gold_hashes == {} and scorer_domain._gold_hashes == before  # no full hash on the scoring path
    assert gold_hash_of({"task_id": task_id}) is None and gold_hash_of('{"gt_data_hash": "short"}') is None


def want_hash(domain, task_id):
    task = domain.task(task_id)
    return gold_hashes(domain)[f"gold_{task.split}"][task.index]
