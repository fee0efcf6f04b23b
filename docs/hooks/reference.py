"""The generated reference pages: config keys, metrics, CLI, rewards and data sources, read from the code.

MkDocs runs this as a hook before every build (``hooks:`` in ``mkdocs.yml``), and ``python docs/hooks/reference.py``
writes the same pages by hand. Types, defaults and allowed values come from the config dataclasses and the
validators' constants; options, defaults and help from the argparse parsers; metric keys from the extras layout and
the registered rewards and families. Only the one-line meanings of config keys and metrics are written here, and
``tests/test_docs_reference.py`` fails when a key, metric or option exists in the code but not in these pages (or
the reverse).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
import sys
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1]
OUT = DOCS / "reference"

# ------------------------------------------------------------------------------------------------ config keys

#: what each ``reward.reward_kwargs`` key does (type, default and allowed values come from the code)
CONFIG_MEANINGS: dict[str, str] = {
    "contribution": "the contribution term(s): the one-term keys below, or `terms`",
    "contribution.type": "the one term's kind: C0 (blackboard hash changed), C1 (positive value delta), C2 "
    "(potential-based shaping) or none; env fallback `CONTRIBUTION` / `CONTRIB_TYPE`",
    "contribution.name": "the term's name, used in its extras `contrib_<name>` / `beta_<name>` (default: the type)",
    "contribution.beta": "β, the term's weight (β at `start_step` with a schedule); env fallback `BETA`",
    "contribution.schedule": "β by training step",
    "contribution.beta_end": "β reached at `end_step` (linear, cosine) or approached (exp)",
    "contribution.start_step": "the step where the schedule starts",
    "contribution.end_step": "the step where a linear or cosine schedule ends (after `start_step`); required there",
    "contribution.half_life": "steps for β to halve its distance to `beta_end`; required for exp",
    "contribution.gamma": "C2's discount, in (0, 1]",
    "contribution.potential_key": "the step-dict field C1 and C2 read as the value / potential",
    "contribution.value_source": "where C1's value comes from: progress (the step dicts' `value_est`) or critic "
    "(the critic's values at each assistant turn's first token and after the last; runs with a critic, "
    "`algorithm.adv_estimator=gae`)",
    "contribution.terms": "a list of terms, each with the keys above (and `name`); excludes the one-term keys",
    "decode": "how a rollout becomes text",
    "decode.include_prompt": "decode prompt + response instead of the response (unset: the reward's choice)",
    "decode.skip_special_tokens": "drop special tokens when decoding (unset: the reward's choice)",
    "timeout_s": "per-call limit in seconds, sync or async, from when a thread or worker process starts the call; "
    "over it the call gets the fallback and `reward_timeout=1`",
    "on_error": "fallback: a failure scores `fallback_reward` with `reward_error=1`; raise: re-raise (debugging)",
    "fallback_reward": "the score of a failed, timed-out or non-finite call",
    "extra_keys": "extra keys every sample reports (0.0 and listed in `reward_extra_absent` where not returned)",
    "score_kwargs": "constant keyword arguments for the scoring function",
    "max_concurrency": "concurrent scoring calls per reward worker",
    "executor": "where sync rewards that do not choose their own run",
    "modules": "module names or `.py` paths that define `@reward` / `BaseReward` rewards",
    "reward_fn": "the registered reward that scores every row (unless the row names one)",
    "reward_fn_by_source": "`{data_source: reward name}`",
    "record_trajectory": "every sample also reports `trajectory_json` (its recorded conversation) for "
    "`export-sft results`",
    "toolrl": "ToolRL's variants (rows whose data source contains `rlla`); each falls back to ToolRL's variable",
    "toolrl.with_length": "add the think-length reward in [0, 1] (env `WITHLENGTH`)",
    "toolrl.schedule_length": "the length target grows with the step, `256*step/105 + 384` (env `SCHEDULELENGTH`)",
    "toolrl.correct_max1": "correctness range [-1, 1] instead of [-3, 3] (env `CORRECTMAX1`)",
    "toolrl.max1_step30_max3": "correctness ±1 before step 30, ±3 after; format halved from step 30 "
    "(env `MAX1STEP30MAX3`)",
    "toolrl.schedule_reward": "linear schedules of the format and correctness ranges over 150 steps "
    "(env `SCHEDULEREWARD`)",
    "toolrl.refined_reward": "strict (order-sensitive) name/key matching (env `REFINEDREWARD`)",
    "toolrl.intermediate_reward": "one point per exactly matched call, no per-parameter credit "
    "(env `INTERMEDIATEREWARD`)",
    "toolrl.coarse_reward": "all-or-nothing correctness (env `COARSEREWARD`)",
    "toolrl.chat_template": "where the prediction starts: the last assistant header of this template "
    "(env `EXPERIMENT_NAME`)",
    "tau2": "tau2-bench rows (`tau2/<domain>`)",
    "tau2.data_dir": "the tau2 data folder (else `TAU2_DATA_DIR`, else the folder `data get` installs)",
    "tau2.reward": "the formula: tau2's, or tau-bench's (final-DB hash + required outputs) on tau2 tasks",
    "tau2.nl_policy": "NL assertions: skip them, or require a judge",
    "tau2.judge": "the NL-assertion judge: `module:function`, or `{backend: openai, base_url, model}`",
    "tau2.assertion_errors": "an env assertion that raises: counts as unmet (zero), or raises",
    "tau2.default_termination": "the termination reason when the rollout recorded none",
    "tau2.partial_credit": "true (0.7 actions, 0.2 env assertions, 0.1 communicate) or `{component: weight}`: "
    "report the dense `tau2_partial_credit`",
    "tau_bench": "tau-bench v1 rows (`tau_bench/<domain>`)",
    "tau_bench.data_dir": "the tau-bench data folder (else `TAU_BENCH_DATA_DIR`, else the folder `data get` installs)",
}


@dataclasses.dataclass(frozen=True)
class ConfigKey:
    """One ``reward.reward_kwargs`` key as the code defines it."""

    key: str
    type: str
    default: Any
    allowed: tuple[str, ...] = ()

    @property
    def meaning(self) -> str:
        return CONFIG_MEANINGS.get(self.key, "")


def _field(cls: type, name: str) -> dataclasses.Field[Any]:
    return next(f for f in dataclasses.fields(cls) if f.name == name)


def _default(cls: type, name: str) -> Any:
    f = _field(cls, name)
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _of(cls: type, name: str, key: str, allowed: tuple[str, ...] = (), type_: str | None = None) -> ConfigKey:
    return ConfigKey(key, type_ or str(_field(cls, name).type), _default(cls, name), tuple(allowed))


def config_keys() -> list[ConfigKey]:
    """Every ``reward.reward_kwargs`` key, from the config dataclasses and the validators' constants."""
    from verl_rewards import contribution as contrib
    from verl_rewards.catalog import BUILTIN_FAMILIES
    from verl_rewards.engine.termination import TerminationReason
    from verl_rewards.manager import config as mc
    from verl_rewards.scoring.contract import DecodeConfig
    from verl_rewards.scoring.executors.base import EXECUTORS
    from verl_rewards.tau2 import verl_scorer as tau2
    from verl_rewards.tau2.evaluator import NL_POLICIES
    from verl_rewards.tau_bench import verl_scorer as tau_bench
    from verl_rewards.toolrl.options import CHAT_TEMPLATES, ToolRLOptions

    allowed = {"on_error": mc.ON_ERROR_CHOICES, "executor": EXECUTORS}
    keys: list[ConfigKey] = []
    for f in dataclasses.fields(mc.ManagerConfig):
        if f.name not in mc.ENGINE_KEYS:
            continue
        if f.name == "contribution":
            keys.append(ConfigKey("contribution", "mapping", None))
            term = {"type": ("str", "none", contrib.CONTRIB_TYPES), "name": ("str", None, ())}
            for name, (type_, default, choices) in term.items():
                keys.append(ConfigKey(f"contribution.{name}", type_, default, tuple(choices)))
            for name in ("beta", "beta_end", "start_step", "end_step", "half_life"):
                keys.append(_of(contrib.BetaSchedule, name, f"contribution.{name}"))
            keys.append(_of(contrib.BetaSchedule, "kind", "contribution.schedule", contrib.SCHEDULES, type_="str"))
            for name in ("gamma", "potential_key"):
                keys.append(_of(contrib.ContributionTerm, name, f"contribution.{name}"))
            keys.append(
                _of(contrib.ContributionTerm, "value_source", "contribution.value_source", contrib.VALUE_SOURCES)
            )
            keys.append(ConfigKey("contribution.terms", "list[mapping]", None))
        elif f.name == "decode":
            keys.append(ConfigKey("decode", "mapping", None))
            keys.extend(_of(DecodeConfig, g.name, f"decode.{g.name}") for g in dataclasses.fields(DecodeConfig))
        else:
            keys.append(_of(mc.ManagerConfig, f.name, f.name, allowed.get(f.name, ())))
    sections: dict[str, tuple[type, dict[str, tuple[str, ...]]]] = {
        "toolrl": (ToolRLOptions, {"chat_template": CHAT_TEMPLATES}),
        "tau2": (
            tau2.Tau2Options,
            {
                "reward": tuple(tau2.REWARD_NAMES),
                "nl_policy": NL_POLICIES,
                "assertion_errors": tau2.ASSERTION_ERRORS,
                "default_termination": tuple(str(r) for r in TerminationReason),
            },
        ),
        "tau_bench": (tau_bench.TauBenchOptions, {}),
    }
    for family in BUILTIN_FAMILIES:
        cls, choices = sections[family.name]
        keys.append(ConfigKey(family.name, "mapping", None))
        keys.extend(
            _of(cls, g.name, f"{family.name}.{g.name}", choices.get(g.name, ())) for g in dataclasses.fields(cls)
        )
    return keys


