"""Tests of the tau2 airline domain (verl_rewards.tau2.domains.airline) on the real tau2-bench airline data.

Expected hashes were computed once with tau2-bench's own airline toolkit (pydantic ``FlightDB``) and its
``get_dict_hash``: the initial DB and the final DB of every task whose gold actions write.
"""

import copy
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from verl_rewards.engine.data_dir import TAU2_DATA
from verl_rewards.engine.state import BaseDB, DBState, canonical_json, dict_hash
from verl_rewards.engine.toolkit import Record, serialise_result
from verl_rewards.tau2.domains import airline
from verl_rewards.tau2.domains.airline import AgentTools, normalize_db
from verl_rewards.tau2.domains.common import MAX_EXPRESSION_LENGTH

from data_support import missing_reason
from tau2_support import tau2_data_dir, toolkit_fixtures

_ROOT = tau2_data_dir()
DATA = (_ROOT or Path("/nonexistent")) / "airline"
if not (DATA / "db.json").is_file():
    pytest.skip(missing_reason(TAU2_DATA, "domain airline"), allow_module_level=True)

INITIAL_HASH = "124e39a664b56402bcd09cb8a6a9cece6acb8462337c969799d5658e3250f263"
GOLD_FINAL_HASHES = {
    "7": "0087f8266f0f2fc2091ee4fabd9c137ed8b6c8751df09ec4f650756e4ae0ccf7",
    "8": "00766aa3e0341b497a623f93983c8d951b8d48ad541a15123a1e2b902e644a82",
    "11": "1e46d540ec2e530b9388347f5be682742e76f9c7cdd32c1c58438f765412f64f",
    "12": "df1e46c5aaf8af007c7b705ed14431b1d56c4b7d0dd53702f8623572cb047019",
    "14": "b4ea8effd45eee77a90b96a2b298a5dbe4e7d7fff9452c952f481f9a447facdf",
    "15": "c9500f3100906613e72517e64be2104316c21ff855888401fbb7dcf2a4dbeed2",
    "16": "c9500f3100906613e72517e64be2104316c21ff855888401fbb7dcf2a4dbeed2",
    "17": "37ea6df3bdb75dc6be08b9fc19909ddef8e0a58c7d56afeaf20781acfba3b871",
    "18": "361a067372a4d57d23d10cfc560ba8d24cfd10862bb079be2c0e180459cefbbf",
    "19": "e5defef608c9ccc36abb18a9cb995cc76f8941d8bd5aa6d24f52ab0a50fddc8d",
    "20": "a561da60bcd2e87ff0a34ebd4c74bfcfe5ca1d7e1e383f41fa6d5b8716d9128f",
    "21": "9ede9d0dc4363e33948ef484380eb7b640f02cfbfed1b6d2ba70bceacf29da73",
    "22": "37ea6df3bdb75dc6be08b9fc19909ddef8e0a58c7d56afeaf20781acfba3b871",
    "23": "b46d1bed5ba2b9865240d1073bc143e93d59be2c363ed26e1a45523e929e6e11",
    "24": "db03cad581503e6400695354ac16eb5033e4a1bfa1847020ede5f825db68c2da",
    "25": "d0579b8ae59e360f8b63f84a55ac00a27a8d51a175b42b2e997f1f056a83e363",
    "29": "55e7aa074a761cbd34fa82c9e24650c951b9cefd33e70e3a5568242602349aaa",
    "30": "dc171787dd84f7436c2ad66827f301e6cbdbe72167fcc1e3133dd08eb36778a5",
    "32": "caea57241d7ab9340f8762bdb11e90fada081b642b853acb48781dbf9cc8dc1f",
    "33": "735ba8f15206b7fbf570fe68bd92ea75d7dd5ea04c87d5a53296d70d103f7b74",
    "35": "e0c0bf3e578e820ad058da2ca469227b56e917ea9de97c724c0d983e6ef185b0",
    "37": "b659ba383c77f7e9d68a2909674e90c3a596b677053e19105e626571e6f2015d",
    "39": "964c9e1c81f8bf2571dc6b6053e9d0b7f10ad89b375456c8bc70ca96e5c7f4f5",
    "40": "96b61d516184b98eebc91d53fd4bb5a4b1e19198059980b803f38acf050a4c10",
    "42": "768a1bf6bcedc298cdf5f7ce0d7956a12bfd383adcdc6531e8ed1ebfc605374a",
    "44": "0c7887491b21baf58412e81b89295b6bddfb6c8ec0dff2ee6e69152f6c7d3296",
}
WRITE_TOOLS = {
    "book_reservation",
    "cancel_reservation",
    "update_reservation_flights",
    "update_reservation_baggages",
    "update_reservation_passengers",
    "send_certificate",
}

# A gold user with every kind of payment method: gift card 98.0, two 250.0 certificates, two credit cards.
MEI = "mei_hernandez_8984"
GIFT, CERT, CERT2, CARD = "gift_card_5309492", "certificate_7502997", "certificate_3321326", "credit_card_6082923"


# --------------------------------------------------------------------------------------------------------------
# fixtures: the 7 MB DB is loaded and normalised once per module
# --------------------------------------------------------------------------------------------------------------
raw, base, tasks, tk = toolkit_fixtures(DATA, normalize_db, AgentTools)


