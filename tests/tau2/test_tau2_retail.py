"""Tests of the tau2 retail domain (verl_rewards.tau2.domains.retail) on the real tau2-bench retail data.

Expected hashes and observation texts were computed once with tau2-bench's own retail toolkit (pydantic
``RetailDB``, ``get_dict_hash``): the initial DB, and the final DB of every task whose gold actions change it.
"""

import copy
import hashlib
import inspect
import json
import operator
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from verl_rewards.engine.data_dir import TAU2_DATA
from verl_rewards.engine.state import BaseDB, DBState, canonical_json, dict_hash
from verl_rewards.engine.toolkit import Record, ToolError, serialise_result
from verl_rewards.tau2.domains import retail
from verl_rewards.tau2.domains.common import TRANSFER_MESSAGE
from verl_rewards.tau2.domains.retail import AgentTools, normalize_db

from data_support import missing_reason
from tau2_support import tau2_data_dir, toolkit_fixtures

_ROOT = tau2_data_dir()
DATA = (_ROOT or Path("/nonexistent")) / "retail"
if not (DATA / "db.json").is_file():
    pytest.skip(missing_reason(TAU2_DATA, "domain retail"), allow_module_level=True)

INITIAL_HASH = "b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c"
TAU_BENCH_INITIAL_HASH = "5a4b2cb59f4d12dea7e4adff24a7f8fada510ead49372ea4a729a82bbb5f49b5"
# Final DB hash after every gold action of the task; tasks not listed end in the initial DB.
GOLD_FINAL_HASHES = {
    "0": "a109be174767fde0ebb50fe3be37cdb2f1ce017fefd7bd29ea3e4d38bd3ac25a",
    "1": "eab1dde2ca84a093a334a25db9258213e882d849bb487a966d69c056a67c2846",
    "2": "9b66e83dbc00ef3e826a50a5a8b645ae06ba53cca06354b7d003a84a8af1d05a",
    "3": "efb8b638945f19291aab0ccbc4cfd2c653e74bf7fbe3b11174379800a331979c",
    "4": "f333ec4241d5094cb2743ac960689951e397a80cc62a73792f88976bb483caa3",
    "5": "9f1e45fc84a6995edead46216e4f7b07c27c4511524aedb38dc898ab9c52e866",
    "6": "2053905d31cc52d9e2833383690e2a1853ea66cc0074b0e306699ad516950da7",
    "7": "4759f292bd7623e928c516a8c5297bb10e9a4751f5b59011b4694f77a42624eb",
    "8": "b9f3a1f4d12b2c566be5d4095911feeeb042d85824351897dcba3faf9f5920e4",
    "9": "c0bf2b8ebfe464fbdd844b2a8b92216354b0e23a886ec8b443978d41a4631851",
    "11": "05695f333e6ae8961f827b95bd6aeec5b1d417c315d83c627799632dff79792b",
    "13": "21462ba8f4c96b1917313f5ffb284dbe8a358527671a9e87abb1db4384e5bed4",
    "14": "6351938a2a69905bed11ed932017971167d30590cc4f506c2ce3d16a5fcfd8b0",
    "15": "fe6b690f4810cc007afcc2e7047c8a116f8bde45d222db53d981b4ffb8c83ef5",
    "16": "76488acd2c5a18ade7bd3a32bc2fc5f6fdc5039223f86bc79f9754f3b5472a50",
    "17": "582f5d9c8242800c8bd77208017d9074c34e8b69b8e0cbfc2cb464dd5f604f98",
    "18": "ae5647e967420cfac562d751d0be73b9a2401247f5a44efb5818b59e77946ff9",
    "19": "ef45b3de7b49e6bcaadd92c36aca03321e35c7ce99276c09fbf508febe36cd17",
    "20": "d43fdfd87998ef6d749f84282c5211231d0877a98ae6ade7864ab2790ed0120f",
    "21": "079ef03ab35d99a940e5aded4318e11a97edf61ae6738ffc347057ab43812819",
    "22": "dc23fc9e78321e7babc4657ac01ffac00fa37fea2a168a9a9a36d34aff154671",
    "23": "077542b3b67113dd240766293cf1d901c3fd4565e60659dfab73f2fe94c56948",
    "26": "232e66188bb835cef11147346b2c4e73b0cf9440951e99a123366b5cc4bc01dd",
    "27": "08a9f35dd8ee39c46d1538800cc251a33131272e6a540842f110fcb5b23cd8a5",
    "28": "977b187e0993e19ce99615318db6a38e483a760f94a9c0c6c1d430bb2d3f1a8c",
    "29": "d2d7dc99ebacc7eac924d39ac313c3c7918d81de2d010e7b28c05a5df31c9d43",
    "30": "e714c87d983579c1c5bfd083dce886ce1aedb55cf956b58316202f692e802365",
    "31": "62c4403fbd959f27009946dea6f4679712b21f1e36336ca9b5ed7b6cae5659c3",
    "32": "aef31f614f8bc4cae69a58a2accd287f3507b9fe1c79526fa459988869c4f1c2",
    "33": "5fe996d49aefd73c215343df13c30e1d43a1b28fbba0d813e61aa9495f40e7bc",
    "34": "bac92290376c0e4ce24ecbcd5e8e95706672a39fc10c5692eb17592b25c22e5b",
    "35": "4f518424174e5718c1a44cc20b1015bde5ed9da4f0fc58eb2eb6bdbbe7713c78",
    "36": "c263b7ca5913ee44ccb614b4b5fd2b672049d710741063b90239ef46a3112c3c",
    "37": "c263b7ca5913ee44ccb614b4b5fd2b672049d710741063b90239ef46a3112c3c",
    "38": "e5c0722a1e6b8a9f8949890e7f6c05892d0a08386a8fc559d73f7b7ee715efcd",
    "39": "6cecf269871ecdf1b562fe8c64ff23e33c180338b03a463e90001cd437d3d8e5",
    "40": "09f9be39b93d78b44f54e7e3a0806a6227c420fb4a2e5e4b97861c7a8ff5a24d",
    "41": "c3bd28c101572f04483eac972adc7fd520cef4bba4959848120690ed0c762700",
    "42": "c3bd28c101572f04483eac972adc7fd520cef4bba4959848120690ed0c762700",
    "43": "a533bdac3eb69d9607ea2eeb31473ea5aab66c546831c46d6b2f0b912f569a09",
    "44": "7261dbb2b5feffa798d080a3e2b2b4c3bf5c32c7a281bc94205bc1b3015a7e5f",
    "45": "4c50624bd45b7ca2a9f02d7efdfb3cee0c70043735dab6d5d043c1f030539b26",
    "46": "9443e4a3f3027042faa1e64846178445f9fb350fd1e30b87a935939bb0585c2d",
    "47": "3e78643a771521156d2d2422415af35b76ec58d69bb832cc943f09b66b68aaa9",
    "48": "f97ba40e5b916df2f3c32c5522d0bc38f8df0b87e263252da36197726af23028",
    "49": "57802d7b797ea69d3e959c76494825d057b30a7224b2ee5617e9c80541bf6d5d",
    "51": "5198da6a906fdf509ae9eff0eac138ab602cb4fa9972dddb7445e5c4ae0b7d39",
    "52": "0a993bd7f7029816e26055cbef876c8c0d62570e4c8ad16389962fff00b22dba",
    "53": "75f2e3a64f604bca023262edbc448acfaafd5f1988a5edb9b9c7a5f35b59ed33",
    "54": "ce62537763499f1686e791ff0dc4d5a74af8df3ae4d33a76d9942f703bb440ef",
    "55": "b8dc464a3c0c716a530f8ad7a351f944ffb4b04e7bfcdc5cfea89a44f6d5e7cf",
    "56": "aa54036bba8dcaffc217e37461b7f0bde695b81db351900d6be7e9e16677fcf9",
    "58": "381a3546df6ca590a8702da1b50479e059a5830e7e405b951e133d7ea42de545",
    "59": "8cf194e4eca8883c044792c4441d4b83b270934e22fce04f00569f5944c6d279",
    "60": "c64074b669a7148877e60523c40f2649572409f5f7d175fedfdc7d00a66f9955",
    "61": "c4714fc4f11376ef39b9df03acf782c1ffeb1148285f1059f53a9ed5bd1b0a2b",
    "63": "26acf77e3aebedee6b3e2e4de11af0db441173a1901ed5449f7415bdab6a596f",
    "64": "2e9d92ee0d0cdd9e1eb41bd72d3390e1bc442a9f8c1c878c7b542668ebf7da96",
    "66": "a60e11827d3f533573fdd0fe8ab3a1870834454995a58c2b8eba2faf2e6c1dfb",
    "69": "847ac0da2e8587dc8a38673358e4ef88420c0301080afd1a63dd167039ad7931",
    "70": "d8d9d176cae3c76a2d2109a2b15f1b4726fb0261c6f3949d8f23921bca9d303c",
    "71": "c14be7c97f71be56b7f5bbb1bf5e1791c8f1b1f5ea9fb724eb52df49e5c02e8a",
    "72": "c14be7c97f71be56b7f5bbb1bf5e1791c8f1b1f5ea9fb724eb52df49e5c02e8a",
    "73": "3fda1284264c991619412a152ef862ca2c9bd7ef4ad697266605f57755adbece",
    "74": "49e0a1364ae7737e513303dd79e4d696fa3a8c1e224c8b027b355236ab98becb",
    "75": "4715bef725f018044add89f1735e469169366c03443f759b8ec56c54bb4a8011",
    "76": "790091ad9136f130e41e1160cbac1fa673c272efdbac4f4abcca7ca91e8b18cc",
    "77": "6b264a9871c7d50736f3e7437a4cfad28eda86d0f96682157cb21766f59a51e6",
    "78": "4ceb2d12183fc803d711eecf1146b54f9226a43a830737c46d26d6a5bff64a7e",
    "79": "08eab1c97f1c8b33108e56f9095df858bd7441595e361dc5b313fbea4c279561",
    "80": "2eb374bb67d50bb3052610fd856815e900c4226ed0509e8ecfc9553f727e6a18",
    "81": "3e6cf2f5d54493726f80ccd7b5913efecc8dbf8e7a2ffe4dd3afa3e86ad14eb8",
    "82": "7ecde7bd76643d71d05744cf90118df05edb29c94caf725a11da7f38046b854c",
    "83": "6d6c5796be53ea085ab9c5897824ec22c9c9de165259fbedc5d7dfe2064be2b9",
    "84": "6d6c5796be53ea085ab9c5897824ec22c9c9de165259fbedc5d7dfe2064be2b9",
    "85": "e60e8a961176447111af9fc08a984b9885443ba174c34b159449a7c44cd233da",
    "86": "4d145d54e2a023348b16a5c6deb1c6f18dca8cb0241e45d10d9287be7c3edfa2",
    "87": "facad1bdef80ec3f9c47e3ab90a31fd1d7d9d8a876a540a058fc0fed1cc6e48b",
    "88": "3ac42fbf475eee669df916f306a70ea83ea6c56203718218f9a9a4e6a3c44527",
    "89": "e6d35273c62bde7441c7b580a0285fc2a2a0b63638f445b71fb37cb025fb5862",
    "90": "c01984ba9743cde5dfd0f047505140ed7bb45246f2f0bf13585ea9e028081aa6",
    "91": "513010e85e47d540e3f67f010bcd1aba3007afccc88835116b073867442c90a9",
    "92": "034b3692aa700cbd3e064bf6fbce2a3c1fdaf42ff36c5ffd51b5fcb557e0b5e6",
    "93": "0c80a65bf8cd685fadf852449d9ea4818175dedc4be54e1b4c62cc2f92300be6",
    "94": "b43bfc63042a16597cf490064e342c88fa03148aefde387a08eeb26372342c1a",
    "95": "a0d1b0eab2e1e283dbf84607d02b637eb6bc61fc1cd4c8d3bed3d3377ecbba6b",
    "96": "a997556557672619d883773ad696e9a5faae2e452ef49fa38e02896362fc24d7",
    "97": "a997556557672619d883773ad696e9a5faae2e452ef49fa38e02896362fc24d7",
    "98": "a38fddcc78ebe2ba2a41b1cffaff27fd678aa60e52c505a0cd0a43e3963ea641",
    "99": "0d4c506b6ae15e332aee2ce381dadcbc63f3962631028ad07a466953b458bf6b",
    "100": "1af6e2cc79b3269e48afc34defd97506284156cbfc07926950dac9200855849c",
    "101": "ecb59101f10d577b09c6856b1efe1440404aa4b021438acb5da08898749b8da4",
    "102": "0089a38140d5fb73906b4984b8742ce6e6a73bd08894ee370274fc84adfcb44c",
    "103": "da721a24a789c89f231323b31b3ff3b0025a6eb6c3f7e33ae52ca7f2aeb6c3d7",
    "104": "86fb873c6582ce78b085a9938e25ac6ca4d14a2f7c149d990b6def658854e155",
    "106": "2d308b3a21934f600a3b305c09f9d40fa0140585f1b8a4616ff718a1f463426c",
    "107": "8111ebca39106dc47090d13df4491130add9e194d7d71697cf909a9a0be50040",
    "108": "7db01a0501bbd56e23e290742718088acab8a0eaf9a280b7f0dbdadf6a0a6b0d",
    "109": "b7a36959054a9b2b3445bb8625028fda7a0ffccb943a2b037879889dc22abd8c",
    "110": "f45606e4dad4fb4eaf74fd1b1538c3f350781d0e2ca3bc956ade0c3fa359912f",
    "111": "1301e5413c383b7647b710051c6526553b0cec3836432cc3e93e3cbbafeb0a7d",
    "112": "6eb2be1662a3ddae310baf9b4a6ce65a3ef63b6f6885285463c7bcaed978dfdc",
    "113": "4337c9b2595520e27dba1d78005bfae6735706c7f819d183ee530326f7ad61a3",
}
# Gold actions that fail in tau2 too (same messages); gold replay swallows them.
GOLD_ERRORS = {
    # product id 6086499569 does not exist (the tool docstring's example id)
    ("2", "2_1"): "Product not found",
    ("3", "3_1"): "Product not found",
    ("4", "4_1"): "Product not found",
    # the user first gives a wrong email / name / zip (the task's story)
    ("35", "35_0"): "User not found",
    ("37", "37_0"): "User not found",
    ("38", "38_0"): "User not found",
    ("39", "39_0"): "User not found",
    ("54", "54_0"): "User not found",
    ("55", "55_0"): "User not found",
    ("67", "67_0"): "User not found",
    ("67", "67_1"): "User not found",
    ("68", "68_0"): "User not found",
    # order ids without the "W" ("#9502126")
    ("46", "46_1"): "Order not found",
    ("46", "46_2"): "Order not found",
    ("47", "47_1"): "Order not found",
    ("47", "47_2"): "Order not found",
    # #W7464385 is pending: the exchange fails and the next gold action modifies the pending order instead
    ("64", "64_6"): "Non-delivered order cannot be exchanged",
    # price difference 21.1 exceeds the 17.0 gift-card balance: the task's only write fails, the DB is unchanged
    ("105", "106_0"): "Insufficient gift card balance to pay for the price difference",
}

