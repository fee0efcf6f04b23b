"""The check library: what ``python -m verl.trainer.main_ppo`` does at start-up and what its first step needs, run in
this process without Ray or a model, each stage failing with one line that names it (:class:`.errors.CheckError`).
``verl-rewards check`` (:mod:`verl_rewards.commands.check`) is its command; the stages are listed there.

* :mod:`.startup`: :func:`~.startup.check`, the stages in order: compose, validate, trainer, reward manager;
* :mod:`.rollout`: tools, agent loops and their settings, the step dicts a loop records;
* :mod:`.data`: the data files, their ``agent_name`` and ``reward_fn`` columns, the routing of each data source;
* :mod:`.first_step`: the advantage estimator, every row's reward and its inputs, no row choosing a path;
* :mod:`.contribution`: whether each contribution term can fire on each data source.
"""
