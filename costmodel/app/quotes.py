"""Quote use cases: vendor quotes ranked against our cost, and the price of a term.

Each scenario is prepared once; where its operating point is read off a curve it is read at
each quote's guaranteed interactivity (a quote stating none is compared at the scenario's
own point, and flagged by the core). A quote naming a reference rate or a market price is
resolved against the context's catalog first (the version its ``rate`` or ``market`` names:
:func:`with_rates`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from ..decisions.market import MarketEntry, MarketNotFound, MarketRefError, resolve_market_ref
from ..decisions.quotes import (
    Quote,
    QuoteComparison,
    TermRow,
    compare_quote,
    in_scenario_rates,
    months_until,
    quote_at_market,
    quote_at_rate,
    quote_interactivity,
    quote_start,
    rank,
    term_json,
    term_table,
    validate_quote,
)
from ..model.errors import InputError, UnknownReference
from ..model.inputs import ReferenceRate, error_message
from ..model.rates import RateError, RateNotFound, resolve_rate
from ..model.units import UnitInputError, exchange_rates
from ..sources.curve_point import Target
from .caps import MAX_QUOTES, MAX_SCENARIOS, check_count
from .context import Context
from .load import finish, prepare
from .money import USD_MONEY, ShownMoney, shown_money
from .pricing import Priced, WorkbookFile, price_loaded, render_workbook
from .specs import ScenarioSpec

__all__ = ["RANKED_BY", "QuotesRanking", "quotes_compare", "quotes_workbook", "TermRequest",
           "TermAnalysis", "quotes_term", "with_rates", "at_first_scenario", "reference_rate",
           "market_price",
           "MARKET_KIND"]

MARKET_KIND = "market_price"  # the catalog kind a market quote names


def reference_rate(ctx: Context, ref: str, path: str) -> ReferenceRate:
    """The catalog's version of the reference rate ``ref`` names (``gb300/rental@2026-09``,
    ``gb300/rental``: the latest); errors at ``path``. An unknown one is looked for again in
    a fresh catalog (another writer may have just added it)."""
    for fresh in (False, True):
        catalog = ctx.catalog(fresh)
        try:
            key = resolve_rate(ref, catalog.keys("rate"))
        except RateError as exc:
            raise InputError([(path, str(exc))]) from None
        except RateNotFound as exc:
            if fresh:
                raise UnknownReference(path, str(exc), kind="rate", key=ref) from None
            continue
        try:
            return ReferenceRate.model_validate({**catalog.get("rate", key, path).data,
                                                 "key": key})
        except ValidationError as exc:  # an entry the catalog should not hold
            raise InputError([(path, f"catalog rate {key!r} is not a valid entry: "
                                     f"{exc.errors()[0]['msg']}")]) from None
    raise AssertionError("unreachable")


def market_price(ctx: Context, ref: str, path: str, rates: Mapping[str, float] | None = None
                 ) -> tuple[str, MarketEntry, set[str]]:
    """The catalog's version of the market price ``ref`` names
    (``illustrative/reasoning-model-api@2026-08``; no date: the latest): its key, its entry
    (prices in another currency read at ``rates``, code -> units per USD: the first
    scenario's) and the codes of the currencies read; errors at ``path``, as
    :func:`reference_rate`'s. An unknown one is looked for again in a fresh catalog (another
    writer may have just added it)."""
    for fresh in (False, True):
        catalog = ctx.catalog(fresh)
        try:
            key = resolve_market_ref(ref, catalog.keys(MARKET_KIND))
        except MarketRefError as exc:
            raise InputError([(path, str(exc))]) from None
        except MarketNotFound as exc:
            if fresh:
                raise UnknownReference(path, str(exc), kind=MARKET_KIND, key=ref) from None
            continue
        data = dict(catalog.get(MARKET_KIND, key, path).data)
        try:
            with exchange_rates(rates or {}) as used:
                return key, MarketEntry.model_validate(data), set(used)
        except ValidationError as exc:  # an entry the catalog should not hold
            raise InputError([(path, f"catalog market price {key!r}: "
                                     f"{error_message(exc.errors()[0])}")]) from None
    raise AssertionError("unreachable")


def _resolved(ctx: Context, q: Quote, rates: Mapping[str, float] | None) -> Quote:
    """``q`` priced at the reference rate or market price it names (as it is otherwise)."""
    if q.rate is not None and q.reference is None:
        return quote_at_rate(q, reference_rate(ctx, q.rate, f"{q.where}.rate"))
    if q.market is not None and q.market_price is None:
        key, entry, used = market_price(ctx, q.market, f"{q.where}.market", rates)
        return quote_at_market(q, key, entry, used)
    return q


def with_rates(ctx: Context, quotes: Sequence[Quote],
               rates: Mapping[str, float] | None = None) -> list[Quote]:
    """The quotes, each one naming a reference rate or a market price priced at the version
    it names (their amounts in other currencies read already: :func:`at_scenario_rates`; a
    market price's in another currency read at ``rates``, the first scenario's)."""
    if not all(q.read for q in quotes):
        raise AssertionError("a quote's amounts in another currency are read at the first "
                             "scenario's rates first")
    return [_resolved(ctx, q, rates) for q in quotes]


def at_scenario_rates(quotes: Sequence[Quote], first: Priced) -> list[Quote]:
    """The quotes with any amount in another currency read at the first scenario's stated
    rate for it (:func:`costmodel.decisions.quotes.in_scenario_rates`)."""
    return in_scenario_rates(quotes, first.result.scenario.money.rates)


def at_first_scenario(ctx: Context, quotes: Sequence[Quote], first: Priced) -> list[Quote]:
    """The quotes read at the first scenario's stated rates (:func:`at_scenario_rates`), then
    each naming a reference rate or a market price priced at its version, a market price in
    another currency read at the same rates (:func:`with_rates`)."""
    return with_rates(ctx, at_scenario_rates(quotes, first), first.result.scenario.money.rates)


def quote_currencies(quotes: Sequence[Quote]) -> list[str]:
    """The currencies, other than USD, the quotes' amounts were given in (sorted)."""
    return sorted(set().union(*(q.currencies for q in quotes)))


