"""Every ``verl-rewards`` command, one module each with ``HELP``, ``add_parser(subparsers)`` and ``run(args)``
(``doctor``, ``data``, ``demo``, ``score``, ``prepare``, ``simulate``, ``eval``, ``smoke``, ``learn``, ``export-sft``;
``check`` still lives in ``check.py``); :mod:`verl_rewards.cli` lists them all. Errors are
printed by one function, :func:`verl_rewards.commands.common.fail`. The libraries the commands drive (``gold``,
``evaluation``, ``learning``, ``benchmark_data``, ...) never import a command."""
