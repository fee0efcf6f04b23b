"""The customer's phone as typed state: the device and its surroundings (``user_db.toml``), and how they behave.

tau2-bench keeps them as two pydantic models (``src/tau2/domains/telecom/user_data_model.py``:
``MockPhoneAttributes`` and ``UserSurroundings``). Here they live in the user DB's two collections ``device`` and
``surroundings`` (one entry per field, so a tool's change copies only the fields it touches);
:class:`DeviceState` and :class:`Surroundings` read and write those entries as typed attributes, and each field is
declared once, with its validation kind and default, which also make the DB model (:data:`USER_DB`).

:class:`Phone` adds the device model that tools, initialisation actions and env assertions share
(tau2 ``user_tools.py``):

* **network search** (:meth:`Phone.network_search`): an active SIM connects with the technology the mode
  preference picks (``4g_5g_preferred``: 5G, or 4G where there is no 5G signal) at the signal strength the
  surroundings give that technology; a missing or locked SIM has no service; airplane mode, a broken APN or an
  inactive line then force no service, no technology, no signal.
* **mobile data works** unless: airplane mode, no signal, no service, abroad without both device roaming and
  line roaming, data switched off, or the data allowance used up.
* **speed test**: ``(min + max) / 2 × signal factor × base``, rounded to 2 decimals, with ranges 2G 0.1–0.4,
  3G 1–5, 4G 10–100, 5G 50–500 Mbps, factors poor 0.2 / fair 0.5 / good 0.8 / excellent 1.0, base 1 (0.1
  with a poor-performance VPN connected) times 0.2 with data saver on. Labels: < 1 Very Poor, < 5 Poor,
  < 25 Fair, < 100 Good, else Excellent.
* **MMS** needs working mobile data, not 2G, not Wi-Fi calling with MMS over Wi-Fi, an MMSC URL, and the
  messaging app with SMS and storage permissions.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, Literal, TypedDict, TypeVar, cast, get_args, overload

from ....engine.state import DBState
from .. import validation as v

Signal = Literal["none", "poor", "fair", "good", "excellent"]
Technology = Literal["none", "2G", "3G", "4G", "5G"]
NetworkStatus = Literal["connected", "searching", "no_service", "emergency_only"]
ModePreference = Literal["4g_5g_preferred", "4g_only", "3g_only", "2g_only"]
SimStatus = Literal["active", "missing", "locked_pin", "locked_puk"]
PerformanceLevel = Literal["unknown", "poor", "fair", "good", "excellent"]

SIGNALS: tuple[str, ...] = get_args(Signal)
TECHNOLOGIES: tuple[str, ...] = get_args(Technology)
NETWORK_STATUSES: tuple[str, ...] = get_args(NetworkStatus)
MODE_PREFERENCES: tuple[str, ...] = get_args(ModePreference)
SIM_STATUSES: tuple[str, ...] = get_args(SimStatus)
PERFORMANCE_LEVELS: tuple[str, ...] = get_args(PerformanceLevel)
PERMISSIONS = ("sms", "storage", "phone", "network")

SPEED_RANGES = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
SIGNAL_FACTORS = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
DEFAULT_MMSC_URL = "http://mms.carrier.com/mms/wapenc"
_MODE_TECH: dict[str, Technology] = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}
_SIGNAL_ICONS = {
    "none": "\U0001f4f5 No Signal",
    "poor": "\U0001f4f6\u00b9 Poor",
    "fair": "\U0001f4f6\u00b2 Fair",
    "good": "\U0001f4f6\u00b3 Good",
    "excellent": "\U0001f4f6\u2074 Excellent",
}


class ApnSettings(TypedDict):
    """tau2's ``APNSettings``."""

    apn_name: Literal["internet", "broken"]
    reset_at_reboot: bool
    mms_apn: str | None
    mmsc_url: str | None
    mms_proxy: str | None
    mms_port: int | None


class VpnDetails(TypedDict):
    """tau2's ``VpnDetails``."""

    server_address: str | None
    protocol: str | None
    server_performance: PerformanceLevel


