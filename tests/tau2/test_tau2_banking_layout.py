"""banking_knowledge's toolkit is written one module per concern; what a model sees is still tau2's.

The parity tests (test_tau2_banking_knowledge.py) pin outputs, errors and hashes; these pin what the split itself
could change: old import paths, and Python's TypeError texts, which name the method's class.
"""

from __future__ import annotations

from typing import Any

import pytest

from verl_rewards.tau2 import load_domain
from verl_rewards.tau2.domains.banking_knowledge import KnowledgeTools, KnowledgeUserTools

from tau2_support import require_data


def test_every_discoverable_method_is_named_after_its_toolkit() -> None:
    for cls in (KnowledgeTools, KnowledgeUserTools):
        names = cls.discoverable_tools()
        assert len(names) == (44 if cls is KnowledgeTools else 4)
        assert all(fn.__qualname__ == f"{cls.__name__}.{name}" for name, fn in names.items())


@pytest.fixture(scope="module")
def dom() -> Any:
    return load_domain("banking_knowledge", require_data("banking_knowledge"))


# one discoverable tool of each module, with the first parameter Python reports missing
PER_MODULE = [
    ("close_bank_account_7392", "account_id"),  # accounts
    ("close_credit_card_account_7834", "credit_card_account_id"),  # credit_cards
    ("freeze_debit_card_3892", "card_id"),  # debit_cards
    ("activate_debit_card_8291", "card_id"),  # debit_orders
    ("get_atm_deposit_images_8473", "transaction_id"),  # disputes
]


@pytest.mark.parametrize(("tool", "param"), PER_MODULE)
def test_a_bad_call_is_worded_with_tau2_s_class_name(dom: Any, tool: str, param: str) -> None:
    env = dom.make_env()
    env.step("unlock_discoverable_agent_tool", {"agent_tool_name": tool})
    observation = env.step("call_discoverable_agent_tool", {"agent_tool_name": tool, "arguments": '{"x": 1}'})
    assert observation == f"Error: Invalid arguments: KnowledgeTools.{tool}() got an unexpected keyword argument 'x'"
    observation = env.step("call_discoverable_agent_tool", {"agent_tool_name": tool, "arguments": "{}"})
    assert observation.startswith(f"Error: Invalid arguments: KnowledgeTools.{tool}() missing ")
    assert f"'{param}'" in observation
