"""The environment and conversation engine that tau2 (:mod:`verl_rewards.tau2`) and tau-bench
(:mod:`verl_rewards.tau_bench`) are both built on, as tau2-bench keeps its generic environment code apart from its
domains. It imports no other part of the package but the file helpers, and nothing of either benchmark.

* :mod:`.state` — copy-on-write DB state over a shared base; how the DB becomes hash text is a :class:`Codec`;
* :mod:`.toolkit` — ``@tool``, :class:`Toolkit`, tool-output serialisation;
* :mod:`.environment` — one episode: toolkits, the action log, replay of recorded messages;
* :mod:`.trajectory` — the OpenAI-style message format rewards read, parsed defensively;
* :mod:`.errors` — the errors both benchmarks raise (:class:`EngineError` and its kinds);
* :mod:`.data_dir` — the one rule for where a benchmark's data are;
* :mod:`.termination` — :class:`TerminationReason`; :mod:`.rules` — :class:`RuleSet` and its presets
  :data:`TAU2`, :data:`TAU_BENCH`;
* :mod:`.conversation` — the half-duplex agent / simulated-user engine; :mod:`.users`, :mod:`.client` — user
  backends and the OpenAI-compatible client; :mod:`.simulate` — what both ``simulate`` commands share;
* :mod:`.verl_tools`, :mod:`.agent_loop` — the engine behind verl's tools and inside verl's ``ToolAgentLoop``
  (they import verl, so they are not imported here);
* :mod:`.datasets`, :mod:`.retail_airline` — what both dataset builders, and both benchmarks' retail and airline
  tools, share.
"""

from .conversation import Conversation, Reply
from .environment import Environment
from .errors import EngineError
from .rules import TAU2, TAU_BENCH, RuleSet
from .state import BaseDB, Codec, DBState
from .termination import TerminationReason
from .toolkit import Toolkit, ToolSpec, tool

__all__ = [
    "TAU2",
    "TAU_BENCH",
    "BaseDB",
    "Codec",
    "Conversation",
    "DBState",
    "EngineError",
    "Environment",
    "Reply",
    "RuleSet",
    "TerminationReason",
    "ToolSpec",
    "Toolkit",
    "tool",
]