DEFAULT_VPN: VpnDetails = {"server_address": "192.168.1.1", "protocol": "OpenVPN", "server_performance": "excellent"}
"""What ``connect_vpn`` connects to with ``vpn_details="episode"``."""

VPN_SCOPES = ("process", "episode")
"""The telecom load option ``vpn_details`` (see :mod:`.user_tools`): ``process``, tau2's, or ``episode``."""

PROCESS_VPN: VpnDetails = DEFAULT_VPN.copy()
"""The VPN details every phone of this process connects to with ``vpn_details="process"``: tau2 keeps one
``default_vpn_details`` object on its user-tools class (``user_tools.py`` line 35), ``connect_vpn`` stores that
object (line 765) and ``break_vpn`` degrades it in place (line 790)."""


def reset_process_vpn() -> None:
    """Put :data:`PROCESS_VPN` back to excellent performance, as a fresh process has it (tests, benchmarks)."""
    PROCESS_VPN.update(DEFAULT_VPN)


class AppStatus(TypedDict):
    """tau2's ``AppStatus``: the app's name and its permissions (``sms``, ``storage``, ``phone``, ``network``)."""

    app_name: str
    permissions: dict[str, bool]


class PaymentRequest(TypedDict):
    """tau2's ``PaymentRequest``: a bill the agent asked the customer to pay."""

    bill_id: str
    amount_due: float
    paid: bool


APN_SETTINGS = v.no_extra(
    "APNSettings",
    (
        ("apn_name", v.enum("internet", "broken"), "internet"),
        ("reset_at_reboot", v.boolean, False),
        ("mms_apn", v.optional(v.string), "mms"),
        ("mmsc_url", v.optional(v.string), DEFAULT_MMSC_URL),
        ("mms_proxy", v.optional(v.string), None),
        ("mms_port", v.optional(v.lax_int), None),
    ),
)
VPN_DETAILS = v.no_extra(
    "VpnDetails",
    (
        ("server_address", v.optional(v.string), None),
        ("protocol", v.optional(v.string), None),
        ("server_performance", v.enum(*PERFORMANCE_LEVELS), "unknown"),
    ),
)
APP_PERMISSIONS = v.no_extra("AppPermissions", tuple((p, v.boolean, False) for p in PERMISSIONS))
APP_STATUS = v.no_extra(
    "AppStatus",
    (
        ("app_name", v.string, v.REQUIRED),
        ("permissions", v.record(APP_PERMISSIONS), lambda: dict.fromkeys(PERMISSIONS, False)),
    ),
)
PAYMENT_REQUEST = v.no_extra(
    "PaymentRequest",
    (("bill_id", v.string, v.REQUIRED), ("amount_due", v.lax_float, v.REQUIRED), ("paid", v.boolean, False)),
)


def default_apn_settings() -> ApnSettings:
    """tau2's default ``APNSettings()``."""
    return cast(ApnSettings, v.validate(APN_SETTINGS, {}))


def _default_apps() -> dict[str, AppStatus]:
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


T = TypeVar("T")


class Field(Generic[T]):
    """One typed field of a :class:`StateView`: reads and writes the DB entry of the same name.

    ``kind`` and ``default`` are the field's validation (:mod:`..validation`), used to build the DB model.
    """

    name: str

    def __init__(self, kind: v.Kind, default: Any = v.REQUIRED) -> None:
        self.kind = kind
        self.default = default

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, view: None, owner: type[Any]) -> Field[T]: ...

    @overload
    def __get__(self, view: StateView, owner: type[Any]) -> T: ...

    def __get__(self, view: StateView | None, owner: type[Any]) -> Field[T] | T:
        if view is None:
            return self
        value: T = view.db.get(view.COLLECTION, self.name)
        return value

    def __set__(self, view: StateView, value: T) -> None:
        """Store ``value`` unless it equals what is stored (an unchanged field is not copied)."""
        current = view.db.get(view.COLLECTION, self.name)
        if current is value or (type(current) is type(value) and current == value):
            return
        view.db.insert(view.COLLECTION, self.name, value)

    def edit(self, view: StateView) -> T:
        """A private, mutable copy of the field's value (a record): mutate only this."""
        value: T = view.db.write(view.COLLECTION, self.name)
        return value


