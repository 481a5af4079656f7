"""Vendor quotes against our own cost, at the quote's operating point, and the price of a term.

A quote is only comparable at a stated operating point: a price per million tokens at peak
throughput and the same system at a latency target can differ 100x in cost behind it. A quote
that states no interactivity is accepted, and flagged.

Forms of quote (prices in USD; an amount in another currency, ``"0.50 EUR/Mtok"``, is read
at the first scenario's stated rate for it, ``[money.fx.EUR]``: :func:`in_scenario_rates`):

- ``per_mtok``: a price per million input tokens and per million output tokens;
- ``per_accelerator_hour``: capacity by the accelerator-hour (assumed all-in);
- ``reserved_monthly``: capacity reserved by the month for a number of accelerators.

A quote may instead name a public reference rate, ``rate = "gb300/rental@2026-09"`` (a
catalog ``rate`` entry, :mod:`costmodel.model.rates`): it is then a *reference quote*, of the form
``per_accelerator_hour`` at that rate (all in), flagged as a public dashboard's assumption
rather than a quote. The face reads it; the application layer resolves the version against
its catalog (:func:`quote_at_rate`) before it is compared.

A quote may name a public market price instead, ``market = "openrouter/deepseek.deepseek-r1"``
(a catalog ``market_price`` entry, :mod:`costmodel.decisions.market`): it is then a *market
quote*, of the form ``per_mtok`` at the entry's prices (a blended price is the input and the
output price; a cached-input price is the ``cached_input_fraction`` of the input price), its
vendor the entry's provider unless given, flagged as a public list price rather than a
negotiated quote. It has no term of its own: the quote's (12 months unless given). The
application layer resolves the version against its catalog (:func:`quote_at_market`).

Everything is compared per million tokens of the scenario's token kind (mixed = input +
output), using the request shape (ISL/OSL) the quote states, else the scenario's. Capacity
quotes are turned into a price per million tokens with *our* throughput and utilisation at
that operating point: the vendor's accelerator is taken to perform like the scenario's.

Conventions: a month is 730 hours (8,760 / 12); payments fall at the end of each month and
are discounted at the monthly rate equivalent to the annual cost of capital,
``(1 + r)^(1/12) - 1``.
"""
from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from pydantic import Field, PrivateAttr, ValidationError

from ..model.inputs import (
    Count,
    InputError,
    Qty,
    ReferenceRate,
    Section,
    error_message,
    error_path,
)
from ..model.rates import ALL_IN, NOT_A_QUOTE, RateError, parse_rate_ref
from ..model.results import Result
from ..model.steps import TOKEN_KINDS
from ..model.units import (
    CURRENCIES,
    HOURS_PER_MONTH,
    MONTHS_PER_YEAR,
    UnitInputError,
    exchange_rates,
    parse_quantity,
)
from .demand import Supply
from .market import MarketEntry, MarketRefError, parse_market_ref

__all__ = ["Quote", "QuoteComparison", "compare_quote", "rank", "present_value",
           "term_table", "TermRow", "validate_quote", "HOURS_PER_MONTH", "months_until",
           "term_json", "quote_interactivity", "quote_start", "quote_at_rate",
           "REFERENCE_VENDOR", "FREE_OFFER", "implied_margin", "in_scenario_rates",
           "MarketQuotePrice", "quote_at_market", "market_flag", "NOT_NEGOTIATED",
           "MARKET_PRICES_GIVEN"]

FORMS = ("per_mtok", "per_accelerator_hour", "reserved_monthly")
# why a quote priced at 0 (a trial, a credit) has no implied margin: 1 - cost / 0 is undefined
FREE_OFFER = "not defined (free offer): the quote's price is 0"
NO_POINT = ("no operating point in writing: a price at peak throughput and at a latency "
            "target can differ 100x in the cost behind it")


class QuoteOperatingPoint(Section):
    """What the quote guarantees: interactivity (or TBT) and the workload it applies to."""
    interactivity: Qty("token/s/user", positive=True) | None = None
    tbt: Qty("ms", positive=True) | None = None
    isl: Qty("token", positive=True) | None = None
    osl: Qty("token", positive=True) | None = None
    model: str | None = None
    precision: str | None = None
    throughput: Qty("token/s", positive=True,
                    description="per accelerator at this service level (capacity quotes)"
                    ) | None = None
    token_kind: Literal[TOKEN_KINDS] = "mixed"  # type: ignore[valid-type]  # of throughput

    @property
    def effective_interactivity(self) -> float | None:
        """[token/s/user], as written or implied by the TBT."""
        if self.interactivity is not None:
            return self.interactivity
        return None if self.tbt is None else 1000.0 / self.tbt