# Users and orders of the real data used below (preconditions are asserted where they matter).
PENDING_GC = "#W6779827"  # pending, paid 4079.45 by gift_card_7219486 (balance 49.0) of ethan_lopez_6291
ETHAN, ETHAN_GC, ETHAN_CC = "ethan_lopez_6291", "gift_card_7219486", "credit_card_9789590"
PENDING_CC = "#W8367380"  # pending, paid 1003.22 by credit_card_5683823; 3 items of 3 products
AVA, AVA_GC, AVA_CC = "ava_nguyen_6646", "gift_card_1994993", "credit_card_5683823"  # gift card balance 78.0
AVA_ITEMS = ("2444431651", "1689914594", "8733974883")
PENDING_DUP = "#W9093821"  # pending, item 3557711149 twice; credit_card_7422485 of harper_kovacs_8617
DELIVERED_GC = "#W4817420"  # delivered, 5 items, paid by gift_card_8168843 (ava_moore_2033's only method)
DELIVERED_DUP = "#W1840144"  # delivered, 8590708195 twice, paid by paypal_2306935 (harper_brown_7363)
PROCESSED = "#W2611340"
CANCELLED = "#W3220387"
NOAH = "noah_brown_6181"

ORDER_FIELDS = [
    "order_id",
    "user_id",
    "address",
    "items",
    "status",
    "fulfillments",
    "payment_history",
    "cancel_reason",
    "exchange_items",
    "exchange_new_items",
    "exchange_payment_method_id",
    "exchange_price_difference",
    "return_items",
    "return_payment_method_id",
]
ADDRESS_FIELDS = ["address1", "address2", "city", "country", "state", "zip"]
NEW_ADDRESS = {
    "address1": "1 Main St",
    "address2": "",
    "city": "Springfield",
    "state": "IL",
    "country": "USA",
    "zip": "62701",
}

