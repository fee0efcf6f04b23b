"""The help texts every ``verl-rewards`` command shares, so the same thing is described the same way: ``--domain``
(every registered domain, in the ``tau2/airline`` form) and ``--data-dir`` (what the folder holds and where it is
looked up without the flag), both read from the benchmarks' records in the catalog. Outside ``commands/`` so that
``smoke`` (``cpu/command.py``) uses them too."""

from __future__ import annotations


def domain_help(*names: str) -> str:
    """The one ``--domain`` help: every registered domain of the benchmarks ``names``, in the data-source form."""
    from .catalog import benchmark_named

    found = [b for b in map(benchmark_named, names) if b is not None]
    listed = ", ".join(b.source(d) for b in found for d in b.domains())
    first = next(iter(found[0].domains()), "") if found else ""
    return f"{listed}; or the bare domain ({first})"


def data_dir_help(*names: str) -> str:
    """The one ``--data-dir`` help: what the folder holds for each of the benchmarks ``names`` and where it is
    looked up when the flag is absent (the one data-folder rule of :mod:`verl_rewards.engine.data_dir`)."""
    from .catalog import benchmark_named

    found = [b for b in map(benchmark_named, names) if b is not None]
    variables = " / ".join(f"${b.data.env_var}" for b in found if b.data is not None)
    where = f"(default: {variables}, else the folder `verl-rewards data get` installs)"
    return f"{'; '.join(b.data_help for b in found)} {where}"