REFERENCE_VENDOR = "reference rate"  # the vendor of a reference quote that names none
# what a market quote is, in its flag and its JSON
NOT_NEGOTIATED = "a public list price, not a negotiated quote"
# a market quote typing prices of its own: the words at the field
MARKET_PRICES_GIVEN = ("the market price gives the prices: give one of market or "
                       "price_input/price_output")
# the fields a market quote leaves to its entry
MARKET_GIVES = ("price_input", "price_output", "tiers", "cached_input_fraction")


@dataclass(frozen=True)
class MarketQuotePrice:
    """The catalog market price a market quote is priced at: the entry's ``key``
    (``<provider>/<offer>@<date>``), its citation, and its prices [USD/Mtok] (``blended``:
    one price for every kind, which is then each of input and output; ``cached_input``:
    None when the entry gives no cached-input price)."""
    key: str
    provider: str
    model: str
    date: str
    source: str | None
    note: str | None
    price_input: float
    price_output: float
    price_cached_input: float | None = None
    blended: float | None = None

    @property
    def cited(self) -> str:
        """Where the prices come from, with the version: the quote's source."""
        return f"{self.source or f'catalog market price {self.key}'} (version {self.date})"

    def to_json(self) -> dict:
        q = lambda v: None if v is None else {"value": v, "unit": "USD/Mtok"}  # noqa: E731
        return {"key": self.key, "provider": self.provider, "model": self.model,
                "date": self.date, "source": self.source, "note": self.note,
                "prices": {"input": q(self.price_input), "output": q(self.price_output),
                           "cached_input": q(self.price_cached_input),
                           "blended": q(self.blended)},
                "status": NOT_NEGOTIATED}


class Tier(Section):
    """A price tier of a per-million-token quote: up to ``up_to`` [Mtok/month of mixed
    tokens] (the last tier may leave it out: no limit), graduated (each tier's slice of the
    month's volume at its prices)."""
    up_to: Qty("Mtok/month", positive=True) | None = None
    price_input: Qty("USD/Mtok")
    price_output: Qty("USD/Mtok")


PER_MTOK_ONLY = ("tiers", "committed_volume", "overage_input", "overage_output",
                 "batch_discount", "cached_input_fraction")
CAPACITY_ONLY = ("hardware",)


# the longest term a quote may run [month]: 50 years, as a financing life (MAX_LIFE); past it a
# term's total overflowed to a non-JSON Infinity (1e308 month)
MAX_TERM_MONTHS = 600.0


