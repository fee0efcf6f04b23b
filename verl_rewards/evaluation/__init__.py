"""Evaluate like tau2 reports: pass^k, component breakdowns and termination statistics, per data source.

* :mod:`.passk` — the formula and the success rules;
* :mod:`.runs` — one record per trial and the per-source statistics;
* :mod:`.validation` — the same numbers in verl's validation metrics (both trainers, armed by the plugin);
* :mod:`.readers` — verl validation / rollout JSONL dumps and tau2-bench ``Results`` JSON;
* :mod:`.report` — the table, JSON, baseline differences and the plot of ``verl-rewards eval``.
"""

from .passk import SuccessRule, is_tau_source, pass_at_k, pass_at_ks, pass_hat_k, pass_hat_ks, success_rule
from .runs import EvalError, Run, SourceSummary, summarize

__all__ = [
    "EvalError",
    "Run",
    "SourceSummary",
    "SuccessRule",
    "is_tau_source",
    "pass_at_k",
    "pass_at_ks",
    "pass_hat_k",
    "pass_hat_ks",
    "success_rule",
    "summarize",
]
