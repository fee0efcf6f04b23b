"""What a smoke run's files say once ``main_ppo`` has exited: the stage a failed run died in, the first reward error
in its log, the time per stage, whether every step, validation and the checkpoint are there (:func:`check_run`) and
whether the reward reached the update (:func:`check_signal`).

The log is the run's own (``OUT/run.log``: everything ``main_ppo`` and its Ray actors printed). A failed run often
ends with an error that is only a consequence (every group of a step failed, so TransferQueue is asked for no
keys): the stage is read from the first traceback that nothing handled, innermost frame first, and a reward input
error anywhere names the reward stage.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import SmokeError

#: (stage, needles in a traceback frame or a line of the log's tail), looked up from the innermost frame outwards
_STAGE_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("checkpoint", ("save_checkpoint", "load_checkpoint")),
    ("validation", ("_validate", "val_metrics")),
    (
        "reward",
        (
            "RewardLoopWorker",
            "compute_score",
            "reward_manager",
            "run_single",
            "verl_rewards/scoring/",
            "verl_rewards/manager/",
            "reward_loop",
        ),
    ),  # fmt: skip
    ("rollout", ("AgentLoopWorker", "HFCpuServer", "agent_loop", "generate_sequences")),
    (
        "update",
        (
            "update_actor",
            "compute_log_prob",
            "compute_ref_log_prob",
            "update_weights",
            "compute_advantage",
            "core_algos",
            "update_critic",
            "compute_values",
        ),
    ),  # fmt: skip
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Ray's prefix on an actor's lines: ``(TaskRunnerV1 pid=123)`` / ``(pid=123, ip=...)``
_RAY_PREFIX = re.compile(r"^\((?:\S+ )?pid=\d+[^)]*\)\s?")
_TRACEBACK = "Traceback (most recent call last):"
#: the manager's log line for a reward call that failed and scored the fallback (``manager/core.py`` FailureLog)
_HANDLED = re.compile(r"verl-rewards: (.{1,300}?) for sample (\S{1,80}) \(failure (\d+);")
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Interrupt|Exit)\w*)(?:\(\w+\))?: (.*)$")
#: the longest message a summary line quotes
MESSAGE_CHARS = 500
REWARD_INPUT_ERROR = "RewardInputError"
#: the share of failed reward calls: in training (our ``reward_extra`` metric) and in validation (verl's mean@N)
_REWARD_ERROR_KEY = re.compile(r"^(?:reward_extra/reward_error/mean|val-[\w-]+/.+/reward_error/mean@\d+)$")


def log_lines(log: str) -> list[str]:
    """The log's lines without terminal colours and Ray's actor prefixes."""
    return [_RAY_PREFIX.sub("", _ANSI.sub("", line)) for line in log.splitlines()]


def _tracebacks(lines: Sequence[str]) -> list[tuple[int, int, bool]]:
    """``(first, last, handled)`` line numbers of every traceback; ``handled``: the manager logged it as a reward
    call that scored the fallback (the run went on)."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != _TRACEBACK:
            i += 1
            continue
        j = i + 1  # frames are indented; a chained header (Ray's RayTaskError line) is followed by indented lines
        while j < len(lines) and (_indented(lines[j]) or (lines[j].strip() and j + 1 < len(lines) and
                                                          _indented(lines[j + 1]))):  # fmt: skip
            j += 1
        handled = any(_HANDLED.search(lines[k]) for k in range(max(0, i - 3), i))
        out.append((i, min(j, len(lines) - 1), handled))  # lines[j]: the exception line
        i = j + 1
    return out


def _indented(line: str) -> bool:
    return line[:1].isspace()


def failed_stage(log: str, steps_logged: int) -> str:
    """Name the stage a failed run died in (see the module doc)."""
    lines = log_lines(log)
    if "all initialize finished" not in log and steps_logged == 0:
        return "set-up"
    if any(REWARD_INPUT_ERROR in line for line in lines):
        return "reward"
    blocks = _tracebacks(lines)
    fatal = [b for b in blocks if not b[2]]
    if fatal:
        first, last, _ = fatal[0]
        frames = lines[first : last + 1]
    else:
        frames = lines[-200:]
    for line in reversed(frames):
        for stage, needles in _STAGE_PATTERNS:
            if any(n in line for n in needles):
                return stage
    return "set-up" if steps_logged == 0 else "update"


def _bounded(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 3] + "..."