class _AtQuotes:
    """One prepared scenario, priced once per distinct quote interactivity."""

    def __init__(self, ctx: Context, spec: ScenarioSpec):
        self.ctx, self.spec = ctx, spec
        self.prepared = prepare(ctx, spec)
        self._priced: dict[float | None, Priced] = {}

    def for_quote(self, quote: Quote) -> Priced:
        x = quote_interactivity(quote) if self.prepared.curve is not None else None
        if x not in self._priced:
            target = None if x is None else Target.interactivity(
                x, f"the interactivity quote {quote.name!r} guarantees ({x:.4g} token/s/user)")
            self._priced[x] = price_loaded(finish(self.ctx, self.spec, self.prepared, target))
        return self._priced[x]


# what a ranking without a demand is, said with it (``ranked_by`` in JSON)
RANKED_BY = ("unit price (per million tokens) at each offer's own volume and term, cheapest "
             "first; not a recommendation: offers sized for different volumes and terms are "
             "decided between for one demand, every offer priced for the same volume, by "
             "quotes decide")


@dataclass(frozen=True)
class QuotesRanking:
    """Each quote against each scenario: ``rows[q][s]`` in the quotes' order, ``ranked[s]``
    cheapest per million tokens first, each at its own volume and term (:data:`RANKED_BY`:
    no recommendation, which is the decision's at a demand); ``systems`` are the scenarios
    as read for the first quote."""
    quotes: list[Quote]
    rows: list[list[QuoteComparison]]
    ranked: list[list[QuoteComparison]]
    systems: list[Priced]
    money: ShownMoney = USD_MONEY  # the first scenario's currency (:mod:`.money`)

    def to_json(self) -> dict[str, Any]:
        out = {"scenarios": [{"scenario": ranked[0].scenario,
                              "ranked": [c.to_json() for c in ranked]}
                             for ranked in self.ranked],
               "ranked_by": RANKED_BY}
        return out if not self.money.says else {**self.money.json(out),
                                                "money": self.money.quotes_note()}


def quotes_compare(ctx: Context, quotes: Sequence[Quote],
                   specs: Sequence[ScenarioSpec]) -> QuotesRanking:
    """Every quote against every scenario, at the quote's operating point."""
    check_count(ctx, len(quotes), MAX_QUOTES, "quotes", "quotes")
    check_count(ctx, len(specs), MAX_SCENARIOS, "scenarios", "scenarios")
    scenarios = [_AtQuotes(ctx, s) for s in specs]
    if scenarios and quotes:  # (the first read at the first quote's point: its money)
        quotes = at_first_scenario(ctx, quotes, scenarios[0].for_quote(quotes[0]))
    else:
        quotes = with_rates(ctx, quotes)
    rows = [[compare_quote(q, s.for_quote(q).result) for s in scenarios] for q in quotes]
    ranked = [rank([row[i] for row in rows]) for i in range(len(scenarios))]
    systems = [s.for_quote(quotes[0]) for s in scenarios]
    money = shown_money([p.result for p in systems], [s.subject for s in specs]).with_quotes(
        quote_currencies(quotes), systems[0].result)
    return QuotesRanking(list(quotes), rows, ranked, systems, money)


def quotes_workbook(ranking: QuotesRanking) -> WorkbookFile:
    """The scenarios' workbook with a Quotes sheet (live margins)."""
    return render_workbook(ranking.systems,
                           quotes=list(zip(ranking.quotes, ranking.rows, strict=True)))