def _cell(value: Any) -> str:
    text = "" if value is None or value == "" else f"`{value!r}`" if not isinstance(value, str) else f"`{value}`"
    return text.replace("|", "\\|")


def config_page() -> str:
    lines = [
        "# Configuration keys (`reward.reward_kwargs.*`)",
        "",
        "Generated from the config dataclasses and validators (`docs/hooks/reference.py`). Every key is validated "
        "when the manager is built: an unknown key or a bad value stops the run at start-up with an error naming "
        "the key. A Hydra key wins over the environment variable named as its fallback.",
        "",
        "| key | type | default | allowed | meaning |",
        "|---|---|---|---|---|",
    ]
    for k in config_keys():
        allowed = ", ".join(f"`{a}`" for a in k.allowed)
        lines.append(
            f"| `{k.key}` | `{k.type}`".replace("|`", "| `") + f" | {_cell(k.default)} | {allowed} | {k.meaning} |"
        )
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ metrics

#: what each per-sample extra key means (logged as ``reward_extra/<key>/mean|max|min`` when numeric)
METRIC_MEANINGS: dict[str, str] = {
    "base_score": "the scoring function's score before contribution (the task reward)",
    "contrib": "the contribution bonus added to `base_score`: `sum_i beta_i * R_i` (0 when contribution is off, "
    "and when base + bonus would exceed ±2**108: the sample then scores `fallback_reward` plus the bonus if that "
    "fits, else the fallback alone, with `reward_error=1`)",
    "contrib_<name>": "a configured term's `R` before β (`contrib_c0`, ...)",
    "beta_<name>": "a configured term's β at that step (`beta_c0`, ...)",
    "contrib_missing": "with a C1 or C2 term: potential reads that were missing or not finite (counted as 0.0)",
    "reward_error": "1 if the call raised or returned no valid finite score",
    "reward_timeout": "1 if the call exceeded `timeout_s`",
    "step_dict_error": "1 if a step dict was present but unusable (bad or too deeply nested JSON, wrong type): the "
    "defaults were used",
    "step_error": "1 if a step field was present but not a training step (inf, negative, text, a 400-digit "
    "integer): skipped, the next source used (0 when none)",
    "extra_dropped": "values dropped from this sample's extras (not finite or beyond ±2**108: NaN, inf, `10**400`; "
    "not storable; or an undeclared name over 128 characters)",
    "reward_extra_absent": "text: the declared keys this sample did not report (their 0.0 is a placeholder)",
    "reward_extra_undeclared": "text: components returned without being declared, as JSON (logged all the same)",
    "trajectory_json": "text, with `record_trajectory`: the sample's recorded conversation",
    "trajectory_error": "with `record_trajectory`: 1 if the recorded messages could not be written as JSON (its "
    "`trajectory_json` is then absent)",
    "acc": "the score, when the function returned a plain number (as verl's `naive` manager)",
    "format": "ToolRL: the format reward (ToolRL rows, or a function returning a 4-tuple)",
    "correctness": "ToolRL: the correctness reward",
    "length": "ToolRL: the think-length reward; `length_penalty`: the response length",
    "over_length": "`length_penalty`: characters over the limit",
    "f1": "`qa_f1` / `qa_em`: token F1",
    "em": "`qa_f1` / `qa_em`: exact match",
    "precision": "`qa_f1` / `qa_em`: token precision",
    "recall": "`qa_f1` / `qa_em`: token recall",
    "db_match": "tau2: the final DB equals the gold replay's (0/1)",
    "tau2_db": "tau2: the DB component (1.0 when not in the task's basis)",
    "tau2_env_assertion": "tau2: the env-assertion component (1.0 when not in the task's basis)",
    "tau2_action": "tau2: the action component (1.0 when not in the task's basis)",
    "tau2_communicate": "tau2: the communicate component (1.0 when not in the task's basis)",
    "tau2_nl_assertion": "tau2: the NL-assertion component (1.0 when not in the task's basis)",
    "tau2_partial_credit": "tau2 with `tau2.partial_credit`: the dense partial-credit score",
    "tau2_read_actions": "tau2: gold read actions",
    "tau2_read_correct": "tau2: gold read actions the trajectory matched",
    "tau2_write_actions": "tau2: gold write actions",
    "tau2_write_correct": "tau2: gold write actions the trajectory matched",
    "tau2_basis": "text, tau2: the scored components (comma-separated; empty after an early stop)",
    "termination": "text, tau2 / tau-bench v1: how the episode ended (tau2: `agent_stop`, `user_stop`, "
    "`max_steps`, ...; tau-bench normal mode: `user_stop`, `transfer`, `max_steps`, `user_error`, ...; instruction "
    "mode: `agent_reply`, `transfer`, `crash`, `max_steps`); not averaged, but in validation dumps and read by the "
    "pass^k statistics",
    "user_error": "normal mode: 1 when the run ended because the simulated user's backend failed (endpoint down, "
    "timeout after retries, malformed reply)",
    "row_options_refused": "tau2: 1 when the row carried load options only the configuration may choose",
    "tb_r_actions": "tau-bench (both families): the data hash matches the gold's",
    "tb_r_outputs": "tau-bench (both families): the required outputs were said (1 when none)",
    "tb_outputs_found": "tau-bench v1: the share of required outputs said",
    "tb_done": "tau-bench v1: the episode ended (reply, `###STOP###` or transfer; 0 = out of turns, scored 0)",
    "tb_transfer": "tau-bench v1: the episode ended by a transfer",
}