def first_reward_error(log: str) -> str | None:
    """The first reward error in the log, as one line: a reward input error (it stops the run) or the first reward
    call that failed and scored the fallback, with its exception; ``None`` when there is none."""
    lines = log_lines(log)
    for i, line in enumerate(lines):
        if REWARD_INPUT_ERROR in line:
            match = _EXCEPTION_LINE.match(line.strip())
            if match and match.group(1).endswith(REWARD_INPUT_ERROR):
                return _bounded(f"{REWARD_INPUT_ERROR}: {match.group(2)}")
        handled = _HANDLED.search(line)
        if handled:
            what = f"{handled.group(1)} for sample {handled.group(2)}"
            blocks = [b for b in _tracebacks(lines[i + 1 : i + 400]) if b[0] <= 2]
            if blocks:
                _, last, _ = blocks[0]
                exc = _EXCEPTION_LINE.match(lines[i + 1 + last].strip())
                if exc:
                    return _bounded(f"{what}: {exc.group(1)}: {exc.group(2)}")
            return _bounded(what)
    return None


def stage_timings(records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Seconds per stage, summed over the training steps (verl's ``timing_s/*``)."""
    groups = {
        "rollout (incl. streaming reward)": ("gen",),
        "reward": ("reward",),
        "update": ("old_log_prob", "ref", "adv", "update_actor", "update_weights"),
        "validation": ("testing",),
        "checkpoint": ("save_checkpoint",),
        "steps total": ("step",),
    }
    out: dict[str, float] = {}
    for name, keys in groups.items():
        total = 0.0
        seen = False
        for rec in records:
            data = rec.get("data") or {}
            for key in keys:
                value = data.get(f"timing_s/{key}")
                if isinstance(value, (int, float)) and math.isfinite(value):
                    total += float(value)
                    seen = True
        if seen:
            out[name] = total
    return out


def check_run(
    out: Path, steps: int, records: Sequence[Mapping[str, Any]], validations: Collection[int] | None = None
) -> None:
    """After a zero exit: the steps, the validations and the checkpoint are there, else the stage that is not.
    ``validations``: the steps that must hold a validation record (default: two records, before and after training,
    as a smoke run validates)."""
    train = [r for r in records if any(k.startswith("actor/") for k in r.get("data") or {})]
    if len(train) < steps:
        raise SmokeError("update", f"{len(train)} of {steps} training steps logged in {out / 'metrics.jsonl'}")
    vals = [r for r in records if any(k.startswith("val-") for k in r.get("data") or {})]
    if validations is None and len(vals) < 2:
        raise SmokeError("validation", f"{len(vals)} validation record(s) in metrics.jsonl; expected before and after")
    missing = sorted(set(validations or ()) - {int(r.get("step", 0)) for r in vals})
    if missing:
        raise SmokeError("validation", f"no validation record at step(s) {missing} in {out / 'metrics.jsonl'}")
    ckpt = out / "checkpoints" / f"global_step_{steps}"
    if not ckpt.is_dir():
        raise SmokeError("checkpoint", f"no checkpoint at {ckpt}")


def _number(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


#: what to change when every group tied, in a smoke run
TIED_HINT = "scripted gold rollouts all earn the gold reward: --script-ratio below 1 mixes sampled ones into each group"


def check_signal(records: Sequence[Mapping[str, Any]], log_path: Path, tied_hint: str = TIED_HINT) -> None:
    """After a run that exited 0: the reward reached the update, else :class:`SmokeError` naming the cause
    (``tied_hint``: what to change when every group tied).

    * a step whose every reward failed (``reward_extra/reward_error/mean`` = 1 in training, ``.../reward_error/mean@N``
      in validation) -> stage ``reward``, with the first reward error of the log;
    * no training step with ``critic/advantages/max`` > 0 > ``critic/advantages/min`` (every group scored alike)
      -> stage ``update``;
    * ``actor/pg_loss`` 0 in every training step -> stage ``update``.
    """
    for record in records:
        data = record.get("data") or {}
        for key in filter(_REWARD_ERROR_KEY.search, data):
            if _number(data, key) == 1.0:
                log = log_path.read_text(encoding="utf-8", errors="replace") if log_path.is_file() else ""
                first = first_reward_error(log) or f"no reward error in {log_path}"
                where = "the validation at step" if key.startswith("val-") else "training step"
                raise SmokeError(
                    "reward", f"every reward of {where} {record.get('step')} failed ({key} = 1.0); first error: {first}"
                )
    train = [r.get("data") or {} for r in records if any(k.startswith("actor/") for k in r.get("data") or {})]
    spread = [
        (_number(d, "critic/advantages/max"), _number(d, "critic/advantages/min"))
        for d in train
        if "critic/advantages/max" in d
    ]
    if not any(hi is not None and lo is not None and hi > 0 > lo for hi, lo in spread):
        raise SmokeError(
            "update",
            f"no training step had critic/advantages/max > 0 > critic/advantages/min ({len(train)} steps): every "
            f"group's rollouts scored alike, so GRPO's advantages were 0 and the reward moved nothing ({tied_hint})",
        )
    if all(_number(d, "actor/pg_loss") in (0.0, None) for d in train):
        raise SmokeError(
            "update",
            f"actor/pg_loss was 0 in every training step ({len(train)} steps): the advantages never reached the "
            "policy-gradient loss",
        )
