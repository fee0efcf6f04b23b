"""The telecom user side: the customer's phone and surroundings (``user_db.toml``) and the 30 user tools.

Behaviour follows tau2-bench ``src/tau2/domains/telecom/user_tools.py``; outputs are its human-readable texts,
most ending in ``"\\nStatus Bar: ..."``. The device model in short:

* **network search** (:meth:`TelecomUserTools.simulate_network_search`): an active SIM connects with the
  technology the mode preference picks (``4g_5g_preferred``: 5G, or 4G where there is no 5G signal) at the
  signal strength the surroundings give that technology; a missing or locked SIM has no service; airplane
  mode, a broken APN or an inactive line then force no service, no technology, no signal.
* **mobile data works** unless: airplane mode, no signal, no service, abroad without both device roaming and
  line roaming, data switched off, or the data allowance used up.
* **speed test**: ``(min + max) / 2 × signal factor × base``, rounded to 2 decimals, with ranges 2G 0.1–0.4,
  3G 1–5, 4G 10–100, 5G 50–500 Mbps, factors poor 0.2 / fair 0.5 / good 0.8 / excellent 1.0, base 1 (0.1
  with a poor-performance VPN connected) times 0.2 with data saver on. Labels: < 1 Very Poor, < 5 Poor,
  < 25 Fair, < 100 Good, else Excellent.
* **MMS** needs working mobile data, not 2G, not Wi-Fi calling with MMS over Wi-Fi, an MMSC URL, and the
  messaging app with SMS and storage permissions.

Deliberate differences from tau2 (none is reached by a task's initial state or gold actions):

* tau2's ``connect_vpn`` stores one VPN-details object shared by every phone in the process, which
  ``break_vpn`` then degrades to poor performance, so after any ``break_vpn`` every later ``connect_vpn`` in
  that process connects at poor performance. Here ``connect_vpn`` always connects at excellent performance
  (so reconnecting after disconnecting a broken VPN gives fast data here and slow data in tau2).
* tau2's ``set_apn_settings`` stores a non-object argument as the APN settings and then fails, leaving a
  broken phone; here it fails first and changes nothing. Likewise tau2's ``set_network_mode_preference``
  stores a non-string mode (a number, say) before failing; here it is refused like any unknown mode.
  Invalid APN fields are refused (as tau2 refuses them) with a message in pydantic's style that is not
  byte-identical to pydantic's.
"""

from __future__ import annotations

from typing import Any, Literal

from ....engine.state import DBState
from ....engine.toolkit import READ, WRITE, Toolkit, tool
from . import models as m

SIGNALS = ("none", "poor", "fair", "good", "excellent")
TECHNOLOGIES = ("none", "2G", "3G", "4G", "5G")
NETWORK_STATUSES = ("connected", "searching", "no_service", "emergency_only")
MODE_PREFERENCES = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
SIM_STATUSES = ("active", "missing", "locked_pin", "locked_puk")
PERFORMANCE_LEVELS = ("unknown", "poor", "fair", "good", "excellent")
PERMISSIONS = ("sms", "storage", "phone", "network")

SPEED_RANGES = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
SIGNAL_FACTORS = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
SPEED_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
_MODE_TECH = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}
_SIGNAL_ICONS = {
    "none": "\U0001f4f5 No Signal",
    "poor": "\U0001f4f6\u00b9 Poor",
    "fair": "\U0001f4f6\u00b2 Fair",
    "good": "\U0001f4f6\u00b3 Good",
    "excellent": "\U0001f4f6\u2074 Excellent",
}
_SIM_TEXT = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}
DEFAULT_MMSC_URL = "http://mms.carrier.com/mms/wapenc"
DEFAULT_VPN = {"server_address": "192.168.1.1", "protocol": "OpenVPN", "server_performance": "excellent"}

APN_SETTINGS: m.Model = (
    "APNSettings",
    (
        ("apn_name", m.enum("internet", "broken"), "internet"),
        ("reset_at_reboot", m.boolean, False),
        ("mms_apn", m.optional(m.string), "mms"),
        ("mmsc_url", m.optional(m.string), DEFAULT_MMSC_URL),
        ("mms_proxy", m.optional(m.string), None),
        ("mms_port", m.optional(m.integer), None),
    ),
)
VPN_DETAILS: m.Model = (
    "VpnDetails",
    (
        ("server_address", m.optional(m.string), None),
        ("protocol", m.optional(m.string), None),
        ("server_performance", m.enum(*PERFORMANCE_LEVELS), "unknown"),
    ),
)
APP_PERMISSIONS: m.Model = ("AppPermissions", tuple((p, m.boolean, False) for p in PERMISSIONS))
APP_STATUS: m.Model = (
    "AppStatus",
    (
        ("app_name", m.string, m.REQUIRED),
        ("permissions", m.record(APP_PERMISSIONS), lambda: dict.fromkeys(PERMISSIONS, False)),
    ),
)