# tau2's observation text (json.dumps of model_dump()) for two records
ORDER_W2611340_JSON = (
    '{"order_id": "#W2611340", "user_id": "james_li_5688", "address": {"address1": "215 River Road", '
    '"address2": "Suite 991", "city": "New York", "country": "USA", "state": "NY", "zip": "10083"}, "items": '
    '[{"name": "Water Bottle", "product_id": "8310926033", "item_id": "6469567736", "price": 47.84, "options": '
    '{"capacity": "1000ml", "material": "glass", "color": "blue"}}, {"name": "Office Chair", "product_id": '
    '"4794339885", "item_id": "8426249116", "price": 488.81, "options": {"material": "fabric", "color": "black", '
    '"armrest": "fixed", "backrest height": "standard"}}], "status": "processed", "fulfillments": [{"tracking_id": '
    '["357962501027"], "item_ids": ["6469567736", "8426249116"]}], "payment_history": [{"transaction_type": '
    '"payment", "amount": 536.65, "payment_method_id": "gift_card_1725971"}], "cancel_reason": null, '
    '"exchange_items": null, "exchange_new_items": null, "exchange_payment_method_id": null, '
    '"exchange_price_difference": null, "return_items": null, "return_payment_method_id": null}'
)
USER_NOAH_JSON = (
    '{"user_id": "noah_brown_6181", "name": {"first_name": "Noah", "last_name": "Brown"}, "address": {"address1": '
    '"986 Sunset Drive", "address2": "Suite 259", "city": "Denver", "country": "USA", "state": "CO", "zip": '
    '"80279"}, "email": "noah.brown7922@example.com", "payment_methods": {"paypal_5727330": {"source": "paypal", '
    '"id": "paypal_5727330"}, "credit_card_7815826": {"source": "credit_card", "id": "credit_card_7815826", '
    '"brand": "mastercard", "last_four": "9212"}}, "orders": ["#W7678072"]}'
)


# --------------------------------------------------------------------------------------------------------------
# fixtures: the DB is loaded and normalised once per module
# --------------------------------------------------------------------------------------------------------------
raw, base, tasks, tk = toolkit_fixtures(DATA, normalize_db, AgentTools)


def _error(tk: AgentTools, name: str, args: dict[str, Any]) -> str:
    """The ToolError message of a call."""
    with pytest.raises(ToolError) as info:
        tk.call(name, copy.deepcopy(args))
    return str(info.value)


def _order(tk: AgentTools, order_id: str) -> dict[str, Any]:
    return tk.db.get("orders", order_id)


def _method(tk: AgentTools, user_id: str, method_id: str) -> dict[str, Any]:
    return tk.db.get("users", user_id)["payment_methods"][method_id]


def _variant(tk: AgentTools, item_id: str) -> dict[str, Any]:
    return next(p["variants"][item_id] for p in tk.db.values("products") if item_id in p["variants"])


# --------------------------------------------------------------------------------------------------------------
# module surface and tool registry
# --------------------------------------------------------------------------------------------------------------
def test_module_constants() -> None:
    assert retail.SPEC.name == "retail"
    assert retail.SPEC.files == {
        "db": "db.json",
        "policy": "policy.md",
        "tasks": "tasks.json",
        "split": "split_tasks.json",
    }
    assert retail.SPEC.terminate_tools == ("transfer_to_human_agents",)
    assert retail.SPEC.user_toolkit is None
    for name in retail.SPEC.files.values():
        assert (DATA / name).is_file()


ADDRESS_PARAMS = ["address1", "address2", "city", "state", "country", "zip"]
EXPECTED_TOOLS = {
    "calculate": ("generic", ["expression"]),
    "transfer_to_human_agents": ("generic", ["summary"]),
    "find_user_id_by_email": ("read", ["email"]),
    "find_user_id_by_name_zip": ("read", ["first_name", "last_name", "zip"]),
    "get_order_details": ("read", ["order_id"]),
    "get_product_details": ("read", ["product_id"]),
    "get_item_details": ("read", ["item_id"]),
    "get_user_details": ("read", ["user_id"]),
    "list_all_product_types": ("read", []),
    "cancel_pending_order": ("write", ["order_id", "reason"]),
    "modify_pending_order_address": ("write", ["order_id", *ADDRESS_PARAMS]),
    "modify_pending_order_items": ("write", ["order_id", "item_ids", "new_item_ids", "payment_method_id"]),
    "modify_pending_order_payment": ("write", ["order_id", "payment_method_id"]),
    "modify_user_address": ("write", ["user_id", *ADDRESS_PARAMS]),
    "exchange_delivered_order_items": ("write", ["order_id", "item_ids", "new_item_ids", "payment_method_id"]),
    "return_delivered_order_items": ("write", ["order_id", "item_ids", "payment_method_id"]),
}


def test_tool_registry() -> None:
    specs = AgentTools.tool_specs()
    assert set(specs) == set(EXPECTED_TOOLS)
    for name, (kind, params) in EXPECTED_TOOLS.items():
        spec = specs[name]
        assert spec.kind == kind, name
        assert spec.mutates_state == (kind == "write")
        assert list(inspect.signature(spec.func).parameters)[1:] == params, name
        description, _, args = spec.description.partition("\n\nArgs:\n")
        assert description and "\n" not in description, name  # one paragraph, shown to the model
        if params:
            lines = [line for line in args.splitlines() if line[:4] == "    " and line[4] != " "]  # not continuations
            documented = [line.split(":")[0].strip() for line in lines]
            assert documented == params, name
        else:
            assert not args, name