@dataclass(frozen=True)
class TermRequest:
    """A quote's term lengths against staying flexible. ``improvement``: the yearly fall of
    the market price per token [fraction]; or ``successor`` available at ``available`` (a
    duration from the quote's date such as "18 month", or a date "2027-06"), whose market
    price is ``successor_rate`` (a reference rate) or ``successor_quote``."""
    quote: Quote
    scenario: ScenarioSpec
    terms: tuple[float, ...] = (6, 12, 18, 24, 36, 48)  # [month]
    tolerance: float = 0.10  # largest acceptable premium [fraction]
    improvement: float | None = None
    successor: ScenarioSpec | None = None
    available: str | None = None
    successor_rate: str | None = None  # the successor's market price: a reference rate
    successor_quote: Quote | None = None  # ... or a quote for the successor


@dataclass(frozen=True)
class TermAnalysis:
    quote: Quote
    comparison: QuoteComparison
    rows: list[TermRow]
    longest: float | None  # [month]
    tolerance: float
    improvement: float | None
    successor_price: float | None  # [USD/Mtok] the market price once the successor is here
    successor_month: float | None  # [month from the quote's start]
    successor_source: str | None = None  # where that market price comes from
    successor_floor: float | None = None  # [USD/Mtok] the successor's own cost: a floor
    money: ShownMoney = USD_MONEY  # the scenario's currency (:mod:`.money`)

    def to_json(self) -> dict[str, Any]:
        out = term_json(self.quote, self.comparison, self.rows, self.longest, self.tolerance)
        if self.successor_price is not None:
            q = lambda v, u: {"value": v, "unit": u}  # noqa: E731
            out["successor"] = {"market_price": q(self.successor_price, "USD/Mtok"),
                                "market_source": self.successor_source,
                                "own_cost_floor": q(self.successor_floor, "USD/Mtok"),
                                "available": q(self.successor_month, "month")}
        return out if not self.money.says else {**self.money.json(out),
                                                "money": self.money.quotes_note()}


def _successor_market(ctx: Context, req: TermRequest, succ: Priced) -> tuple[float, str]:
    """What a flexible buyer pays for the successor [USD/Mtok], and its source: a
    reference rate of it, or a quote for it, at its throughput; never its own cost."""
    if (req.successor_rate is None) == (req.successor_quote is None):
        floor = succ.result.values["cost_per_mtok_total"]
        raise InputError([("successor_rate", f"the flexible buyer pays a market price: give "
                                             f"successor_rate (a reference rate of the "
                                             f"successor) or successor_quote, one of them; "
                                             f"its own cost ({floor:.4g} USD/Mtok) is only a "
                                             f"floor")])
    if req.successor_rate is not None:
        rate = reference_rate(ctx, req.successor_rate, "successor_rate")
        market = quote_at_rate(validate_quote({"name": "successor market",
                                               "rate": req.successor_rate},
                                              "successor_rate"), rate)
        source = f"reference rate {rate.key}, a public dashboard's assumption"
    else:
        (market,) = with_rates(ctx, [req.successor_quote], succ.result.scenario.money.rates)
        source = f"quote {market.name!r} ({market.vendor})"
    return compare_quote(market, succ.result).price_per_mtok, source


def quotes_term(ctx: Context, req: TermRequest) -> TermAnalysis:
    """What each term length costs against waiting or switching; the longest term within
    the tolerance. Errors name the request's fields (``improvement``, ``available``...)."""
    own = _AtQuotes(ctx, req.scenario)
    first = own.for_quote(req.quote)
    (quote,) = at_first_scenario(ctx, [req.quote], first)
    successor_quote = None if req.successor_quote is None else \
        at_scenario_rates([req.successor_quote], first)[0]
    req = replace(req, quote=quote, successor_quote=successor_quote)
    start = quote_start(req.quote)
    if req.improvement is None and req.successor is None:
        raise InputError([("improvement", "give improvement, or successor and available")])
    if req.successor is not None and req.available is None:
        raise InputError([("available", "a successor needs the time it is available")])
    comparison = compare_quote(req.quote, own.for_quote(req.quote).result)
    successor_price = successor_month = source = floor = None
    shown = [own.for_quote(req.quote).result]
    subjects = [req.scenario.subject]
    if req.successor is not None:
        try:
            successor_month = months_until(req.available, start)
        except UnitInputError as exc:
            raise InputError([("available", str(exc))]) from None
        succ = _AtQuotes(ctx, req.successor).for_quote(req.quote)
        successor_price, source = _successor_market(ctx, req, succ)
        floor = succ.result.values["cost_per_mtok_total"]
        shown.append(succ.result)
        subjects.append(req.successor.subject)
    rate = own.for_quote(req.quote).result.scenario.financing.cost_of_capital
    rows, longest = term_table(comparison.price_per_mtok, comparison.volume, rate,
                               list(req.terms), yearly_improvement=req.improvement,
                               successor_price=successor_price,
                               successor_month=successor_month, tolerance=req.tolerance)
    return TermAnalysis(req.quote, comparison, rows, longest, req.tolerance, req.improvement,
                        successor_price, successor_month, source, floor,
                        shown_money(shown, subjects).with_quotes(
                            quote_currencies([req.quote, *([req.successor_quote]
                                                           if req.successor_quote else [])]),
                            first.result))

