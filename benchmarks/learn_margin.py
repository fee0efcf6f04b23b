"""Whether GRPO's gain in ``verl-rewards learn`` is larger than the spread the seed alone causes.

Reads the ``learn.json`` of three or more ``learn`` runs and prints each run's after-SFT and after-GRPO validation
reward, the gains and the verdict of :class:`verl_rewards.learning.report.Margin` (the smallest gain against the
largest max-min spread over the runs of the after-SFT reward, the after-GRPO reward and the gain). Exit 0 when the
gain is shown, 1 when not, 2 on unreadable input.

    verl-rewards learn --model-seed 1 --seed 1 --out /tmp/learn/m1s1   # and --seed 2, --seed 3
    python benchmarks/learn_margin.py /tmp/learn/m1s1 /tmp/learn/m1s2 /tmp/learn/m1s3
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from verl_rewards.commands.learn import Plan
from verl_rewards.learning.report import margin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="learn output folders (or their learn.json)")
    args = parser.parse_args(argv)
    runs = []
    for name in args.runs:
        path = Path(name)
        path = path / "learn.json" if path.is_dir() else path
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
            plan = Plan(**payload["plan"])
            runs.append((f"seed {plan.seed}, model seed {plan.weights_seed}", payload))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"learn_margin: {path}: {exc}", file=sys.stderr)
            return 2
    result = margin(runs)
    print("\n".join(result.lines()))
    return 0 if result.shown else 1


if __name__ == "__main__":
    sys.exit(main())