def _error(tk: AgentTools, name: str, args: dict[str, Any]) -> str:
    with pytest.raises(Exception) as info:
        tk.call(name, copy.deepcopy(args))
    return str(info.value)


def _replay(base: BaseDB, actions: list[dict[str, Any]]) -> tuple[AgentTools, list[tuple[str, str]]]:
    tk = AgentTools(DBState(base))
    errors = []
    for action in actions:
        try:
            tk.call(action["name"], copy.deepcopy(action["arguments"]))
        except Exception as exc:  # gold replay swallows errors, as tau2's evaluator does
            errors.append((action["name"], str(exc)))
    return tk, errors


# --------------------------------------------------------------------------------------------------------------
# module surface and tool registry
# --------------------------------------------------------------------------------------------------------------
def test_module_constants() -> None:
    assert airline.SPEC.name == "airline"
    assert airline.SPEC.files == {
        "db": "db.json",
        "policy": "policy.md",
        "tasks": "tasks.json",
        "split": "split_tasks.json",
    }
    assert airline.SPEC.terminate_tools == ("transfer_to_human_agents",)
    assert airline.SPEC.user_toolkit is None
    for name in airline.SPEC.files.values():
        assert (DATA / name).is_file()


EXPECTED_TOOLS = {
    "get_user_details": ("read", ["user_id"]),
    "get_reservation_details": ("read", ["reservation_id"]),
    "list_all_airports": ("read", []),
    "search_direct_flight": ("read", ["origin", "destination", "date"]),
    "search_onestop_flight": ("read", ["origin", "destination", "date"]),
    "get_flight_status": ("read", ["flight_number", "date"]),
    "book_reservation": (
        "write",
        [
            "user_id",
            "origin",
            "destination",
            "flight_type",
            "cabin",
            "flights",
            "passengers",
            "payment_methods",
            "total_baggages",
            "nonfree_baggages",
            "insurance",
        ],
    ),
    "cancel_reservation": ("write", ["reservation_id"]),
    "update_reservation_flights": ("write", ["reservation_id", "cabin", "flights", "payment_id"]),
    "update_reservation_baggages": ("write", ["reservation_id", "total_baggages", "nonfree_baggages", "payment_id"]),
    "update_reservation_passengers": ("write", ["reservation_id", "passengers"]),
    "send_certificate": ("write", ["user_id", "amount"]),
    "calculate": ("generic", ["expression"]),
    "transfer_to_human_agents": ("generic", ["summary"]),
}


def test_tool_registry_names_kinds_params_and_docstrings() -> None:
    specs = AgentTools.tool_specs()
    assert set(specs) == set(EXPECTED_TOOLS)
    for name, (kind, params) in EXPECTED_TOOLS.items():
        spec = specs[name]
        assert spec.kind == kind, name
        sig = inspect.signature(getattr(AgentTools, name))
        assert list(sig.parameters)[1:] == params, name
        for p in list(sig.parameters.values())[1:]:
            assert p.annotation is not inspect.Parameter.empty, (name, p.name)
        first_paragraph = spec.description.split("\n\n")[0]
        assert first_paragraph and "Args:" not in first_paragraph, name
        if params:
            args_section = spec.description.split("Args:")[1]
            for p in params:
                assert re.search(rf"^\s+{p}: \S", args_section, re.M), (name, p)
    assert {n for n, s in specs.items() if s.mutates_state} == WRITE_TOOLS


def test_airline_tasks_need_no_helper_functions(tasks: list[dict[str, Any]]) -> None:
    assert len(tasks) == 50
    for task in tasks:
        assert task["initial_state"] is None
        assert task["evaluation_criteria"].get("env_assertions") is None
        for action in task["evaluation_criteria"]["actions"]:
            assert AgentTools.tool_specs().get(action["name"]) is not None


# --------------------------------------------------------------------------------------------------------------
# normalisation
# --------------------------------------------------------------------------------------------------------------
def test_normalized_initial_db_matches_tau2_hash(raw: dict[str, Any], base: BaseDB) -> None:
    db = base.data
    assert dict_hash(db) == INITIAL_HASH
    assert base.full_hash() == INITIAL_HASH
    assert DBState(base).full_hash() == INITIAL_HASH
    assert (len(db["flights"]), len(db["users"]), len(db["reservations"])) == (300, 500, 2000)
    # record order of the file is kept
    assert list(db["reservations"])[:3] == list(raw["reservations"])[:3]
    assert list(db["flights"]) == list(raw["flights"])
    assert dict_hash(raw) != INITIAL_HASH  # the raw file lacks e.g. reservation status: null


