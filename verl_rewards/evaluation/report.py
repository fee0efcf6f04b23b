"""What ``verl-rewards eval`` prints and writes: per-source tables, JSON, differences to a baseline, a PNG plot."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import atomic_path, image_format, write_text_atomic
from .passk import success_rule
from .readers import EvalSet
from .runs import SourceSummary, summarize


@dataclass
class Evaluated:
    """The summaries of one :class:`EvalSet`."""

    eval_set: EvalSet
    summaries: dict[str, SourceSummary] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.eval_set.label


def evaluate(sets: Sequence[EvalSet], threshold: float | None = None, k: int | None = None) -> list[Evaluated]:
    """Summarise every source of every set (``threshold``: ``--success-threshold``; ``k``: ``--k``)."""
    out = []
    for eval_set in sets:
        done = Evaluated(eval_set)
        for source in sorted(eval_set.runs):
            done.summaries[source] = summarize(
                source,
                eval_set.runs[source],
                success_rule(source, threshold),
                expected_trials=eval_set.expected_trials.get(source),
                k=k,
                reward_key=eval_set.reward_key,
            )
        out.append(done)
    return out


def pair_sources(main: Evaluated, baseline: Evaluated | None) -> dict[str, SourceSummary]:
    """``{main source: baseline summary}``: same names; two single-source sets pair up whatever their names."""
    if baseline is None:
        return {}
    common = {s: baseline.summaries[s] for s in main.summaries if s in baseline.summaries}
    if not common and len(main.summaries) == 1 and len(baseline.summaries) == 1:
        return {next(iter(main.summaries)): next(iter(baseline.summaries.values()))}
    return common


def _value(metrics: dict[str, float], name: str) -> float | None:
    """A metric, with termination reasons that never occurred as share 0."""
    return metrics.get(name, 0.0 if name.startswith("termination/") else None)


def _fmt(value: float | None, name: str) -> str:
    if value is None:
        return "-"
    if name in ("num_tasks", "num_trials", "infra_errors", "reward_errors"):
        return f"{int(value)}"
    return f"{value:.4f}"


def format_tables(results: Sequence[Evaluated], baseline: Evaluated | None = None) -> str:
    """One block per set and source: metric, value (and baseline value and difference)."""
    lines: list[str] = []
    for done in results:
        lines.append(f"== {done.label}   task reward: {done.eval_set.reward_key}")
        paired = pair_sources(done, baseline)
        for source, summary in done.summaries.items():
            base = paired.get(source)
            rule = summary.success_rule or "none (mean reward only; set --success-threshold)"
            head = f"{source}   success: {rule}"
            if base is not None:
                head += f"   baseline: {baseline.label} [{base.source}]"  # type: ignore[union-attr]
            lines.append(head)
            if summary.pass_k:
                lines.append("  pass^k: all k of k trials succeed (tau2's metric); pass@k: at least one of k succeeds")
            values = summary.metrics()
            base_values = base.metrics() if base is not None else {}
            names = list(values) + [n for n in base_values if n not in values]
            width = max(len(n) for n in names) + 2
            if base is not None:
                lines.append(f"  {'metric':<{width}}{'value':>10}{'baseline':>10}{'diff':>10}")
            for name in names:
                row = f"  {name:<{width}}{_fmt(_value(values, name) if base else values.get(name), name):>10}"
                if base is not None:
                    ref, mine = _value(base_values, name), _value(values, name)
                    diff = "-" if ref is None or mine is None else _fmt(mine - ref, name)
                    diff = diff if diff.startswith("-") else "+" + diff
                    row += f"{_fmt(ref, name):>10}{diff:>10}"
                lines.append(row)
            for warning in summary.warnings:
                lines.append(f"  warning: {warning}")
        for note in done.eval_set.notes:
            lines.append(f"  note: {note}")
        lines.append("")
    return "\n".join(lines)


def to_json(results: Sequence[Evaluated], baseline: Evaluated | None = None) -> dict[str, Any]:
    """Everything the tables show, for machines (``--json``)."""

    def one(done: Evaluated) -> dict[str, Any]:
        return {
            "label": done.label,
            "step": done.eval_set.step,
            "reward_key": done.eval_set.reward_key,
            "notes": list(done.eval_set.notes),
            "sources": {s: {**m.to_dict(), "metrics": m.metrics()} for s, m in done.summaries.items()},
        }

    out: dict[str, Any] = {"inputs": [one(d) for d in results]}
    if baseline is not None:
        out["baseline"] = one(baseline)
        diffs = []
        for done in results:
            per_source = {}
            for source, base in pair_sources(done, baseline).items():
                mine, ref = done.summaries[source].metrics(), base.metrics()
                names = list(mine) + [n for n in ref if n not in mine]
                per_source[source] = {
                    n: _value(mine, n) - _value(ref, n)  # type: ignore[operator]
                    for n in names
                    if _value(mine, n) is not None and _value(ref, n) is not None
                }
            diffs.append({"label": done.label, "sources": per_source})
        out["diff"] = diffs
    return out


def write_json(data: dict[str, Any], target: str | Path) -> None:
    """``--json FILE``: the JSON written atomically."""
    write_text_atomic(target, json.dumps(data, indent=2, sort_keys=False) + "\n")


def write_plot(results: Sequence[Evaluated], target: str | Path, baseline: Evaluated | None = None) -> None:
    """An image (format from the extension, :func:`~verl_rewards.files.image_format`): pass^k vs k per source
    (baseline dashed), task reward and component bars per source (last set), and pass^1 / task reward per step when
    there are several steps."""
    fmt = image_format(target, "--plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    last = results[-1]
    steps = [d for d in results if d.eval_set.step is not None]
    panels = 3 if len(steps) > 1 else 2
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4.5), dpi=100)
    ax = axes[0]
    plotted = False
    for i, (source, summary) in enumerate(last.summaries.items()):
        color = f"C{i % 10}"
        if summary.pass_k:
            ks = sorted(summary.pass_k)
            ax.plot(ks, [summary.pass_k[k] for k in ks], marker="o", color=color, label=f"{source} pass^k")
            plotted = True
        if len(summary.pass_at_k) > 1:
            ks = sorted(summary.pass_at_k)
            ax.plot(ks, [summary.pass_at_k[k] for k in ks], ls=":", marker=".", color=color, label=f"{source} pass@k")
        base = pair_sources(last, baseline).get(source)
        if base is not None and base.pass_k:
            ks = sorted(base.pass_k)
            ax.plot(ks, [base.pass_k[k] for k in ks], ls="--", marker="x", color=color, label=f"{source} (baseline)")
            plotted = True
    ax.set_title("pass^k (all k trials succeed); pass@k dotted (one of k)")
    ax.set_xlabel("k")
    ax.set_ylim(-0.02, 1.02)
    if plotted:
        ax.legend(fontsize=8)
        ax.xaxis.get_major_locator().set_params(integer=True)
    else:
        ax.text(0.5, 0.5, "no pass^k\n(set --success-threshold)", ha="center", va="center", transform=ax.transAxes)

    ax = axes[1]
    names = ["task_reward"]
    for summary in last.summaries.values():
        names += [n for n in summary.metrics() if n.startswith(("component/", "db_match_rate", "action_"))]
    names = list(dict.fromkeys(names))
    width = 0.8 / max(1, len(last.summaries))
    for i, (source, summary) in enumerate(last.summaries.items()):
        values = summary.metrics()
        xs = [j + i * width for j in range(len(names))]
        ax.bar(xs, [values.get(n, 0.0) for n in names], width=width, color=f"C{i % 10}", label=source)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(names))])
    ax.set_xticklabels([n.removeprefix("component/") for n in names], rotation=30, ha="right", fontsize=8)
    ax.set_title("task reward and components")
    ax.legend(fontsize=8)

    if panels == 3:
        ax = axes[2]
        sources = sorted({s for d in steps for s in d.summaries})
        for i, source in enumerate(sources):
            points = [(d.eval_set.step, d.summaries[source]) for d in steps if source in d.summaries]
            xs = [float(p[0] or 0) for p in points]
            ax.plot(
                xs,
                [p[1].task_reward or 0.0 for p in points],
                marker="o",
                color=f"C{i % 10}",
                label=f"{source} task_reward",
            )
            if any(p[1].pass_k for p in points):
                ax.plot(
                    xs, [p[1].pass_k.get(1, 0.0) for p in points], ls=":", color=f"C{i % 10}", label=f"{source} pass^1"
                )
        ax.set_xlabel("step")
        ax.set_title("per step")
        ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=fmt)
    plt.close(fig)