#: validation metrics ``val-aux/<data_source>/<name>`` (several trials per prompt), and ``verl-rewards eval``
VALIDATION_MEANINGS: dict[str, str] = {
    "num_tasks": "tasks evaluated (prompts: verl's `uid`, so a prompt listed twice counts as two tasks)",
    "num_trials": "trials per task",
    "task_reward": "mean task reward (`base_score`, without the contribution bonus; verl's `reward` when a manager "
    "reports no `base_score`)",
    "pass^k": "tau2 / tau-bench sources: mean over tasks of `C(c, k) / C(n, k)` (n trials, c successes; success = "
    "task reward within 1e-6 of 1.0, tau2's rule), for k up to the fewest trials of a task; pass^1 is the success "
    "rate",
    "pass@k": "the same trials, unbiased pass@k: mean over tasks of `1 - C(n - c, k) / C(n, k)`",
    "infra_errors": "trials that ended in an infrastructure error (user backend), left out of pass^k",
    "reward_errors": "trials whose reward call failed",
    "termination/<reason>": "share of trials per termination reason (`agent_stop`, `user_stop`, `max_steps`, ...)",
    "db_match_rate": "share of trials whose final DB matched the gold DB, among those that stopped normally (tau2 "
    "checks no DB after an early stop)",
    "action_<kind>_accuracy": "matched gold actions of this kind (`read`, `write`) over all of them",
    "component/<name>": "mean of a reward component over the trials where it was scored (in the task's basis), "
    "e.g. `component/communicate`",
}