def test_normalized_db_field_shapes_and_types(base: BaseDB) -> None:
    db = base.data
    for res in db["reservations"].values():
        assert "status" in res and res["status"] is None
        assert list(res)[-1] == "status"
        for seg in res["flights"]:
            assert list(seg) == ["flight_number", "origin", "destination", "date", "price"]
            assert type(seg["price"]) is int
        for pay in res["payment_history"]:
            assert type(pay["amount"]) is int
        assert type(res["total_baggages"]) is int and type(res["nonfree_baggages"]) is int
    n_amounts = 0
    for user in db["users"].values():
        assert "address2" in user["address"]
        for method in user["payment_methods"].values():
            if method["source"] in ("gift_card", "certificate"):
                assert list(method) == ["source", "id", "amount"] and type(method["amount"]) is float
                n_amounts += 1
            else:
                assert list(method) == ["source", "id", "brand", "last_four"]
    assert n_amounts == 983
    flight = db["flights"]["HAT001"]
    assert list(flight) == [
        "flight_number",
        "origin",
        "destination",
        "scheduled_departure_time_est",
        "scheduled_arrival_time_est",
        "dates",
    ]
    assert flight["dates"]["2024-05-03"] == {"status": "cancelled"}
    avail = flight["dates"]["2024-05-20"]
    assert list(avail) == ["status", "available_seats", "prices"]
    assert list(avail["available_seats"]) == ["basic_economy", "economy", "business"]


def test_normalize_is_idempotent_and_coerces_types() -> None:
    raw_small = {
        "flights": {},
        "users": {
            "u": {
                "user_id": "u",
                "name": {"first_name": "A", "last_name": "B"},
                "address": {"address1": "x", "city": "c", "country": "US", "state": "CA", "zip": "1"},
                "email": "e",
                "dob": "1990-01-01",
                "payment_methods": {"gift_card_1": {"id": "gift_card_1", "amount": 100, "source": "gift_card"}},
                "saved_passengers": [],
                "membership": "gold",
                "reservations": [],
            }
        },
        "reservations": {},
    }
    once = normalize_db(raw_small)
    user = once["users"]["u"]
    assert user["address"]["address2"] is None
    assert user["payment_methods"]["gift_card_1"] == {"source": "gift_card", "id": "gift_card_1", "amount": 100.0}
    assert type(user["payment_methods"]["gift_card_1"]["amount"]) is float
    assert canonical_json(normalize_db(once)) == canonical_json(once)


# --------------------------------------------------------------------------------------------------------------
# read tools
# --------------------------------------------------------------------------------------------------------------
def test_get_user_and_reservation_details_return_detached_records(tk: AgentTools, base: BaseDB) -> None:
    user = tk.get_user_details(MEI)
    assert isinstance(user, Record) and user == base.data["users"][MEI]
    user["payment_methods"].clear()  # the caller's copy only
    assert base.data["users"][MEI]["payment_methods"]
    res = tk.get_reservation_details("4WQ150")
    assert isinstance(res, Record) and res["status"] is None and res["cabin"] == "business"
    text = serialise_result(res)
    assert '"price": 883' in text and '"status": null' in text  # a model keeps native numbers


READ_ERRORS = [
    ("get_user_details", {"user_id": "nobody_123"}, "User nobody_123 not found"),
    ("get_user_details", {"user_id": "MEI_HERNANDEZ_8984"}, "User MEI_HERNANDEZ_8984 not found"),
    ("get_reservation_details", {"reservation_id": "ZZZZZZ"}, "Reservation ZZZZZZ not found"),
    ("get_flight_status", {"flight_number": "HAT999", "date": "2024-05-20"}, "Flight HAT999 not found"),
    (
        "get_flight_status",
        {"flight_number": "HAT001", "date": "2024-06-01"},
        "Flight HAT001 not found on date 2024-06-01",
    ),
]


@pytest.mark.parametrize(("name", "args", "message"), READ_ERRORS)
def test_read_tool_errors(tk: AgentTools, name: str, args: dict[str, Any], message: str) -> None:
    assert _error(tk, name, args) == message


@pytest.mark.parametrize(
    ("flight_number", "date", "status"),
    [
        ("HAT001", "2024-05-14", "cancelled"),
        ("HAT001", "2024-05-15", "landed"),
        ("HAT002", "2024-05-15", "delayed"),
        ("HAT001", "2024-05-16", "available"),
    ],
)
def test_get_flight_status(tk: AgentTools, flight_number: str, date: str, status: str) -> None:
    assert tk.get_flight_status(flight_number, date) == status


def test_list_all_airports(tk: AgentTools) -> None:
    airports = tk.list_all_airports()
    assert len(airports) == 20 and all(isinstance(a, Record) for a in airports)
    assert airports[0] == {"iata": "SFO", "city": "San Francisco"}
    assert airports[-1] == {"iata": "LGA", "city": "LaGuardia"}
    assert [a["iata"] for a in airports] == [
        "SFO", "JFK", "LAX", "ORD", "DFW", "DEN", "SEA", "ATL", "MIA", "BOS",
        "PHX", "IAH", "LAS", "MCO", "EWR", "CLT", "MSP", "DTW", "PHL", "LGA",
    ]  # fmt: skip


