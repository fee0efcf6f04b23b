"""tau2 domains (``mock``, ``airline``, ``retail``, and the ``telecom`` package), loaded by name with
:func:`verl_rewards.tau2.load_domain`.

Each module exports ``NAME``, ``FILES``, ``TERMINATE_TOOLS``, ``normalize_db``, ``AgentTools`` and ``USER_TOOLKIT``
(see :mod:`verl_rewards.tau2.domain`). ``common`` holds helpers shared by domains and is not a domain.
"""