def test_tool_type_hints() -> None:
    from typing import Literal

    for name, (_, params) in EXPECTED_TOOLS.items():
        hints = get_type_hints(getattr(AgentTools, name))
        for param in params:
            if param in ("item_ids", "new_item_ids"):
                assert hints[param] == list[str], (name, param)
            elif param == "reason":
                assert hints[param] == Literal["no longer needed", "ordered by mistake"]
            else:
                assert hints[param] is str, (name, param)


# --------------------------------------------------------------------------------------------------------------
# normalisation
# --------------------------------------------------------------------------------------------------------------
def test_initial_hash_matches_tau2(raw: dict[str, Any], base: BaseDB) -> None:
    assert dict_hash(normalize_db(raw)) == INITIAL_HASH
    assert base.full_hash() == INITIAL_HASH
    assert DBState(base).full_hash() == INITIAL_HASH


def test_normalized_shape(raw: dict[str, Any], base: BaseDB) -> None:
    db = base.data
    assert list(db) == ["products", "users", "orders"]
    assert (len(db["products"]), len(db["users"]), len(db["orders"])) == (50, 500, 1000)
    assert sum(len(p["variants"]) for p in db["products"].values()) == 591
    for name in ("products", "users", "orders"):  # record order of the file
        assert list(db[name]) == list(raw[name])
    statuses: dict[str, int] = {}
    for order in db["orders"].values():
        assert list(order) == ORDER_FIELDS
        assert all(order[field] is None for field in retail.ORDER_OPTIONAL_FIELDS)
        assert list(order["address"]) == ADDRESS_FIELDS
        assert all(type(item["price"]) is float for item in order["items"])
        assert all(type(p["amount"]) is float for p in order["payment_history"])
        statuses[order["status"]] = statuses.get(order["status"], 0) + 1
    assert statuses == {"pending": 423, "delivered": 373, "processed": 102, "cancelled": 102}
    sources: dict[str, set[tuple[str, ...]]] = {}
    for user in db["users"].values():
        assert list(user) == ["user_id", "name", "address", "email", "payment_methods", "orders"]
        assert list(user["address"]) == ADDRESS_FIELDS
        for key, method in user["payment_methods"].items():
            assert method["id"] == key
            sources.setdefault(method["source"], set()).add(tuple(method))
            if method["source"] == "gift_card":
                assert type(method["balance"]) is float
    assert sources == {
        "credit_card": {("source", "id", "brand", "last_four")},
        "gift_card": {("source", "id", "balance")},
        "paypal": {("source", "id")},
    }
    for product in db["products"].values():
        assert list(product) == ["name", "product_id", "variants"]
        for variant in product["variants"].values():
            assert list(variant) == ["item_id", "options", "available", "price"]
            assert type(variant["price"]) is float and type(variant["available"]) is bool


def _tiny_raw() -> dict[str, Any]:
    address = {"address1": "a", "address2": "", "city": "c", "country": "USA", "state": "s", "zip": "1"}
    return {
        "products": {
            "p1": {
                "name": "Thing",
                "product_id": "p1",
                "variants": {"i1": {"item_id": "i1", "options": {}, "available": True, "price": 10}},
            }
        },
        "users": {
            "u1": {
                "user_id": "u1",
                "name": {"first_name": "A", "last_name": "B"},
                "address": address,
                "email": "a@b.c",
                "payment_methods": {
                    "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 100},
                    "credit_card_1": {
                        "source": "credit_card",
                        "id": "credit_card_1",
                        "brand": "visa",
                        "last_four": "1",
                    },
                    "paypal_1": {"source": "paypal", "id": "paypal_1"},
                },
                "orders": ["#W1"],
            }
        },
        "orders": {
            "#W1": {
                "order_id": "#W1",
                "user_id": "u1",
                "address": address,
                "items": [{"name": "Thing", "product_id": "p1", "item_id": "i1", "price": 10, "options": {}}],
                "status": "exchange requested",
                "fulfillments": [],
                "payment_history": [{"transaction_type": "payment", "amount": 10, "payment_method_id": "paypal_1"}],
                "exchange_items": ["i1"],
                "exchange_new_items": ["i1"],
                "exchange_payment_method_id": "paypal_1",
                "exchange_price_difference": 3,
                "note": "not a model field",
            }
        },
    }


def test_normalize_coerces_floats_fills_nulls_and_drops_unknown_keys() -> None:
    db = normalize_db(_tiny_raw())
    assert db["products"]["p1"]["variants"]["i1"]["price"] == 10.0
    assert type(db["products"]["p1"]["variants"]["i1"]["price"]) is float
    assert type(db["users"]["u1"]["payment_methods"]["gift_card_1"]["balance"]) is float
    order = db["orders"]["#W1"]
    assert list(order) == ORDER_FIELDS  # "note" dropped, missing optionals present
    assert type(order["items"][0]["price"]) is float and type(order["payment_history"][0]["amount"]) is float
    assert order["exchange_price_difference"] == 3.0 and type(order["exchange_price_difference"]) is float
    assert order["exchange_items"] == ["i1"] and order["cancel_reason"] is None and order["return_items"] is None
    assert canonical_json(db["orders"]["#W1"]["exchange_price_difference"]) == "3.0"


def test_normalize_rejects_unknown_payment_source() -> None:
    raw = _tiny_raw()
    raw["users"]["u1"]["payment_methods"]["x"] = {"source": "bitcoin", "id": "x"}
    with pytest.raises(ValueError, match="bitcoin"):
        normalize_db(raw)


def test_normalize_leaves_raw_alone_and_is_idempotent(raw: dict[str, Any], base: BaseDB) -> None:
    before = canonical_json(raw)
    once = normalize_db(raw)
    assert canonical_json(raw) == before
    assert normalize_db(once) == once == base.data
    # nothing in the result aliases the raw data
    once["orders"][PROCESSED]["items"][0]["options"]["color"] = "changed"
    assert raw["orders"][PROCESSED]["items"][0]["options"]["color"] == "blue"


def _to_hashable(value: Any) -> Any:
    """tau-bench's ``to_hashable``."""
    if isinstance(value, dict):
        return tuple((k, _to_hashable(v)) for k, v in sorted(value.items()))
    if isinstance(value, list):
        return tuple(_to_hashable(v) for v in value)
    return value


def test_tau_bench_relation(raw: dict[str, Any]) -> None:
    """db.json is tau-bench's retail data plus ``user_id`` on each user (spec section 2).

    One refinement of "every other value is identical": tau-bench writes the (all whole-number) gift-card
    balances as ints (``51``), db.json as floats (``51.0``); tau-bench's repr-based hash tells them apart.
    """
    users = {}
    for key, user in raw["users"].items():
        assert user["user_id"] == key
        user = {k: v for k, v in user.items() if k != "user_id"}
        user["payment_methods"] = {
            k: {f: (int(v) if f == "balance" else v) for f, v in m.items()} for k, m in user["payment_methods"].items()
        }
        users[key] = user
    data = {"orders": raw["orders"], "products": raw["products"], "users": users}
    assert hashlib.sha256(str(_to_hashable(data)).encode("utf-8")).hexdigest() == TAU_BENCH_INITIAL_HASH


# --------------------------------------------------------------------------------------------------------------
# read tools
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("find_user_id_by_email", {"email": "noah.brown7922@example.com"}, NOAH),
        ("find_user_id_by_email", {"email": "Noah.Brown7922@EXAMPLE.com"}, NOAH),
        ("find_user_id_by_name_zip", {"first_name": "Noah", "last_name": "Brown", "zip": "80279"}, NOAH),
        ("find_user_id_by_name_zip", {"first_name": "NOAH", "last_name": "brown", "zip": "80279"}, NOAH),
        ("calculate", {"expression": "2 * (3.5 - 1) / 3"}, "1.67"),
        ("calculate", {"expression": "1003.22 - 5.45"}, "997.77"),
        ("transfer_to_human_agents", {"summary": "wants a refund to a new card"}, TRANSFER_MESSAGE),
    ],
)
def test_string_tools(tk: AgentTools, name: str, args: dict[str, Any], expected: str) -> None:
    assert tk.call(name, args) == expected
    assert tk.db.touched() == {}


