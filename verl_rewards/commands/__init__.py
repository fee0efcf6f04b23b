"""Every ``verl-rewards`` command, one module each with ``HELP``, ``add_parser(subparsers)`` and ``run(args)``
(``doctor``, ``data``, ``demo``, ``score``, ``prepare``, ``simulate``, ``eval``, ``check``, ``smoke``, ``learn``,
``export-sft``); :mod:`verl_rewards.cli` lists them all. Errors are
printed by one function, :func:`verl_rewards.commands.common.fail`. The libraries the commands drive (``gold``,
``evaluation``, ``learning``, ``benchmark_data``, ``checking``, ``smoke``, ...) never import a command."""