class Quote(Supply):
    name: str
    vendor: str
    date: str | None = None
    form: Literal[FORMS]  # type: ignore[valid-type]
    rate: str | None = Field(None, description="a reference rate, <accelerator>/<kind>"
                                               "[@YYYY-MM[-DD]]: the quote is per_accelerator_"
                                               "hour at that rate, all in")
    market: str | None = Field(None, description="a public market price, <provider>/<offer>"
                                                 "[@YYYY-MM[-DD]] (a catalog market_price "
                                                 "entry): the quote is per_mtok at its prices",
                                    max_length=200)
    price_input: Qty("USD/Mtok") | None = None
    price_output: Qty("USD/Mtok") | None = None
    hourly_price: Qty("USD/h") | None = None
    monthly_price: Qty("USD/month") | None = None
    accelerators: Count | None = None
    term: Qty("month", positive=True, maximum=MAX_TERM_MONTHS) = 12.0
    commitment: Qty("USD") | None = Field(None, description="minimum spend over the term")
    volume: Qty("Mtok/month", positive=True) | None = None
    tiers: list[Tier] | None = Field(None, min_length=1, max_length=100)
    committed_volume: Qty("Mtok/month", positive=True) | None = Field(
        None, description="take-or-pay volume a month (mixed tokens)")
    overage_input: Qty("USD/Mtok") | None = None
    overage_output: Qty("USD/Mtok") | None = None
    batch_discount: Qty("dimensionless", maximum=1.0) | None = None
    cached_input_fraction: Qty("dimensionless", maximum=1.0) | None = Field(
        None, description="price of a cached input token as a fraction of the input price")
    hardware: str | None = Field(None, description="the accelerator a capacity quote rents "
                                                   "(a catalog key)", max_length=200)
    operating_point: QuoteOperatingPoint | None = None
    source: str | None = None
    note: str | None = None
    _where: str = PrivateAttr("quote")  # the face's path of this quote, for later errors
    _reference: ReferenceRate | None = PrivateAttr(None)  # the rate version, once resolved
    _market: MarketQuotePrice | None = PrivateAttr(None)  # the market price, once resolved
    # amounts in other currencies: the codes, and the data to read again at the scenario's
    # rates (None once read at them; until then its amounts are placeholders)
    _currencies: frozenset[str] = PrivateAttr(frozenset())
    _unread: dict | None = PrivateAttr(None)

    @property
    def currencies(self) -> frozenset[str]:
        """The codes of the quote's amounts in currencies other than USD."""
        return self._currencies

    @property
    def read(self) -> bool:
        """Whether its amounts are read (in USD, or at a scenario's rates): not pending."""
        return self._unread is None

    @property
    def base_prices(self) -> tuple[float, float]:
        """[USD/Mtok] input and output of a per-Mtok quote (its first tier when tiered)."""
        if self.tiers:
            return self.tiers[0].price_input, self.tiers[0].price_output
        return self.price_input, self.price_output

    @property
    def where(self) -> str:
        """The face's path of this quote (``quotes[1]``), for errors found later."""
        return self._where

    @property
    def reference(self) -> ReferenceRate | None:
        """The reference rate version this quote is priced at (after
        :func:`quote_at_rate`), or None."""
        return self._reference

    @property
    def market_price(self) -> MarketQuotePrice | None:
        """The market price version this quote is priced at (after
        :func:`quote_at_market`), or None."""
        return self._market


_CODE = re.compile(r"\b[A-Z]{3}\b")


def _codes(data: object) -> set[str]:
    """Currency codes other than USD named anywhere in ``data``'s text."""
    if isinstance(data, str):
        return {c for c in _CODE.findall(data) if c in CURRENCIES and c != "USD"}
    if isinstance(data, dict):
        return set().union(*map(_codes, data.values()))
    if isinstance(data, list):
        return set().union(*map(_codes, data))
    return set()


def validate_quote(data: object, where: str = "quote",
                   rates: Mapping[str, float] | None = None) -> Quote:
    """A quote from plain data; :class:`InputError` with field paths otherwise. A quote that
    names a ``rate`` is per_accelerator_hour (its form may be left out, its vendor defaults to
    :data:`REFERENCE_VENDOR`) and gives no hourly price of its own. An amount in another
    currency is read at ``rates`` (code -> units per USD: a scenario's); without them the
    quote is checked and left to be read at the first scenario's (:func:`in_scenario_rates`:
    until then it is not :attr:`Quote.read`). A quote that names a ``market`` price is
    per_mtok (its form may be left out; its name defaults to the reference, its vendor to the
    entry's provider once resolved) and gives no prices of its own."""
    if not isinstance(data, dict):
        raise InputError([(where, "a quote must be a table/object")])
    raw = data
    if data.get("rate") is not None and data.get("market") is not None:
        raise InputError([(f"{where}.market", "a quote is at a reference rate or at a market "
                                              "price: give one of rate or market")])
    if data.get("rate") is not None:
        data = {"form": "per_accelerator_hour", "vendor": REFERENCE_VENDOR, **data}
    elif isinstance(data.get("market"), str):
        data = {"form": "per_mtok", "name": data["market"],
                "vendor": _market_provider(data["market"]), **data}
    codes = _codes({k: v for k, v in data.items() if k != "market"
                    and not (k == "name" and v == data.get("market"))}) \
        if rates is None else set()
    given = rates if rates is not None else dict.fromkeys(codes, 1.0)  # placeholders
    try:
        if given or rates is not None:
            with exchange_rates(given) as used:
                quote = Quote.model_validate(data)
        else:
            quote, used = Quote.model_validate(data), set()
    except ValidationError as exc:
        raise InputError([(f"{where}.{error_path(e['loc'])}", error_message(e))
                          for e in exc.errors()]) from None
    quote._where = where
    quote._currencies = frozenset(used)
    if used and rates is None:
        quote._unread = raw
    if quote.rate is not None:
        errors = []
        try:
            ref = parse_rate_ref(quote.rate)
            if ref.accelerator is None:
                errors.append((f"{where}.rate", f"name the accelerator: "
                                                f"<accelerator>/{quote.rate}"))
        except RateError as exc:
            errors.append((f"{where}.rate", str(exc)))
        if quote.form != "per_accelerator_hour":
            errors.append((f"{where}.form", "a quote at a reference rate is "
                                            "per_accelerator_hour"))
        if quote.hourly_price is not None:
            errors.append((f"{where}.hourly_price", "the reference rate gives the hourly "
                                                    "price: give one of rate or hourly_price"))
        if errors:
            raise InputError(errors)
        return quote
    if quote.market is not None:
        _check_market_quote(quote, where)
        return quote
    needs = {"per_mtok": () if quote.tiers else ("price_input", "price_output"),
             "per_accelerator_hour": ("hourly_price",),
             "reserved_monthly": ("monthly_price", "accelerators")}[quote.form]
    missing = [k for k in needs if getattr(quote, k) is None]
    if missing:
        raise InputError([(f"{where}.{k}", f"required for form {quote.form}") for k in missing])
    _check_form_fields(quote, where)
    return quote