def test_get_order_and_user_details_match_tau2_text(tk: AgentTools) -> None:
    order = tk.get_order_details(PROCESSED)
    assert isinstance(order, Record)
    assert serialise_result(order) == ORDER_W2611340_JSON
    assert serialise_result(tk.get_user_details(NOAH)) == USER_NOAH_JSON


def test_product_and_item_details(tk: AgentTools, base: BaseDB) -> None:
    product = tk.get_product_details("7233192239")
    assert isinstance(product, Record) and product["name"] == "Dumbbell Set" and len(product["variants"]) == 18
    assert product == base.data["products"]["7233192239"]
    item = tk.get_item_details("3877338112")
    assert isinstance(item, Record)
    assert item == {"item_id": "3877338112", **{k: v for k, v in item.items() if k != "item_id"}}
    assert item == base.data["products"]["7233192239"]["variants"]["3877338112"]
    assert item["price"] == 545.68 and item["available"] is True
    # an unavailable variant is still returned
    assert tk.get_item_details("8140269513")["available"] is False


def test_list_all_product_types(tk: AgentTools, base: BaseDB) -> None:
    text = tk.list_all_product_types()
    assert isinstance(text, str)
    names = json.loads(text)
    assert len(names) == 50 and list(names) == sorted(names)
    assert names == {p["name"]: p["product_id"] for p in base.data["products"].values()}
    assert text == json.dumps(names, sort_keys=True)


def test_returned_records_are_detached(tk: AgentTools) -> None:
    order = tk.get_order_details(PROCESSED)
    order["items"][0]["price"] = 0.0
    order["status"] = "delivered"
    tk.get_user_details(NOAH)["payment_methods"].clear()
    assert tk.get_order_details(PROCESSED)["status"] == "processed"
    assert tk.get_order_details(PROCESSED)["items"][0]["price"] == 47.84
    assert len(tk.get_user_details(NOAH)["payment_methods"]) == 2
    assert tk.db.full_hash() == INITIAL_HASH
    # a write result is detached from later writes too
    first = tk.modify_pending_order_address(PENDING_CC, **NEW_ADDRESS)
    tk.cancel_pending_order(PENDING_CC, "no longer needed")
    assert first["status"] == "pending" and len(first["payment_history"]) == 1


# --------------------------------------------------------------------------------------------------------------
# error messages and check order (every failing call below leaves the state untouched)
# --------------------------------------------------------------------------------------------------------------
def _items(order_id: str, item_ids: list[str], new_item_ids: list[str], method: str) -> dict[str, Any]:
    return {"order_id": order_id, "item_ids": item_ids, "new_item_ids": new_item_ids, "payment_method_id": method}


ERROR_CASES = [
    # lookups
    ("find_user_id_by_email", {"email": "nobody@example.com"}, "User not found"),
    ("find_user_id_by_name_zip", {"first_name": "Noah", "last_name": "Brown", "zip": "80280"}, "User not found"),
    ("find_user_id_by_name_zip", {"first_name": "Noah", "last_name": "Brown", "zip": " 80279"}, "User not found"),
    ("get_user_details", {"user_id": "Noah_Brown_6181"}, "User not found"),
    ("get_order_details", {"order_id": "W2611340"}, "Order not found"),
    ("get_order_details", {"order_id": "#W0000000"}, "Order not found"),
    ("get_product_details", {"product_id": "6086499569"}, "Product not found"),
    ("get_product_details", {"product_id": "3877338112"}, "Product not found"),  # an item id
    ("get_item_details", {"item_id": "7233192239"}, "Item not found"),  # a product id
    ("calculate", {"expression": "2 ^ 3"}, "Invalid characters in expression"),
    ("calculate", {"expression": "1 / 0"}, "division by zero"),
    # cancel_pending_order
    ("cancel_pending_order", {"order_id": "#W0000000", "reason": "no longer needed"}, "Order not found"),
    (
        "cancel_pending_order",
        {"order_id": PROCESSED, "reason": "no longer needed"},
        "Non-pending order cannot be cancelled",
    ),
    (
        "cancel_pending_order",
        {"order_id": CANCELLED, "reason": "ordered by mistake"},
        "Non-pending order cannot be cancelled",
    ),
    ("cancel_pending_order", {"order_id": DELIVERED_GC, "reason": "whatever"}, "Non-pending order cannot be cancelled"),
    ("cancel_pending_order", {"order_id": PENDING_CC, "reason": "No longer needed"}, "Invalid reason"),
    # modify_pending_order_address
    ("modify_pending_order_address", {"order_id": "#W0", **NEW_ADDRESS}, "Order not found"),
    ("modify_pending_order_address", {"order_id": PROCESSED, **NEW_ADDRESS}, "Non-pending order cannot be modified"),
    ("modify_pending_order_address", {"order_id": DELIVERED_GC, **NEW_ADDRESS}, "Non-pending order cannot be modified"),
    (
        "modify_pending_order_address",
        {"order_id": PENDING_CC, **NEW_ADDRESS, "zip": 62701},
        "1 validation error for UserAddress\nzip\n  Input should be a valid string [type=string_type, "
        "input_value=62701, input_type=int]",
    ),
    # modify_user_address
    ("modify_user_address", {"user_id": "nobody", **NEW_ADDRESS}, "User not found"),
    # modify_pending_order_items, in check order
    ("modify_pending_order_items", _items("#W0", [], [], AVA_CC), "Order not found"),
    (
        "modify_pending_order_items",
        _items(PROCESSED, ["6469567736"], ["x"], "x"),
        "Non-pending order cannot be modified",
    ),
    ("modify_pending_order_items", _items(PENDING_CC, ["1234567890"], ["x"], "x"), "1234567890 not found"),
    (
        "modify_pending_order_items",
        _items(PENDING_CC, [AVA_ITEMS[0], AVA_ITEMS[0]], ["3877338112", "8068777068"], AVA_CC),
        "2444431651 not found",
    ),
    (
        "modify_pending_order_items",
        _items(PENDING_CC, [AVA_ITEMS[0], AVA_ITEMS[1]], ["3877338112"], AVA_CC),
        "The number of items to be exchanged should match",
    ),
    (
        "modify_pending_order_items",
        _items(PENDING_CC, [AVA_ITEMS[0]], [AVA_ITEMS[0]], AVA_CC),
        "The new item id should be different from the old item id",
    ),
    ("modify_pending_order_items", _items(PENDING_CC, [AVA_ITEMS[0]], ["9440686670"], AVA_CC), "Variant not found"),
    (
        "modify_pending_order_items",
        _items(PENDING_CC, [AVA_ITEMS[0]], ["8140269513"], AVA_CC),
        "New item 8140269513 not found or available",
    ),
    (
        "modify_pending_order_items",
        _items(PENDING_CC, [AVA_ITEMS[0]], ["3877338112"], ETHAN_CC),
        "Payment method not found",
    ),
    (
        "modify_pending_order_items",
        _items(PENDING_GC, ["7896397433"], ["3877338112"], ETHAN_GC),  # +87.87 against a 49.0 balance
        "Insufficient gift card balance to pay for the new item",
    ),
    # modify_pending_order_payment, in check order
    ("modify_pending_order_payment", {"order_id": "#W0", "payment_method_id": AVA_GC}, "Order not found"),
    (
        "modify_pending_order_payment",
        {"order_id": PROCESSED, "payment_method_id": "x"},
        "Non-pending order cannot be modified",
    ),
    (
        "modify_pending_order_payment",
        {"order_id": PENDING_CC, "payment_method_id": ETHAN_GC},
        "Payment method not found",
    ),
    (
        "modify_pending_order_payment",
        {"order_id": PENDING_CC, "payment_method_id": AVA_CC},
        "The new payment method should be different from the current one",
    ),
    (
        "modify_pending_order_payment",
        {"order_id": PENDING_CC, "payment_method_id": AVA_GC},  # 78.0 < 1003.22
        "Insufficient gift card balance to pay for the order",
    ),
    # exchange_delivered_order_items, in check order
    ("exchange_delivered_order_items", _items("#W0", [], [], "x"), "Order not found"),
    ("exchange_delivered_order_items", _items(PENDING_CC, [], [], AVA_CC), "Non-delivered order cannot be exchanged"),
    (
        "exchange_delivered_order_items",
        _items(DELIVERED_DUP, ["8590708195"] * 3, ["9385662952"] * 3, "paypal_2306935"),
        "Number of 8590708195 not found.",
    ),
    (
        "exchange_delivered_order_items",
        _items(DELIVERED_GC, ["6777246137"], [], "gift_card_8168843"),
        "The number of items to be exchanged should match.",
    ),
    (
        "exchange_delivered_order_items",
        _items(DELIVERED_GC, ["6777246137"], ["3877338112"], "gift_card_8168843"),
        "Variant not found",
    ),
    (
        "exchange_delivered_order_items",
        _items(DELIVERED_GC, ["6777246137"], ["1434748144"], "gift_card_8168843"),
        "New item 1434748144 not found or available",
    ),
    (
        "exchange_delivered_order_items",
        _items(DELIVERED_GC, ["6777246137"], ["4579334072"], AVA_GC),
        "Payment method not found",
    ),
    (
        "exchange_delivered_order_items",
        _items(DELIVERED_GC, ["4900661478"], ["4894369688"], "gift_card_8168843"),  # +73.97 against 69.0
        "Insufficient gift card balance to pay for the price difference",
    ),
    # return_delivered_order_items, in check order
    ("return_delivered_order_items", {"order_id": "#W0", "item_ids": [], "payment_method_id": "x"}, "Order not found"),
    (
        "return_delivered_order_items",
        {"order_id": PENDING_CC, "item_ids": [], "payment_method_id": AVA_CC},
        "Non-delivered order cannot be returned",
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED_DUP, "item_ids": ["8590708195"], "payment_method_id": AVA_GC},
        "Payment method not found",
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED_DUP, "item_ids": ["nope"], "payment_method_id": "credit_card_3240550"},
        "Payment method should be the original payment method",
    ),
    (
        "return_delivered_order_items",
        {"order_id": DELIVERED_DUP, "item_ids": ["8590708195"] * 3, "payment_method_id": "paypal_2306935"},
        "Some item not found",
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "message"), ERROR_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(ERROR_CASES)]
)
def test_error_messages(tk: AgentTools, name: str, args: dict[str, Any], message: str) -> None:
    assert _error(tk, name, args) == message
    assert tk.db.touched() == {}, "a refused call must not write"
    assert tk.db.full_hash() == INITIAL_HASH


