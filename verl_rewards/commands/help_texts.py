"""The help texts every ``verl-rewards`` command shares, so the same thing is described the same way: ``--domain``
(every registered domain, in the ``tau2/airline`` form), ``--data-dir`` (what the folder holds and where it is
looked up without the flag), ``--split`` and ``--mode``, all read from the benchmarks' records."""

from __future__ import annotations


def domain_help(*names: str) -> str:
    """The one ``--domain`` help: every registered domain of the benchmarks ``names``, in the data-source form."""
    from ..benchmark_list import benchmark_named

    found = [b for b in map(benchmark_named, names) if b is not None]
    listed = ", ".join(b.source(d) for b in found for d in b.domains())
    first = next(iter(found[0].domains()), "") if found else ""
    return f"{listed}; or the bare domain ({first})"


def data_dir_help(*names: str) -> str:
    """The one ``--data-dir`` help: what the folder holds for each of the benchmarks ``names`` and where it is
    looked up when the flag is absent (the one data-folder rule of :mod:`verl_rewards.engine.data_dir`)."""
    from ..benchmark_list import benchmark_named

    found = [b for b in map(benchmark_named, names) if b is not None]
    variables = " / ".join(f"${b.data.env_var}" for b in found if b.data is not None)
    where = f"(default: {variables}, else the folder `verl-rewards data get` installs)"
    return f"{'; '.join(b.data_help for b in found)} {where}"


def split_help(*names: str, default: str, why: str, several: bool = False) -> str:
    """The one ``--split`` help: which of a domain's tasks a command reads (``several``: comma-separated, one output
    file each), what a split name is for each of the benchmarks ``names`` (their records' ``split_names``), and the
    command's default with its reason."""
    from ..benchmark_list import benchmark_named

    found = [b for b in map(benchmark_named, names) if b is not None]
    lead = "which tasks: comma-separated splits, one file each" if several else "which tasks: a split"
    return f"{lead} ({'; '.join(b.split_names for b in found)}) (default: {default}: {why})"


def mode_choices(*names: str) -> list[str]:
    """The ``--mode`` choices of a command serving the benchmarks ``names`` (each record's ``modes``, normal
    first), in the one order every command lists them."""
    from ..benchmark_list import benchmark_named

    found = [b for b in map(benchmark_named, names) if b is not None]
    return list(dict.fromkeys(m for b in found for m in b.modes))


def mode_help(*names: str, default: str) -> str:
    """The one ``--mode`` help: each benchmark's modes (its record's ``mode_help``) and the command's default."""
    from ..benchmark_list import benchmark_named

    found = [b for b in map(benchmark_named, names) if b is not None]
    return f"{'; '.join(b.mode_help for b in found if b.mode_help)} (default: {default})"
