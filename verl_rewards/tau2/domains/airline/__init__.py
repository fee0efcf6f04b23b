"""The tau2-bench airline domain (``src/tau2/domains/airline/``): flights, users and reservations.

The DB (``db.json``) has three collections keyed by id: ``flights``, ``users`` and ``reservations``. One module
per concern:

* :mod:`.normalize` — the raw file in the exact shape of tau2's ``FlightDB.model_dump()``, so hashes match tau2's;
* :mod:`.validation` — the models tau2 builds from tool arguments, checked by the shared tau2 validation;
* :mod:`.tools` — the agent's toolkit, tau2's quirks included.

There is no user toolkit; the only terminate tool is ``transfer_to_human_agents``.
"""

from ...domain_spec import DomainSpec
from .normalize import normalize_db
from .tools import AgentTools

SPEC = DomainSpec(
    name="airline",
    files={"db": "db.json", "policy": "policy.md", "tasks": "tasks.json", "split": "split_tasks.json"},
    terminate_tools=("transfer_to_human_agents",),
    normalize_db=normalize_db,
    agent_toolkit=AgentTools,
    tool_schemas="airline.json",  # tau2-bench's own schemas (tool_schemas/PROVENANCE.md)
)

__all__ = ["SPEC", "AgentTools", "normalize_db"]