def _python_error(op: Any, left: Any, right: Any) -> str:
    try:
        op(left, right)
    except ArithmeticError as exc:
        return str(exc)
    raise AssertionError("no error")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("(1 + 2", "'(' was never closed (<string>, line 1)"),
        ("1 + 2)", "unmatched ')' (<string>, line 1)"),
        ("1 +", "invalid syntax (<string>, line 1)"),
        ("3.5.1", "invalid syntax (<string>, line 1)"),
        ("5 // 0", _python_error(operator.floordiv, 5, 0)),  # the interpreter's own wording, as under eval
        ("0 ** -1", _python_error(operator.pow, 0, -1)),
        ("2 ** 3 ** 900000", "int too large to convert to float"),
        ("1e3", "Invalid characters in expression"),
        ("1_000", "Invalid characters in expression"),
        ("x", "Invalid characters in expression"),
    ],
)
def test_calculate_errors(tk: AgentTools, expression: str, message: str) -> None:
    assert _error(tk, "calculate", {"expression": expression}) == message


def test_calculate_non_string_fails_like_tau2(tk: AgentTools) -> None:
    assert _error(tk, "calculate", {"expression": 42}) == "'int' object is not iterable"
    assert _error(tk, "calculate", {"expression": ["1", "+", "1"]}) == (
        "eval() arg 1 must be a string, bytes or code object"
    )


def test_unhashable_ids_fail_like_tau2(tk: AgentTools) -> None:
    with pytest.raises(TypeError, match="unhashable type: 'list'"):
        tk.get_order_details(["#W2611340"])  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------------------
# write tools: behaviour
# --------------------------------------------------------------------------------------------------------------
def test_cancel_refunds_gift_card_at_once(tk: AgentTools) -> None:
    assert _order(tk, PENDING_GC)["payment_history"] == [
        {"transaction_type": "payment", "amount": 4079.45, "payment_method_id": ETHAN_GC}
    ]
    assert _method(tk, ETHAN, ETHAN_GC)["balance"] == 49.0
    out = tk.cancel_pending_order(PENDING_GC, "ordered by mistake")
    assert isinstance(out, Record) and out == _order(tk, PENDING_GC)
    assert out["status"] == "cancelled" and out["cancel_reason"] == "ordered by mistake"
    assert out["payment_history"][1] == {"transaction_type": "refund", "amount": 4079.45, "payment_method_id": ETHAN_GC}
    assert _method(tk, ETHAN, ETHAN_GC)["balance"] == round(49.0 + 4079.45, 2) == 4128.45
    assert tk.db.touched() == {"orders": {PENDING_GC}, "users": {ETHAN}}


def test_cancel_only_records_card_refunds(tk: AgentTools) -> None:
    user_before = copy.deepcopy(tk.db.get("users", AVA))
    out = tk.cancel_pending_order(PENDING_CC, "no longer needed")
    assert out["payment_history"] == [
        {"transaction_type": "payment", "amount": 1003.22, "payment_method_id": AVA_CC},
        {"transaction_type": "refund", "amount": 1003.22, "payment_method_id": AVA_CC},
    ]
    assert tk.db.get("users", AVA) == user_before
    assert tk.db.touched() == {"orders": {PENDING_CC}}
    assert _error(tk, "cancel_pending_order", {"order_id": PENDING_CC, "reason": "no longer needed"}) == (
        "Non-pending order cannot be cancelled"
    )


def test_modify_order_address(tk: AgentTools) -> None:
    out = tk.modify_pending_order_address(PENDING_CC, **NEW_ADDRESS)
    assert out["status"] == "pending"
    assert list(out["address"]) == ADDRESS_FIELDS  # model order, not parameter order
    assert out["address"] == {k: NEW_ADDRESS[k] for k in ADDRESS_FIELDS}
    assert tk.db.touched() == {"orders": {PENDING_CC}}
    # the user's own address is untouched
    assert tk.db.get("users", AVA)["address"] != out["address"]


def test_modify_user_address(tk: AgentTools) -> None:
    out = tk.modify_user_address(NOAH, **NEW_ADDRESS)
    assert isinstance(out, Record) and out["user_id"] == NOAH
    assert list(out["address"]) == ADDRESS_FIELDS and out["address"]["zip"] == "62701"
    assert tk.db.touched() == {"users": {NOAH}}


