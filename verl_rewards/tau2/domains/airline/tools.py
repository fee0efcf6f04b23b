"""The airline agent's tools, re-implemented from tau2-bench's ``src/tau2/domains/airline/tools.py``.

:class:`AgentTools` works on a :class:`~verl_rewards.engine.state.DBState` of :func:`.normalize.normalize_db` data
and reproduces tau2's airline toolkit, including its quirks: no seat release on cancel, no seat changes on flight
updates, certificates consumed whole on booking and rejected for updates even at price 0, the unpadded next-day
date of the one-stop search, string comparison of times, partial mutations that tau2 does not roll back, and
pydantic's lax coercion of arguments where tau2 builds a model from them (:mod:`.validation`).

Airline tasks use no ``initial_state`` and no ``env_assertions``, so the toolkit has no non-tool helpers.
"""

import copy
from typing import Any, Literal

from ....engine.retail_airline import reservation_record
from ....engine.toolkit import Record, ToolError, Toolkit, detached_record, tool
from ..common import TRANSFER_MESSAGE, calculate_expression
from .validation import convert_all, no_attribute, validate

FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]

NOW = "2024-05-15T15:00:00"  # tau2's fixed "current time": created_at of every new reservation
RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")

AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)


class AgentTools(Toolkit):
    """The airline agent's tools over a :class:`~verl_rewards.engine.state.DBState` of :func:`normalize_db` data."""

    # ------------------------------------------------------------------ lookups (tau2's shared helpers)
    def _user(self, user_id: Any) -> dict[str, Any]:
        user = self.db.get("users", user_id)
        if user is None:
            raise ToolError(f"User {user_id} not found")
        return user

    def _reservation(self, reservation_id: Any) -> dict[str, Any]:
        reservation = self.db.get("reservations", reservation_id)
        if reservation is None:
            raise ToolError(f"Reservation {reservation_id} not found")
        return reservation

    def _flight(self, flight_number: Any) -> dict[str, Any]:
        flight = self.db.get("flights", flight_number)
        if flight is None:
            raise ToolError(f"Flight {flight_number} not found")
        return flight

    def _flight_date(self, flight_number: Any, date: Any) -> dict[str, Any]:
        dates = self._flight(flight_number)["dates"]
        if date not in dates:
            raise ToolError(f"Flight {flight_number} not found on date {date}")
        return dates[date]

    def _new_reservation_id(self) -> str:
        for reservation_id in RESERVATION_IDS:
            if not self.db.contains("reservations", reservation_id):
                return reservation_id
        raise ToolError("Too many reservations")

    def _search_direct(
        self, date: Any, origin: Any = None, destination: Any = None, leave_after: str | None = None
    ) -> list[Record]:
        """Available flights in DB order; ``leave_after`` compares departure times as strings (tau2 quirk)."""
        found: list[Record] = []
        for flight in self.db.values("flights"):
            if origin is not None and flight["origin"] != origin:
                continue
            if destination is not None and flight["destination"] != destination:
                continue
            if date not in flight["dates"]:
                continue
            info = flight["dates"][date]
            if info["status"] != "available":
                continue
            if leave_after is not None and not flight["scheduled_departure_time_est"] >= leave_after:
                continue
            found.append(
                Record(
                    flight_number=flight["flight_number"],
                    origin=flight["origin"],
                    destination=flight["destination"],
                    status="available",
                    scheduled_departure_time_est=flight["scheduled_departure_time_est"],
                    scheduled_arrival_time_est=flight["scheduled_arrival_time_est"],
                    date=None,
                    available_seats=dict(info["available_seats"]),
                    prices=dict(info["prices"]),
                )
            )
        return found

    def _payment_for_update(self, user_id: str, payment_id: Any, total_price: Any) -> dict[str, Any] | None:
        """Charge (or, if negative, credit) an update to a stored method; the Payment to record, if non-zero."""
        methods = self._user(user_id)["payment_methods"]
        if payment_id not in methods:
            raise ToolError("Payment method not found")
        method = methods[payment_id]
        if method["source"] == "certificate":
            raise ToolError("Certificate cannot be used to update reservation")
        if method["source"] == "gift_card" and method["amount"] < total_price:
            raise ToolError("Gift card balance is not enough")
        if method["source"] == "gift_card":
            self.db.write("users", user_id)["payment_methods"][payment_id]["amount"] -= total_price
        if total_price != 0:
            # tau2 builds the Payment after the deduction: a failure here keeps the deduction (no rollback)
            return validate("Payment", {"payment_id": payment_id, "amount": total_price})
        return None

    # ------------------------------------------------------------------ read tools
    @tool("read")
    def get_user_details(self, user_id: str) -> Record:
        """Get the details of a user, including their payment methods and reservations.

        Args:
            user_id: The user id, such as 'sara_doe_496'.
        """
        return detached_record(self._user(user_id))

    @tool("read")
    def get_reservation_details(self, reservation_id: str) -> Record:
        """Get the details of a reservation.

        Args:
            reservation_id: The reservation id, such as '8JX2WO'.
        """
        return detached_record(self._reservation(reservation_id))

    @tool("read")
    def list_all_airports(self) -> list[Record]:
        """List all airports, each with its IATA code and city."""
        return [Record(iata=iata, city=city) for iata, city in AIRPORTS]

    @tool("read")
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[Record]:
        """Search direct flights between two cities on a given date.

        Args:
            origin: The origin airport as a three-letter IATA code, such as 'JFK'.
            destination: The destination airport as a three-letter IATA code, such as 'LAX'.
            date: The flight date in the format 'YYYY-MM-DD', such as '2024-05-20'.
        """
        return self._search_direct(date=date, origin=origin, destination=destination)

    @tool("read")
    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[Record]]:
        """Search one-stop flights between two cities on a given date; each result is a pair of flights.

        Args:
            origin: The origin airport as a three-letter IATA code, such as 'JFK'.
            destination: The destination airport as a three-letter IATA code, such as 'LAX'.
            date: The date of the first flight in the format 'YYYY-MM-DD', such as '2024-05-20'.
        """
        pairs: list[list[Record]] = []
        for first in self._search_direct(date=date, origin=origin):
            first["date"] = date
            arrival = first["scheduled_arrival_time_est"]
            # tau2 quirk: the next day is "2024-05-" + str(day + 1), without zero padding
            second_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrival else date
            for second in self._search_direct(
                date=second_date, origin=first["destination"], destination=destination, leave_after=arrival
            ):
                second["date"] = second_date
                pairs.append([first, second])
        return pairs

    @tool("read")
    def get_flight_status(self, flight_number: str, date: str) -> str:
        """Get the status of a flight on a given date.

        Args:
            flight_number: The flight number, such as 'HAT001'.
            date: The flight date in the format 'YYYY-MM-DD', such as '2024-05-15'.
        """
        return self._flight_date(flight_number, date)["status"]

    # ------------------------------------------------------------------ write tools
    @tool("write")
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: FlightType,
        cabin: CabinClass,
        flights: list[dict],
        passengers: list[dict],
        payment_methods: list[dict],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Insurance,
    ) -> Record:
        """Book a reservation.

        Args:
            user_id: The id of the user who books, such as 'sara_doe_496'.
            origin: The IATA code of the trip origin, such as 'SFO'.
            destination: The IATA code of the trip destination, such as 'JFK'.
            flight_type: The trip type: 'one_way' or 'round_trip'.
            cabin: The cabin class for all flights: 'basic_economy', 'economy' or 'business'.
            flights: Every flight segment of the trip, in order, each an object {"flight_number": str,
                "date": "YYYY-MM-DD"}.
            passengers: Every passenger, each an object {"first_name": str, "last_name": str, "dob": "YYYY-MM-DD"}.
            payment_methods: How the total is paid, each an object {"payment_id": str, "amount": int} whose
                payment_id is stored in the user's profile; the amounts must add up to the total price.
            total_baggages: The total number of checked bags.
            nonfree_baggages: The number of checked bags that must be paid for.
            insurance: Whether travel insurance is bought: 'yes' or 'no'.
        """
        flights, flights_ok = convert_all(flights, "FlightInfo")
        passengers, _ = convert_all(passengers, "Passenger")
        payment_methods, _ = convert_all(payment_methods, "Payment")
        user = self._user(user_id)
        reservation_id = self._new_reservation_id()
        booking = locals()  # the arguments as converted above (reservation_record reads only those)
        reservation = validate(
            "Reservation", reservation_record(booking, reservation_id=reservation_id, flights=[], created_at=NOW)
        )
        n_pax = len(passengers)
        total_price: Any = 0
        booked: list[tuple[str, str]] = []
        for info in flights:
            if not flights_ok:
                raise no_attribute(info, "flight_number")
            flight_number, date = info["flight_number"], info["date"]
            flight = self._flight(flight_number)
            status = self._flight_date(flight_number, date)
            if status["status"] != "available":
                raise ToolError(f"Flight {flight_number} not available on date {date}")
            if status["available_seats"][cabin] < n_pax:
                raise ToolError(f"Not enough seats on flight {flight_number}")
            price = status["prices"][cabin]
            reservation["flights"].append(
                {
                    "flight_number": flight_number,
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "date": date,
                    "price": price,
                }
            )
            booked.append((flight_number, date))
            total_price += price * n_pax
        if insurance == "yes":
            total_price += 30 * n_pax
        total_price += 50 * nonfree_baggages  # the raw argument, as in tau2

        payments = reservation["payment_history"]
        methods = user["payment_methods"]
        for payment in payments:
            payment_id, amount = payment["payment_id"], payment["amount"]
            if payment_id not in methods:
                raise ToolError(f"Payment method {payment_id} not found")
            method = methods[payment_id]
            if method["source"] in ("gift_card", "certificate") and method["amount"] < amount:
                raise ToolError(f"Not enough balance in payment method {payment_id}")
        total_payment = sum(payment["amount"] for payment in payments)
        if total_payment != total_price:
            raise ToolError(f"Payment amount does not add up, total price is {total_price}, but paid {total_payment}")

        # every check passed: mutate (a certificate listed twice fails on its second use, after earlier changes)
        w_user = self.db.write("users", user_id)
        w_methods = w_user["payment_methods"]
        for payment in payments:
            payment_id = payment["payment_id"]
            if payment_id not in w_methods:
                raise ToolError(repr(payment_id))  # tau2's KeyError text
            method = w_methods[payment_id]
            if method["source"] == "gift_card":
                method["amount"] -= payment["amount"]
            elif method["source"] == "certificate":
                del w_methods[payment_id]  # consumed whole, even if only partly used
        for flight_number, date in booked:
            self.db.write("flights", flight_number)["dates"][date]["available_seats"][cabin] -= n_pax
        self.db.insert("reservations", reservation_id, reservation)
        w_user["reservations"].append(reservation_id)
        return detached_record(reservation)

    @tool("write")
    def cancel_reservation(self, reservation_id: str) -> Record:
        """Cancel a whole reservation.

        Args:
            reservation_id: The reservation id, such as 'ZFA04Y'.
        """
        self._reservation(reservation_id)
        reservation = self.db.write("reservations", reservation_id)
        history = reservation["payment_history"]
        # tau2: refunds are appended for every entry (earlier refunds included); seats and balances stay as they are
        history.extend([{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in history])
        reservation["status"] = "cancelled"
        return detached_record(reservation)

    @tool("write")
    def update_reservation_flights(
        self, reservation_id: str, cabin: CabinClass, flights: list[dict], payment_id: str
    ) -> Record:
        """Update the flights (and cabin) of a reservation.

        Args:
            reservation_id: The reservation id, such as 'ZFA04Y'.
            cabin: The cabin class of the updated reservation: 'basic_economy', 'economy' or 'business'.
            flights: Every flight segment of the ENTIRE updated reservation, each an object {"flight_number": str,
                "date": "YYYY-MM-DD"}; segments that do not change must be listed too.
            payment_id: The id of a payment method stored in the user's profile, such as 'credit_card_7815826' or
                'gift_card_7815826'.
        """
        flights, flights_ok = convert_all(flights, "FlightInfo")
        reservation = self._reservation(reservation_id)
        user_id = reservation["user_id"]
        self._user(user_id)
        n_pax = len(reservation["passengers"])
        total_price: Any = 0
        new_segments: list[dict[str, Any]] = []
        for info in flights:
            if not flights_ok:
                raise no_attribute(info, "flight_number")
            flight_number, date = info["flight_number"], info["date"]
            kept = next(
                (
                    seg
                    for seg in reservation["flights"]
                    if seg["flight_number"] == flight_number and seg["date"] == date and cabin == reservation["cabin"]
                ),
                None,
            )
            if kept is not None:  # unchanged segment in the same cabin keeps its old price
                total_price += kept["price"] * n_pax
                new_segments.append(dict(kept))
                continue
            flight = self._flight(flight_number)
            status = self._flight_date(flight_number, date)
            if status["status"] != "available":
                raise ToolError(f"Flight {flight_number} not available on date {date}")
            seats = status["available_seats"]
            if cabin not in seats:
                raise ToolError(repr(cabin))  # tau2's KeyError text
            if seats[cabin] < n_pax:
                raise ToolError(f"Not enough seats on flight {flight_number}")
            segment = validate(
                "ReservationFlight",
                {
                    "flight_number": flight_number,
                    "date": date,
                    "price": status["prices"][cabin],
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                },
            )
            total_price += segment["price"] * n_pax
            new_segments.append(segment)
        total_price -= sum(seg["price"] for seg in reservation["flights"]) * n_pax

        payment = self._payment_for_update(user_id, payment_id, total_price)
        w_res = self.db.write("reservations", reservation_id)
        if payment is not None:
            w_res["payment_history"].append(payment)
        w_res["flights"] = new_segments
        w_res["cabin"] = cabin  # no seat counts change, for new or old segments (tau2)
        return detached_record(w_res)

    @tool("write")
    def update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> Record:
        """Update the baggage information of a reservation.

        Args:
            reservation_id: The reservation id, such as 'ZFA04Y'.
            total_baggages: The updated total number of checked bags.
            nonfree_baggages: The updated number of checked bags that must be paid for.
            payment_id: The id of a payment method stored in the user's profile, such as 'credit_card_7815826' or
                'gift_card_7815826'.
        """
        reservation = self._reservation(reservation_id)
        user_id = reservation["user_id"]
        self._user(user_id)
        total_price = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        payment = self._payment_for_update(user_id, payment_id, total_price)
        w_res = self.db.write("reservations", reservation_id)
        if payment is not None:
            w_res["payment_history"].append(payment)
        w_res["total_baggages"] = total_baggages
        w_res["nonfree_baggages"] = nonfree_baggages
        return detached_record(w_res)

    @tool("write")
    def update_reservation_passengers(self, reservation_id: str, passengers: list[dict]) -> Record:
        """Update the passenger information of a reservation.

        Args:
            reservation_id: The reservation id, such as 'ZFA04Y'.
            passengers: Every passenger of the reservation, each an object {"first_name": str, "last_name": str,
                "dob": "YYYY-MM-DD"}.
        """
        passengers, _ = convert_all(passengers, "Passenger")
        reservation = self._reservation(reservation_id)
        if len(passengers) != len(reservation["passengers"]):
            raise ToolError("Number of passengers does not match")
        self.db.write("reservations", reservation_id)["passengers"] = copy.deepcopy(passengers)
        return detached_record(self._reservation(reservation_id))

    @tool("write")
    def send_certificate(self, user_id: str, amount: int) -> str:
        """Send a certificate to a user. Be careful!

        Args:
            user_id: The id of the user who receives the certificate, such as 'sara_doe_496'.
            amount: The certificate amount in dollars.
        """
        methods = self._user(user_id)["payment_methods"]
        for certificate_id in CERTIFICATE_IDS:
            if certificate_id not in methods:
                certificate = validate("Certificate", {"id": certificate_id, "amount": amount, "source": "certificate"})
                self.db.write("users", user_id)["payment_methods"][certificate_id] = certificate
                return f"Certificate {certificate_id} added to user {user_id} with amount {amount}."
        raise ToolError("Too many certificates")

    # ------------------------------------------------------------------ generic tools
    @tool("generic")
    def calculate(self, expression: str) -> str:
        """Calculate the result of an arithmetic expression.

        Args:
            expression: The expression to calculate, such as '2 + 2'. It may contain numbers, the operators
                +, -, *, /, parentheses and spaces.
        """
        return calculate_expression(expression)  # shared safe evaluator (no eval), tau2's results and messages

    @tool("generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the user's issue. Only transfer if the user
        explicitly asks for a human agent, or if the user's issue cannot be solved with the policy and the
        available tools.

        Args:
            summary: A summary of the user's issue.
        """
        return TRANSFER_MESSAGE