class StateView:
    """Typed access to one collection of the user DB whose keys are field names (one tau2 model)."""

    COLLECTION: ClassVar[str]
    MODEL_NAME: ClassVar[str]

    def __init__(self, db: DBState) -> None:
        self.db = db

    @classmethod
    def fields(cls) -> dict[str, Field[Any]]:
        """The declared fields, in declaration order (tau2's model field order)."""
        return {name: f for name, f in vars(cls).items() if isinstance(f, Field)}

    @classmethod
    def model(cls) -> v.Model:
        """The validation model of this collection (tau2's pydantic model)."""
        return v.no_extra(cls.MODEL_NAME, tuple((name, f.kind, f.default) for name, f in cls.fields().items()))


class DeviceState(StateView):
    """The phone's settings and radio state (tau2 ``MockPhoneAttributes``)."""

    COLLECTION = "device"
    MODEL_NAME = "MockPhoneAttributes"

    sim_card_status: Field[SimStatus] = Field(v.enum(*SIM_STATUSES), "active")
    sim_card_missing: Field[bool] = Field(v.boolean, False)
    airplane_mode: Field[bool] = Field(v.boolean, False)
    network_signal_strength: Field[Signal] = Field(v.enum(*SIGNALS), "good")
    network_technology_connected: Field[Technology] = Field(v.enum(*TECHNOLOGIES), "5G")
    network_connection_status: Field[NetworkStatus] = Field(v.enum(*NETWORK_STATUSES), "connected")
    battery_level: Field[int] = Field(v.lax_int, 80)
    data_enabled: Field[bool] = Field(v.boolean, True)
    roaming_enabled: Field[bool] = Field(v.boolean, False)
    network_mode_preference: Field[ModePreference] = Field(v.enum(*MODE_PREFERENCES), "4g_5g_preferred")
    active_apn_settings: Field[ApnSettings] = Field(v.record(APN_SETTINGS), default_apn_settings)
    wifi_enabled: Field[bool] = Field(v.boolean, False)
    wifi_connected: Field[bool] = Field(v.boolean, False)
    wifi_ssid: Field[str | None] = Field(v.optional(v.string), None)
    wifi_signal_strength: Field[Signal] = Field(v.enum(*SIGNALS), "none")
    wifi_calling_enabled: Field[bool] = Field(v.boolean, False)
    wifi_calling_mms_over_wifi: Field[bool] = Field(v.boolean, False)
    data_saver_mode: Field[bool] = Field(v.boolean, False)
    vpn_enabled_setting: Field[bool] = Field(v.boolean, False)
    vpn_connected: Field[bool] = Field(v.boolean, False)
    vpn_details: Field[VpnDetails | None] = Field(v.optional(v.record(VPN_DETAILS)), None)
    app_statuses: Field[dict[str, AppStatus]] = Field(v.dict_of(v.record(APP_STATUS)), _default_apps)


class Surroundings(StateView):
    """Where the customer is and what the carrier allows (tau2 ``UserSurroundings``; synced from the agent DB)."""

    COLLECTION = "surroundings"
    MODEL_NAME = "UserSurroundings"

    name: Field[str | None] = Field(v.optional(v.string), None)
    phone_number: Field[str | None] = Field(v.optional(v.string), None)
    is_abroad: Field[bool] = Field(v.boolean, False)
    roaming_allowed: Field[bool] = Field(v.boolean, False)
    signal_strength: Field[dict[str, Signal]] = Field(
        v.dict_of(v.enum(*SIGNALS)), lambda: {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}
    )
    mobile_data_usage_exceeded: Field[bool] = Field(v.boolean, False)
    line_active: Field[bool] = Field(v.boolean, True)
    payment_request: Field[PaymentRequest | None] = Field(v.optional(v.record(PAYMENT_REQUEST)), None)