def _market_provider(ref: str) -> str:
    """The provider part of a market reference (``deepseek`` of ``deepseek/r1@2026-08``):
    a market quote's vendor until its entry names the provider."""
    return ref.partition("/")[0] or ref


def _check_market_quote(quote: Quote, where: str) -> None:
    """A market quote: a reference, per_mtok, no prices of its own (the entry's)."""
    errors = []
    try:
        parse_market_ref(quote.market)
    except MarketRefError as exc:
        errors.append((f"{where}.market", str(exc)))
    if quote.form != "per_mtok":
        errors.append((f"{where}.form", "a quote at a market price is per_mtok"))
    errors += [(f"{where}.{k}", MARKET_PRICES_GIVEN) for k in MARKET_GIVES
               if getattr(quote, k) is not None]
    if errors:
        raise InputError(errors)
    _check_form_fields(quote, where)


def in_scenario_rates(quotes: Sequence[Quote], rates: Mapping[str, float]) -> list[Quote]:
    """The quotes with their amounts in other currencies read at ``rates`` (the first
    scenario's stated rates, code -> units per USD); an amount in a currency the scenario
    states no rate for is an InputError at its field."""
    return [q if q.read else validate_quote(q._unread, q.where, rates) for q in quotes]


def _check_form_fields(quote: Quote, where: str) -> None:
    """Fields of one form are refused on another; tiers ascend, only the last is open."""
    other = CAPACITY_ONLY if quote.form == "per_mtok" else PER_MTOK_ONLY
    errors = [(f"{where}.{k}", f"applies to {'capacity' if k in CAPACITY_ONLY else 'per_mtok'}"
                               f" quotes, not to form {quote.form}")
              for k in other if getattr(quote, k) is not None]
    if quote.tiers:
        if quote.price_input is not None or quote.price_output is not None:
            errors.append((f"{where}.tiers", "give tiers or price_input and price_output, "
                                             "not both"))
        bounds = [t.up_to for t in quote.tiers]
        for i, b in enumerate(bounds):
            if b is None and i < len(bounds) - 1:
                errors.append((f"{where}.tiers[{i}].up_to", "only the last tier may be "
                                                            "open (no up_to)"))
            elif b is not None and i and bounds[i - 1] is not None and b <= bounds[i - 1]:
                errors.append((f"{where}.tiers[{i}].up_to", "tiers must ascend"))
    if (quote.overage_input is None) != (quote.overage_output is None):
        errors.append((f"{where}.overage_input", "give overage_input and overage_output "
                                                 "together"))
    if quote.overage_input is not None and quote.committed_volume is None:
        errors.append((f"{where}.overage_input", "overage prices apply above a "
                                                 "committed_volume"))
    if errors:
        raise InputError(errors)


def quote_at_rate(quote: Quote, rate: ReferenceRate) -> Quote:
    """A reference quote priced: per accelerator-hour at ``rate`` (the version its ``rate``
    names, resolved by the caller against its catalog), the rate's origin as its source."""
    out = quote.model_copy(update={"hourly_price": rate.hourly_price,
                                   "source": quote.source or rate.source})
    out._where, out._reference = quote.where, rate
    return out


