"""The tau2-bench retail domain (``src/tau2/domains/retail/``): products, users and orders.

The DB (``db.json``) has three collections keyed by id: ``products``, ``users`` and ``orders``. One module per
concern:

* :mod:`.normalize` — the raw file in the exact shape of tau2's ``RetailDB.model_dump()``, so hashes match tau2's;
* :mod:`.tools` — the agent's toolkit, tau2's checks, messages and quirks included.

There is no user toolkit; the only terminate tool is ``transfer_to_human_agents``.
"""

from ...domain_spec import DomainSpec
from .normalize import ORDER_OPTIONAL_FIELDS, normalize_db
from .tools import CANCEL_REASONS, AgentTools

SPEC = DomainSpec(
    name="retail",
    files={"db": "db.json", "policy": "policy.md", "tasks": "tasks.json", "split": "split_tasks.json"},
    terminate_tools=("transfer_to_human_agents",),
    normalize_db=normalize_db,
    agent_toolkit=AgentTools,
    tool_schemas="retail.json",  # tau2-bench's own schemas (tool_schemas/PROVENANCE.md)
)

__all__ = ["CANCEL_REASONS", "ORDER_OPTIONAL_FIELDS", "SPEC", "AgentTools", "normalize_db"]