DEVICE: v.Model = DeviceState.model()
SURROUNDINGS: v.Model = Surroundings.model()
USER_DB = v.no_extra(
    "TelecomUserDB",
    (
        ("device", v.record(DEVICE), lambda: v.validate(DEVICE, {})),
        ("surroundings", v.record(SURROUNDINGS), lambda: v.validate(SURROUNDINGS, {})),
    ),
)


def normalize_user_db(raw: Any) -> dict[str, Any]:
    """The user DB as tau2's ``TelecomUserDB.model_dump()``."""
    return v.validate(USER_DB, raw)


class Phone:
    """The phone of one environment: typed state (:attr:`device`, :attr:`surroundings`) and the device model."""

    def __init__(self, db: DBState, vpn_details: str = "process") -> None:
        self.device = DeviceState(db)
        self.surroundings = Surroundings(db)
        self.vpn_scope = vpn_details
        self.vpn_shared = False  # connected to :data:`PROCESS_VPN` (process scope): its changes show here

    def vpn(self) -> VpnDetails | None:
        """The VPN details, first taking over a degradation of :data:`PROCESS_VPN` when connected to it."""
        dev = self.device
        if self.vpn_shared and dev.vpn_connected and dev.vpn_details is not None:
            if dev.vpn_details != PROCESS_VPN:
                dev.vpn_details = PROCESS_VPN.copy()
        return dev.vpn_details

    def degrade_vpn(self) -> None:
        """``break_vpn``'s in-place change: this phone's VPN, and the process's when connected to it."""
        vpn = cast(VpnDetails, DeviceState.vpn_details.edit(self.device))
        vpn["server_performance"] = "poor"
        if self.vpn_shared:
            PROCESS_VPN["server_performance"] = "poor"

    def apn_record(self, attribute: str) -> ApnSettings:
        """The active APN settings, or tau2's ``AttributeError`` naming ``attribute`` when a value of another type
        was stored (tau2's ``set_apn_settings`` stores a non-object argument before failing on it)."""
        apn = self.device.active_apn_settings
        if not isinstance(apn, dict):
            raise AttributeError(f"'{type(apn).__name__}' object has no attribute '{attribute}'")
        return apn

    # ------------------------------------------------------------------ derived state
    def sim_status(self) -> SimStatus:
        """The SIM status as the phone reports it (``missing`` when the card is out)."""
        return "missing" if self.device.sim_card_missing else self.device.sim_card_status

    def mobile_data_working(self) -> bool:
        """Whether mobile data works (see the module doc)."""
        dev, around = self.device, self.surroundings
        if dev.airplane_mode or dev.network_signal_strength == "none":
            return False
        if dev.network_connection_status == "no_service":
            return False
        if around.is_abroad and (not dev.roaming_enabled or not around.roaming_allowed):
            return False
        if not dev.data_enabled:
            return False
        return not around.mobile_data_usage_exceeded

    def speed(self) -> tuple[float | None, str]:
        """The speed test's result in Mbps (None without mobile data) and its label (see the module doc)."""
        if not self.mobile_data_working():
            return None, "No Connection"
        dev = self.device
        details = self.vpn()
        poor_vpn = dev.vpn_connected and details and details["server_performance"] == "poor"
        base = 0.1 if poor_vpn else 1.0
        if dev.data_saver_mode:
            base *= 0.2
        low, high = SPEED_RANGES.get(dev.network_technology_connected, (0.0, 0.0))
        factor = SIGNAL_FACTORS.get(dev.network_signal_strength, 0.0)
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

    def can_send_mms(self) -> bool:
        """Whether the messaging app can send MMS (see the module doc)."""
        dev = self.device
        if not self.mobile_data_working():
            return False
        if dev.network_technology_connected == "2G":
            return False
        if dev.wifi_calling_enabled and dev.wifi_calling_mms_over_wifi:
            return False
        if self.apn_record("mmsc_url")["mmsc_url"] is None:
            return False
        app = dev.app_statuses.get("messaging")
        return app is not None and bool(app["permissions"]["storage"] and app["permissions"]["sms"])

    def status_bar(self) -> str:
        """The icons of the status bar, as tau2 prints them."""
        dev = self.device
        parts = []
        if dev.airplane_mode:
            parts.append("\u2708\ufe0f Airplane Mode")
        else:
            parts.append(_SIGNAL_ICONS.get(dev.network_signal_strength, _SIGNAL_ICONS["none"]))
            tech = dev.network_technology_connected
            if tech != "none":
                parts.append(tech)
            if dev.data_enabled and tech != "none":
                parts.append("\U0001f4f1 Data Enabled")
                if dev.data_saver_mode:
                    parts.append("\U0001f53d Data Saver")
            else:
                parts.append("\U0001f4f5 Data Disabled")
        if dev.wifi_enabled and dev.wifi_connected:
            ssid = dev.wifi_ssid
            parts.append(f"\U0001f4e1 Connected to {ssid}" if ssid else "\U0001f4e1 Enabled")
        if dev.vpn_connected:
            parts.append("\U0001f512 VPN Connected")
        parts.append(f"\U0001f50b {dev.battery_level}%")
        return " | ".join(parts)

    def with_bar(self, text: str) -> str:
        """``text`` followed by the status bar (how most of tau2's user tools answer)."""
        return f"{text}\nStatus Bar: {self.status_bar()}"

    # ------------------------------------------------------------------ state changes shared by tools and setup
    def network_search(self) -> None:
        """Search for a network and update status, technology and signal (see the module doc)."""
        dev = self.device
        if self.sim_status() == "active":
            dev.network_connection_status = "connected"
            signals = self.surroundings.signal_strength
            pref = dev.network_mode_preference  # tau2 may have stored a mode of another type: 4G then
            tech: Technology = _MODE_TECH.get(pref, "4G") if isinstance(pref, str) else "4G"
            if pref == "4g_5g_preferred" and signals.get("5G", "none") != "none":
                tech = "5G"
            dev.network_technology_connected = tech
            dev.network_signal_strength = signals.get(tech, "none")
        else:
            self._no_service()
        if dev.airplane_mode:
            self._no_service()
        if self.apn_record("apn_name")["apn_name"] == "broken":  # read even in airplane mode, as tau2 does
            self._no_service()
        if not self.surroundings.line_active:
            self._no_service()

    def _no_service(self) -> None:
        dev = self.device
        dev.network_connection_status = "no_service"
        dev.network_technology_connected = "none"
        dev.network_signal_strength = "none"

    def toggle(self, field: Field[bool], search: bool = True) -> bool:
        """Flip a device switch (then search for a network unless ``search`` is False); returns the new value."""
        new = not field.__get__(self.device, DeviceState)
        field.__set__(self.device, new)
        if search:
            self.network_search()
        return new

    def toggle_airplane_mode(self) -> bool:
        """Flip airplane mode, dropping Wi-Fi (and a VPN when turning it on); returns the new value."""
        dev = self.device
        was_on = bool(dev.airplane_mode)
        dev.airplane_mode = not was_on
        if was_on:
            dev.network_connection_status = "searching"
            if dev.wifi_enabled:
                self.wifi_disconnect()
        else:
            self.wifi_disconnect()
            if dev.vpn_connected:
                self.disconnect_vpn()
        self.network_search()
        return not was_on

    def wifi_disconnect(self) -> None:
        """Leave the Wi-Fi network (the radio stays as it is)."""
        dev = self.device
        dev.wifi_connected = False
        dev.wifi_ssid = None
        dev.wifi_signal_strength = "none"

    def connect_vpn(self) -> bool:
        """Connect the VPN (to :data:`PROCESS_VPN` in process scope, else at excellent performance); False when
        it was already connected."""
        dev = self.device
        if dev.vpn_connected:
            return False
        dev.vpn_connected = True
        self.vpn_shared = self.vpn_scope == "process"
        dev.vpn_details = (PROCESS_VPN if self.vpn_shared else DEFAULT_VPN).copy()
        return True

    def disconnect_vpn(self) -> bool:
        """Disconnect the VPN; False when none was connected."""
        dev = self.device
        if not dev.vpn_connected:
            return False
        dev.vpn_connected = False
        dev.vpn_details = None
        self.vpn_shared = False
        return True