def _default_apps() -> dict[str, Any]:
    return {
        "messaging": {
            "app_name": "messaging",
            "permissions": {"sms": True, "storage": True, "phone": True, "network": False},
        },
        "browser": {
            "app_name": "browser",
            "permissions": {"sms": False, "storage": True, "phone": False, "network": True},
        },
    }


DEVICE: m.Model = (
    "MockPhoneAttributes",
    (
        ("sim_card_status", m.enum(*SIM_STATUSES), "active"),
        ("sim_card_missing", m.boolean, False),
        ("airplane_mode", m.boolean, False),
        ("network_signal_strength", m.enum(*SIGNALS), "good"),
        ("network_technology_connected", m.enum(*TECHNOLOGIES), "5G"),
        ("network_connection_status", m.enum(*NETWORK_STATUSES), "connected"),
        ("battery_level", m.integer, 80),
        ("data_enabled", m.boolean, True),
        ("roaming_enabled", m.boolean, False),
        ("network_mode_preference", m.enum(*MODE_PREFERENCES), "4g_5g_preferred"),
        ("active_apn_settings", m.record(APN_SETTINGS), lambda: m.validate(APN_SETTINGS, {})),
        ("wifi_enabled", m.boolean, False),
        ("wifi_connected", m.boolean, False),
        ("wifi_ssid", m.optional(m.string), None),
        ("wifi_signal_strength", m.enum(*SIGNALS), "none"),
        ("wifi_calling_enabled", m.boolean, False),
        ("wifi_calling_mms_over_wifi", m.boolean, False),
        ("data_saver_mode", m.boolean, False),
        ("vpn_enabled_setting", m.boolean, False),
        ("vpn_connected", m.boolean, False),
        ("vpn_details", m.optional(m.record(VPN_DETAILS)), None),
        ("app_statuses", m.dict_of(m.record(APP_STATUS)), _default_apps),
    ),
)
PAYMENT_REQUEST: m.Model = (
    "PaymentRequest",
    (("bill_id", m.string, m.REQUIRED), ("amount_due", m.floating, m.REQUIRED), ("paid", m.boolean, False)),
)
SURROUNDINGS: m.Model = (
    "UserSurroundings",
    (
        ("name", m.optional(m.string), None),
        ("phone_number", m.optional(m.string), None),
        ("is_abroad", m.boolean, False),
        ("roaming_allowed", m.boolean, False),
        (
            "signal_strength",
            m.dict_of(m.enum(*SIGNALS)),
            lambda: {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"},
        ),
        ("mobile_data_usage_exceeded", m.boolean, False),
        ("line_active", m.boolean, True),
        ("payment_request", m.optional(m.record(PAYMENT_REQUEST)), None),
    ),
)
USER_DB: m.Model = (
    "TelecomUserDB",
    (
        ("device", m.record(DEVICE), lambda: m.validate(DEVICE, {})),
        ("surroundings", m.record(SURROUNDINGS), lambda: m.validate(SURROUNDINGS, {})),
    ),
)


def normalize_user_db(raw: Any) -> dict[str, Any]:
    """The user DB as tau2's ``TelecomUserDB.model_dump()``."""
    return m.validate(USER_DB, raw)


def _enum_repr(enum_name: str, value: str) -> str:
    """How Python prints a member of one of tau2's string enums inside a dict (``repr``)."""
    return f"<{enum_name}.{value.upper()}: {value!r}>"


class TelecomUserTools(Toolkit):
    """The customer's phone: 30 user tools, the initialisation helpers that break it, and assertion helpers.

    State lives in two records of the user DB: ``device`` (the phone's settings and radio state) and
    ``surroundings`` (where the customer is, and what the carrier allows; kept in sync with the agent DB).
    """

    db: DBState

    # ------------------------------------------------------------------ state access
    def _dev(self, field: str) -> Any:
        return self.db.get("device", field)

    def _sur(self, field: str) -> Any:
        return self.db.get("surroundings", field)

    def _set(self, collection: str, field: str, value: Any) -> None:
        current = self.db.get(collection, field)
        if current is value or (type(current) is type(value) and current == value):
            return
        self.db.insert(collection, field, value)

    def _set_dev(self, field: str, value: Any) -> None:
        self._set("device", field, value)

    def set_surrounding(self, field: str, value: Any) -> None:
        """Set one field of the surroundings (used by the environment sync)."""
        if not self.db.contains("surroundings", field):
            raise ValueError(f"unknown surroundings field {field!r}")
        self._set("surroundings", field, value)

    def surrounding(self, field: str) -> Any:
        """One field of the surroundings (read-only)."""
        return self._sur(field)

    # ------------------------------------------------------------------ derived state
    def _sim_status(self) -> str:
        return "missing" if self._dev("sim_card_missing") else self._dev("sim_card_status")

    def _no_service(self) -> None:
        self._set_dev("network_connection_status", "no_service")
        self._set_dev("network_technology_connected", "none")
        self._set_dev("network_signal_strength", "none")

    def simulate_network_search(self) -> None:
        """Helper: search for a network and update status, technology and signal (see the module doc)."""
        if self._sim_status() == "active":
            self._set_dev("network_connection_status", "connected")
            signals = self._sur("signal_strength")
            pref = self._dev("network_mode_preference")
            tech = _MODE_TECH.get(pref, "4G")
            if pref == "4g_5g_preferred" and signals.get("5G", "none") != "none":
                tech = "5G"
            self._set_dev("network_technology_connected", tech)
            self._set_dev("network_signal_strength", signals.get(tech, "none"))
        else:
            self._no_service()
        if (
            self._dev("airplane_mode")
            or self._dev("active_apn_settings")["apn_name"] == "broken"
            or not self._sur("line_active")
        ):
            self._no_service()

    def _mobile_data_working(self) -> bool:
        if self._dev("airplane_mode") or self._dev("network_signal_strength") == "none":
            return False
        if self._dev("network_connection_status") == "no_service":
            return False
        if self._sur("is_abroad") and (not self._dev("roaming_enabled") or not self._sur("roaming_allowed")):
            return False
        if not self._dev("data_enabled"):
            return False
        return not self._sur("mobile_data_usage_exceeded")

    def _speed(self) -> tuple[float | None, str]:
        if not self._mobile_data_working():
            return None, "No Connection"
        details = self._dev("vpn_details")
        poor_vpn = self._dev("vpn_connected") and details and details["server_performance"] == "poor"
        base = 0.1 if poor_vpn else 1.0
        if self._dev("data_saver_mode"):
            base *= 0.2
        low, high = SPEED_RANGES.get(self._dev("network_technology_connected"), (0.0, 0.0))
        factor = SIGNAL_FACTORS.get(self._dev("network_signal_strength"), 0.0)
        speed = round((low + high) / 2.0 * factor * base, 2)
        if speed < 1:
            return speed, "Very Poor"
        if speed < 5:
            return speed, "Poor"
        if speed < 25:
            return speed, "Fair"
        if speed < 100:
            return speed, "Good"
        return speed, "Excellent"

    def _can_send_mms(self) -> bool:
        if not self._mobile_data_working():
            return False
        if self._dev("network_technology_connected") == "2G":
            return False
        if self._dev("wifi_calling_enabled") and self._dev("wifi_calling_mms_over_wifi"):
            return False
        if self._dev("active_apn_settings")["mmsc_url"] is None:
            return False
        app = self._dev("app_statuses").get("messaging")
        return app is not None and bool(app["permissions"]["storage"] and app["permissions"]["sms"])

    def _status_bar(self) -> str:
        parts = []
        if self._dev("airplane_mode"):
            parts.append("\u2708\ufe0f Airplane Mode")
        else:
            parts.append(_SIGNAL_ICONS.get(self._dev("network_signal_strength"), _SIGNAL_ICONS["none"]))
            tech = self._dev("network_technology_connected")
            if tech != "none":
                parts.append(tech)
            if self._dev("data_enabled") and tech != "none":
                parts.append("\U0001f4f1 Data Enabled")
                if self._dev("data_saver_mode"):
                    parts.append("\U0001f53d Data Saver")
            else:
                parts.append("\U0001f4f5 Data Disabled")
        if self._dev("wifi_enabled") and self._dev("wifi_connected"):
            ssid = self._dev("wifi_ssid")
            parts.append(f"\U0001f4e1 Connected to {ssid}" if ssid else "\U0001f4e1 Enabled")
        if self._dev("vpn_connected"):
            parts.append("\U0001f512 VPN Connected")
        parts.append(f"\U0001f50b {self._dev('battery_level')}%")
        return " | ".join(parts)

    def _with_bar(self, text: str) -> str:
        return f"{text}\nStatus Bar: {self._status_bar()}"

    # ------------------------------------------------------------------ status and network
    @tool(READ)
    def check_status_bar(self) -> str:
        """Shows what icons are currently visible in your phone's status bar (the area at the top of the
        screen). Displays network signal strength, mobile data status (enabled, disabled, data saver), Wi-Fi
        status, and battery level."""
        return f"Status Bar: {self._status_bar()}"

    @tool(READ)
    def check_network_status(self) -> str:
        """Checks your phone's connection status to cellular networks and Wi-Fi. Shows airplane mode status,
        signal strength, network type, whether mobile data is enabled, and whether data roaming is enabled."""
        on_off = {True: "ON", False: "OFF"}
        yes_no = {True: "Yes", False: "No"}
        lines = [
            f"Airplane Mode: {on_off[bool(self._dev('airplane_mode'))]}",
            f"SIM Card Status: {self._sim_status()}",
            f"Cellular Connection: {self._dev('network_connection_status')}",
            f"Cellular Signal: {self._dev('network_signal_strength')}",
            f"Cellular Network Type: {self._dev('network_technology_connected')}",
            f"Mobile Data Enabled: {yes_no[bool(self._dev('data_enabled'))]}",
            f"Data Roaming Enabled: {yes_no[bool(self._dev('roaming_enabled'))]}",
            f"Wi-Fi Radio: {on_off[bool(self._dev('wifi_enabled'))]}",
            f"Wi-Fi Connected: {yes_no[bool(self._dev('wifi_connected'))]}",
        ]
        if self._dev("wifi_connected"):
            lines.append(f"Connected Wi-Fi Network: {self._dev('wifi_ssid')}")
        return "\n".join(lines)

    @tool(READ)
    def check_network_mode_preference(self) -> str:
        """Shows the current network mode preference."""
        return f"Network Mode Preference: {self._dev('network_mode_preference')}"

    @tool(WRITE)
    def set_network_mode_preference(self, mode: Literal["4g_5g_preferred", "4g_only", "3g_only", "2g_only"]) -> str:
        """Changes the type of cellular network your phone prefers to connect to (e.g., 5G, LTE/4G, 3G).
        Higher-speed networks (LTE/5G) provide faster data but may use more battery.

        Args:
            mode: The preferred network mode: 4g_5g_preferred, 4g_only, 3g_only or 2g_only.
        """
        if not isinstance(mode, str) or mode not in MODE_PREFERENCES:
            return self._with_bar(
                f"Failed to set network mode: '{mode}' is not a valid option. "
                f"Please use one of: {', '.join(MODE_PREFERENCES)}"
            )
        self._set_dev("network_mode_preference", mode)
        self.simulate_network_search()
        return self._with_bar(f"Preferred Network Mode set to: {mode}")

    @tool(READ)
    def run_speed_test(self) -> str:
        """Measures your current internet connection speed (download speed). Provides information about
        connection quality and what activities it can support."""
        speed, label = self._speed()
        if speed is None:
            return f"Speed test failed: {label or 'Could not determine speed'}."
        return f"Speed Test Result: {speed:.2f} Mbps ({label}). {SPEED_ADVICE.get(label, '')}"

    # ------------------------------------------------------------------ airplane mode
    def _toggle_airplane_mode(self) -> bool:
        was_on = bool(self._dev("airplane_mode"))
        self._set_dev("airplane_mode", not was_on)
        if was_on:
            self._set_dev("network_connection_status", "searching")
            if self._dev("wifi_enabled"):
                self._wifi_disconnect()
        else:
            self._wifi_disconnect()
            if self._dev("vpn_connected"):
                self._disconnect_vpn()
        self.simulate_network_search()
        return not was_on

    def _wifi_disconnect(self) -> None:
        self._set_dev("wifi_connected", False)
        self._set_dev("wifi_ssid", None)
        self._set_dev("wifi_signal_strength", "none")

    @tool(WRITE)
    def toggle_airplane_mode(self) -> str:
        """Toggles Airplane Mode ON or OFF. When ON, it disconnects all wireless communications including
        cellular, Wi-Fi, and Bluetooth. Returns the new state of airplane_mode."""
        on = self._toggle_airplane_mode()
        return self._with_bar(f"Airplane Mode is now {'ON' if on else 'OFF'}.")

    def turn_airplane_mode_on(self) -> str:
        """Initialisation helper: airplane mode on (toggled, and toggled again if it was on)."""
        if not self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        """Initialisation helper: airplane mode off."""
        if self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now OFF."

    # ------------------------------------------------------------------ SIM
    @tool(READ)
    def check_sim_status(self) -> str:
        """Checks if your SIM card is working correctly and displays its current status. Shows if the SIM is
        active, missing, or locked with a PIN or PUK code."""
        status = self._sim_status()
        return _SIM_TEXT.get(status, f"Unknown SIM status: {status}")

    @tool(WRITE)
    def reseat_sim_card(self) -> str:
        """Simulates removing and reinserting your SIM card. This can help resolve recognition issues."""
        self._set_dev("sim_card_missing", False)
        self.simulate_network_search()
        return self._with_bar("SIM card re-seated successfully.")

    def unseat_sim_card(self) -> str:
        """Initialisation helper: take the SIM card out (fixed by ``reseat_sim_card``)."""
        self._set_dev("sim_card_missing", True)
        self.simulate_network_search()
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode: Literal["pin", "puk"]) -> str:
        """Initialisation helper: lock the SIM with a PIN or PUK (no tool fixes it)."""
        if mode == "pin":
            self._set_dev("sim_card_status", "locked_pin")
        elif mode == "puk":
            self._set_dev("sim_card_status", "locked_puk")
        self.simulate_network_search()
        return f"SIM card locked successfully in {mode} mode."

    # ------------------------------------------------------------------ mobile data and roaming
    def _toggle(self, field: str, search: bool = True) -> bool:
        new = not self._dev(field)
        self._set_dev(field, new)
        if search:
            self.simulate_network_search()
        return new

    @tool(WRITE)
    def toggle_data(self) -> str:
        """Toggles your phone's mobile data connection ON or OFF. Controls whether your phone can use cellular
        data for internet access when Wi-Fi is unavailable. Returns the new data connection status."""
        on = self._toggle("data_enabled")
        return self._with_bar(f"Mobile Data is now {'ON' if on else 'OFF'}.")

    def turn_data_on(self) -> str:
        """Initialisation helper: mobile data on (no network search, like tau2)."""
        self._set_dev("data_enabled", True)
        return "Data connection restored."

    def turn_data_off(self) -> str:
        """Initialisation helper: mobile data off."""
        if self._toggle("data_enabled"):
            self._toggle("data_enabled")
        return "Data connection broken."

    @tool(WRITE)
    def toggle_roaming(self) -> str:
        """Toggles Data Roaming ON or OFF. When ON, your phone can use data networks in areas outside your
        carrier's coverage. Returns the new data roaming status."""
        on = self._toggle("roaming_enabled")
        return self._with_bar(f"Data Roaming is now {'ON' if on else 'OFF'}.")

    def turn_roaming_on(self) -> str:
        """Initialisation helper: data roaming on."""
        if not self._toggle("roaming_enabled"):
            self._toggle("roaming_enabled")
        return "Data Roaming is now ON."

    def turn_roaming_off(self) -> str:
        """Initialisation helper: data roaming off."""
        if self._toggle("roaming_enabled"):
            self._toggle("roaming_enabled")
        return "Data Roaming is now OFF."

    @tool(READ)
    def check_data_restriction_status(self) -> str:
        """Checks if your phone has any data-limiting features active. Shows if Data Saver mode is on."""
        if self._dev("data_saver_mode"):
            return "Data Saver mode is ON (limits data usage)."
        return "Data Saver mode is OFF."

    @tool(WRITE)
    def toggle_data_saver_mode(self) -> str:
        """Toggles Data Saver mode ON or OFF. When ON, it reduces data usage, which may affect data speed.
        Returns the new data saver mode status."""
        on = self._toggle("data_saver_mode", search=False)
        return self._with_bar(f"Data Saver Mode is now {'ON' if on else 'OFF'}.")

    def turn_data_saver_mode_on(self) -> str:
        """Initialisation helper: data saver on."""
        if not self._toggle("data_saver_mode", search=False):
            self._toggle("data_saver_mode", search=False)
        return "Data Saver Mode is now ON."

    def turn_data_saver_mode_off(self) -> str:
        """Initialisation helper: data saver off."""
        if self._toggle("data_saver_mode", search=False):
            self._toggle("data_saver_mode", search=False)
        return "Data Saver Mode is now OFF."

    # ------------------------------------------------------------------ APN
    @tool(READ)
    def check_apn_settings(self) -> str:
        """Checks the technical APN settings your phone uses to connect to your carrier's mobile data network.
        Shows current APN name and MMSC URL for picture messaging."""
        apn = self._dev("active_apn_settings")
        return (
            f"Current APN Name: {apn['apn_name'] or 'Not Set'}\n"
            f"MMSC URL (for picture messages): {apn['mmsc_url'] or 'Not Set'}\n"
            "(These are technical settings, usually best left unchanged.)"
        )

    @tool(WRITE)
    def set_apn_settings(self, apn_settings: dict) -> str:
        """Sets the APN settings for the phone.

        Args:
            apn_settings: The APN settings: apn_name ("internet" or "broken"), reset_at_reboot, mms_apn,
                mmsc_url, mms_proxy, mms_port.
        """
        if not isinstance(apn_settings, dict):
            raise AttributeError(f"'{type(apn_settings).__name__}' object has no attribute 'apn_name'")
        settings = m.validate(APN_SETTINGS, apn_settings)
        self._set_dev("active_apn_settings", settings)
        self.simulate_network_search()
        return self._with_bar(f"APN settings set to: {settings['apn_name']}")

    @tool(WRITE)
    def reset_apn_settings(self) -> str:
        """Resets your APN settings to the default settings."""
        self.db.write("device", "active_apn_settings")["reset_at_reboot"] = True
        self.simulate_network_search()
        return self._with_bar("APN settings will reset at reboot.")

    def break_apn_settings(self) -> str:
        """Initialisation helper: break the APN (no service until ``reset_apn_settings`` and a reboot)."""
        self.db.write("device", "active_apn_settings")["apn_name"] = "broken"
        self.simulate_network_search()
        if self._dev("network_connection_status") != "no_service":
            raise AssertionError("a broken APN must leave the phone without service")
        return "APN settings broken. Please call reset_apn_settings() to fix."

    def break_apn_mms_setting(self) -> str:
        """Initialisation helper: clear the MMSC URL (MMS fails until the APN is reset and the phone rebooted)."""
        self.db.write("device", "active_apn_settings")["mmsc_url"] = None
        if self._can_send_mms():
            raise AssertionError("a phone without MMSC URL must not send MMS")
        return "APN MMS setting broken. Please call reset_apn_settings() to fix."

    # ------------------------------------------------------------------ Wi-Fi and Wi-Fi calling
    @tool(READ)
    def check_wifi_status(self) -> str:
        """Checks your Wi-Fi connection status. Shows if Wi-Fi is turned on, which network you're connected to
        (if any), and the signal strength."""
        if not self._dev("wifi_enabled"):
            return "Wi-Fi is turned OFF."
        if self._dev("wifi_connected"):
            return (
                f"Wi-Fi is ON and connected to '{self._dev('wifi_ssid')}'. "
                f"Signal strength: {self._dev('wifi_signal_strength')}."
            )
        return "Wi-Fi is ON but not connected to any network."

    @tool(WRITE)
    def toggle_wifi(self) -> str:
        """Toggles your phone's Wi-Fi radio ON or OFF. Controls whether your phone can discover and connect to
        wireless networks for internet access. Returns the new Wi-Fi status."""
        if self._dev("airplane_mode"):
            return self._with_bar("Cannot change Wi-Fi settings while Airplane Mode is ON.")
        on = self._toggle("wifi_enabled", search=False)
        if not on:
            self._wifi_disconnect()
        return self._with_bar(f"Wi-Fi is now {'ON' if on else 'OFF'}.")

    @tool(READ)
    def check_wifi_calling_status(self) -> str:
        """Checks if Wi-Fi Calling is enabled on your device. This feature allows you to make and receive calls
        over a Wi-Fi network instead of using the cellular network."""
        return f"Wi-Fi Calling is currently turned {'ON' if self._dev('wifi_calling_enabled') else 'OFF'}."

    @tool(WRITE)
    def toggle_wifi_calling(self) -> str:
        """Toggles Wi-Fi Calling ON or OFF. This feature allows you to make and receive calls over Wi-Fi
        instead of the cellular network, which can help in areas with weak cellular signal. Returns the new
        Wi-Fi Calling status."""
        on = self._toggle("wifi_calling_enabled", search=False)
        return self._with_bar(f"Wi-Fi Calling is now {'ON' if on else 'OFF'}.")

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> str:
        """Initialisation helper: set Wi-Fi calling (and MMS over Wi-Fi when given)."""
        if self._dev("wifi_calling_enabled") != enabled:
            self._toggle("wifi_calling_enabled", search=False)
        text = f"Wi-Fi Calling is now {'ON' if enabled else 'OFF'}."
        if mms_over_wifi is not None:
            self._set_dev("wifi_calling_mms_over_wifi", mms_over_wifi)
            text += f"\nMMS over Wi-Fi is now {'ON' if mms_over_wifi else 'OFF'}."
        return text

    # ------------------------------------------------------------------ VPN
    @tool(READ)
    def check_vpn_status(self) -> str:
        """Checks if you're using a VPN (Virtual Private Network) connection. Shows if a VPN is active,
        connected, and displays any available connection details."""
        details = self._dev("vpn_details")
        if self._dev("vpn_connected"):
            if details:
                shown = (
                    f"{{'server_address': {details['server_address']!r}, 'protocol': {details['protocol']!r}, "
                    f"'server_performance': {_enum_repr('PerformanceLevel', details['server_performance'])}}}"
                )
                return f"VPN is ON and connected. Details: {shown}"
            return "VPN is ON and connected (no specific details available)."
        if self._dev("vpn_enabled_setting"):
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @tool(WRITE)
    def connect_vpn(self) -> str:
        """Connects to your VPN (Virtual Private Network)."""
        if self._dev("vpn_connected"):
            return "VPN already connected."
        self._set_dev("vpn_connected", True)
        self._set_dev("vpn_details", dict(DEFAULT_VPN))
        return self._with_bar("VPN connected successfully.")

    def _disconnect_vpn(self) -> bool:
        if not self._dev("vpn_connected"):
            return False
        self._set_dev("vpn_connected", False)
        self._set_dev("vpn_details", None)
        return True

    @tool(WRITE)
    def disconnect_vpn(self) -> str:
        """Disconnects any active VPN (Virtual Private Network) connection. Stops routing your internet traffic
        through a VPN server, which might affect connection speed or access to content."""
        done = self._disconnect_vpn()
        return self._with_bar("VPN disconnected successfully." if done else "No active VPN connection to disconnect.")

    def break_vpn(self) -> str:
        """Initialisation helper: connect a VPN with poor performance (slow mobile data)."""
        self.connect_vpn()
        if self._dev("vpn_details") is None:
            raise AttributeError("'NoneType' object has no attribute 'server_performance'")
        self.db.write("device", "vpn_details")["server_performance"] = "poor"
        return "VPN connection broken."

    # ------------------------------------------------------------------ apps
    @tool(READ)
    def check_installed_apps(self) -> str:
        """Returns the name of all installed apps on the phone."""
        return f"The following apps are installed on the phone: {', '.join(self._dev('app_statuses'))}"

    def _granted(self, app_name: Any) -> list[str] | None:
        app = self._dev("app_statuses").get(app_name)
        if not app:
            return None
        return [name.replace("_", " ").lower() for name, allowed in app["permissions"].items() if allowed]

    @tool(READ)
    def check_app_status(self, app_name: str) -> str:
        """Checks detailed information about a specific app. Shows its permissions and background data usage
        settings.

        Args:
            app_name: The name of the app.
        """
        granted = self._granted(app_name)
        if granted is None:
            return f"App '{app_name}' not found on this phone."
        lines = [f"Status for App: {app_name}"]
        if not granted:
            lines.append(" - Permissions: None granted.")
        else:
            lines.append(" - Permissions Granted:")
            lines.extend(f"   - {p}" for p in granted)
        return "\n".join(lines)

    @tool(READ)
    def check_app_permissions(self, app_name: str) -> str:
        """Checks what permissions a specific app currently has. Shows if the app has access to features like
        storage, camera, location, etc.

        Args:
            app_name: The name of the app.
        """
        granted = self._granted(app_name)
        if granted is None:
            return f"App '{app_name}' not found on this phone."
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    @tool(WRITE)
    def grant_app_permission(self, app_name: str, permission: str) -> str:
        """Gives a specific permission to an app (like access to storage, camera, or location). Required for
        some app functions to work properly.

        Args:
            app_name: The name of the app to grant the permission to.
            permission: The permission to grant, should be lowercase.
        """
        app = self._dev("app_statuses").get(app_name)
        permission = permission.lower()
        if not app:
            ok, text = False, f"App '{app_name}' not found. Cannot grant permission."
        elif permission not in app["permissions"]:
            available = list(app["permissions"])
            ok, text = (
                False,
                f"Permission '{permission}' not tracked for app '{app_name}', available permissions: {available}",
            )
        else:
            self.db.write("device", "app_statuses")[app_name]["permissions"][permission] = True
            ok, text = True, f"Permission '{permission}' granted to app '{app_name}'."
        return self._with_bar(f"{'Success. ' if ok else 'Error. '}{text}")

    def remove_app_permission(self, app_name: str, permission: str) -> tuple[bool, str]:
        """Initialisation helper: take a permission away from an app."""
        app = self._dev("app_statuses").get(app_name)
        permission = permission.lower()
        if not app:
            return False, f"App '{app_name}' not found. Cannot remove permission."
        if permission not in app["permissions"]:
            return False, f"Permission '{permission}' not tracked for app '{app_name}'."
        self.db.write("device", "app_statuses")[app_name]["permissions"][permission] = False
        return True, f"Permission '{permission}' removed from app '{app_name}'."

    # ------------------------------------------------------------------ MMS, reboot, payment
    @tool(READ)
    def can_send_mms(self) -> str:
        """Checks if the default messaging app can send MMS messages."""
        if self._can_send_mms():
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."

    @tool(WRITE)
    def reboot_device(self) -> str:
        """Restarts your phone completely. This can help resolve many temporary software glitches by refreshing
        all running services and connections."""
        lines = []
        if self._dev("active_apn_settings")["reset_at_reboot"]:
            lines.append("Resetting APN settings...")
            self._set_dev("active_apn_settings", m.validate(APN_SETTINGS, {}))
        lines.append("Restarting network services...")
        self._set_dev("network_connection_status", "searching")
        self.simulate_network_search()
        return self._with_bar("\n".join(lines))

    @tool(READ)
    def check_payment_request(self) -> str:
        """Checks if the agent has sent you a payment request."""
        request = self._sur("payment_request")
        if request is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {request['bill_id']} of {request['amount_due']} USD."

    @tool(WRITE)
    def make_payment(self) -> str:
        """Makes a payment for the bill that the agent has sent you."""
        if self._sur("payment_request") is None:
            return "You do not have a payment request."
        request = self.db.write("surroundings", "payment_request")
        request["paid"] = True
        return f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."

    # ------------------------------------------------------------------ helpers (not tools)
    def set_user_info(self, name: str, phone_number: str) -> None:
        """Initialisation helper: the customer's name and phone number (the sync finds their line by it)."""
        self._set("surroundings", "name", name)
        self._set("surroundings", "phone_number", phone_number)

    def set_user_location(self, abroad: bool) -> None:
        """Initialisation helper: whether the customer is abroad."""
        self._set("surroundings", "is_abroad", abroad)

    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        """Env assertion: airplane mode is ``expected_status``."""
        return self._dev("airplane_mode") == expected_status

    def assert_service_status(self, expected_status: str) -> bool:
        """Env assertion: the network connection status is ``expected_status`` (a known status name)."""
        if expected_status not in NETWORK_STATUSES:
            raise ValueError(f"{expected_status!r} is not a valid NetworkStatus")
        return self._dev("network_connection_status") == expected_status

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        """Env assertion: mobile data works (``True``) or not."""
        return self._mobile_data_working() == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        """Env assertion: the phone's data roaming setting is ``expected_status``."""
        return self._dev("roaming_enabled") == expected_status

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        """Env assertion: data saver is ``expected_status``."""
        return self._dev("data_saver_mode") == expected_status

    def assert_internet_speed(self, expected_speed: float, expected_desc: str | None = None) -> bool:
        """Env assertion: the speed test gives at least ``expected_speed`` (and the label, case-insensitive)."""
        speed, label = self._speed()
        speed = speed or 0.0
        if expected_desc is None:
            return speed >= expected_speed
        return speed >= expected_speed and label.lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        """Env assertion: the speed test label is not Excellent."""
        return self._speed()[1].lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        """Env assertion: the messaging app can send MMS (``True``) or not."""
        return self._can_send_mms() == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        """Env assertion: the data allowance is used up (``True``) or not."""
        return self._sur("mobile_data_usage_exceeded") == expected_status