def builtin_rewards() -> list[Any]:
    """The rewards this package registers (not those a user's or a test's module added in this process)."""
    from verl_rewards import catalog
    from verl_rewards.scoring.spec import get_reward, registered_names

    catalog.register_builtins()
    specs = [get_reward(name) for name in registered_names()]
    package = os.path.dirname(os.path.realpath(catalog.__file__)) + os.sep  # where a built-in reward is defined
    return [s for s in specs if s.origin.startswith(package)]


def metric_keys() -> list[str]:
    """Every per-sample extra key the code can report, patterns (``contrib_<name>``) included."""
    from verl_rewards import catalog
    from verl_rewards.catalog import BUILTIN_FAMILIES
    from verl_rewards.scoring import extras, recorded
    from verl_rewards.scoring.result import NUMBER_KEY

    catalog.register_builtins()
    keys = [*extras.BASE_EXTRA_KEYS, "contrib_<name>", "beta_<name>", "contrib_missing"]
    keys += [extras.ABSENT_KEY, extras.UNDECLARED_KEY, *recorded.RECORDED_KEYS, NUMBER_KEY]
    for family in BUILTIN_FAMILIES:
        keys += [*family.extra_keys, *family.text_keys]
    for spec in builtin_rewards():
        keys += [*spec.extra_keys, *spec.text_keys]
    return list(dict.fromkeys(keys))


