"""What a tau2 domain is made of: :class:`DomainSpec`, one frozen value per domain module (exported as ``SPEC``).

It gathers the pieces tau2-bench wires together in each domain's ``get_environment``
(``src/tau2/domains/<name>/environment.py``): the data files, the agent toolkit, the optional user toolkit with
its own DB, the hook that keeps the two sides consistent, and how the policy text is assembled. A DomainSpec is
checked when it is built, so a domain module with a missing or inconsistent piece fails at import, naming it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.toolkit import Toolkit, ToolSpec
from .schemas import function_schema, load_schema_file

Normalizer = Callable[[Any], dict[str, Any]]
"""Raw data file content (JSON or TOML) -> the DB in the shape tau2's pydantic ``model_dump()`` gives."""
SyncHook = Callable[[Any, Any], None]
"""``sync(agent_toolkit, user_toolkit)``: run after every successful tool call (tau2's ``Environment.sync_tools``)."""
PolicyText = Callable[..., str]
"""``policy_text(data_dir, solo=False, policy_type=...)`` -> the agent policy, for policies built from files."""
Configure = Callable[[Any, dict[str, Any]], "DomainSpec"]
"""``configure(data_dir, options)`` -> the spec of the domain under those load options (banking's retrieval)."""
PrepareEnv = Callable[[Any, Any], None]
"""``prepare_env(environment, task or None)``: per-task setup of a new environment (banking's read-log allowlist)."""
TaskPolicy = Callable[[Any, Any], str]
"""``task_policy(data_dir, task)`` -> the agent policy of one task, for policies that depend on the task."""
OptionsCheck = Callable[[dict[str, Any]], Any]
"""``check_options(options)``: raises ``ValueError`` naming the option when a value is unusable (loads nothing)."""

NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
"""What a domain name looks like (it is also a module name under ``verl_rewards.tau2.domains``)."""