def quote_at_market(quote: Quote, key: str, entry: MarketEntry,
                    currencies: Collection[str] = ()) -> Quote:
    """A market quote priced: per million tokens at ``entry``'s prices (the catalog version
    ``key`` its ``market`` names, resolved by the caller against its catalog): a blended
    price is the input and the output price; a cached-input price is the
    ``cached_input_fraction`` (cached / input) of the input price; the vendor the entry's
    provider (unless the quote names another), the entry's source and date its source.
    InputError at ``<where>.market``: an entry without an input or an output price, or a
    cached-input price above the input price. ``currencies``: the codes the entry's prices
    were read from (at the first scenario's rates), added to the quote's."""
    path = f"{quote.where}.market"
    if entry.price is not None:
        p_in = p_out = entry.price
    else:
        p_in, p_out = entry.price_input, entry.price_output
    missing = [k for k, v in (("input", p_in), ("output", p_out)) if v is None]
    if missing:
        given = " and ".join(k for k, v in (("input", entry.price_input),
                                            ("cached-input", entry.price_cached_input),
                                            ("output", entry.price_output)) if v is not None)
        raise InputError([(path, f"the market price {key!r} gives no {missing[0]} price (only "
                                 f"{given}): a per-million-token quote needs an input and an "
                                 f"output price; give the quote price_input and price_output "
                                 f"of its own instead of market")])
    cached = entry.price_cached_input if entry.price is None else None
    fraction = None
    if cached is not None:
        if cached > p_in:
            raise InputError([(path, f"the market price {key!r} gives a cached-input price "
                                     f"({cached:g} USD/Mtok) above its input price "
                                     f"({p_in:g} USD/Mtok)")])
        fraction = cached / p_in if p_in else None
    price = MarketQuotePrice(key, entry.provider, entry.model, entry.date, entry.source,
                             entry.note, p_in, p_out, cached, entry.price)
    vendor = (entry.provider if quote.vendor == _market_provider(quote.market)
              else quote.vendor)
    out = quote.model_copy(update={"price_input": p_in, "price_output": p_out,
                                   "cached_input_fraction": fraction, "vendor": vendor,
                                   "source": quote.source or price.cited})
    out._where, out._market = quote.where, price
    out._currencies = quote.currencies | frozenset(currencies)
    return out


def market_flag(quote: Quote) -> str | None:
    """What a market quote is, for its comparisons' flags; None for any other quote."""
    m = quote.market_price
    if m is None:
        return None
    return (f"market price {m.key} (version {m.date}, "
            f"{m.source or 'catalog market price'}): {NOT_NEGOTIATED}")


def rate_flag(quote: Quote) -> str | None:
    """What a reference quote is, for its comparisons' flags; None for a vendor quote."""
    r = quote.reference
    if r is None:
        return None
    return (f"reference rate {r.key} (version {r.date}, {r.hourly_price:g} USD/h per "
            f"{r.accelerator} hour): {NOT_A_QUOTE}; {ALL_IN}; priced at this scenario's "
            f"throughput, as if {r.accelerator} served like the scenario's accelerator")


def present_value(monthly: float, months: float, annual_rate: float) -> float:
    """Present value [USD] of ``monthly`` [USD] paid at the end of each of ``months`` months,
    discounted at the monthly equivalent of ``annual_rate`` (a fraction per year)."""
    i = (1.0 + annual_rate) ** (1.0 / MONTHS_PER_YEAR) - 1.0
    n = months
    if i == 0:
        return monthly * n
    return monthly * (1.0 - (1.0 + i) ** -n) / i


