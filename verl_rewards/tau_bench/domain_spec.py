"""What a tau-bench v1 domain is made of: :class:`TauBenchDomainSpec`, exported by each domain module as ``SPEC``.

tau-bench (``tau_bench/envs/<domain>/env.py``) builds an environment from the domain's data loader and its tool
classes; here that is the data files the domain folder holds and the agent's toolkit class.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.toolkit import ToolSpec
from .toolkit import TauBenchToolkit


@dataclass(frozen=True)
class TauBenchDomainSpec:
    """``name``; ``data_files``: the data file stems (``"orders"`` for ``orders.json``), the first one marks a
    domain folder; ``agent_toolkit``: the :class:`~.toolkit.TauBenchToolkit` subclass of the agent's tools."""

    name: str
    data_files: tuple[str, ...]
    agent_toolkit: type[TauBenchToolkit]

    def __post_init__(self) -> None:
        where = f"TauBenchDomainSpec {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"{where}: name must be a non-empty string")
        object.__setattr__(self, "data_files", tuple(self.data_files))
        if not self.data_files or not all(isinstance(f, str) and f for f in self.data_files):
            raise ValueError(f"{where}: data_files must be non-empty file stems")
        if not (isinstance(self.agent_toolkit, type) and issubclass(self.agent_toolkit, TauBenchToolkit)):
            raise ValueError(f"{where}: agent_toolkit must be a TauBenchToolkit subclass")

    @property
    def db_file(self) -> str:
        """The data file whose presence marks a domain folder."""
        return f"{self.data_files[0]}.json"

    def agent_tool_specs(self) -> dict[str, ToolSpec]:
        """The agent's tools by name, in definition order."""
        return self.agent_toolkit.tool_specs()
