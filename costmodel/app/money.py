"""The currency a use case's answer shows its money in: the first scenario's ``[money]``.

The calculation runs in USD; an answer whose first scenario states another currency (its
``money.currency`` and the rate ``money.fx.<CODE>``) shows every money figure in it: the USD
figure times the stated rate [currency/USD] (a figure per USD, ``token/USD``, divided by it),
its unit with the code in place of USD, and the rate, its date and source disclosed as the
Price answer does (the result's ``disclosure.money``). Scenarios answered together share one
currency at one rate: another stated (or none, USD, beside a first in EUR) is refused at its
``money.currency``. With no ``[money]`` the figures and units are untouched (USD). An answer
with quotes also discloses the first scenario's rates that read quote amounts given in other
currencies (:meth:`ShownMoney.with_quotes`).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..model.errors import InputError
from ..model.results import Result, quantity_json
from ..render.report import money_text

__all__ = ["ShownMoney", "USD_MONEY", "shown_money", "QUOTES_CONVERTED", "QUOTE_AMOUNTS"]

_USD = re.compile(r"\bUSD\b")

# said beside quote figures shown in another currency
QUOTES_CONVERTED = ("quote prices are stated in USD, and shown in {code} at the first "
                    "scenario's stated rate ({rate:g} {code}/USD), as every money figure and "
                    "the recommendation are; flags and how each offer is charged keep the "
                    "USD they are worked in")
# said of a quote's amounts given in another currency
QUOTE_AMOUNTS = "quote amounts given in {codes} read at the first scenario's stated rate"


@dataclass(frozen=True)
class ShownMoney:
    """``currency`` (ISO 4217 code), ``rate`` [currency/USD, 1 for USD] and the first
    result's ``disclosure`` of its money (:meth:`Result.money_disclosure`; empty for USD)."""
    currency: str = "USD"
    rate: float = 1.0
    disclosure: Mapping[str, Any] = field(default_factory=dict)
    # the first scenario's stated rates that read quote amounts given in other currencies:
    # code -> {value, unit, date, source} (:meth:`with_quotes`)
    quote_fx: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def says(self) -> bool:
        """Whether an answer with quotes says anything of money (another currency shown, or
        quote amounts read at a rate)."""
        return not self.usd or bool(self.quote_fx)

    def with_quotes(self, codes: Sequence[str], first: Result) -> ShownMoney:
        """This, with the first result's stated rates of ``codes`` (the currencies quote
        amounts were given in) disclosed."""
        fx = first.scenario.money.fx
        return replace(self, quote_fx={c: {"value": fx[c].rate, "unit": f"{c}/USD",
                                           "date": fx[c].date, "source": fx[c].source}
                                       for c in codes}) if codes else self

    @property
    def usd(self) -> bool:
        return self.currency == "USD"

    def unit(self, unit: str) -> str:
        """``unit`` with the currency's code in place of USD (``EUR/Mtok``)."""
        return unit if self.usd else _USD.sub(self.currency, unit)

    def value(self, usd: float | None, unit: str = "USD") -> float | None:
        """A figure [``unit``, in USD] in the currency: times the rate where USD is in its
        numerator, divided by it where USD divides (``token/USD``); untouched in USD."""
        if self.usd or usd is None or not _USD.search(unit):
            return usd
        top, *below = unit.split("/")
        if _USD.search(top):
            return usd * self.rate
        return usd / self.rate if any(_USD.search(b) for b in below) else usd

    def q(self, usd: float | None, unit: str) -> dict[str, Any]:
        """``{"value", "unit"}`` of a figure [``unit``, in USD], shown in the currency."""
        return quantity_json(self.value(usd, unit), self.unit(unit))

    def json(self, data: Any) -> Any:
        """``data`` (an answer's JSON) with every ``{"value", "unit"}`` money quantity shown
        in the currency; a ``disclosure`` (what the figures rest on, as given) is kept."""
        if self.usd:
            return data
        if isinstance(data, list):
            return [self.json(x) for x in data]
        if not isinstance(data, dict):
            return data
        unit = data.get("unit")
        if isinstance(unit, str) and "value" in data and _USD.search(unit):
            v = data["value"]
            if isinstance(v, int | float) and not isinstance(v, bool):
                v = self.value(float(v), unit)
            return {**data, "value": v, "unit": self.unit(unit)}
        return {k: (x if k == "disclosure" else self.json(x)) for k, x in data.items()}

    def quotes_note(self) -> dict[str, Any]:
        """The money disclosure of an answer with quotes: the rate, how quote prices (stated
        in USD) are shown (``quotes``), and the rates that read quote amounts given in other
        currencies (``quote_amounts_converted``)."""
        out: dict[str, Any] = dict(self.disclosure) if not self.usd else {
            "currency": "USD", "calculated_in": "USD"}
        if not self.usd:
            out["quotes"] = QUOTES_CONVERTED.format(code=self.currency, rate=self.rate)
        if self.quote_fx:
            out["quote_amounts_converted"] = {c: dict(r) for c, r in self.quote_fx.items()}
        return out

    def quotes_words(self) -> str:
        """:meth:`quotes_note` in words (the faces' money line), or "" when it says
        nothing."""
        def fx(r: Mapping[str, Any]) -> str:
            return f"{r['value']:g} {r['unit']} ({r['date']}; {r['source']})"
        parts = [] if self.usd else [money_text(self.disclosure),
                                     QUOTES_CONVERTED.format(code=self.currency,
                                                             rate=self.rate)]
        if self.quote_fx:
            parts.append(QUOTE_AMOUNTS.format(codes=", ".join(self.quote_fx)) + ": " + ", ".join(
                f"{fx(r)}" for r in self.quote_fx.values()))
        return "; ".join(parts)


USD_MONEY = ShownMoney()


def shown_money(results: Sequence[Result], subjects: Sequence[str | None] = ()
                ) -> ShownMoney:
    """The currency of the first result (:class:`ShownMoney`); another result stating a
    different currency or rate is an InputError at its ``money.currency``, marked with its
    subject (``subjects[i]``, the face's name for it)."""
    if not results:
        return USD_MONEY
    first = results[0].scenario.money
    for i, r in enumerate(results[1:], start=1):
        m = r.scenario.money
        if m.currency != first.currency or m.rate != first.rate:
            def said(x) -> str:
                return "USD" if x.currency == "USD" else f"{x.currency} at {x.rate:g} " \
                                                         f"{x.currency}/USD"
            subject = subjects[i] if i < len(subjects) else None
            raise InputError([("money.currency", (
                f"{r.name} is shown in {said(m)}, the first scenario ({results[0].name}) in "
                f"{said(first)}: an answer is shown in one currency at one rate; give every "
                f"scenario the first's [money] currency and rate"))]).about(subject)
    if first.currency == "USD":
        return USD_MONEY
    return ShownMoney(first.currency, first.rate, results[0].money_disclosure())