@dataclass
class QuoteComparison:
    """A quote against our own cost for the same workload, per million tokens of the
    scenario's token kind [USD/Mtok], and over the quote's term [USD]."""
    quote: Quote
    scenario: str
    token_kind: str
    price_per_mtok: float
    own_cost_per_mtok: float
    implied_margin: float | None  # 1 - own cost / quote price (None: a free offer)
    break_even_utilisation: float | None  # where our cost per Mtok equals the quote
    volume: float  # [Mtok/month] used for the totals
    volume_basis: str
    quote_total: float  # [USD] over the term (commitment applied)
    own_total: float  # [USD] over the term
    quote_pv: float  # [USD] at the cost of capital
    own_pv: float
    flags: list[str] = field(default_factory=list)
    discount_rate: float = 0.0  # [fraction a year] the present values' (cost of capital)

    @property
    def margin_note(self) -> str | None:
        """Why the implied margin is not defined (a free offer), or None when it is."""
        return FREE_OFFER if self.implied_margin is None else None

    @property
    def saving_pv(self) -> float:
        """[USD] present value saved by buying from the quote instead of owning (negative:
        owning is cheaper)."""
        return self.own_pv - self.quote_pv

    def to_json(self) -> dict:
        q = lambda v, u: {"value": v, "unit": u}  # noqa: E731
        r = self.quote.reference
        rate = None if r is None else {
            "key": r.key, "accelerator": r.accelerator, "kind": r.kind, "version": r.date,
            "origin": r.source, "hourly_price": q(r.hourly_price, "USD/h"),
            "all_in_power": q(r.all_in_power, "W"), "all_in": ALL_IN, "status": NOT_A_QUOTE}
        return {"quote": self.quote.name, "vendor": self.quote.vendor,
                "date": self.quote.date, "form": self.quote.form, "reference_rate": rate,
                "market_price": (None if self.quote.market_price is None
                                 else self.quote.market_price.to_json()),
                "scenario": self.scenario, "token_kind": self.token_kind,
                "price_per_mtok": q(self.price_per_mtok, "USD/Mtok"),
                "own_cost_per_mtok": q(self.own_cost_per_mtok, "USD/Mtok"),
                "implied_margin": self.implied_margin,
                "implied_margin_note": self.margin_note,
                "break_even_utilisation": self.break_even_utilisation,
                "volume": q(self.volume, "Mtok/month"), "volume_basis": self.volume_basis,
                "term": q(self.quote.term, "month"),
                "quote_total": q(self.quote_total, "USD"), "own_total": q(self.own_total, "USD"),
                "quote_pv": q(self.quote_pv, "USD"), "own_pv": q(self.own_pv, "USD"),
                "saving_pv": q(self.saving_pv, "USD"), "discount_rate": self.discount_rate,
                "flags": self.flags}


def compare_quote(quote: Quote, own: Result) -> QuoteComparison:
    """Compare ``quote`` with the priced scenario ``own`` (already at the quote's operating
    point when it came from a curve; see :func:`operating_point_flags`)."""
    if quote.rate is not None and quote.reference is None:
        raise InputError([(f"{quote.where}.rate", "the reference rate was not resolved "
                                                  "(quote_at_rate) before the comparison")])
    if quote.market is not None and quote.market_price is None:
        raise InputError([(f"{quote.where}.market", "the market price was not resolved "
                                                    "(quote_at_market) before the comparison")])
    s = own.scenario
    v = own.values
    kind = s.operating_point.token_kind
    op = quote.operating_point
    isl = op.isl if op is not None and op.isl is not None else s.workload.isl
    osl = op.osl if op is not None and op.osl is not None else s.workload.osl
    counted = {"mixed": isl + osl, "output": osl, "input": isl}[kind]  # tokens a request
    tokens_per_hour = v["tokens_per_hour"]  # [token/h] at our utilisation
    if quote.form == "per_mtok":
        price_input, price_output = quote.base_prices
        per_request = isl * price_input + osl * price_output  # [USD x 1e6]
        price = per_request / counted  # [USD/Mtok of the counted kind]
        accel_hourly = None
    else:
        accel_hourly = (quote.hourly_price if quote.form == "per_accelerator_hour"
                        else quote.monthly_price / quote.accelerators / HOURS_PER_MONTH)
        price = accel_hourly / tokens_per_hour * 1e6
    own_cost = v["cost_per_mtok_total"]
    flags = operating_point_flags(quote, own)
    if quote.reference is not None:
        flags.insert(0, rate_flag(quote))
    if quote.market_price is not None:
        flags.insert(0, market_flag(quote))
    # volume: as quoted, else what the quoted capacity (or one accelerator) serves
    accelerators = quote.accelerators or 1
    if quote.volume is not None:
        volume, basis = quote.volume, "as quoted"
    else:
        volume = tokens_per_hour * HOURS_PER_MONTH / 1e6 * accelerators
        basis = (f"capacity of {accelerators} accelerator{'s' if accelerators > 1 else ''} "
                 f"at the scenario's utilisation")
    months = quote.term
    if quote.form == "per_mtok":
        quote_monthly = price * volume
    elif quote.form == "per_accelerator_hour":
        quote_monthly = accel_hourly * HOURS_PER_MONTH * accelerators
    else:
        quote_monthly = quote.monthly_price
    quote_total = quote_monthly * months
    if quote.commitment is not None and quote.commitment > quote_total:
        flags.append(f"the commitment ({quote.commitment:,.0f} USD) exceeds the use priced "
                     f"({quote_total:,.0f} USD): take-or-pay sets the total")
        quote_monthly = quote.commitment / months
        quote_total = quote.commitment
    own_monthly = own_cost * volume
    rate = s.financing.cost_of_capital
    return QuoteComparison(
        quote=quote, scenario=own.name, token_kind=kind, price_per_mtok=price,
        own_cost_per_mtok=own_cost, implied_margin=implied_margin(own_cost, price),
        break_even_utilisation=(break_even_utilisation(own, price)
                                if quote.form == "per_mtok" else None),
        volume=volume, volume_basis=basis, quote_total=quote_total,
        own_total=own_monthly * months, quote_pv=present_value(quote_monthly, months, rate),
        own_pv=present_value(own_monthly, months, rate), flags=flags, discount_rate=rate)


