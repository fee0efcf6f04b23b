"""Deprecated: the telecom phone moved to :mod:`.phone` (typed state and device model), :mod:`.user_tools` (the 30
user tools, :class:`TelecomUserTools`), :mod:`.initialization` and :mod:`.assertions`. The old names still import
from here, with a DeprecationWarning, until 0.3.0."""

from __future__ import annotations

from ....deprecation import moved

_PHONE = "verl_rewards.tau2.domains.telecom.phone"
_TOOLS = "verl_rewards.tau2.domains.telecom.user_tools"

__getattr__ = moved(
    __name__,
    {
        **dict.fromkeys(
            (
                "SIGNALS",
                "TECHNOLOGIES",
                "NETWORK_STATUSES",
                "MODE_PREFERENCES",
                "SIM_STATUSES",
                "PERFORMANCE_LEVELS",
                "PERMISSIONS",
                "SPEED_RANGES",
                "SIGNAL_FACTORS",
                "DEFAULT_MMSC_URL",
                "DEFAULT_VPN",
                "APN_SETTINGS",
                "VPN_DETAILS",
                "APP_PERMISSIONS",
                "APP_STATUS",
                "DEVICE",
                "PAYMENT_REQUEST",
                "SURROUNDINGS",
                "USER_DB",
                "normalize_user_db",
            ),
            _PHONE,
        ),
        "SPEED_ADVICE": _TOOLS,
        "TelecomUserTools": _TOOLS,
    },
)
