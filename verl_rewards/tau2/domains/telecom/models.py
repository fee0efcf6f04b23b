"""Deprecated: the telecom record validation is the validation shared by every tau2 domain,
:mod:`verl_rewards.tau2.domains.validation` (models are :class:`~verl_rewards.tau2.domains.validation.Model` objects
there, no longer tuples). The old names still import from here, with a DeprecationWarning, until 0.3.0."""

from __future__ import annotations

from ....deprecation import moved

_SHARED = "verl_rewards.tau2.domains.validation"

__getattr__ = moved(
    __name__,
    {
        **dict.fromkeys(
            (
                "REQUIRED",
                "Kind",
                "Model",
                "string",
                "boolean",
                "date",
                "datetime",
                "optional",
                "enum",
                "list_of",
                "dict_of",
                "record",
                "validate",
            ),
            _SHARED,
        ),
        "ModelError": f"{_SHARED}:ValidationError",
        "integer": f"{_SHARED}:lax_int",
        "floating": f"{_SHARED}:lax_float",
    },
)