def implied_margin(own_cost: float, price: float) -> float | None:
    """The vendor's margin on our cost, ``1 - own_cost / price``; None for a free offer
    (``price`` 0: a trial or a credit, priced, its margin not defined)."""
    return None if price == 0 else 1.0 - own_cost / price


def quote_interactivity(quote: Quote) -> float | None:
    """The interactivity the quote guarantees [token/s/user], where a curve-based scenario is
    read to compare with it; None when the quote states none."""
    return quote.operating_point.effective_interactivity if quote.operating_point else None


def operating_point_flags(quote: Quote, own: Result) -> list[str]:
    """Why a comparison may not be like for like."""
    flags = []
    op = quote.operating_point
    quoted = op.effective_interactivity if op is not None else None
    ours = own.scenario.operating_point.effective_interactivity
    if quoted is None:
        flags.append(NO_POINT)
    elif ours is None:
        flags.append(f"the quote guarantees {quoted:.4g} token/s/user but the scenario states "
                     f"no interactivity: its cost may be at another operating point")
    elif not math.isclose(quoted, ours, rel_tol=0.01):
        flags.append(f"operating points differ: the quote guarantees {quoted:.4g} "
                     f"token/s/user, the scenario runs at {ours:.4g}")
    if op is not None and op.model and own.scenario.workload.model and \
            op.model.lower() not in own.scenario.workload.model.lower():
        flags.append(f"models differ: quote {op.model!r}, scenario "
                     f"{own.scenario.workload.model!r}")
    return flags


def break_even_utilisation(own: Result, price: float) -> float | None:
    """Utilisation at which our cost per Mtok equals ``price`` [USD/Mtok], or None if no
    utilisation up to 1 gets there.

    Our cost per Mtok at utilisation u is (E (u + (1 - u) idle) + F) / (u T) with E the
    energy cost per hour at full load, F the other hourly costs (capital, maintenance,
    hosting) and T the Mtok served per hour at full utilisation; solving for the price P:
    u = (E idle + F) / (P T - E (1 - idle)).
    """
    v, s = own.values, own.scenario
    energy_full = v["energy_cost_per_hour"] / v["load_factor"]  # [USD/h] at u = 1
    fixed = v["capex_per_hour"] + v["opex_per_hour"]  # [USD/h]
    mtok_full = v["throughput"] * 3600.0 / 1e6  # [Mtok/h] at u = 1
    idle = s.idle_power
    denominator = price * mtok_full - energy_full * (1.0 - idle)
    if denominator <= 0:
        return None
    u = (energy_full * idle + fixed) / denominator
    return u if 0 < u <= 1 else None


def rank(comparisons: Sequence[QuoteComparison]) -> list[QuoteComparison]:
    """Cheapest first: by price per million tokens at the operating point, then by flags
    (a quote with no operating point in writing ranks after an equal one that has it)."""
    return sorted(comparisons, key=lambda c: (c.price_per_mtok, len(c.flags)))


@dataclass(frozen=True)
class TermRow:
    """One term length against staying flexible [USD, present values]."""
    months: float
    locked_pv: float  # paying the quoted price for the whole term
    flexible_pv: float  # paying the market price month by month
    premium: float  # locked - flexible [USD]
    premium_share: float | None  # premium / flexible (0 when nothing more is paid; None
    # when a premium is paid over a flexible price of 0)
    within_tolerance: bool


