"""The help texts every ``verl-rewards`` command shares, so the same thing is described the same way: ``--domain``
(every registered domain, in the ``tau2/airline`` form) and ``--data-dir`` (what the folder holds and where it is
looked up without the flag). Outside ``commands/`` so that ``smoke`` (``cpu/command.py``) uses them too."""

from __future__ import annotations


def domain_help(*benchmarks: str) -> str:
    """The one ``--domain`` help: every registered domain of ``benchmarks``, in the data-source form."""
    from .tau2.registry import available_domains
    from .tau_bench.domain import DOMAINS

    names = {"tau2": available_domains(), "tau_bench": sorted(DOMAINS)}
    listed = ", ".join(f"{b}/{d}" for b in benchmarks for d in names[b])
    return f"{listed}; or the bare domain ({names[benchmarks[0]][0]})"


def data_dir_help(*benchmarks: str) -> str:
    """The one ``--data-dir`` help: what the folder holds for each of ``benchmarks`` and where it is looked up
    when the flag is absent (the one data-folder rule of :mod:`verl_rewards.engine.data_dir`)."""
    holds = {
        "tau2": "tau2: the domains folder (tau2-bench's data/tau2/domains)",
        "tau_bench": "tau_bench: the folder holding retail/ and airline/",
    }
    variables = " / ".join(f"${b.upper()}_DATA_DIR" for b in benchmarks)
    where = f"(default: {variables}, else the folder `verl-rewards data get` installs)"
    return f"{'; '.join(holds[b] for b in benchmarks)} {where}"


#: what a split name is, per benchmark (the one meaning of ``--split``)
SPLIT_NAMES = {
    "tau2": "tau2: a key of the domain's split_tasks.json (train, test, base; mock and banking_knowledge have only "
    "base) or 'all'",
    "tau_bench": "tau_bench: train, test or dev (airline: test)",
    "toolrl": "toolrl: every row; the split only names the parquet file",
}


def split_help(*benchmarks: str, default: str, why: str, several: bool = False) -> str:
    """The one ``--split`` help: which of a domain's tasks a command reads (``several``: comma-separated, one output
    file each), what a split name is for each of ``benchmarks``, and the command's default with its reason."""
    lead = "which tasks: comma-separated splits, one file each" if several else "which tasks: a split"
    return f"{lead} ({'; '.join(SPLIT_NAMES[b] for b in benchmarks)}) (default: {default}: {why})"


def mode_choices(*benchmarks: str) -> list[str]:
    """The ``--mode`` choices of a command serving ``benchmarks`` (each benchmark's ``MODES``, normal first), in
    the one order every command lists them."""
    from .tau2.data import MODES as TAU2_MODES
    from .tau_bench.data import MODES as TAU_BENCH_MODES

    modes = {"tau2": TAU2_MODES, "tau_bench": TAU_BENCH_MODES}
    return list(dict.fromkeys(m for b in benchmarks for m in modes[b]))


def mode_help(*benchmarks: str, default: str) -> str:
    """The one ``--mode`` help: each benchmark's modes and the command's default."""
    about = {
        "tau2": "tau2: normal (a simulated user talks to the agent) or solo (the agent works from a ticket)",
        "tau_bench": "tau_bench: normal (tau-bench's simulated user) or instruction (the task instruction is the "
        "first user message)",
    }
    return f"{'; '.join(about[b] for b in benchmarks)} (default: {default})"