def test_search_direct_flight_matches_brute_force(tk: AgentTools, base: BaseDB) -> None:
    found = tk.search_direct_flight("JFK", "SEA", "2024-05-20")
    expected = [
        fn
        for fn, f in base.data["flights"].items()
        if f["origin"] == "JFK"
        and f["destination"] == "SEA"
        and f["dates"].get("2024-05-20", {}).get("status") == "available"
    ]
    assert [f["flight_number"] for f in found] == expected and expected
    first = found[0]
    assert list(first) == [
        "flight_number",
        "origin",
        "destination",
        "status",
        "scheduled_departure_time_est",
        "scheduled_arrival_time_est",
        "date",
        "available_seats",
        "prices",
    ]
    assert first["status"] == "available" and first["date"] is None
    assert first["prices"] == base.data["flights"][first["flight_number"]]["dates"]["2024-05-20"]["prices"]
    assert tk.search_direct_flight("JFK", "SEA", "2024-05-10") == []  # past dates are not available
    assert tk.search_direct_flight("JFK", "SEA", "2024-06-01") == []


def test_search_onestop_pairs_follow_string_time_rule(tk: AgentTools) -> None:
    pairs = tk.search_onestop_flight("LGA", "SEA", "2024-05-20")
    assert pairs
    for first, second in pairs:
        assert first["origin"] == "LGA" and second["destination"] == "SEA"
        assert first["destination"] == second["origin"]
        assert first["date"] == "2024-05-20"
        arrival = first["scheduled_arrival_time_est"]
        assert second["date"] == ("2024-05-21" if "+1" in arrival else "2024-05-20")
        assert second["scheduled_departure_time_est"] >= arrival  # string comparison, "+1" included
    # HAT002 (LGA 21:00 -> PHX 01:30:00+1) connects on the next day
    assert any(p[0]["flight_number"] == "HAT002" and p[1]["date"] == "2024-05-21" for p in pairs)


def test_search_onestop_next_day_without_zero_padding(base: BaseDB) -> None:
    """A +1 first leg on 2024-05-08 looks for its second leg on "2024-05-9", not "2024-05-09" (tau2 quirk)."""
    state = DBState(base)
    avail = {
        "status": "available",
        "available_seats": {"basic_economy": 5, "economy": 5, "business": 5},
        "prices": {"basic_economy": 10, "economy": 20, "business": 30},
    }
    state.write("flights", "HAT002")["dates"]["2024-05-08"] = copy.deepcopy(avail)  # LGA 21:00 -> PHX 01:30+1
    phx_out = [fn for fn, f in base.data["flights"].items() if f["origin"] == "PHX"]
    late = next(fn for fn in phx_out if base.data["flights"][fn]["scheduled_departure_time_est"] >= "02")
    state.write("flights", late)["dates"]["2024-05-09"] = copy.deepcopy(avail)
    tk = AgentTools(state)
    dest = base.data["flights"][late]["destination"]
    assert tk.search_onestop_flight("LGA", dest, "2024-05-08") == []
    state.write("flights", late)["dates"]["2024-05-9"] = copy.deepcopy(avail)
    pairs = tk.search_onestop_flight("LGA", dest, "2024-05-08")
    assert [(p[0]["flight_number"], p[1]["flight_number"], p[1]["date"]) for p in pairs] == [
        ("HAT002", late, "2024-05-9")
    ]


# --------------------------------------------------------------------------------------------------------------
# book_reservation
# --------------------------------------------------------------------------------------------------------------
def _booking(**over: Any) -> dict[str, Any]:
    args = {
        "user_id": MEI,
        "origin": "X",  # not checked against the flights
        "destination": "Y",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": "HAT034", "date": "2024-05-28"}],
        "passengers": [{"first_name": "Mei", "last_name": "Hernandez", "dob": "1990-01-01"}],
        # economy 109 + insurance 30 + one non-free bag 50 = 189
        "payment_methods": [
            {"payment_id": GIFT, "amount": 98},
            {"payment_id": CERT, "amount": 50},
            {"payment_id": CARD, "amount": 41},
        ],
        "total_baggages": 2,
        "nonfree_baggages": 1,
        "insurance": "yes",
    }
    args.update(over)
    return args


def test_book_reservation_success(tk: AgentTools, base: BaseDB) -> None:
    seats_before = base.data["flights"]["HAT034"]["dates"]["2024-05-28"]["available_seats"]["economy"]
    res = tk.call("book_reservation", _booking())
    assert isinstance(res, Record)
    assert res == {
        "reservation_id": "HATHAT",
        "user_id": MEI,
        "origin": "X",
        "destination": "Y",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [
            {"flight_number": "HAT034", "origin": "LAX", "destination": "SFO", "date": "2024-05-28", "price": 109}
        ],
        "passengers": [{"first_name": "Mei", "last_name": "Hernandez", "dob": "1990-01-01"}],
        "payment_history": [
            {"payment_id": GIFT, "amount": 98},
            {"payment_id": CERT, "amount": 50},
            {"payment_id": CARD, "amount": 41},
        ],
        "created_at": "2024-05-15T15:00:00",
        "total_baggages": 2,
        "nonfree_baggages": 1,
        "insurance": "yes",
        "status": None,
    }
    assert list(res) == list(base.data["reservations"]["4WQ150"])
    db = tk.db
    user = db.get("users", MEI)
    assert user["payment_methods"][GIFT]["amount"] == 0.0 and type(user["payment_methods"][GIFT]["amount"]) is float
    assert CERT not in user["payment_methods"]  # consumed whole although only 50 of 250 was used
    assert CERT2 in user["payment_methods"] and CARD in user["payment_methods"]
    assert user["reservations"][-1] == "HATHAT"
    assert db.get("flights", "HAT034")["dates"]["2024-05-28"]["available_seats"]["economy"] == seats_before - 1
    assert db.get("reservations", "HATHAT") == res
    assert list(db.keys("reservations"))[-1] == "HATHAT"
    assert db.full_hash() == dict_hash(db.to_dict())