def term_table(price: float, volume: float, annual_rate: float, terms: Sequence[float], *,
               yearly_improvement: float | None = None,
               successor_price: float | None = None, successor_month: float | None = None,
               tolerance: float = 0.10) -> tuple[list[TermRow], float | None]:
    """What each term length costs against waiting or switching, and the longest term whose
    premium over staying flexible is within ``tolerance`` (a fraction).

    ``price`` [USD/Mtok] is locked for the term; ``volume`` [Mtok/month]. The market price
    the flexible buyer pays in month t (0-based) either falls by ``yearly_improvement`` a year,
    ``price x (1 - g)^(t/12)``, or drops to ``successor_price`` from ``successor_month`` on
    (a named successor system becoming available), whichever are given (both: the lower).
    """
    if yearly_improvement is None and successor_price is None:
        raise ValueError("give a yearly improvement or a successor price and month")
    if successor_price is not None and successor_month is None:
        raise ValueError("a successor needs the month it becomes available")
    i = (1.0 + annual_rate) ** (1.0 / MONTHS_PER_YEAR) - 1.0

    def market(t: int) -> float:
        p = price
        if yearly_improvement is not None:
            p = price * (1.0 - yearly_improvement) ** (t / MONTHS_PER_YEAR)
        if successor_price is not None and t >= successor_month:
            p = min(p, successor_price)
        return p

    rows = []
    for months in terms:
        n = round(float(months))  # an int, for numpy floats too
        discount = [(1.0 + i) ** -(t + 1) for t in range(n)]
        locked = sum(price * volume * d for d in discount)
        flexible = sum(market(t) * volume * d for t, d in enumerate(discount))
        premium = locked - flexible
        # nothing more paid (a free price locked in): 0, not 0 / 0; a premium over a
        # flexible price of 0 has no share
        share = 0.0 if premium == 0 else (premium / flexible if flexible else None)
        rows.append(TermRow(months, locked, flexible, premium, share,
                            share is not None and share <= tolerance))
    longest = max((r.months for r in rows if r.within_tolerance), default=None)
    return rows, longest


def quote_start(quote: Quote, today: date | None = None) -> date:
    """Where a term starts: the quote's date when it has one, else ``today``."""
    if not quote.date:
        return today or date.today()
    try:
        return date.fromisoformat(quote.date)
    except ValueError:
        raise InputError([("quote.date", f"{quote.date!r} is not an ISO date "
                                         f"(YYYY-MM-DD)")]) from None


_ISO_DATE = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2}))?$")


def months_until(when: str, start: date) -> float:
    """Months from ``start`` until ``when``: a duration ("12 month", "1.5 year") or an ISO
    date ("2027-06" or "2027-06-15"); a date before ``start`` is an error."""
    m = _ISO_DATE.match(when.strip())
    if m is None:
        return parse_quantity(when, "month")
    try:
        target = date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
    except ValueError as exc:
        raise UnitInputError(f"not a date: {when!r} ({exc})") from None
    months = (target - start).days / (365.0 / MONTHS_PER_YEAR)  # a month is 1/12 of 365 days
    if months < 0:
        raise UnitInputError(f"{when} is before {start.isoformat()}")
    return months


def term_json(quote: Quote, comparison: QuoteComparison, rows: Sequence[TermRow],
              longest: float | None, tolerance: float) -> dict:
    """A term analysis as JSON, quantities with their units."""
    usd = lambda v: {"value": v, "unit": "USD"}  # noqa: E731
    return {"quote": quote.name, "scenario": comparison.scenario,
            "price_per_mtok": {"value": comparison.price_per_mtok, "unit": "USD/Mtok"},
            "volume": {"value": comparison.volume, "unit": "Mtok/month"},
            "tolerance": tolerance,
            "longest_term_within_tolerance":
                None if longest is None else {"value": longest, "unit": "month"},
            "terms": [{"term": {"value": r.months, "unit": "month"},
                       "locked_pv": usd(r.locked_pv), "flexible_pv": usd(r.flexible_pv),
                       "premium": usd(r.premium), "premium_share": r.premium_share,
                       "within_tolerance": r.within_tolerance} for r in rows]}
