"""The customer's 30 tools on their own phone (tau2-bench ``src/tau2/domains/telecom/user_tools.py``).

Outputs are tau2's human-readable texts, most ending in ``"\\nStatus Bar: ..."``, and invalid APN settings are
refused with pydantic's message (:mod:`..validation`); the device model behind them is
:class:`~.phone.Phone`. :class:`TelecomUserTools` is the user toolkit: these tools, plus the initialisation actions
(:mod:`.initialization`) and env assertions (:mod:`.assertions`) tau2 calls on the same object.

Load option ``vpn_details``: ``"process"`` (default) is tau2's behaviour: its ``connect_vpn`` stores one VPN-details
object shared by every phone in the process and ``break_vpn`` (an initialisation action of 128 tasks) degrades it,
so after any ``break_vpn`` every phone connected through ``connect_vpn`` in that process, earlier or later, has a
poor VPN; in training, episodes sharing a worker then depend on each other's order. ``"episode"`` keeps each phone's
VPN its own (``connect_vpn`` always connects at excellent performance).

As in tau2, ``set_apn_settings`` given a non-object and ``set_network_mode_preference`` given a non-string store
the value before failing on it, and later tools that read it fail as tau2's do.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, cast

from ....engine.state import DBState
from ....engine.toolkit import READ, WRITE, Toolkit, tool
from .. import validation as v
from .assertions import PhoneAssertions
from .initialization import PhoneSetup
from .phone import (
    APN_SETTINGS,
    MODE_PREFERENCES,
    ApnSettings,
    DeviceState,
    PaymentRequest,
    Phone,
    Surroundings,
    default_apn_settings,
)

SPEED_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
_SIM_TEXT = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}


def _enum_repr(enum_name: str, value: str) -> str:
    """How Python prints a member of one of tau2's string enums inside a dict (``repr``)."""
    return f"<{enum_name}.{value.upper()}: {value!r}>"


def _on(flag: bool) -> str:
    return "ON" if flag else "OFF"