def test_book_reservation_ids_run_out_after_three(tk: AgentTools) -> None:
    cheap = {"payment_methods": [{"payment_id": CARD, "amount": 189}]}
    ids = [tk.call("book_reservation", _booking(**cheap))["reservation_id"] for _ in range(3)]
    assert ids == ["HATHAT", "HATHAU", "HATHAV"]
    assert _error(tk, "book_reservation", _booking(**cheap)) == "Too many reservations"


def test_book_reservation_coerces_payment_amount_like_pydantic(tk: AgentTools) -> None:
    res = tk.call("book_reservation", _booking(payment_methods=[{"payment_id": CARD, "amount": 189.0}]))
    assert res["payment_history"] == [{"payment_id": CARD, "amount": 189}]
    assert type(res["payment_history"][0]["amount"]) is int


BOOK_ERRORS = [
    ({"user_id": "nobody_123"}, "User nobody_123 not found"),
    # the user is checked before the flights
    (
        {"user_id": "nobody_123", "flights": [{"flight_number": "HAT999", "date": "2024-05-28"}]},
        "User nobody_123 not found",
    ),
    ({"flights": [{"flight_number": "HAT999", "date": "2024-05-28"}]}, "Flight HAT999 not found"),
    ({"flights": [{"flight_number": "HAT001", "date": "2024-06-01"}]}, "Flight HAT001 not found on date 2024-06-01"),
    (
        {"flights": [{"flight_number": "HAT001", "date": "2024-05-14"}]},
        "Flight HAT001 not available on date 2024-05-14",
    ),
    ({"flights": [{"flight_number": "HAT002", "date": "2024-05-24"}]}, "Not enough seats on flight HAT002"),
    # flights are checked before payments
    (
        {
            "flights": [{"flight_number": "HAT999", "date": "2024-05-28"}],
            "payment_methods": [{"payment_id": "credit_card_0000000", "amount": 189}],
        },
        "Flight HAT999 not found",
    ),
    (
        {"payment_methods": [{"payment_id": "credit_card_0000000", "amount": 189}]},
        "Payment method credit_card_0000000 not found",
    ),
    (
        {"payment_methods": [{"payment_id": GIFT, "amount": 99}, {"payment_id": CARD, "amount": 90}]},
        f"Not enough balance in payment method {GIFT}",
    ),
    (
        {"payment_methods": [{"payment_id": CERT, "amount": 251}]},
        f"Not enough balance in payment method {CERT}",
    ),
    (
        {"payment_methods": [{"payment_id": CARD, "amount": 100}]},
        "Payment amount does not add up, total price is 189, but paid 100",
    ),
    (
        {"insurance": "no", "payment_methods": [{"payment_id": CARD, "amount": 189}]},
        "Payment amount does not add up, total price is 159, but paid 189",
    ),
    (
        {"passengers": [{"first_name": "A", "last_name": "B", "dob": "1"}] * 2},
        "Payment amount does not add up, total price is 328, but paid 189",  # 2*109 + 2*30 + 50
    ),
    (
        {"flights": [{"flight_number": "HAT001"}]},
        "1 validation error for FlightInfo\ndate\n"
        "  Field required [type=missing, input_value={'flight_number': 'HAT001'}, input_type=dict]",
    ),
    (
        {"payment_methods": [{"payment_id": CARD, "amount": 189.5}]},
        "1 validation error for Payment\namount\n  Input should be a valid integer, got a number with a "
        "fractional part [type=int_from_float, input_value=189.5, input_type=float]",
    ),
    (
        {"cabin": "first"},
        "1 validation error for Reservation\ncabin\n  Input should be 'business', 'economy' or 'basic_economy' "
        "[type=literal_error, input_value='first', input_type=str]",
    ),
    (
        {"flight_type": "multi", "insurance": "maybe"},
        "2 validation errors for Reservation\nflight_type\n  Input should be 'round_trip' or 'one_way' "
        "[type=literal_error, input_value='multi', input_type=str]\ninsurance\n  Input should be 'yes' or 'no' "
        "[type=literal_error, input_value='maybe', input_type=str]",
    ),
    ({"flights": ["HAT034"]}, "'str' object has no attribute 'flight_number'"),
]


@pytest.mark.parametrize(("over", "message"), BOOK_ERRORS)
def test_book_reservation_errors_leave_state_unchanged(tk: AgentTools, over: dict[str, Any], message: str) -> None:
    assert _error(tk, "book_reservation", _booking(**over)) == message
    assert tk.db.full_hash() == INITIAL_HASH


def test_book_reservation_string_bag_count_fails_like_python(tk: AgentTools) -> None:
    """tau2 validates nonfree_baggages="1" into the Reservation but multiplies the raw string for the fee."""
    assert _error(tk, "book_reservation", _booking(nonfree_baggages="1")) == (
        "unsupported operand type(s) for +=: 'int' and 'str'"
    )
    assert tk.db.full_hash() == INITIAL_HASH


