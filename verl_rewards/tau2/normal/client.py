"""Deprecated: moved to :mod:`verl_rewards.engine.client` (the engine tau2 and
tau-bench share); this path goes in 0.3.0."""

from __future__ import annotations

from ...deprecation import moved_module

__getattr__ = moved_module(
    __name__,
    "verl_rewards.engine.client",
    (
        "ChatClient",
        "DEFAULT_API_KEY_ENV",
        "Endpoint",
        "MAX_BACKOFF_S",
        "MAX_RESPONSE_BYTES",
        "PROVIDER_PREFIXES",
        "RETRY_STATUS",
        "completion_usage",
        "parse_completion",
        "shared_client",
        "wire_model",
    ),
)
