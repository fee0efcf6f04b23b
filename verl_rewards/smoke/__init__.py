"""The ``smoke`` driver: what a ``verl-rewards smoke`` run does around verl's ``main_ppo`` on the CPU backend
(:mod:`verl_rewards.cpu`). The command (:mod:`verl_rewards.commands.smoke`) parses the options and prints; this
package does the work, and ``verl-rewards learn`` reuses it:

* :mod:`.errors`: :class:`~.errors.SmokeError`, a run that failed in a named stage;
* :mod:`.data`: which benchmarks a smoke run serves (their records' ``smoke`` settings), the rows from ``prepare``,
  the wrapped agent loops, the prompt length, verl's metrics file;
* :mod:`.recipe`: the recipe's launch, the CPU overrides and the environment;
* :mod:`.process`: a stage's process (log, timeout, process group);
* :mod:`.modes`: ``--trainer-mode``'s overrides and the ``--resume`` run;
* :mod:`.sft_stage`: the ``--sft`` stage;
* :mod:`.checks`: what the run's files say once ``main_ppo`` has exited.
"""
