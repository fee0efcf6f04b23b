"""The ``verl-rewards`` commands that drive several packages or none of their own: ``doctor``, ``demo``, ``score``,
``prepare``, ``simulate``. Each module, like the commands that live in the package they drive
(``evaluation/command.py``, ``check.py``, ``cpu/command.py``, ``gold/command.py``), has ``HELP``,
``add_parser(subparsers)`` and ``run(args)``; :mod:`verl_rewards.cli` lists them all."""