def test_book_reservation_same_certificate_twice_partially_mutates(tk: AgentTools, base: BaseDB) -> None:
    """tau2 quirk: the second use of a certificate fails (KeyError) after the first was removed - no rollback."""
    pays = [{"payment_id": GIFT, "amount": 39}, {"payment_id": CERT, "amount": 100}, {"payment_id": CERT, "amount": 50}]
    assert _error(tk, "book_reservation", _booking(payment_methods=pays)) == f"'{CERT}'"
    methods = tk.db.get("users", MEI)["payment_methods"]
    assert CERT not in methods and methods[GIFT]["amount"] == 59.0
    assert not tk.db.contains("reservations", "HATHAT")
    assert tk.db.get("users", MEI)["reservations"] == base.data["users"][MEI]["reservations"]
    assert "flights" not in tk.db.touched()


def test_book_reservation_same_gift_card_twice_can_overdraw(tk: AgentTools) -> None:
    """Each payment is checked against the full balance separately, then all are deducted (tau2)."""
    pays = [{"payment_id": GIFT, "amount": 90}, {"payment_id": GIFT, "amount": 90}, {"payment_id": CARD, "amount": 9}]
    tk.call("book_reservation", _booking(payment_methods=pays))
    assert tk.db.get("users", MEI)["payment_methods"][GIFT]["amount"] == -82.0


# --------------------------------------------------------------------------------------------------------------
# cancel_reservation
# --------------------------------------------------------------------------------------------------------------
def test_cancel_reservation_refunds_in_history_only(tk: AgentTools, base: BaseDB) -> None:
    res = tk.cancel_reservation("79G8A9")  # paid 1400 with MEI's gift card
    assert res["status"] == "cancelled"
    assert res["payment_history"] == [{"payment_id": GIFT, "amount": 1400}, {"payment_id": GIFT, "amount": -1400}]
    assert tk.db.get("users", MEI)["payment_methods"][GIFT]["amount"] == 98.0  # balance not refunded
    assert set(tk.db.touched()) == {"reservations"}  # seats are not released
    again = tk.cancel_reservation("79G8A9")  # no status check: the whole history is negated again
    assert [p["amount"] for p in again["payment_history"]] == [1400, -1400, -1400, 1400]
    assert _error(tk, "cancel_reservation", {"reservation_id": "ZZZZZZ"}) == "Reservation ZZZZZZ not found"


# --------------------------------------------------------------------------------------------------------------
# update_reservation_flights
# --------------------------------------------------------------------------------------------------------------
R9_FLIGHTS = [  # R9QDGB: economy, 3 passengers, stored prices 143/194/126/144 (current economy 109/122/177/172)
    {"flight_number": "HAT034", "date": "2024-05-28"},
    {"flight_number": "HAT026", "date": "2024-05-28"},
    {"flight_number": "HAT247", "date": "2024-05-30"},
    {"flight_number": "HAT232", "date": "2024-05-30"},
]


def test_update_flights_same_cabin_keeps_old_prices(tk: AgentTools) -> None:
    res = tk.update_reservation_flights("R9QDGB", "economy", copy.deepcopy(R9_FLIGHTS), CARD)
    assert [s["price"] for s in res["flights"]] == [143, 194, 126, 144]
    assert res["payment_history"] == [{"payment_id": CARD, "amount": 1911}]  # total 0: nothing appended
    # one changed segment: the kept ones stay at their old price, the new one at today's price
    changed = copy.deepcopy(R9_FLIGHTS[:3]) + [{"flight_number": "HAT232", "date": "2024-05-28"}]
    new_price = tk.db.get("flights", "HAT232")["dates"]["2024-05-28"]["prices"]["economy"]
    res = tk.update_reservation_flights("R9QDGB", "economy", changed, CARD)
    assert [s["price"] for s in res["flights"]] == [143, 194, 126, new_price]
    assert res["payment_history"][-1] == {"payment_id": CARD, "amount": (new_price - 144) * 3}
    assert set(tk.db.touched()) == {"reservations"}  # no seat counts change


def test_update_flights_cabin_change_reprices_every_segment(tk: AgentTools) -> None:
    res = tk.update_reservation_flights("R9QDGB", "business", copy.deepcopy(R9_FLIGHTS), CARD)
    assert [s["price"] for s in res["flights"]] == [341, 301, 431, 378]
    assert res["cabin"] == "business"
    assert res["payment_history"][-1] == {"payment_id": CARD, "amount": (1451 - 607) * 3}
    assert set(tk.db.touched()) == {"reservations"}


def test_update_flights_negative_total_credits_gift_card(tk: AgentTools) -> None:
    flights = [
        {"flight_number": s["flight_number"], "date": s["date"]} for s in tk.db.get("reservations", "79G8A9")["flights"]
    ]
    res = tk.update_reservation_flights("79G8A9", "basic_economy", flights, GIFT)
    assert res["payment_history"][-1] == {"payment_id": GIFT, "amount": -778}  # 2*(281 - 670)
    assert tk.db.get("users", MEI)["payment_methods"][GIFT]["amount"] == 876.0


