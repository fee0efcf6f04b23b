"""Whether GRPO's gain in ``verl-rewards learn`` is larger than the spread the seed alone causes.

Reads the ``learn.json`` of three or more ``learn`` runs and prints each run's after-SFT and after-GRPO validation
reward, the gains and the verdict of :class:`verl_rewards.learning.report.Margin` (the smallest gain against the
largest max-min spread over the runs of the after-SFT reward, the after-GRPO reward and the gain). With
``--val-seeds``, each run's SFT and GRPO models are evaluated again with those validation draws
(:func:`verl_rewards.commands.learn.redraw`) and the rule is applied per validation seed too: runs from one SFT
model share their validation draws, so this shows whether the gain holds beyond the one set of draws, and the rule
is applied to the evaluations pooled over those seeds (as many more samples per row), whose verdict is the exit
status then. Exit 0 when the gain is shown, 1 when not, 2 on unreadable input.

    verl-rewards learn --seed 1 --out /tmp/learn/s1   # and --seed 2, --seed 3
    python benchmarks/learn_margin.py /tmp/learn/s1 /tmp/learn/s2 /tmp/learn/s3 [--val-seeds 4 5 6]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from verl_rewards.commands.learn import Plan, redraw
from verl_rewards.learning.report import Margin, margin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="learn output folders (or their learn.json)")
    parser.add_argument(
        "--val-seeds", type=int, nargs="*", default=[], help="evaluate every run's models again with these draws"
    )
    args = parser.parse_args(argv)
    runs, redrawn = [], []
    for name in args.runs:
        path = Path(name)
        path = path / "learn.json" if path.is_dir() else path
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
            plan = Plan(**payload["plan"])
            label = f"seed {plan.seed}, model seed {plan.weights_seed}"
            runs.append((f"{label}, validation seed {plan.validation_seed}", payload))
            redrawn.append((label, payload))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"learn_margin: {path}: {exc}", file=sys.stderr)
            return 2
    result = margin(runs)
    print("\n".join(result.lines()))
    if not args.val_seeds:
        return 0 if result.shown else 1
    labels = tuple(label for label, _ in redrawn)
    draws = []
    for val_seed in args.val_seeds:
        pairs = [redraw(payload, val_seed) for _, payload in redrawn]
        draws.append(Margin(labels, tuple(s.mean_reward for s, _ in pairs), tuple(g.mean_reward for _, g in pairs)))
        print(f"the same models, validation seed {val_seed}:")
        print("\n".join(draws[-1].lines()))
    print(f"shown for {sum(d.shown for d in draws)} of {len(draws)} sets of validation draws")
    pooled = Margin.pooled(draws)
    print(f"pooled over the {len(draws)} sets ({len(draws)} times the samples per row):")
    print("\n".join(pooled.lines()))
    return 0 if pooled.shown else 1


if __name__ == "__main__":
    sys.exit(main())
