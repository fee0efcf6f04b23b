"""The tau2 ``telecom`` domain: a mobile carrier's accounts (agent side) and the customer's phone (user side).

The agent looks up customers, lines and bills and can resume lines, enable roaming, refuel data and send
payment requests (:mod:`.agent`, data ``db.toml`` as :mod:`.data_model`); the customer acts on their own phone
with 30 user tools (:mod:`.user_tools`, data ``user_db.toml``). The phone is typed state with its device model
(:mod:`.phone`); tasks break it and the account in their initialisation actions (:mod:`.initialization`) and are
scored by env assertions on the phone's derived state (:mod:`.assertions`: can it send MMS, does mobile data work,
how fast is it), plus ACTION for the 32 transfer tasks.

The two sides are kept consistent by :func:`sync_tools`, which the environment runs after every successful
tool call and every initialisation action (tau2's ``TelecomEnvironment.sync_tools``).

Policies (:func:`policy_text`): ``<main_policy>`` from ``main_policy.md`` and ``<tech_support_policy>`` from
``tech_support_manual.md`` (``policy_type="manual"``, the default) or ``tech_support_workflow.md``
(``"workflow"``); solo mode uses ``main_policy_solo.md`` and, for the workflow, ``tech_support_workflow_solo.md``
(the manual has no solo variant).

Load option ``vpn_details`` (:func:`configure`): ``"process"`` (default, tau2's) or ``"episode"``; see
:mod:`.user_tools`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ...domain_spec import DomainSpec
from ...errors import DataNotFoundError
from .agent import TODAY, TelecomTools
from .data_model import normalize_db
from .phone import VPN_SCOPES, normalize_user_db
from .user_tools import EpisodeVpnUserTools, TelecomUserTools

POLICY_TYPES = ("manual", "workflow")
_POLICY_FILES = {
    # (solo, policy_type): (main policy, tech-support policy)
    (False, "manual"): ("main_policy.md", "tech_support_manual.md"),
    (False, "workflow"): ("main_policy.md", "tech_support_workflow.md"),
    (True, "manual"): ("main_policy_solo.md", "tech_support_manual.md"),
    (True, "workflow"): ("main_policy_solo.md", "tech_support_workflow_solo.md"),
}

__all__ = [
    "POLICY_TYPES",
    "SPEC",
    "SYNC_NEUTRAL",
    "TODAY",
    "TelecomTools",
    "TelecomUserTools",
    "normalize_db",
    "normalize_user_db",
    "policy_text",
    "sync_tools",
]


def policy_text(data_dir: Path, *, solo: bool = False, policy_type: str = "manual") -> str:
    """The agent policy as tau2 assembles it (see the module doc)."""
    if policy_type not in POLICY_TYPES:
        raise ValueError(f"telecom policy_type must be one of {POLICY_TYPES}, got {policy_type!r}")
    texts = []
    for name in _POLICY_FILES[(bool(solo), policy_type)]:
        path = Path(data_dir) / name
        if not path.is_file():
            raise DataNotFoundError(f"tau2 telecom policy file not found: {path}")
        texts.append(path.read_text(encoding="utf-8"))
    main, tech = texts
    return f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{tech}\n</tech_support_policy>"


def sync_tools(agent: TelecomTools, user: TelecomUserTools) -> None:
    """Mirror the account into the phone's surroundings, and settle a paid payment request.

    Once the customer's phone number is known: the line with that number must exist; ``line_active`` is
    whether it is Active, ``roaming_allowed`` whether roaming is enabled on it, ``mobile_data_usage_exceeded``
    whether ``data_used_gb >= plan.data_limit_gb + data_refueling_gb``. A paid payment request marks its bill
    Paid and is cleared; then, with no request pending, the customer's first Awaiting Payment bill becomes
    the new request (``amount_due`` = its ``total_due``).
    """
    around = user.phone.surroundings
    phone = around.phone_number
    if phone is None:
        return
    line = agent.line_by_phone(phone)
    if line is None:
        raise ValueError(f"Wrong scenario, line not found for phone number: {phone}")
    around.line_active = line["status"] == "Active"
    around.roaming_allowed = bool(line["roaming_enabled"])
    plan = agent.plan_of(line)  # raises "Plan with ID ... not found" (tau2's own check never runs)
    exceeded = line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"]
    around.mobile_data_usage_exceeded = bool(exceeded)
    request = around.payment_request
    if request is not None and request["paid"]:
        agent.mark_bill_paid(request["bill_id"])
        around.payment_request = None
        request = None
    if request is None:
        bills = agent.bills_awaiting_payment(phone)
        if bills:
            around.payment_request = {
                "bill_id": bills[0]["bill_id"],
                "amount_due": float(bills[0]["total_due"]),
                "paid": False,
            }


SYNC_NEUTRAL = frozenset(
    {
        # PhoneSetup's initialisation helpers (initialization.py) but set_user_info, which sets the phone number:
        # they write only ``device`` fields (through DeviceState and Phone.network_search / toggle) and
        # set_user_location ``surroundings.is_abroad``; break_vpn also degrades the process's VPN object
        "set_user_location",
        "turn_airplane_mode_on",
        "turn_airplane_mode_off",
        "unseat_sim_card",
        "lock_sim_card",
        "turn_data_on",
        "turn_data_off",
        "turn_roaming_on",
        "turn_roaming_off",
        "turn_data_saver_mode_on",
        "turn_data_saver_mode_off",
        "break_apn_settings",
        "break_apn_mms_setting",
        "set_wifi_calling",
        "break_vpn",
        "remove_app_permission",
        # user-side helpers and tools that tasks' initialisation actions call: device fields only
        "simulate_network_search",
        "set_network_mode_preference",
    }
)
"""The user-side functions after which :func:`sync_tools` changes nothing: they write neither the agent DB nor the
surroundings fields the sync reads or sets (``phone_number``, ``payment_request``, ``line_active``,
``roaming_allowed``, ``mobile_data_usage_exceeded``), and the sync run on a state it produced changes nothing
(its fields are set to what they already hold; a pending request is unpaid, or none is due). So a task's initial
state is built without the sync after them (:attr:`~verl_rewards.tau2.domain_spec.DomainSpec.sync_neutral`): the
same state, with 36% of the syncs over the 2,285 tasks (tests: every call of every task writes none of what the
sync reads or writes, and every task's state equals the one built with a sync after every action)."""


def check_options(options: dict[str, Any]) -> None:
    """The load options' one check: only ``vpn_details``, ``process`` (the default) or ``episode``."""
    unknown = sorted(set(options) - {"vpn_details"})
    if unknown:
        raise ValueError(f"tau2 domain 'telecom' takes only the load option vpn_details, got {unknown}")
    scope = options.get("vpn_details", "process")
    if scope not in VPN_SCOPES:
        raise ValueError(f"telecom load option vpn_details must be one of {list(VPN_SCOPES)}, got {scope!r}")


def configure(data_dir: Path, options: dict[str, Any]) -> DomainSpec:
    """The spec under the load options (:func:`check_options`)."""
    check_options(options)
    scope = options.get("vpn_details", "process")
    return dataclasses.replace(SPEC, user_toolkit=_USER_TOOLKITS[scope], configure=None)


#: the user toolkit of each ``vpn_details`` scope, keyed by the scope each class declares
_USER_TOOLKITS = {kit.vpn_details: kit for kit in (TelecomUserTools, EpisodeVpnUserTools)}


SPEC = DomainSpec(
    name="telecom",
    files={
        "db": "db.toml",
        "user_db": "user_db.toml",
        "policy": "main_policy.md",
        "tasks": "tasks.json",
        "split": "split_tasks.json",
    },
    terminate_tools=("transfer_to_human_agents",),
    normalize_db=normalize_db,
    agent_toolkit=TelecomTools,
    user_toolkit=TelecomUserTools,
    normalize_user_db=normalize_user_db,
    sync_tools=sync_tools,
    sync_neutral=SYNC_NEUTRAL,
    shared_setup=frozenset({"set_user_info"}),  # it writes the name and number; every task starts with it
    policy_text=policy_text,
    policy_types=POLICY_TYPES,
    tool_schemas="telecom.json",  # tau2-bench's own schemas (tool_schemas/PROVENANCE.md)
    configure=configure,
    load_options=frozenset({"vpn_details"}),
    check_options=check_options,
)