@dataclass(frozen=True, eq=False)
class DomainSpec:
    """A tau2 domain's parts. Treat ``files`` as read-only.

    * ``name``: the domain's name (``airline``).
    * ``files``: data file names by role: ``db``, ``tasks`` (required), ``policy`` (required unless
      ``policy_text``), ``split`` (optional), ``user_db`` (exactly when there is a user toolkit). A ``.toml`` DB
      is read as TOML, anything else as JSON.
    * ``terminate_tools``: agent tools whose call ends the episode.
    * ``normalize_db``: the agent DB's :data:`Normalizer`.
    * ``agent_toolkit``: the agent's :class:`~verl_rewards.engine.toolkit.Toolkit` class.
    * ``user_toolkit`` / ``normalize_user_db``: the user side (telecom's phone, mock's inbox), or both None.
    * ``sync_tools``: a :data:`SyncHook` (needs a user toolkit), or None.
    * ``sync_neutral``: user-toolkit helpers that write nothing the sync hook reads or writes. The hook is idempotent
      (run twice, the second run changes nothing), so after such a helper it would change nothing: a task's initial
      state is built without running it after them (each domain proves its list; telecom's tests check every call of
      every task). Needs ``sync_tools``.
    * ``shared_setup``: user-toolkit helpers whose effect is on the DBs alone, a function of their arguments and the
      DBs (no toolkit, environment or process state): when a task's first initialisation action calls one on the
      domain's own DBs, the state after it (and the sync after it) is built once per domain, on the first such
      task's first use, and shared by every task that starts with the same call (telecom: ``set_user_info``, the
      first action of all 2,285 tasks). Not with ``prepare_env`` (a per-task setup of the environment).
    * ``policy_text`` / ``policy_types``: a :data:`PolicyText` for policies assembled from several files or with
      a solo variant, and the ``policy_type`` values it accepts (empty: it takes none).
    * ``shared_user_db``: the user toolkit acts on the agent's DB (tau2's ``banking_knowledge``); then it needs
      neither ``normalize_user_db`` nor ``files['user_db']``.
    * ``configure``: a :data:`Configure` taking :func:`~verl_rewards.tau2.load_domain`'s keyword options (None: the
      domain takes none). ``prepare_env``: a :data:`PrepareEnv`. ``task_policy``: a :data:`TaskPolicy`.
    * ``load_options``: the names of the load options ``configure`` takes (a run's ``domain_options`` give each
      domain those it names: :func:`~verl_rewards.tau2.row_options.domain_load_options`); ``check_options``: an
      :data:`OptionsCheck` of their values, which ``configure`` and a run's start-up both call.
    * ``row_options``: the load options (among ``load_options``) a dataset row may choose (rows are data, configs are
      code: never an endpoint, a credential or a path; :mod:`verl_rewards.tau2.row_options`). Empty: a row chooses
      none.
    * ``solo``: whether the domain supports tau2's solo mode.
    * ``tool_schemas``: a JSON file ``{"agent": [...], "user": [...]}`` holding the OpenAI tool schemas the model
      is shown, in the order it is shown them (a bare file name is looked up in the package's ``tool_schemas/``
      folder); None: schemas generated from the toolkits' signatures and docstrings
      (:func:`~verl_rewards.tau2.schemas.function_schema`).
    """

    name: str
    files: Mapping[str, str]
    terminate_tools: tuple[str, ...]
    normalize_db: Normalizer
    agent_toolkit: type[Toolkit]
    user_toolkit: type[Toolkit] | None = None
    normalize_user_db: Normalizer | None = None
    sync_tools: SyncHook | None = None
    sync_neutral: frozenset[str] = frozenset()
    shared_setup: frozenset[str] = frozenset()
    policy_text: PolicyText | None = None
    policy_types: tuple[str, ...] = field(default=())
    shared_user_db: bool = False
    configure: Configure | None = None
    prepare_env: PrepareEnv | None = None
    task_policy: TaskPolicy | None = None
    solo: bool = True
    tool_schemas: str | None = None
    row_options: frozenset[str] = frozenset()
    load_options: frozenset[str] = frozenset()
    check_options: OptionsCheck | None = None

    def __post_init__(self) -> None:
        where = f"DomainSpec {self.name!r}"
        if not isinstance(self.name, str) or not NAME_RE.match(self.name):
            raise ValueError(f"{where}: name must match {NAME_RE.pattern}")
        if not isinstance(self.files, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in self.files.items()
        ):
            raise ValueError(f"{where}: files must map roles to file names")
        object.__setattr__(self, "files", dict(self.files))
        object.__setattr__(self, "terminate_tools", tuple(self.terminate_tools))
        object.__setattr__(self, "policy_types", tuple(self.policy_types))
        needed = ["db", "tasks"] + ([] if self.policy_text is not None else ["policy"])
        missing = [role for role in needed if role not in self.files]
        if missing:
            raise ValueError(f"{where}: files lacks {missing}")
        if not (isinstance(self.agent_toolkit, type) and issubclass(self.agent_toolkit, Toolkit)):
            raise ValueError(f"{where}: agent_toolkit must be a Toolkit subclass")
        if not callable(self.normalize_db):
            raise ValueError(f"{where}: normalize_db must be callable")
        unknown = [t for t in self.terminate_tools if t not in self.agent_toolkit.tool_specs()]
        if unknown:
            raise ValueError(f"{where}: terminate_tools {unknown} are not tools of {self.agent_toolkit.__name__}")
        if self.user_toolkit is None:
            extra = [n for n in ("normalize_user_db", "sync_tools") if getattr(self, n) is not None]
            extra += ["files['user_db']"] if "user_db" in self.files else []
            if extra:
                raise ValueError(f"{where}: {extra} given without a user_toolkit")
        else:
            if not (isinstance(self.user_toolkit, type) and issubclass(self.user_toolkit, Toolkit)):
                raise ValueError(f"{where}: user_toolkit must be a Toolkit subclass or None")
            if not self.shared_user_db and (not callable(self.normalize_user_db) or "user_db" not in self.files):
                raise ValueError(f"{where}: a user_toolkit needs normalize_user_db and files['user_db']")
        if self.sync_tools is not None and not callable(self.sync_tools):
            raise ValueError(f"{where}: sync_tools must be callable or None")
        object.__setattr__(self, "sync_neutral", frozenset(self.sync_neutral))
        object.__setattr__(self, "shared_setup", frozenset(self.shared_setup))
        kit = self.user_toolkit
        if self.sync_neutral and (self.sync_tools is None or kit is None):
            raise ValueError(f"{where}: sync_neutral needs sync_tools")
        if self.shared_setup and (kit is None or self.prepare_env is not None):
            raise ValueError(f"{where}: shared_setup needs a user_toolkit and no prepare_env")
        for helpers in ("sync_neutral", "shared_setup"):
            odd = sorted(n for n in getattr(self, helpers) if n.startswith("_") or not callable(getattr(kit, n, None)))
            if odd:
                assert kit is not None
                raise ValueError(f"{where}: {helpers} {odd} are not public methods of {kit.__name__}")
        if self.policy_types and self.policy_text is None:
            raise ValueError(f"{where}: policy_types need a policy_text")
        if self.shared_user_db and self.user_toolkit is None:
            raise ValueError(f"{where}: shared_user_db needs a user_toolkit")
        for hook in ("configure", "prepare_env", "task_policy", "check_options"):
            if getattr(self, hook) is not None and not callable(getattr(self, hook)):
                raise ValueError(f"{where}: {hook} must be callable or None")
        object.__setattr__(self, "row_options", frozenset(self.row_options))
        object.__setattr__(self, "load_options", frozenset(self.load_options))
        if not self.row_options <= self.load_options:
            raise ValueError(
                f"{where}: row_options {sorted(self.row_options - self.load_options)} are not load_options"
            )
        if self.load_options and self.configure is None and self.check_options is None:
            raise ValueError(f"{where}: load_options need a configure (or, once configured, a check_options)")
        if self.tool_schemas is not None and not (isinstance(self.tool_schemas, str) and self.tool_schemas):
            raise ValueError(f"{where}: tool_schemas must be a file name or path, or None")

    def agent_tool_specs(self) -> dict[str, ToolSpec]:
        """The agent's tools by name, in definition order."""
        return self.agent_toolkit.tool_specs()

    def user_tool_specs(self) -> dict[str, ToolSpec]:
        """The user's tools by name (empty without a user toolkit)."""
        return {} if self.user_toolkit is None else self.user_toolkit.tool_specs()

    def agent_tool_schemas(self) -> list[dict[str, Any]]:
        """The OpenAI schemas of the agent's tools, in the order the agent is shown them (a fresh copy)."""
        return copy.deepcopy(self._schemas()["agent"])

    def user_tool_schemas(self) -> list[dict[str, Any]]:
        """The OpenAI schemas of the user's tools (empty without a user toolkit; a fresh copy)."""
        return copy.deepcopy(self._schemas()["user"])

    def _schemas(self) -> dict[str, list[dict[str, Any]]]:
        cached = self.__dict__.get("_schema_cache")
        if cached is None:
            if self.tool_schemas is None:
                cached = {
                    "agent": [function_schema(n, s.func) for n, s in self.agent_tool_specs().items()],
                    "user": [function_schema(n, s.func) for n, s in self.user_tool_specs().items()],
                }
            else:
                cached = load_schema_file(
                    self.tool_schemas, self.name, list(self.agent_tool_specs()), list(self.user_tool_specs())
                )
            object.__setattr__(self, "_schema_cache", cached)
        return cached
