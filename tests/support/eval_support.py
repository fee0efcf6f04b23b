"""Validation samples as verl's ``_validate`` collects them (N = 4 trials per prompt, repeated by verl's
``DataProto.repeat``; tau2, ToolRL and gsm8k sources), shared by the evaluation tests."""

from __future__ import annotations

import numpy as np

N = 4
TAU = "tau2/mock"
# per prompt uid: (data_source, per-trial extras)
SCORED = "DB,COMMUNICATE"


def _tau(base, term, contrib=0.0, read=(1, 1), write=(2, 2), communicate=1.0):
    scored = term in ("agent_stop", "user_stop")
    return {
        "base_score": float(base),
        "contrib": float(contrib),
        "db_match": float(base) if scored else 0.0,
        "tau2_db": float(base) if scored else 0.0,
        "tau2_communicate": communicate if scored else 0.0,
        "termination": term,
        "tau2_basis": SCORED if scored else "",
        "tau2_read_actions": float(read[1]) if scored else 0.0,
        "tau2_read_correct": float(read[0]) if scored else 0.0,
        "tau2_write_actions": float(write[1]) if scored else 0.0,
        "tau2_write_correct": float(write[0]) if scored else 0.0,
    }


PROMPTS = {
    # trial 4 of t1 scores a total of 1.0 only through beta * contrib (beta = 1): not a success
    "t1": (TAU, [_tau(1, "agent_stop")] * 3 + [_tau(0, "agent_stop", contrib=1.0, write=(0, 2))]),
    "t2": (TAU, [_tau(1, "agent_stop")] * 4),
    # the same tau2 prompt a second time in the validation set: its own uid, so its own task
    "t3": (
        TAU,
        [
            _tau(0, "user_stop", read=(0, 1), write=(0, 2), communicate=0.0),
            _tau(0, "max_steps"),
            _tau(0, "max_steps"),
            _tau(0, "agent_stop", read=(0, 1), write=(0, 2)),
        ],
    ),
    "r1": ("rlla", [{"base_score": v, "format": 1.0, "correctness": v - 1.0} for v in (3.0, 2.0, 1.0, 0.0)]),
    "r2": ("rlla", [{"base_score": 1.0, "format": 1.0, "correctness": 0.0}] * 4),
    "g1": ("gsm8k", [{"base_score": v, "acc": v} for v in (1.0, 0.0, 0.0, 0.0)]),
    "g2": ("gsm8k", [{"base_score": 1.0, "acc": 1.0}] * 4),
}
KEYS = sorted({k for _, trials in PROMPTS.values() for t in trials for k in t})


def validation_inputs(drop: tuple[str, int] | None = None, legacy: bool = True):
    """``data_sources, sample_uids, reward_extra_infos_dict`` as ``_validate`` builds them."""
    from verl import DataProto

    uids = list(PROMPTS)
    batch = DataProto.from_dict(
        non_tensors={
            "uid": np.array(uids, dtype=object),
            "data_source": np.array([PROMPTS[u][0] for u in uids], dtype=object),
        }
    )
    batch = batch.repeat(repeat_times=N, interleave=True)  # what _validate does with val_kwargs.n
    seen: dict[str, int] = {}
    sources, sample_uids, rows = [], [], []
    for uid, source in zip(batch.non_tensor_batch["uid"], batch.non_tensor_batch["data_source"], strict=True):
        trial = seen[uid] = seen.get(uid, -1) + 1
        if drop == (uid, trial):  # a V1 session that failed never reaches the metrics
            continue
        extras = {k: PROMPTS[uid][1][trial].get(k, None if not legacy else 0.0) for k in KEYS}
        extras = {k: v for k, v in extras.items() if v is not None}
        sources.append(source)
        sample_uids.append(uid)
        rows.append(extras)
    infos: dict[str, list] = {"reward": [r["base_score"] + r.get("contrib", 0.0) for r in rows]}
    for key in KEYS:
        if legacy:  # the agent loop stacks each key with np.array (mixed str/float becomes str), _validate .tolist()s
            infos[key] = np.array([r[key] for r in rows]).tolist()
        else:  # V1 keeps the per-row values, None where a row lacks the key
            infos[key] = [r.get(key) for r in rows]
    return np.array(sources, dtype=object), sample_uids, infos
