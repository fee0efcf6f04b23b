"""The 9 env assertions on the customer's phone (tau2-bench ``src/tau2/domains/telecom/user_tools.py``).

A task's ``evaluation_criteria.env_assertions`` call them by name on the user toolkit after the conversation; each
checks the phone's derived state (:class:`~.phone.Phone`) against the expected value.
"""

from __future__ import annotations

from .phone import NETWORK_STATUSES, Phone


class PhoneAssertions:
    """Env assertions on :attr:`phone` (mixed into :class:`~.user_tools.TelecomUserTools`)."""

    phone: Phone

    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        """Airplane mode is ``expected_status``."""
        return self.phone.device.airplane_mode == expected_status

    def assert_service_status(self, expected_status: str) -> bool:
        """The network connection status is ``expected_status`` (a known status name)."""
        if expected_status not in NETWORK_STATUSES:
            raise ValueError(f"{expected_status!r} is not a valid NetworkStatus")
        return self.phone.device.network_connection_status == expected_status

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        """Mobile data works (``True``) or not."""
        return self.phone.mobile_data_working() == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        """The phone's data roaming setting is ``expected_status``."""
        return self.phone.device.roaming_enabled == expected_status

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        """Data saver is ``expected_status``."""
        return self.phone.device.data_saver_mode == expected_status

    def assert_internet_speed(self, expected_speed: float, expected_desc: str | None = None) -> bool:
        """The speed test gives at least ``expected_speed`` (and the label, case-insensitive)."""
        speed, label = self.phone.speed()
        speed = speed or 0.0
        if expected_desc is None:
            return speed >= expected_speed
        return speed >= expected_speed and label.lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        """The speed test label is not Excellent."""
        return self.phone.speed()[1].lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        """The messaging app can send MMS (``True``) or not."""
        return self.phone.can_send_mms() == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        """The data allowance is used up (``True``) or not."""
        return self.phone.surroundings.mobile_data_usage_exceeded == expected_status
