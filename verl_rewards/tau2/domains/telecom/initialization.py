"""The 17 initialisation actions that set up or break the customer's phone before a telecom task starts.

A task's ``initial_state.initialization_actions`` call them by name on the user toolkit (tau2-bench
``src/tau2/domains/telecom/user_tools.py``, the non-tool methods); each returns tau2's text. Every fault they
introduce is one the user tools can fix, except a locked SIM.
"""

from __future__ import annotations

from typing import Literal

from .phone import DeviceState, Field, Phone


class PhoneSetup:
    """Initialisation actions on :attr:`phone` (mixed into :class:`~.user_tools.TelecomUserTools`)."""

    phone: Phone

    # ------------------------------------------------------------------ the customer
    def set_user_info(self, name: str, phone_number: str) -> None:
        """The customer's name and phone number (the sync finds their line by it)."""
        self.phone.surroundings.name = name
        self.phone.surroundings.phone_number = phone_number

    def set_user_location(self, abroad: bool) -> None:
        """Whether the customer is abroad."""
        self.phone.surroundings.is_abroad = abroad

    # ------------------------------------------------------------------ airplane mode and SIM
    def turn_airplane_mode_on(self) -> str:
        """Airplane mode on (toggled, and toggled again if it was on)."""
        if not self.phone.toggle_airplane_mode():
            self.phone.toggle_airplane_mode()
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        """Airplane mode off."""
        if self.phone.toggle_airplane_mode():
            self.phone.toggle_airplane_mode()
        return "Airplane Mode is now OFF."

    def unseat_sim_card(self) -> str:
        """Take the SIM card out (fixed by ``reseat_sim_card``)."""
        self.phone.device.sim_card_missing = True
        self.phone.network_search()
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode: Literal["pin", "puk"]) -> str:
        """Lock the SIM with a PIN or PUK (no tool fixes it)."""
        if mode == "pin":
            self.phone.device.sim_card_status = "locked_pin"
        elif mode == "puk":
            self.phone.device.sim_card_status = "locked_puk"
        self.phone.network_search()
        return f"SIM card locked successfully in {mode} mode."

    # ------------------------------------------------------------------ mobile data, roaming, data saver
    def turn_data_on(self) -> str:
        """Mobile data on (no network search, like tau2)."""
        self.phone.device.data_enabled = True
        return "Data connection restored."

    def turn_data_off(self) -> str:
        """Mobile data off."""
        self._switch_off(DeviceState.data_enabled)
        return "Data connection broken."

    def turn_roaming_on(self) -> str:
        """Data roaming on."""
        self._switch_on(DeviceState.roaming_enabled)
        return "Data Roaming is now ON."

    def turn_roaming_off(self) -> str:
        """Data roaming off."""
        self._switch_off(DeviceState.roaming_enabled)
        return "Data Roaming is now OFF."

    def turn_data_saver_mode_on(self) -> str:
        """Data saver on."""
        self._switch_on(DeviceState.data_saver_mode, search=False)
        return "Data Saver Mode is now ON."

    def turn_data_saver_mode_off(self) -> str:
        """Data saver off."""
        self._switch_off(DeviceState.data_saver_mode, search=False)
        return "Data Saver Mode is now OFF."

    def _switch_on(self, field: Field[bool], search: bool = True) -> None:
        """tau2's way: toggle, and toggle back if that turned it off (each toggle searching when ``search``)."""
        if not self.phone.toggle(field, search):
            self.phone.toggle(field, search)

    def _switch_off(self, field: Field[bool], search: bool = True) -> None:
        if self.phone.toggle(field, search):
            self.phone.toggle(field, search)

    # ------------------------------------------------------------------ APN, Wi-Fi calling, VPN, apps
    def break_apn_settings(self) -> str:
        """Break the APN (no service until ``reset_apn_settings`` and a reboot)."""
        DeviceState.active_apn_settings.edit(self.phone.device)["apn_name"] = "broken"
        self.phone.network_search()
        if self.phone.device.network_connection_status != "no_service":
            raise AssertionError("a broken APN must leave the phone without service")
        return "APN settings broken. Please call reset_apn_settings() to fix."

    def break_apn_mms_setting(self) -> str:
        """Clear the MMSC URL (MMS fails until the APN is reset and the phone rebooted)."""
        DeviceState.active_apn_settings.edit(self.phone.device)["mmsc_url"] = None
        if self.phone.can_send_mms():
            raise AssertionError("a phone without MMSC URL must not send MMS")
        return "APN MMS setting broken. Please call reset_apn_settings() to fix."

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> str:
        """Set Wi-Fi calling (and MMS over Wi-Fi when given)."""
        if self.phone.device.wifi_calling_enabled != enabled:
            self.phone.toggle(DeviceState.wifi_calling_enabled, search=False)
        text = f"Wi-Fi Calling is now {'ON' if enabled else 'OFF'}."
        if mms_over_wifi is not None:
            self.phone.device.wifi_calling_mms_over_wifi = mms_over_wifi
            text += f"\nMMS over Wi-Fi is now {'ON' if mms_over_wifi else 'OFF'}."
        return text

    def break_vpn(self) -> str:
        """Connect a VPN with poor performance (slow mobile data)."""
        self.phone.connect_vpn()
        if self.phone.device.vpn_details is None:
            raise AttributeError("'NoneType' object has no attribute 'server_performance'")
        self.phone.degrade_vpn()
        return "VPN connection broken."

    def remove_app_permission(self, app_name: str, permission: str) -> tuple[bool, str]:
        """Take a permission away from an app."""
        app = self.phone.device.app_statuses.get(app_name)
        permission = permission.lower()
        if not app:
            return False, f"App '{app_name}' not found. Cannot remove permission."
        if permission not in app["permissions"]:
            return False, f"Permission '{permission}' not tracked for app '{app_name}'."
        DeviceState.app_statuses.edit(self.phone.device)[app_name]["permissions"][permission] = False
        return True, f"Permission '{permission}' removed from app '{app_name}'."
