"""tau-bench v1 airline: the 14 tools of ``tau_bench/envs/airline/tools/`` over the raw airline data.

Data: ``flights.json``, ``reservations.json``, ``users.json`` as shipped (reservations have no ``status`` until a
cancel adds it; amounts stay ints). Differences from our tau2 airline that matter for the hash: booking leaves
seat counts alone and stores passengers and payments as given; ``update_reservation_flights`` never changes the
reservation's ``cabin``; the one-stop search shows the second leg's data of the *first* day; a cancel refunds
nothing to gift cards or certificates; ``send_certificate`` keeps the amount as passed and returns nothing once
the user holds all three certificate ids (the environment then fails the episode, as tau-bench crashes).
"""

from __future__ import annotations

from typing import Any

from ..engine.retail_airline import reservation_record
from ..engine.toolkit import READ, WRITE, clone_json, tool
from .domain_spec import TauBenchDomainSpec
from .toolkit import TauBenchToolkit, dumps

NAME = "airline"
RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
CREATED_AT = "2024-05-15T15:00:00"
AIRPORTS = {
    "SFO": "San Francisco", "JFK": "New York", "LAX": "Los Angeles", "ORD": "Chicago", "DFW": "Dallas",
    "DEN": "Denver", "SEA": "Seattle", "ATL": "Atlanta", "MIA": "Miami", "BOS": "Boston", "PHX": "Phoenix",
    "IAH": "Houston", "LAS": "Las Vegas", "MCO": "Orlando", "EWR": "Newark", "CLT": "Charlotte",
    "MSP": "Minneapolis", "DTW": "Detroit", "PHL": "Philadelphia", "LGA": "LaGuardia",
}  # fmt: skip


def _leg(flight: dict[str, Any], day: dict[str, Any]) -> dict[str, Any]:
    """A search result: the flight without ``dates``, then that day's status, seats and prices."""
    out = {k: v for k, v in flight.items() if k != "dates"}
    out.update(day)
    return out