def metrics_page() -> str:
    lines = [
        "# Metrics",
        "",
        "Generated from the extras layout and the registered rewards and families (`docs/hooks/reference.py`).",
        "",
        "## Training: `reward_extra/<key>/mean|max|min`",
        "",
        "Every sample of a run reports the same extra keys, fixed when the manager is built (those of the rewards "
        "the configuration can reach). Numeric keys are logged as `reward_extra/<key>/mean`, `/max`, `/min` over the "
        "samples that reported them; text keys are not averaged but travel in validation dumps. verl's own "
        "`critic/score/*` is the total, `base_score + contrib`.",
        "",
        "| key | meaning |",
        "|---|---|",
    ]
    lines += [f"| `{k}` | {METRIC_MEANINGS.get(k, '')} |" for k in metric_keys()]
    lines += ["| any other key of a returned dict | declared: its own column; undeclared: `reward_extra_undeclared` |"]
    lines += [
        "",
        "## Validation: `val-aux/<data_source>/<name>`",
        "",
        "With several trials per prompt (`actor_rollout_ref.rollout.val_kwargs.n=N`) both trainers log these per "
        "data source; `verl-rewards eval` prints the same statistics offline.",
        "",
        "| name | meaning |",
        "|---|---|",
    ]
    lines += [f"| `{k}` | {v} |" for k, v in VALIDATION_MEANINGS.items()]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ CLI


def subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(command path, parser)`` of every (sub)command under ``parser``, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = f"{prefix} {name}".strip()
                yield path, sub
                yield from subcommands(sub, path)


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's own options and positionals (not ``--help``, not its subcommand choice)."""
    return [
        a
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction) and a.help != argparse.SUPPRESS
    ]