def test_modify_items_single_unrounded_diff_gift_card(tk: AgentTools) -> None:
    diff = 545.68 - 534.84  # 3877338112 replaces 2444431651 (Dumbbell Set)
    assert diff != round(diff, 2)  # the test needs a difference with float noise
    out = tk.modify_pending_order_items(PENDING_CC, [AVA_ITEMS[0]], ["3877338112"], AVA_GC)
    assert out["payment_history"][-1] == {"transaction_type": "payment", "amount": diff, "payment_method_id": AVA_GC}
    assert _method(tk, AVA, AVA_GC)["balance"] == round(78.0 - diff, 2) == 67.16
    item = out["items"][0]
    assert item["item_id"] == "3877338112" and item["price"] == 545.68
    assert item["options"] == _variant(tk, "3877338112")["options"]
    assert out["status"] == "pending (item modified)"
    assert out["items"][1:] == tk.db.base.data["orders"][PENDING_CC]["items"][1:]


def test_modify_items_last_variant_quirk(tk: AgentTools) -> None:
    """tau2 writes the last validated variant's price and options into every modified item."""
    out = tk.modify_pending_order_items(PENDING_CC, [AVA_ITEMS[0], AVA_ITEMS[1]], ["3877338112", "9440686670"], AVA_CC)
    diff = (545.68 - 534.84) + (298.91 - 315.2)
    assert out["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": abs(diff),
        "payment_method_id": AVA_CC,
    }
    speaker = _variant(tk, "9440686670")
    assert [it["item_id"] for it in out["items"]] == ["3877338112", "9440686670", AVA_ITEMS[2]]
    for item in out["items"][:2]:
        assert item["price"] == 298.91 and item["options"] == speaker["options"]
    assert out["items"][0]["name"] == "Dumbbell Set" and out["items"][0]["product_id"] == "7233192239"
    assert out["items"][2]["price"] == 153.18


def test_modify_items_duplicates_and_follow_ups(tk: AgentTools) -> None:
    held = [it["item_id"] for it in _order(tk, PENDING_DUP)["items"]]
    assert held.count("3557711149") == 2
    product = next(it["product_id"] for it in _order(tk, PENDING_DUP)["items"] if it["item_id"] == "3557711149")
    new = next(
        v for v, var in tk.db.get("products", product)["variants"].items() if var["available"] and v != "3557711149"
    )
    out = tk.modify_pending_order_items(PENDING_DUP, ["3557711149", "3557711149"], [new, new], "credit_card_7422485")
    assert [it["item_id"] for it in out["items"]].count(new) == 2
    assert "3557711149" not in [it["item_id"] for it in out["items"]]
    # "pending (item modified)" blocks cancel and a second modify_items, not address or payment changes
    args = {"order_id": PENDING_DUP, "reason": "no longer needed"}
    assert _error(tk, "cancel_pending_order", args) == "Non-pending order cannot be cancelled"
    args = _items(PENDING_DUP, [new], ["3557711149"], "credit_card_7422485")
    assert _error(tk, "modify_pending_order_items", args) == "Non-pending order cannot be modified"
    assert tk.modify_pending_order_address(PENDING_DUP, **NEW_ADDRESS)["status"] == "pending (item modified)"
    # the payment history now has two entries
    args = {"order_id": PENDING_DUP, "payment_method_id": "credit_card_7422485"}
    assert _error(tk, "modify_pending_order_payment", args) == "There should be exactly one payment for a pending order"


def test_modify_items_with_no_items(tk: AgentTools) -> None:
    """Empty lists pass every check: a 0.0 refund is recorded and the status still changes (as in tau2)."""
    out = tk.modify_pending_order_items(PENDING_CC, [], [], AVA_GC)
    assert out["payment_history"][-1] == {"transaction_type": "refund", "amount": 0.0, "payment_method_id": AVA_GC}
    assert type(out["payment_history"][-1]["amount"]) is float
    assert out["status"] == "pending (item modified)"
    assert _method(tk, AVA, AVA_GC)["balance"] == 78.0


def test_modify_payment_from_gift_card(tk: AgentTools) -> None:
    out = tk.modify_pending_order_payment(PENDING_GC, ETHAN_CC)
    assert out["payment_history"] == [
        {"transaction_type": "payment", "amount": 4079.45, "payment_method_id": ETHAN_GC},
        {"transaction_type": "payment", "amount": 4079.45, "payment_method_id": ETHAN_CC},
        {"transaction_type": "refund", "amount": 4079.45, "payment_method_id": ETHAN_GC},
    ]
    assert _method(tk, ETHAN, ETHAN_GC)["balance"] == 4128.45  # old gift card refunded at once
    assert out["status"] == "pending"
    args = {"order_id": PENDING_GC, "payment_method_id": ETHAN_GC}
    assert _error(tk, "modify_pending_order_payment", args) == "There should be exactly one payment for a pending order"


def test_modify_payment_to_gift_card(tk: AgentTools) -> None:
    order_id, user_id, card, gift = _small_pending_order_with_gift_card(tk)
    amount = _order(tk, order_id)["payment_history"][0]["amount"]
    balance = _method(tk, user_id, gift)["balance"]
    out = tk.modify_pending_order_payment(order_id, gift)
    assert out["payment_history"][1:] == [
        {"transaction_type": "payment", "amount": amount, "payment_method_id": gift},
        {"transaction_type": "refund", "amount": amount, "payment_method_id": card},
    ]
    assert _method(tk, user_id, gift)["balance"] == round(balance - amount, 2)


def _small_pending_order_with_gift_card(tk: AgentTools) -> tuple[str, str, str, str]:
    """The first pending order paid by a non-gift card whose user's gift card covers the amount."""
    for order_id, order in tk.db.items("orders"):
        if order["status"] != "pending":
            continue
        payment = order["payment_history"][0]
        user = tk.db.get("users", order["user_id"])
        if payment["payment_method_id"].startswith("gift_card"):
            continue
        for method in user["payment_methods"].values():
            if method["source"] == "gift_card" and method["balance"] >= payment["amount"]:
                return order_id, order["user_id"], payment["payment_method_id"], method["id"]
    raise AssertionError("no such order in the data")


def test_exchange_records_request_only(tk: AgentTools) -> None:
    user_before = copy.deepcopy(tk.db.get("users", "ava_moore_2033"))
    items_before = copy.deepcopy(_order(tk, DELIVERED_GC)["items"])
    out = tk.exchange_delivered_order_items(
        DELIVERED_GC, ["9624127908", "6777246137"], ["5428723833", "4579334072"], "gift_card_8168843"
    )
    assert out["status"] == "exchange requested"
    assert out["exchange_items"] == ["6777246137", "9624127908"]  # sorted
    assert out["exchange_new_items"] == ["4579334072", "5428723833"]  # sorted independently
    assert out["exchange_payment_method_id"] == "gift_card_8168843"
    assert out["exchange_price_difference"] == round((145.48 - 158.9) + (54.85 - 47.76), 2) == -6.33
    assert out["items"] == items_before and len(out["payment_history"]) == 1
    assert tk.db.get("users", "ava_moore_2033") == user_before
    assert tk.db.touched() == {"orders": {DELIVERED_GC}}
    args = _items(DELIVERED_GC, ["9624127908"], ["5428723833"], "gift_card_8168843")
    assert _error(tk, "exchange_delivered_order_items", args) == "Non-delivered order cannot be exchanged"


