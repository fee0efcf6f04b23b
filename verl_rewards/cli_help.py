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
