"""Market prices per million tokens: what a model's tokens sell for, dated and sourced, and the
market a scenario is sold into (its price, the revenue share paid out of revenue).

A catalog ``market_price`` entry is one dated version of one offer's price list, keyed
``<provider>/<offer>@<date>`` (``deepseek/deepseek-r1-off-peak@2026-08``): the price per
million input, cached-input and output tokens (``price_input``, ``price_cached_input``,
``price_output``), or one blended price per million tokens of either kind (``price``), each
quantity with its source. Versions are never overwritten; a later one is a new entry.

A reference names an entry as ``<provider>/<offer>[@<date>]``: no date is the latest version,
a date (``YYYY-MM`` or ``YYYY-MM-DD``) the version of that date or else the latest before it,
compared at the precision both give, as reference rates are (:mod:`costmodel.model.rates`).

A market (:class:`Market`, a scenario file's ``[market]`` table, an API body's ``market``)
names an entry (``catalog``) and/or types prices, in any currency the scenario states an
exchange rate for, with the revenue share (a model licence, a platform fee: ``0`` to below
``1`` of revenue) and the share of input tokens served from the prefix cache. Typed prices
replace the entry's of the same kind. :func:`resolve_market` gives the prices the profit
calculation reads (:class:`MarketPrices`, USD per million tokens): a blended price is every
kind's price; a cached-input price not given is the input price (no discount).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from ..model.errors import InputError
from ..model.inputs import Fraction, Qty, Section, error_message, error_path
from ..model.rates import DATE_PATTERN, RateError, on_or_before, parse_rate_date
from ..model.units import exchange_rates

__all__ = ["PRICE_KINDS", "PRICE_FIELDS", "MarketEntry", "Market", "MarketPrices",
           "MarketRefError", "MarketNotFound", "parse_market_ref", "resolve_market_ref",
           "resolve_market", "validate_market", "market_entry_key", "MARKET_KEY_PATTERN",
           "MARKET_REF_PATTERN", "OFFER_PATTERN", "BLENDED", "MAX_MARKET_PRICE"]

# the kinds of token a price list prices, and the field of each
PRICE_KINDS = ("input", "cached_input", "output")
PRICE_FIELDS = {k: f"price_{k}" for k in PRICE_KINDS}
BLENDED = "price"  # the field of a blended price (every kind alike)

# a provider's and an offer's slug (no "/" or "@"), a version's key, a reference
OFFER_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._+-]{0,59}"
MARKET_KEY_PATTERN = rf"^{OFFER_PATTERN}/{OFFER_PATTERN}@{DATE_PATTERN}$"
MARKET_REF_PATTERN = rf"^{OFFER_PATTERN}/{OFFER_PATTERN}(?:@{DATE_PATTERN})?$"
_REF = re.compile(rf"(?P<offer>{OFFER_PATTERN}/{OFFER_PATTERN})(?:@(?P<date>[^/@\s]+))?")


# the highest market price per million tokens [USD/Mtok]: a dollar a token, far above any
# published price; past it revenue and profit overflowed to null (1e308 USD/Mtok)
MAX_MARKET_PRICE = 1e6


def _price(description: str):
    """A price per million tokens [USD/Mtok]: 0 to :data:`MAX_MARKET_PRICE`, in any currency
    the scenario states a rate for (converted to USD as it is read)."""
    return Qty("USD/Mtok", maximum=MAX_MARKET_PRICE, description=description)


class _Prices(Section):
    """The prices of a price list, each optional [USD/Mtok]."""
    price_input: _price("price per million input tokens (not served from the prefix "
                        "cache)") | None = None
    price_cached_input: _price("price per million input tokens served from the prefix "
                               "cache") | None = None
    price_output: _price("price per million output tokens") | None = None
    price: _price("blended price per million tokens, input and output alike") | None = None

    @model_validator(mode="after")
    def _one_basis(self):
        split = [f for f in PRICE_FIELDS.values() if getattr(self, f) is not None]
        if self.price is not None and split:
            raise ValueError(f"give a blended price or prices by kind ({', '.join(split)}), "
                             f"not both")
        return self


def _date(value: str | None) -> str | None:
    if value is None:
        return value
    try:
        parse_rate_date(value)
    except RateError as exc:
        raise ValueError(str(exc)) from None
    return value


class MarketEntry(_Prices):
    """A catalog ``market_price`` entry: one dated version of one offer's prices, at least
    one of them, each cited."""
    provider: str = Field(min_length=1, description="who sells the tokens")
    model: str = Field(min_length=1, description="the model the prices are for")
    date: str = Field(pattern=f"^{DATE_PATTERN}$", description="the version: YYYY-MM or "
                                                               "YYYY-MM-DD")
    source: str | None = None
    note: str | None = None

    @field_validator("date")
    @classmethod
    def _check_date(cls, value: str | None) -> str | None:
        return _date(value)

    @model_validator(mode="after")
    def _some_price(self):
        if self.price is None and all(getattr(self, f) is None for f in PRICE_FIELDS.values()):
            raise ValueError("give a price: price_input, price_cached_input, price_output, or "
                             "a blended price")
        return self


class Market(_Prices):
    """The market a scenario sells into: a catalog entry (``catalog``: a reference), prices
    typed (replacing the entry's of the same kind), the revenue share paid out of revenue
    and the share of input tokens served from the prefix cache; ``provider``, ``model``,
    ``date`` and ``source`` cite prices typed here (with a catalog entry, the entry's
    citation stands and ``source`` is the typed prices' source)."""
    catalog: str | None = Field(None, pattern=MARKET_REF_PATTERN, description=(
        "a market price in the catalog: <provider>/<offer>[@YYYY-MM[-DD]] (none: the latest "
        "version)"))
    revenue_share: Fraction(below_maximum=True, description=(
        "share of revenue paid out of it (a model licence, a platform fee)")) = 0.0
    cached_share: Fraction(description="share of input tokens served from the prefix "
                                       "cache") = 0.0
    provider: str | None = None
    model: str | None = None
    date: str | None = Field(None, pattern=f"^{DATE_PATTERN}$")
    source: str | None = None
    note: str | None = None

    @field_validator("date")
    @classmethod
    def _check_date(cls, value: str | None) -> str | None:
        return _date(value)


# ---- references ------------------------------------------------------------------------------

class MarketRefError(ValueError):
    """A reference that is not one (malformed, not a date)."""


class MarketNotFound(LookupError):
    """A well-formed reference that names no version the catalog holds."""


def market_entry_key(offer: str, when: str) -> str:
    """The catalog key of one version: ``deepseek/deepseek-r1-off-peak@2026-08``."""
    return f"{offer}@{when}"


def parse_market_ref(text: object) -> tuple[str, tuple[int, ...] | None, str | None]:
    """``"deepseek/deepseek-r1-off-peak@2026-08"`` -> (offer, date, date text); the date
    None for the latest. MarketRefError if it is not a reference."""
    m = _REF.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise MarketRefError(f"expected <provider>/<offer>[@YYYY-MM[-DD]], got {text!r}")
    raw = m.group("date")
    try:
        when = parse_rate_date(raw) if raw else None
    except RateError as exc:
        raise MarketRefError(str(exc)) from None
    return m.group("offer"), when, raw


def _order(d: tuple[int, ...]) -> tuple[int, int, int]:
    return (d[0], d[1], d[2] if len(d) == 3 else 0)


def resolve_market_ref(ref: str, keys: Iterable[str]) -> str:
    """The catalog key of the version ``ref`` names among ``keys``: the latest, or the
    version of its date, or else the latest before it. MarketRefError (not a reference) or
    MarketNotFound (no such version)."""
    offer, when, text = parse_market_ref(ref)
    versions = []
    for key in keys:
        name, _, date = key.rpartition("@")
        if name != offer:
            continue
        try:
            versions.append((parse_rate_date(date), key))
        except RateError:
            continue
    versions.sort(key=lambda v: _order(v[0]))
    if not versions:
        raise MarketNotFound(f"unknown catalog entry {ref!r}: no market price of {offer}")
    if when is None:
        return versions[-1][1]
    exact = [key for d, key in versions if d == when]
    if exact:
        return exact[0]
    before = [key for d, key in versions if on_or_before(d, when)]
    if not before:
        listed = ", ".join(k.rpartition("@")[2] for _, k in versions)
        raise MarketNotFound(f"unknown catalog entry {ref!r}: no market price on or before "
                             f"{text} (versions: {listed})")
    return before[-1]


# ---- the prices a calculation reads ----------------------------------------------------------

@dataclass(frozen=True)
class MarketPrices:
    """A market resolved: the price of each kind of token [USD/Mtok] (a blended price is
    each kind's; a cached-input price not given is the input price), the shares [fraction],
    what the prices are (``basis``: split or blended, ``blended`` [USD/Mtok]) and where they
    come from (the entry's ``key``, its citation, each price's source, the currencies
    converted at the scenario's rates, the prices left to a rule)."""
    price_input: float
    price_cached_input: float
    price_output: float
    revenue_share: float
    cached_share: float
    basis: str
    blended: float | None = None
    key: str | None = None
    provider: str | None = None
    model: str | None = None
    date: str | None = None
    source: str | None = None
    note: str | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    converted: tuple[str, ...] = ()
    ruled: tuple[str, ...] = ()

    def price(self, kind: str) -> float:
        """The price of ``kind`` (input, cached_input, output) [USD/Mtok]."""
        return getattr(self, PRICE_FIELDS[kind])

    @property
    def label(self) -> str:
        """``DeepSeek R1 (DeepSeek), 2026-08``: what the prices are, in words."""
        what = " ".join(x for x in (self.model, f"({self.provider})" if self.provider else None)
                        if x) or (self.key or "prices given")
        return f"{what}, {self.date}" if self.date else what

    def to_json(self) -> dict[str, Any]:
        """What the prices are and where they come from (the disclosure's market)."""
        def q(value: float | None) -> dict[str, Any] | None:
            return None if value is None else {"value": value, "unit": "USD/Mtok"}
        return {"entry": self.key, "provider": self.provider, "model": self.model,
                "date": self.date, "source": self.source, "note": self.note,
                "basis": self.basis, "blended": q(self.blended),
                "prices": {k: {**q(self.price(k)), "source": self.sources.get(k)}
                           for k in PRICE_KINDS},
                "revenue_share": self.revenue_share, "cached_share": self.cached_share,
                "currencies_converted": list(self.converted), "rules": list(self.ruled)}


CACHED_RULE = "the cached-input price is the input price (none was given: no discount)"
BLENDED_RULE = "a blended price prices input, cached-input and output tokens alike"
_CITATION = ("provider", "model", "date", "source", "note")


def validate_market(data: object, where: str = "market") -> Market:
    """A market table (``catalog`` and typed values) from plain data, its quantities read
    with the exchange rates in force (:func:`costmodel.model.units.exchange_rates`);
    :class:`InputError` with field paths under ``where`` otherwise."""
    if not isinstance(data, Mapping):
        raise InputError([(where, "a market must be a table/object")])
    try:
        return Market.model_validate(dict(data))
    except ValidationError as exc:
        raise InputError([(f"{where}.{error_path(e['loc'])}".rstrip("."), error_message(e))
                          for e in exc.errors()]) from None


def resolve_market(table: Mapping[str, Any], entry: tuple[str, Mapping[str, Any],
                                                          Mapping[str, str]] | None,
                   rates: Mapping[str, float], *, where: str = "market",
                   given_by: str = "given", sources: Mapping[str, str] | None = None
                   ) -> MarketPrices:
    """The prices a market means for a scenario whose exchange rates are ``rates`` (code ->
    units per USD): ``entry`` (its key, plain data and per-quantity sources: the catalog
    entry ``table['catalog']`` named, resolved by the caller) with the table's typed values
    (plain: their ``sources`` apart, by field) over it. A typed price's source is its own,
    else the table's ``source``, else ``given_by`` (where it was typed); the market's
    citation (provider, model, date, source, note) is the entry's when it names one, else
    the table's.

    Raises :class:`InputError` at ``where`` + the field: a table that does not validate, an
    entry and typed prices of two bases, a kind of token without a price, or no revenue."""
    with exchange_rates(rates) as used:
        market = validate_market(table, where)
        stored = None if entry is None else _stored(entry, where)
    typed = _prices(market)
    prices: dict[str, float] = {}
    cited: dict[str, str] = {}
    if stored is not None:
        key, _, provenance = entry
        of_entry = _prices(stored)
        _same_basis(typed, of_entry, key, where)
        for f, v in of_entry.items():
            prices[f] = v
            cited[f] = provenance.get(f) or stored.source or f"catalog entry {key}"
    own = market.source or given_by
    for f, v in typed.items():
        prices[f] = v
        cited[f] = (sources or {}).get(f) or own
    by_kind, kind_sources, ruled = _by_kind(prices, cited, entry, where)
    share = market.cached_share
    if by_kind["output"] == 0 and by_kind["input"] * (1 - share) == 0 \
            and by_kind["cached_input"] * share == 0:
        raise InputError([(where, "a request's revenue must be greater than zero, got 0 USD "
                                  "(every token it sells is priced at 0)")])
    cite = {c: getattr(stored if stored is not None else market, c) for c in _CITATION}
    return MarketPrices(by_kind["input"], by_kind["cached_input"], by_kind["output"],
                        market.revenue_share, share,
                        "blended" if BLENDED in prices else "split", prices.get(BLENDED),
                        None if entry is None else entry[0], **cite, sources=kind_sources,
                        converted=tuple(sorted(used)), ruled=tuple(ruled))


def _prices(prices: _Prices) -> dict[str, float]:
    """The prices a table or an entry gives, by field [USD/Mtok]."""
    return {f: getattr(prices, f) for f in (*PRICE_FIELDS.values(), BLENDED)
            if getattr(prices, f) is not None}


def _stored(entry: tuple[str, Mapping[str, Any], Mapping[str, str]],
            where: str) -> MarketEntry:
    """A catalog entry's data as a market price (read with the rates in force)."""
    key, data, _ = entry
    try:
        return MarketEntry.model_validate(dict(data))
    except ValidationError as exc:
        raise InputError([(f"{where}.catalog", f"the catalog entry {key!r} is not a market "
                                               f"price: {error_path(e['loc'])}: "
                                               f"{error_message(e)}")
                          for e in exc.errors()]) from None


def _same_basis(typed: Mapping[str, float], of_entry: Mapping[str, float], key: str,
                where: str) -> None:
    """Typed prices on the entry's basis (a blended price, or prices by kind), or none."""
    split = [f for f in PRICE_FIELDS.values() if f in typed]
    if BLENDED in typed and any(f in of_entry for f in PRICE_FIELDS.values()):
        field_, basis = BLENDED, "prices by kind"
    elif split and BLENDED in of_entry:
        field_, basis = split[0], "a blended price"
    else:
        return
    raise InputError([(f"{where}.{field_}", f"the catalog entry {key!r} gives {basis}, which "
                                            f"implies the same basis here: type prices of its "
                                            f"basis, or none")])


def _by_kind(prices: Mapping[str, float], cited: Mapping[str, str], entry: Any,
             where: str) -> tuple[dict[str, float], dict[str, str], list[str]]:
    """Each kind's price [USD/Mtok] and source, and the rules that set any: a blended price
    is every kind's; a cached-input price not given is the input price."""
    if BLENDED in prices:
        return ({k: prices[BLENDED] for k in PRICE_KINDS},
                {k: cited[BLENDED] for k in PRICE_KINDS}, [BLENDED_RULE])
    missing = [f for f in (PRICE_FIELDS["input"], PRICE_FIELDS["output"]) if f not in prices]
    if missing:
        of = f" (the catalog entry {entry[0]!r} gives none)" if entry is not None else ""
        raise InputError([(f"{where}.{f}", f"required (or give a blended price): a request's "
                                           f"{f.removeprefix('price_')} tokens need a "
                                           f"price{of}") for f in missing])
    ruled = []
    fields = dict(PRICE_FIELDS)
    if PRICE_FIELDS["cached_input"] not in prices:
        fields["cached_input"] = PRICE_FIELDS["input"]
        ruled.append(CACHED_RULE)
    return ({k: prices[f] for k, f in fields.items()},
            {k: cited[f] for k, f in fields.items()}, ruled)