class TelecomUserTools(Toolkit, PhoneSetup, PhoneAssertions):
    """The customer's phone: 30 user tools, the initialisation actions that break it, and env assertions.

    State lives in two collections of the user DB, read and written through :attr:`phone`: ``device`` (the
    phone's settings and radio state) and ``surroundings`` (where the customer is, and what the carrier allows;
    kept in sync with the agent DB).
    """

    vpn_details: ClassVar[str] = "process"
    """The load option ``vpn_details`` this toolkit was configured with (see the module doc)."""

    def __init__(self, db: DBState) -> None:
        super().__init__(db)
        self.phone = Phone(db, self.vpn_details)

    def set_surrounding(self, field: str, value: Any) -> None:
        """Set one field of the surroundings by name."""
        if not self.db.contains("surroundings", field):
            raise ValueError(f"unknown surroundings field {field!r}")
        setattr(self.phone.surroundings, field, value)

    def surrounding(self, field: str) -> Any:
        """One field of the surroundings by name (read-only)."""
        return self.db.get("surroundings", field)

    def simulate_network_search(self) -> None:
        """Helper: search for a network and update status, technology and signal (:meth:`.Phone.network_search`)."""
        self.phone.network_search()

    # ------------------------------------------------------------------ status and network
    @tool(READ)
    def check_status_bar(self) -> str:
        """Shows what icons are currently visible in your phone's status bar (the area at the top of the
        screen). Displays network signal strength, mobile data status (enabled, disabled, data saver), Wi-Fi
        status, and battery level."""
        return f"Status Bar: {self.phone.status_bar()}"

    @tool(READ)
    def check_network_status(self) -> str:
        """Checks your phone's connection status to cellular networks and Wi-Fi. Shows airplane mode status,
        signal strength, network type, whether mobile data is enabled, and whether data roaming is enabled."""
        dev = self.phone.device
        yes_no = {True: "Yes", False: "No"}
        lines = [
            f"Airplane Mode: {_on(bool(dev.airplane_mode))}",
            f"SIM Card Status: {self.phone.sim_status()}",
            f"Cellular Connection: {dev.network_connection_status}",
            f"Cellular Signal: {dev.network_signal_strength}",
            f"Cellular Network Type: {dev.network_technology_connected}",
            f"Mobile Data Enabled: {yes_no[bool(dev.data_enabled)]}",
            f"Data Roaming Enabled: {yes_no[bool(dev.roaming_enabled)]}",
            f"Wi-Fi Radio: {_on(bool(dev.wifi_enabled))}",
            f"Wi-Fi Connected: {yes_no[bool(dev.wifi_connected)]}",
        ]
        if dev.wifi_connected:
            lines.append(f"Connected Wi-Fi Network: {dev.wifi_ssid}")
        return "\n".join(lines)

    @tool(READ)
    def check_network_mode_preference(self) -> str:
        """Shows the current network mode preference."""
        mode = self.phone.device.network_mode_preference
        if not isinstance(mode, str):  # stored by set_network_mode_preference, as tau2 does
            raise AttributeError(f"'{type(mode).__name__}' object has no attribute 'value'")
        return f"Network Mode Preference: {mode}"

    @tool(WRITE)
    def set_network_mode_preference(self, mode: Literal["4g_5g_preferred", "4g_only", "3g_only", "2g_only"]) -> str:
        """Changes the type of cellular network your phone prefers to connect to (e.g., 5G, LTE/4G, 3G).
        Higher-speed networks (LTE/5G) provide faster data but may use more battery.

        Args:
            mode: The preferred network mode: 4g_5g_preferred, 4g_only, 3g_only or 2g_only.
        """
        if isinstance(mode, str) and mode not in MODE_PREFERENCES:
            return self._mode_refused(mode)
        # tau2 stores a mode of another type too, searches (finding 4G), then fails on it (None: refused)
        self.phone.device.network_mode_preference = mode
        self.phone.network_search()
        if mode is None:
            return self._mode_refused(mode)
        if not isinstance(mode, str):
            raise AttributeError(f"'{type(mode).__name__}' object has no attribute 'value'")
        return self.phone.with_bar(f"Preferred Network Mode set to: {mode}")

    def _mode_refused(self, mode: Any) -> str:
        return self.phone.with_bar(
            f"Failed to set network mode: '{mode}' is not a valid option. "
            f"Please use one of: {', '.join(MODE_PREFERENCES)}"
        )

    @tool(READ)
    def run_speed_test(self) -> str:
        """Measures your current internet connection speed (download speed). Provides information about
        connection quality and what activities it can support."""
        speed, label = self.phone.speed()
        if speed is None:
            return f"Speed test failed: {label or 'Could not determine speed'}."
        return f"Speed Test Result: {speed:.2f} Mbps ({label}). {SPEED_ADVICE.get(label, '')}"

    # ------------------------------------------------------------------ airplane mode
    @tool(WRITE)
    def toggle_airplane_mode(self) -> str:
        """Toggles Airplane Mode ON or OFF. When ON, it disconnects all wireless communications including
        cellular, Wi-Fi, and Bluetooth. Returns the new state of airplane_mode."""
        on = self.phone.toggle_airplane_mode()
        return self.phone.with_bar(f"Airplane Mode is now {_on(on)}.")

    # ------------------------------------------------------------------ SIM
    @tool(READ)
    def check_sim_status(self) -> str:
        """Checks if your SIM card is working correctly and displays its current status. Shows if the SIM is
        active, missing, or locked with a PIN or PUK code."""
        status = self.phone.sim_status()
        return _SIM_TEXT.get(status, f"Unknown SIM status: {status}")

    @tool(WRITE)
    def reseat_sim_card(self) -> str:
        """Simulates removing and reinserting your SIM card. This can help resolve recognition issues."""
        self.phone.device.sim_card_missing = False
        self.phone.network_search()
        return self.phone.with_bar("SIM card re-seated successfully.")

    # ------------------------------------------------------------------ mobile data and roaming
    @tool(WRITE)
    def toggle_data(self) -> str:
        """Toggles your phone's mobile data connection ON or OFF. Controls whether your phone can use cellular
        data for internet access when Wi-Fi is unavailable. Returns the new data connection status."""
        on = self.phone.toggle(DeviceState.data_enabled)
        return self.phone.with_bar(f"Mobile Data is now {_on(on)}.")

    @tool(WRITE)
    def toggle_roaming(self) -> str:
        """Toggles Data Roaming ON or OFF. When ON, your phone can use data networks in areas outside your
        carrier's coverage. Returns the new data roaming status."""
        on = self.phone.toggle(DeviceState.roaming_enabled)
        return self.phone.with_bar(f"Data Roaming is now {_on(on)}.")

    @tool(READ)
    def check_data_restriction_status(self) -> str:
        """Checks if your phone has any data-limiting features active. Shows if Data Saver mode is on."""
        if self.phone.device.data_saver_mode:
            return "Data Saver mode is ON (limits data usage)."
        return "Data Saver mode is OFF."

    @tool(WRITE)
    def toggle_data_saver_mode(self) -> str:
        """Toggles Data Saver mode ON or OFF. When ON, it reduces data usage, which may affect data speed.
        Returns the new data saver mode status."""
        on = self.phone.toggle(DeviceState.data_saver_mode, search=False)
        return self.phone.with_bar(f"Data Saver Mode is now {_on(on)}.")

    # ------------------------------------------------------------------ APN
    @tool(READ)
    def check_apn_settings(self) -> str:
        """Checks the technical APN settings your phone uses to connect to your carrier's mobile data network.
        Shows current APN name and MMSC URL for picture messaging."""
        apn = self.phone.apn_record("model_copy")
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
        if not isinstance(apn_settings, dict):  # tau2 stores it, then fails on it
            self.phone.device.active_apn_settings = cast(ApnSettings, apn_settings)
            raise AttributeError(f"'{type(apn_settings).__name__}' object has no attribute 'apn_name'")
        settings = cast(ApnSettings, v.validate(APN_SETTINGS, apn_settings))
        self.phone.device.active_apn_settings = settings
        self.phone.network_search()
        return self.phone.with_bar(f"APN settings set to: {settings['apn_name']}")

    @tool(WRITE)
    def reset_apn_settings(self) -> str:
        """Resets your APN settings to the default settings."""
        self.phone.apn_record("reset_at_reboot")
        DeviceState.active_apn_settings.edit(self.phone.device)["reset_at_reboot"] = True
        self.phone.network_search()
        return self.phone.with_bar("APN settings will reset at reboot.")

    # ------------------------------------------------------------------ Wi-Fi and Wi-Fi calling
    @tool(READ)
    def check_wifi_status(self) -> str:
        """Checks your Wi-Fi connection status. Shows if Wi-Fi is turned on, which network you're connected to
        (if any), and the signal strength."""
        dev = self.phone.device
        if not dev.wifi_enabled:
            return "Wi-Fi is turned OFF."
        if dev.wifi_connected:
            return f"Wi-Fi is ON and connected to '{dev.wifi_ssid}'. Signal strength: {dev.wifi_signal_strength}."
        return "Wi-Fi is ON but not connected to any network."

    @tool(WRITE)
    def toggle_wifi(self) -> str:
        """Toggles your phone's Wi-Fi radio ON or OFF. Controls whether your phone can discover and connect to
        wireless networks for internet access. Returns the new Wi-Fi status."""
        if self.phone.device.airplane_mode:
            return self.phone.with_bar("Cannot change Wi-Fi settings while Airplane Mode is ON.")
        on = self.phone.toggle(DeviceState.wifi_enabled, search=False)
        if not on:
            self.phone.wifi_disconnect()
        return self.phone.with_bar(f"Wi-Fi is now {_on(on)}.")

    @tool(READ)
    def check_wifi_calling_status(self) -> str:
        """Checks if Wi-Fi Calling is enabled on your device. This feature allows you to make and receive calls
        over a Wi-Fi network instead of using the cellular network."""
        return f"Wi-Fi Calling is currently turned {_on(self.phone.device.wifi_calling_enabled)}."

    @tool(WRITE)
    def toggle_wifi_calling(self) -> str:
        """Toggles Wi-Fi Calling ON or OFF. This feature allows you to make and receive calls over Wi-Fi
        instead of the cellular network, which can help in areas with weak cellular signal. Returns the new
        Wi-Fi Calling status."""
        on = self.phone.toggle(DeviceState.wifi_calling_enabled, search=False)
        return self.phone.with_bar(f"Wi-Fi Calling is now {_on(on)}.")

    # ------------------------------------------------------------------ VPN
    @tool(READ)
    def check_vpn_status(self) -> str:
        """Checks if you're using a VPN (Virtual Private Network) connection. Shows if a VPN is active,
        connected, and displays any available connection details."""
        dev = self.phone.device
        details = self.phone.vpn()
        if dev.vpn_connected:
            if details:
                shown = (
                    f"{{'server_address': {details['server_address']!r}, 'protocol': {details['protocol']!r}, "
                    f"'server_performance': {_enum_repr('PerformanceLevel', details['server_performance'])}}}"
                )
                return f"VPN is ON and connected. Details: {shown}"
            return "VPN is ON and connected (no specific details available)."
        if dev.vpn_enabled_setting:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @tool(WRITE)
    def connect_vpn(self) -> str:
        """Connects to your VPN (Virtual Private Network)."""
        if not self.phone.connect_vpn():
            return "VPN already connected."
        return self.phone.with_bar("VPN connected successfully.")

    @tool(WRITE)
    def disconnect_vpn(self) -> str:
        """Disconnects any active VPN (Virtual Private Network) connection. Stops routing your internet traffic
        through a VPN server, which might affect connection speed or access to content."""
        done = self.phone.disconnect_vpn()
        return self.phone.with_bar(
            "VPN disconnected successfully." if done else "No active VPN connection to disconnect."
        )

    # ------------------------------------------------------------------ apps
    @tool(READ)
    def check_installed_apps(self) -> str:
        """Returns the name of all installed apps on the phone."""
        return f"The following apps are installed on the phone: {', '.join(self.phone.device.app_statuses)}"

    def _granted(self, app_name: Any) -> list[str] | None:
        app = self.phone.device.app_statuses.get(app_name)
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
        app = self.phone.device.app_statuses.get(app_name)
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
            DeviceState.app_statuses.edit(self.phone.device)[app_name]["permissions"][permission] = True
            ok, text = True, f"Permission '{permission}' granted to app '{app_name}'."
        return self.phone.with_bar(f"{'Success. ' if ok else 'Error. '}{text}")

    # ------------------------------------------------------------------ MMS, reboot, payment
    @tool(READ)
    def can_send_mms(self) -> str:
        """Checks if the default messaging app can send MMS messages."""
        if self.phone.can_send_mms():
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."

    @tool(WRITE)
    def reboot_device(self) -> str:
        """Restarts your phone completely. This can help resolve many temporary software glitches by refreshing
        all running services and connections."""
        dev = self.phone.device
        lines = []
        if self.phone.apn_record("reset_at_reboot")["reset_at_reboot"]:
            lines.append("Resetting APN settings...")
            dev.active_apn_settings = default_apn_settings()
        lines.append("Restarting network services...")
        dev.network_connection_status = "searching"
        self.phone.network_search()
        return self.phone.with_bar("\n".join(lines))

    @tool(READ)
    def check_payment_request(self) -> str:
        """Checks if the agent has sent you a payment request."""
        request = self.phone.surroundings.payment_request
        if request is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {request['bill_id']} of {request['amount_due']} USD."

    @tool(WRITE)
    def make_payment(self) -> str:
        """Makes a payment for the bill that the agent has sent you."""
        around = self.phone.surroundings
        if around.payment_request is None:
            return "You do not have a payment request."
        request = cast(PaymentRequest, Surroundings.payment_request.edit(around))
        request["paid"] = True
        return f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."


class EpisodeVpnUserTools(TelecomUserTools):
    """The user toolkit under the load option ``vpn_details: episode``: a class of its own, defined at module level,
    so that an environment built with it pickles (a process-pool reward or a Ray worker receives one by value)."""

    vpn_details: ClassVar[str] = "episode"