def _option_row(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    names = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.metavar or action.dest}`"
    choices = ", ".join(f"`{c}`" for c in action.choices) if action.choices else ""
    formatter = parser._get_formatter()
    text = formatter._expand_help(action) if action.help else ""  # the help as --help prints it, defaults included
    return f"| {names} | {choices} | {_text(text)} |"


def _text(text: str) -> str:
    """Help text as a Markdown table cell: one line, pipes and angle brackets escaped (``<out>`` is no HTML tag)."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def cli_page() -> str:
    from verl_rewards.cli import build_parser

    parser = build_parser()
    lines = [
        "# Command line: `verl-rewards`",
        "",
        "Generated from the argparse parsers (`docs/hooks/reference.py`); `verl-rewards COMMAND --help` prints "
        "the same. Usage and configuration errors exit with 2 and one line naming the flag.",
        "",
    ]
    for path, sub in subcommands(parser):
        lines += [f"## `{path}`", "", _text(sub.description or ""), "", "```text"]
        lines += [" ".join(sub.format_usage().split()), "```", ""]
        rows = [_option_row(sub, a) for a in options(sub)]
        if rows:
            lines += ["| option | choices | help |", "|---|---|---|", *rows, ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ rewards


def _first_line(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split()).replace("|", "\\|")


def rewards_page() -> str:
    from verl_rewards import catalog
    from verl_rewards.catalog import BUILTIN_FAMILIES
    from verl_rewards.tau2.registry import available_domains
    from verl_rewards.tau_bench.domain import DOMAINS as TAU_BENCH_DOMAINS

    catalog.register_builtins()
    lines = [
        "# Rewards and data sources",
        "",
        "Generated from the reward registry and the family registry (`docs/hooks/reference.py`).",
        "",
        "## Registered rewards",
        "",
        "Choose one with `reward.reward_kwargs.reward_fn`, `reward_fn_by_source`, a row's `reward_fn` field, or "
        "`verl-rewards score --reward NAME`.",
        "",
        "| name | extra keys | text keys | executor | what it scores |",
        "|---|---|---|---|---|",
    ]
    for spec in builtin_rewards():
        name = spec.name
        extra = ", ".join(f"`{k}`" for k in dict.fromkeys(spec.extra_keys))
        text = ", ".join(f"`{k}`" for k in spec.text_keys)
        lines.append(f"| `{name}` | {extra} | {text} | {spec.executor or 'run default'} | {_first_line(spec.func)} |")
    lines += [
        "",
        "## Reward families (chosen by a row's `data_source`)",
        "",
        "Tried in this order when no reward is named; each is configured by its own `reward.reward_kwargs.<name>` "
        "section.",
        "",
        "| family | data sources | extra keys |",
        "|---|---|---|",
    ]
    for family in BUILTIN_FAMILIES:
        extra = ", ".join(f"`{k}`" for k in dict.fromkeys((*family.extra_keys, *family.text_keys)))
        lines.append(f"| `{family.name}` | {_first_line(family.matches)} | {extra} |")
    lines += [
        "",
        "## Data sources",
        "",
        "| data source | family |",
        "|---|---|",
        "| any containing `rlla` | `toolrl` |",
    ]
    lines += [f"| `tau2/{d}` | `tau2` |" for d in available_domains()]
    lines += [f"| `tau_bench/{d}` | `tau_bench` |" for d in TAU_BENCH_DOMAINS]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ agent loops

#: what each normal-mode agent-loop key means; ``user.*`` keys are shared by both loops (one user-backend validator)
LOOP_MEANINGS = {
    "user": "the user simulator's settings (below); required",
    "user.backend": "`openai` (an OpenAI-compatible endpoint plays the user), `policy` (the policy's own rollout "
    "server does: self-play), `scripted` (per-task scripts, for tests and smoke runs); required",
    "user.base_url": "`openai`: the endpoint, ending before `/chat/completions` (`http://host:8000/v1`); required",
    "user.model": "`openai`: the model name sent with every request; required",
    "user.api_key_env": "environment variable holding the API key, read at call time (unset: no key is sent)",
    "user.temperature": "the user's sampling temperature (tau2 uses 0.0)",
    "user.sampling": "extra request fields sent with every user call (`top_p`, `max_tokens`, ...)",
    "user.timeout_s": "seconds per attempt; a failed attempt (timeout, connection error, 408/409/429/5xx) is retried",
    "user.retries": "more attempts after a failed one, with doubling pauses",
    "user.backoff_s": "the first pause between attempts (doubled per retry)",
    "user.max_concurrency": "user calls in flight per agent-loop worker, shared by its trajectories",
    "user.seed": "run seed; a trajectory's user seed is tau2's trial seed (`random.seed(seed)`, "
    "`randint(0, 1_000_000)` per trial), the trial being the rollout's index within its prompt group",
    "user.scripts": "`scripted`: a JSON/YAML file `{task_id: [turn, ...]}`, a turn is text or "
    "`{content, tool_calls: [{name, arguments}]}`; a task without a script gets its default script",
    "user.max_tokens": "`policy`: tokens per user turn",
    "max_steps": "tau2's step limit of a conversation",
    "max_errors": "tau2's limit of tool errors in a conversation",
    "enforce_communication_protocol": "a message with both text and a tool call ends the run (tau2's option)",
    "agent_message_errors": "an empty agent message or malformed tool-call JSON: `agent_error` (scored 0) or "
    "`infrastructure_error` (tau2's rule, left out of pass^k)",
    "data_dir": "the data folder (else the benchmark's variable, else the folder `data get` installs; a row's "
    "`data_dir` never chooses it)",
    "domain_options": "the domain's load options, e.g. banking_knowledge's dense endpoint (`retrieval`, "
    "`embeddings_*`) or telecom's `vpn_details` (`process`, tau2's default: one VPN shared by the worker's episodes; "
    "`episode`: each its own); each domain of the run takes the keys it names (one setting serves a dataset mixing "
    "domains), a key no domain takes is refused at start-up naming it; a row's `extra_info.domain_options` may "
    "choose only what the domain lists",
    "max_num_steps": "tau-bench's limit of agent steps in a conversation",
}


def _loop_settings() -> dict[str, tuple[type, Collection[str]]]:
    """Each normal-mode loop's section name, its settings dataclass and the keys its validator accepts."""
    from verl_rewards.tau2.normal import agent_loop as tau2_loop
    from verl_rewards.tau_bench import normal as tau_bench_loop

    return {
        "tau2": (tau2_loop.NormalSettings, tau2_loop._SETTINGS_KEYS),
        "tau_bench": (tau_bench_loop.TauBenchNormalSettings, tau_bench_loop._SETTINGS_KEYS),
    }


def loop_sections() -> dict[str, list[str]]:
    """Every key each normal-mode agent loop accepts under ``actor_rollout_ref.rollout.custom.<section>``, from the
    validators' own key sets (the loop's settings and the shared user backend)."""
    from verl_rewards.engine import users

    user_keys = [f"user.{k}" for k in sorted(users._KEYS)]
    return {name: sorted(keys) + user_keys for name, (_, keys) in _loop_settings().items()}


def _loop_default(settings: type, key: str) -> Any:
    """The default the validator applies, read from the section's settings dataclass or the user backend's
    (``None``: required, unset or a mapping)."""
    from verl_rewards.engine.client import Endpoint
    from verl_rewards.engine.users import UserConfig

    if key == "user.temperature":
        return dict(_default(UserConfig, "sampling"))["temperature"]
    name = key.removeprefix("user.")
    for cls in (UserConfig, Endpoint) if key.startswith("user.") else (settings,):
        if name in {f.name for f in dataclasses.fields(cls)} and name not in ("user", "sampling", "domain_options"):
            return _default(cls, name)
    return None


def loops_page() -> str:
    lines = [
        "# Agent-loop settings (`actor_rollout_ref.rollout.custom.*`)",
        "",
        "Generated from the normal-mode loops' validators (`docs/hooks/reference.py`). Set them with Hydra's `+` "
        "prefix, e.g. `+actor_rollout_ref.rollout.custom.tau2.user.backend=openai`. The loop validates its section "
        "when it starts: an unknown key or a bad value is an error naming the key.",
    ]
    settings = _loop_settings()
    for section, keys in loop_sections().items():
        lines += ["", f"## `custom.{section}`", "", "| key | default | meaning |", "|---|---|---|"]
        for key in keys:
            default = _loop_default(settings[section][0], key)
            lines.append(f"| `{key}` | {_cell(default)} | {LOOP_MEANINGS.get(key, '')} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ writing

PAGES = {
    "config.md": config_page,
    "agent-loops.md": loops_page,
    "metrics.md": metrics_page,
    "cli.md": cli_page,
    "rewards.md": rewards_page,
}


def write_pages(out: Path = OUT) -> list[Path]:
    """Write every generated page; unchanged pages are not rewritten (MkDocs' watcher does not loop)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in PAGES.items():
        path = out / name
        text = make()
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def on_pre_build(config: Any) -> None:
    """MkDocs hook: regenerate the reference pages before the docs are read."""
    write_pages(Path(config["docs_dir"]) / "reference")


if __name__ == "__main__":
    for p in write_pages():
        print(p.relative_to(Path.cwd()) if p.is_relative_to(Path.cwd()) else p)
    sys.exit(0)