class AirlineTools(TauBenchToolkit):
    """The airline agent's tools."""

    DOMAIN = NAME

    def _price_segment(self, segment: Any, cabin: Any, passengers: int) -> str | None:
        """Check one requested segment and add ``price, origin, destination`` to it; an error text, or None."""
        flight_number = segment["flight_number"]
        if not self.has("flights", flight_number):
            return f"Error: flight {flight_number} not found"
        flight = self.at("flights", flight_number)
        if segment["date"] not in flight["dates"]:
            return f"Error: flight {flight_number} not found on date {segment['date']}"
        day = flight["dates"][segment["date"]]
        if day["status"] != "available":
            return f"Error: flight {flight_number} not available on date {segment['date']}"
        if day["available_seats"][cabin] < passengers:
            return f"Error: not enough seats on flight {flight_number}"
        segment["price"] = day["prices"][cabin]
        segment["origin"] = flight["origin"]
        segment["destination"] = flight["destination"]
        return None

    def _update_payment_error(self, user_id: Any, payment_id: Any, price: Any) -> str | None:
        """The payment checks of the two ``update_reservation_*`` tools that charge."""
        methods = self.at("users", user_id)["payment_methods"]
        if payment_id not in methods:
            return "Error: payment method not found"
        method = methods[payment_id]
        if method["source"] == "certificate":
            return "Error: certificate cannot be used to update reservation"
        if method["source"] == "gift_card" and method["amount"] < price:
            return "Error: gift card balance is not enough"
        return None

    # ------------------------------------------------------------------------------------------- reads
    @tool(READ)
    def get_reservation_details(self, reservation_id: Any) -> str:
        """The reservation as JSON (tau-bench says "user not found" for an unknown id)."""
        return self.record_json("reservations", reservation_id, missing="user not found")

    @tool(READ)
    def get_user_details(self, user_id: Any) -> str:
        """The user profile as JSON."""
        return self.record_json("users", user_id, missing="user not found")

    @tool(READ)
    def list_all_airports(self) -> str:
        """``{IATA code: city}`` of the 20 airports."""
        return dumps(AIRPORTS)

    @tool(READ)
    def search_direct_flight(self, origin: Any, destination: Any, date: Any) -> str:
        """Direct flights available on ``date``, in file order."""
        results = []
        for flight in self.db.values("flights"):
            if flight["origin"] == origin and flight["destination"] == destination:
                if date in flight["dates"] and flight["dates"][date]["status"] == "available":
                    results.append(_leg(flight, flight["dates"][date]))
        return dumps(results)

    @tool(READ)
    def search_onestop_flight(self, origin: Any, destination: Any, date: Any) -> str:
        """Two-leg connections; the second leg shows its data of ``date`` and the ``date`` it flies (quirk)."""
        results = []
        flights = list(self.db.values("flights"))
        for first in flights:
            if first["origin"] != origin:
                continue
            for second in flights:
                if second["destination"] == destination and first["destination"] == second["origin"]:
                    next_day = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first["scheduled_arrival_time_est"] else date
                    if first["scheduled_arrival_time_est"] > second["scheduled_departure_time_est"]:
                        continue
                    if date in first["dates"] and next_day in second["dates"]:
                        if (
                            first["dates"][date]["status"] == "available"
                            and second["dates"][next_day]["status"] == "available"
                        ):
                            leg1 = _leg(first, first["dates"][date])
                            leg1["date"] = date
                            leg2 = _leg(second, second["dates"][date])
                            leg2["date"] = next_day
                            results.append([leg1, leg2])
        return dumps(results)

    # ------------------------------------------------------------------------------------------ writes
    @tool(WRITE)
    def book_reservation(
        self,
        user_id: Any,
        origin: Any,
        destination: Any,
        flight_type: Any,
        cabin: Any,
        flights: Any,
        passengers: Any,
        payment_methods: Any,
        total_baggages: Any,
        nonfree_baggages: Any,
        insurance: Any,
    ) -> str:
        """Book a reservation: prices from the flights' current data, paid exactly by the given methods."""
        if not self.has("users", user_id):
            return "Error: user not found"
        user = self.at("users", user_id)
        reservation_id = RESERVATION_IDS[0]
        if self.has("reservations", reservation_id):
            reservation_id = RESERVATION_IDS[1]
            if self.has("reservations", reservation_id):
                reservation_id = RESERVATION_IDS[2]
        booking = locals()  # the tool's arguments (reservation_record reads only those)
        reservation = reservation_record(
            booking, reservation_id=reservation_id, flights=clone_json(flights), created_at=CREATED_AT
        )
        total_price = 0
        for segment in reservation["flights"]:
            problem = self._price_segment(segment, cabin, len(passengers))
            if problem is not None:
                return problem
            total_price += segment["price"] * len(passengers)
        if insurance == "yes":
            total_price += 30 * len(passengers)
        total_price += 50 * nonfree_baggages
        for payment in payment_methods:
            payment_id = payment["payment_id"]
            amount = payment["amount"]
            if payment_id not in user["payment_methods"]:
                return f"Error: payment method {payment_id} not found"
            if user["payment_methods"][payment_id]["source"] in ["gift_card", "certificate"]:
                if user["payment_methods"][payment_id]["amount"] < amount:
                    return f"Error: not enough balance in payment method {payment_id}"
        paid = sum(payment["amount"] for payment in payment_methods)
        if paid != total_price:
            return f"Error: payment amount does not add up, total price is {total_price}, but paid {paid}"
        user = self.db.write("users", user_id)
        for payment in payment_methods:
            payment_id = payment["payment_id"]
            source = user["payment_methods"][payment_id]["source"]
            if source == "gift_card":
                user["payment_methods"][payment_id]["amount"] -= payment["amount"]
            elif source == "certificate":
                del user["payment_methods"][payment_id]
        self.db.insert("reservations", reservation_id, reservation)
        user["reservations"].append(reservation_id)
        return dumps(reservation)

    @tool(WRITE)
    def cancel_reservation(self, reservation_id: Any) -> str:
        """Cancel a reservation: every payment is reversed in its history and the status set to cancelled."""
        if not self.has("reservations", reservation_id):
            return "Error: reservation not found"
        reservation = self.db.write("reservations", reservation_id)
        refunds = [
            {"payment_id": payment["payment_id"], "amount": -payment["amount"]}
            for payment in reservation["payment_history"]
        ]
        reservation["payment_history"].extend(refunds)
        reservation["status"] = "cancelled"
        return dumps(reservation)

    @tool(WRITE)
    def send_certificate(self, user_id: Any, amount: Any) -> str | None:
        """Add a certificate of ``amount`` to the user (None when all three certificate ids are taken)."""
        if not self.has("users", user_id):
            return "Error: user not found"
        for payment_id in CERTIFICATE_IDS:
            if payment_id not in self.at("users", user_id)["payment_methods"]:
                user = self.db.write("users", user_id)
                user["payment_methods"][payment_id] = {"source": "certificate", "amount": amount, "id": payment_id}
                return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
        return None

    @tool(WRITE)
    def update_reservation_baggages(
        self, reservation_id: Any, total_baggages: Any, nonfree_baggages: Any, payment_id: Any
    ) -> str:
        """Set the bag counts; new non-free bags cost 50 each."""
        if not self.has("reservations", reservation_id):
            return "Error: reservation not found"
        reservation = self.at("reservations", reservation_id)
        total_price = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        problem = self._update_payment_error(reservation["user_id"], payment_id, total_price)
        if problem is not None:
            return problem
        reservation = self.db.write("reservations", reservation_id)
        reservation["total_baggages"] = total_baggages
        reservation["nonfree_baggages"] = nonfree_baggages
        if self.at("users", reservation["user_id"])["payment_methods"][payment_id]["source"] == "gift_card":
            self.db.write("users", reservation["user_id"])["payment_methods"][payment_id]["amount"] -= total_price
        if total_price != 0:
            reservation["payment_history"].append({"payment_id": payment_id, "amount": total_price})
        return dumps(reservation)

    @tool(WRITE)
    def update_reservation_flights(self, reservation_id: Any, cabin: Any, flights: Any, payment_id: Any) -> str:
        """Replace the reservation's flights; the fare difference is charged or credited (cabin is kept)."""
        if not self.has("reservations", reservation_id):
            return "Error: reservation not found"
        reservation = self.at("reservations", reservation_id)
        n_passengers = reservation["passengers"]
        total_price = 0
        flights = clone_json(flights)
        for segment in flights:
            same = [
                old
                for old in reservation["flights"]
                if old["flight_number"] == segment["flight_number"]
                and old["date"] == segment["date"]
                and cabin == reservation["cabin"]
            ]
            if same:
                total_price += same[0]["price"] * len(n_passengers)
                segment["price"] = same[0]["price"]
                segment["origin"] = same[0]["origin"]
                segment["destination"] = same[0]["destination"]
                continue
            problem = self._price_segment(segment, cabin, len(n_passengers))
            if problem is not None:
                return problem
            total_price += segment["price"] * len(n_passengers)
        total_price -= sum(old["price"] for old in reservation["flights"]) * len(n_passengers)
        problem = self._update_payment_error(reservation["user_id"], payment_id, total_price)
        if problem is not None:
            return problem
        if self.at("users", reservation["user_id"])["payment_methods"][payment_id]["source"] == "gift_card":
            self.db.write("users", reservation["user_id"])["payment_methods"][payment_id]["amount"] -= total_price
        reservation = self.db.write("reservations", reservation_id)
        reservation["flights"] = flights
        if total_price != 0:
            reservation["payment_history"].append({"payment_id": payment_id, "amount": total_price})
        return dumps(reservation)

    @tool(WRITE)
    def update_reservation_passengers(self, reservation_id: Any, passengers: Any) -> str:
        """Replace the passenger list (same count), stored as given."""
        if not self.has("reservations", reservation_id):
            return "Error: reservation not found"
        if len(passengers) != len(self.at("reservations", reservation_id)["passengers"]):
            return "Error: number of passengers does not match"
        reservation = self.db.write("reservations", reservation_id)
        reservation["passengers"] = passengers
        return dumps(reservation)


SPEC = TauBenchDomainSpec(name=NAME, data_files=("flights", "reservations", "users"), agent_toolkit=AirlineTools)
