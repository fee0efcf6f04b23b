"""tau2 domains: ``mock``, ``airline`` and ``retail`` (packages of one module per concern) and ``telecom``.

Each domain module exports ``SPEC``, its :class:`~verl_rewards.tau2.domain_spec.DomainSpec`;
:mod:`verl_rewards.tau2.registry` registers them and :func:`verl_rewards.tau2.load_domain` loads one by name.
``common`` holds helpers the domains share and is not a domain.
"""