UPDATE_FLIGHT_ERRORS = [
    ({"reservation_id": "ZZZZZZ"}, "Reservation ZZZZZZ not found"),
    ({"payment_id": CERT}, "Certificate cannot be used to update reservation"),  # even though the price is 0
    ({"payment_id": "credit_card_0000000"}, "Payment method not found"),
    ({"cabin": "business", "payment_id": GIFT}, "Gift card balance is not enough"),
    ({"flights": [{"flight_number": "HAT999", "date": "2024-05-28"}]}, "Flight HAT999 not found"),
    ({"flights": [{"flight_number": "HAT034", "date": "2024-06-28"}]}, "Flight HAT034 not found on date 2024-06-28"),
    (
        {"flights": [{"flight_number": "HAT001", "date": "2024-05-14"}]},
        "Flight HAT001 not available on date 2024-05-14",
    ),
    (
        {"flights": [{"flight_number": "HAT002", "date": "2024-05-25"}], "cabin": "business"},
        "Not enough seats on flight HAT002",
    ),
    ({"flights": [{"flight_number": "HAT002", "date": "2024-05-25"}], "cabin": "first"}, "'first'"),
    (
        {"flights": [{"date": "2024-05-28"}]},
        "1 validation error for FlightInfo\nflight_number\n"
        "  Field required [type=missing, input_value={'date': '2024-05-28'}, input_type=dict]",
    ),
]


@pytest.mark.parametrize(("over", "message"), UPDATE_FLIGHT_ERRORS)
def test_update_flights_errors(tk: AgentTools, over: dict[str, Any], message: str) -> None:
    args = {"reservation_id": "R9QDGB", "cabin": "economy", "flights": copy.deepcopy(R9_FLIGHTS), "payment_id": CARD}
    args.update(over)
    assert _error(tk, "update_reservation_flights", args) == message
    assert tk.db.full_hash() == INITIAL_HASH


# --------------------------------------------------------------------------------------------------------------
# update_reservation_baggages / update_reservation_passengers / send_certificate
# --------------------------------------------------------------------------------------------------------------
def test_update_baggages_charges_only_added_nonfree_bags(tk: AgentTools) -> None:
    res = tk.update_reservation_baggages("1AKIA8", 4, 2, CARD)  # was 1 total, 0 non-free
    assert (res["total_baggages"], res["nonfree_baggages"]) == (4, 2)
    assert res["payment_history"][-1] == {"payment_id": CARD, "amount": 100}
    res = tk.update_reservation_baggages("1AKIA8", 1, 0, CARD)  # decrease: no refund, no payment
    assert (res["total_baggages"], res["nonfree_baggages"]) == (1, 0)
    assert len(res["payment_history"]) == 2
    res = tk.update_reservation_baggages("1AKIA8", 2, 1, GIFT)
    assert res["payment_history"][-1] == {"payment_id": GIFT, "amount": 50}
    assert tk.db.get("users", MEI)["payment_methods"][GIFT]["amount"] == 48.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ZZZZZZ", 1, 0, CARD), "Reservation ZZZZZZ not found"),
        (("1AKIA8", 1, 0, CERT), "Certificate cannot be used to update reservation"),  # price 0
        (("1AKIA8", 3, 2, GIFT), "Gift card balance is not enough"),
        (("1AKIA8", 3, 2, "gift_card_0000000"), "Payment method not found"),
    ],
)
def test_update_baggages_errors(tk: AgentTools, args: tuple[Any, ...], message: str) -> None:
    names = ["reservation_id", "total_baggages", "nonfree_baggages", "payment_id"]
    assert _error(tk, "update_reservation_baggages", dict(zip(names, args, strict=True))) == message
    assert tk.db.full_hash() == INITIAL_HASH


def test_update_passengers(tk: AgentTools) -> None:
    new = [
        {"first_name": "A", "last_name": "B", "dob": "2000-01-01", "extra": "dropped"},
        {"first_name": "C", "last_name": "D", "dob": "2001-01-01"},
    ]
    res = tk.update_reservation_passengers("1AKIA8", new)
    assert res["passengers"] == [
        {"first_name": "A", "last_name": "B", "dob": "2000-01-01"},
        {"first_name": "C", "last_name": "D", "dob": "2001-01-01"},
    ]
    assert len(res["payment_history"]) == 1
    assert _error(tk, "update_reservation_passengers", {"reservation_id": "1AKIA8", "passengers": new[:1]}) == (
        "Number of passengers does not match"
    )
    assert _error(tk, "update_reservation_passengers", {"reservation_id": "ZZZZZZ", "passengers": new}) == (
        "Reservation ZZZZZZ not found"
    )