def test_exchange_same_item_allowed_and_empty_lists(tk: AgentTools, base: BaseDB) -> None:
    out = tk.exchange_delivered_order_items(DELIVERED_GC, ["6777246137"], ["6777246137"], "gift_card_8168843")
    assert out["exchange_price_difference"] == 0.0
    other = AgentTools(DBState(base))
    out = other.exchange_delivered_order_items(DELIVERED_DUP, [], [], "paypal_2306935")
    # tau2 rounds an int 0 and stores it unvalidated: the dump (and hash) say 0, not 0.0
    assert out["exchange_price_difference"] == 0 and type(out["exchange_price_difference"]) is int
    assert out["exchange_items"] == [] and out["status"] == "exchange requested"


def test_exchange_and_return_sorting_make_order_irrelevant(base: BaseDB) -> None:
    """tau-bench TB3: reversed item lists give the same DB."""
    a, b = AgentTools(DBState(base)), AgentTools(DBState(base))
    a.exchange_delivered_order_items(
        DELIVERED_GC, ["9624127908", "6777246137"], ["5428723833", "4579334072"], "gift_card_8168843"
    )
    b.exchange_delivered_order_items(
        DELIVERED_GC, ["6777246137", "9624127908"], ["4579334072", "5428723833"], "gift_card_8168843"
    )
    a.return_delivered_order_items(DELIVERED_DUP, ["8590708195", "6534134392", "8590708195"], "paypal_2306935")
    b.return_delivered_order_items(DELIVERED_DUP, ["6534134392", "8590708195", "8590708195"], "paypal_2306935")
    assert a.db.same_as(b.db) and a.db.full_hash() == b.db.full_hash()


def test_return_to_original_method_or_any_gift_card(tk: AgentTools) -> None:
    out = tk.return_delivered_order_items(DELIVERED_DUP, ["8590708195", "6017636844", "8590708195"], "paypal_2306935")
    assert out["status"] == "return requested"
    assert out["return_items"] == ["6017636844", "8590708195", "8590708195"]
    assert out["return_payment_method_id"] == "paypal_2306935"
    assert len(out["payment_history"]) == 1
    assert tk.db.touched() == {"orders": {DELIVERED_DUP}}
    # a gift card that was not the original method is accepted
    gift_order = next(
        (oid, o["user_id"], m["id"])
        for oid, o in tk.db.items("orders")
        if o["status"] == "delivered" and not o["payment_history"][0]["payment_method_id"].startswith("gift_card")
        for m in tk.db.get("users", o["user_id"])["payment_methods"].values()
        if m["source"] == "gift_card"
    )
    out = tk.return_delivered_order_items(gift_order[0], [], gift_order[2])
    assert out["return_items"] == [] and out["return_payment_method_id"] == gift_order[2]


# --------------------------------------------------------------------------------------------------------------
# quirks that write before failing (tau2 does not roll back)
# --------------------------------------------------------------------------------------------------------------
def _patched_base(raw: dict[str, Any]) -> tuple[BaseDB, str, str]:
    data = copy.deepcopy(raw)
    # the gift-card order gets a second payment from a method its user does not have
    data["orders"][PENDING_GC]["payment_history"].append(
        {"transaction_type": "payment", "amount": 10.0, "payment_method_id": "paypal_0"}
    )
    # the card order's original method is not one of its user's methods; her gift card can pay for the order
    data["orders"][PENDING_CC]["payment_history"][0]["payment_method_id"] = "credit_card_gone"
    data["users"][AVA]["payment_methods"][AVA_GC]["balance"] = 2000.0
    return BaseDB(normalize_db(data)), PENDING_GC, PENDING_CC


def test_cancel_refund_loop_is_not_rolled_back(raw: dict[str, Any]) -> None:
    base, order_id, _ = _patched_base(raw)
    tk = AgentTools(DBState(base))
    assert _error(tk, "cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"}) == (
        "Payment method not found"
    )
    assert _method(tk, ETHAN, ETHAN_GC)["balance"] == 4128.45  # credited before the failure
    assert _order(tk, order_id)["status"] == "pending" and len(_order(tk, order_id)["payment_history"]) == 2


def test_modify_payment_missing_old_method_is_not_rolled_back(raw: dict[str, Any]) -> None:
    base, _, order_id = _patched_base(raw)
    tk = AgentTools(DBState(base))
    args = {"order_id": order_id, "payment_method_id": AVA_GC}
    assert _error(tk, "modify_pending_order_payment", args) == "Payment method not found"
    order = _order(tk, order_id)
    assert [p["transaction_type"] for p in order["payment_history"]] == ["payment", "payment", "refund"]
    assert _method(tk, AVA, AVA_GC)["balance"] == round(2000.0 - 1003.22, 2)  # debited before the failure


# --------------------------------------------------------------------------------------------------------------
# gold replay of every task, and hashing of written states
# --------------------------------------------------------------------------------------------------------------
def test_gold_replay_of_every_task(base: BaseDB, tasks: list[dict[str, Any]]) -> None:
    assert len(tasks) == 114
    errors: dict[tuple[str, str], str] = {}
    for task in tasks:
        tk = AgentTools(DBState(base))
        for action in task["evaluation_criteria"]["actions"]:
            try:
                tk.call(action["name"], copy.deepcopy(action["arguments"]))
            except ToolError as exc:  # anything else (TypeError, KeyError, ...) is a bug and fails the test
                errors[(task["id"], action["action_id"])] = str(exc)
        assert tk.db.full_hash() == GOLD_FINAL_HASHES.get(task["id"], INITIAL_HASH), task["id"]
    assert errors == GOLD_ERRORS
    assert dict_hash(base.data) == INITIAL_HASH  # no tool wrote into the shared base


def test_full_hash_equals_hash_of_dump_after_writes(base: BaseDB) -> None:
    tk = AgentTools(DBState(base))
    order_id, _, _, gift = _small_pending_order_with_gift_card(tk)
    tk.cancel_pending_order(PENDING_GC, "no longer needed")
    tk.modify_pending_order_items(PENDING_CC, [AVA_ITEMS[0]], ["3877338112"], AVA_GC)
    tk.modify_pending_order_address(PENDING_CC, **NEW_ADDRESS)
    tk.modify_user_address(NOAH, **NEW_ADDRESS)
    tk.exchange_delivered_order_items(DELIVERED_GC, ["6777246137"], ["4579334072"], "gift_card_8168843")
    tk.return_delivered_order_items(DELIVERED_DUP, ["8590708195"], "paypal_2306935")
    tk.modify_pending_order_payment(order_id, gift)
    state = tk.db
    assert state.full_hash() == dict_hash(state.to_dict()) != INITIAL_HASH
    assert state.to_dict()["orders"][PENDING_CC]["status"] == "pending (item modified)"
    # another state that made the same writes in another order is the same DB
    other = AgentTools(DBState(base))
    other.modify_pending_order_payment(order_id, gift)
    other.return_delivered_order_items(DELIVERED_DUP, ["8590708195"], "paypal_2306935")
    other.exchange_delivered_order_items(DELIVERED_GC, ["6777246137"], ["4579334072"], "gift_card_8168843")
    other.modify_user_address(NOAH, **NEW_ADDRESS)
    other.modify_pending_order_items(PENDING_CC, [AVA_ITEMS[0]], ["3877338112"], AVA_GC)
    other.modify_pending_order_address(PENDING_CC, **NEW_ADDRESS)
    other.cancel_pending_order(PENDING_GC, "no longer needed")
    assert other.db.same_as(state) and other.db.full_hash() == state.full_hash()
    assert dict_hash(base.data) == INITIAL_HASH  # the shared base never changes (recomputed, not the cache)