def test_send_certificate_ids_and_amounts(tk: AgentTools) -> None:
    messages = [tk.send_certificate(MEI, amount) for amount in (100, 50, "25")]
    assert messages == [
        f"Certificate certificate_3221322 added to user {MEI} with amount 100.",
        f"Certificate certificate_3221323 added to user {MEI} with amount 50.",
        f"Certificate certificate_3221324 added to user {MEI} with amount 25.",
    ]
    methods = tk.db.get("users", MEI)["payment_methods"]
    assert list(methods)[-3:] == ["certificate_3221322", "certificate_3221323", "certificate_3221324"]
    assert methods["certificate_3221322"] == {"source": "certificate", "id": "certificate_3221322", "amount": 100.0}
    assert type(methods["certificate_3221324"]["amount"]) is float
    assert _error(tk, "send_certificate", {"user_id": MEI, "amount": 10}) == "Too many certificates"
    assert _error(tk, "send_certificate", {"user_id": "nobody_123", "amount": 10}) == "User nobody_123 not found"


# --------------------------------------------------------------------------------------------------------------
# generic tools
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("2 * ((350 - 122) + (499 - 127))", "1200.0"),
        ("2 + 2", "4.0"),
        ("10/3", "3.33"),
        ("7//2", "3.0"),
        ("-2**2", "-4.0"),
        ("2**-1", "0.5"),
        (".5+.5", "1.0"),
        ("  12 ", "12.0"),
        ("2.675*1", "2.67"),
        ("---1", "-1.0"),
        ("1.", "1.0"),
        ("00", "0.0"),
        ("1+" * 600 + "1", "601.0"),
    ],
)
def test_calculate_values(tk: AgentTools, expression: str, result: str) -> None:
    assert tk.calculate(expression) == result


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("abc", "Invalid characters in expression"),
        ("2 % 3", "Invalid characters in expression"),
        ("__import__('os')", "Invalid characters in expression"),
        ("1/0", "division by zero"),
        ("1.0/0", "float division by zero"),
        ("1 +", "invalid syntax (<string>, line 1)"),
        ("", "invalid syntax (<string>, line 0)"),
        (
            "0123",
            "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers "
            "(<string>, line 1)",
        ),
        ("(1)(2)", "'int' object is not callable"),
        ("()", "float() argument must be a string or a real number, not 'tuple'"),
        ("(-8)**0.5", "float() argument must be a string or a real number, not 'complex'"),
        ("2**2000", "int too large to convert to float"),
        ("9**9**9**9", "int too large to convert to float"),  # refused before computing
        ("(" * 250 + "1" + ")" * 250, "too many nested parentheses (<string>, line 1)"),
        ("1+" * (MAX_EXPRESSION_LENGTH // 2) + "1", "Expression too long"),
    ],
)
def test_calculate_errors(tk: AgentTools, expression: str, message: str) -> None:
    assert _error(tk, "calculate", {"expression": expression}) == message


def test_transfer_to_human_agents(tk: AgentTools) -> None:
    assert tk.transfer_to_human_agents("help") == "Transfer successful"
    assert tk.db.touched() == {}


# --------------------------------------------------------------------------------------------------------------
# gold replay and hashing
# --------------------------------------------------------------------------------------------------------------
def test_every_gold_action_of_every_task_replays_without_error(base: BaseDB, tasks: list[dict[str, Any]]) -> None:
    failures = {}
    n_actions = 0
    for task in tasks:
        actions = task["evaluation_criteria"]["actions"]
        n_actions += len(actions)
        _, errors = _replay(base, actions)
        if errors:
            failures[task["id"]] = errors
    assert n_actions == 142
    assert failures == {}  # no airline gold action legitimately errors


def test_gold_final_hashes_equal_tau2(base: BaseDB, tasks: list[dict[str, Any]]) -> None:
    writing = {t["id"] for t in tasks if any(a["name"] in WRITE_TOOLS for a in t["evaluation_criteria"]["actions"])}
    assert writing == set(GOLD_FINAL_HASHES)
    for task in tasks:
        tk, _ = _replay(base, task["evaluation_criteria"]["actions"])
        expected = GOLD_FINAL_HASHES.get(task["id"], INITIAL_HASH)
        assert tk.db.full_hash() == expected, task["id"]


@pytest.mark.parametrize("task_id", ["8", "14", "17", "18", "23", "44"])
def test_replay_is_deterministic_and_full_hash_matches_dump(
    base: BaseDB, tasks: list[dict[str, Any]], task_id: str
) -> None:
    task = next(t for t in tasks if t["id"] == task_id)
    writes = [a for a in task["evaluation_criteria"]["actions"] if a["name"] in WRITE_TOOLS]
    first, _ = _replay(base, writes)
    second, _ = _replay(base, writes)
    assert first.db.full_hash() == second.db.full_hash() != INITIAL_HASH
    assert first.db.same_as(second.db)
    dump = first.db.to_dict()
    assert first.db.full_hash() == dict_hash(dump)
    # the written state is still in tau2's dump shape (no int/float drift): normalising it changes nothing
    assert canonical_json(normalize_db(dump)) == canonical_json(dump)


def test_domain_loader_serves_airline(base: BaseDB) -> None:
    from verl_rewards.tau2 import load_domain

    domain = load_domain("airline", _ROOT)
    assert domain.base_db.full_hash() == INITIAL_HASH
    assert domain.split("train") and len(domain.split("base")) == 50
    assert domain.gold_hash("8") == GOLD_FINAL_HASHES["8"]
    assert {spec["name"]: spec["kind"] for spec in domain.tool_specs()} == {
        name: kind for name, (kind, _) in EXPECTED_TOOLS.items()
    }
