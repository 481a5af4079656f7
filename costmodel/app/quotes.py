"""Quote use cases: vendor quotes ranked against our cost, and the price of a term.

Each scenario is prepared once; where its operating point is read off a curve it is read at
each quote's guaranteed interactivity (a quote stating none is compared at the scenario's
own point, and flagged by the core). A quote naming a reference rate is resolved against the
context's catalog first (the version its ``rate`` names: :func:`with_rates`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from ..errors import InputError, UnknownReference
from ..inputs import ReferenceRate
from ..quotes import (
    Quote,
    QuoteComparison,
    TermRow,
    compare_quote,
    months_until,
    quote_at_rate,
    quote_interactivity,
    quote_start,
    rank,
    term_json,
    term_table,
)
from ..rates import RateError, RateNotFound, resolve_rate
from ..sources.curve_point import Target
from ..sources.scenario_file import PreparedScenario
from ..units import UnitInputError
from .context import Context
from .load import prepare
from .pricing import Priced, WorkbookFile, price_loaded, render_workbook
from .specs import ScenarioSpec

__all__ = ["QuotesRanking", "quotes_compare", "quotes_workbook", "TermRequest",
           "TermAnalysis", "quotes_term", "with_rates", "reference_rate"]


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


def with_rates(ctx: Context, quotes: Sequence[Quote]) -> list[Quote]:
    """The quotes, each one naming a reference rate priced at the version it names."""
    return [q if q.rate is None or q.reference is not None else
            quote_at_rate(q, reference_rate(ctx, q.rate, f"{q.where}.rate")) for q in quotes]


class _AtQuotes:
    """One prepared scenario, priced once per distinct quote interactivity."""

    def __init__(self, prepared: PreparedScenario, spec: ScenarioSpec):
        self.prepared, self.spec = prepared, spec
        self._priced: dict[float | None, Priced] = {}

    def for_quote(self, quote: Quote) -> Priced:
        x = quote_interactivity(quote) if self.prepared.curve is not None else None
        if x not in self._priced:
            target = None if x is None else Target.interactivity(
                x, f"the interactivity quote {quote.name!r} guarantees ({x:.4g} token/s/user)")
            try:
                self._priced[x] = price_loaded(self.prepared.finish(target))
            except InputError as exc:
                raise exc.about(self.spec.subject) from None
        return self._priced[x]


@dataclass(frozen=True)
class QuotesRanking:
    """Each quote against each scenario: ``rows[q][s]`` in the quotes' order, ``ranked[s]``
    cheapest first; ``systems`` are the scenarios as read for the first quote."""
    quotes: list[Quote]
    rows: list[list[QuoteComparison]]
    ranked: list[list[QuoteComparison]]
    systems: list[Priced]

    def to_json(self) -> dict[str, Any]:
        return {"scenarios": [{"scenario": ranked[0].scenario,
                               "ranked": [c.to_json() for c in ranked]}
                              for ranked in self.ranked]}


def quotes_compare(ctx: Context, quotes: Sequence[Quote],
                   specs: Sequence[ScenarioSpec]) -> QuotesRanking:
    """Every quote against every scenario, at the quote's operating point."""
    quotes = with_rates(ctx, quotes)
    scenarios = [_AtQuotes(prepare(ctx, s), s) for s in specs]
    rows = [[compare_quote(q, s.for_quote(q).result) for s in scenarios] for q in quotes]
    ranked = [rank([row[i] for row in rows]) for i in range(len(scenarios))]
    return QuotesRanking(list(quotes), rows, ranked,
                         [s.for_quote(quotes[0]) for s in scenarios])


def quotes_workbook(ranking: QuotesRanking) -> WorkbookFile:
    """The scenarios' workbook with a Quotes sheet (live margins)."""
    return render_workbook(ranking.systems,
                           quotes=list(zip(ranking.quotes, ranking.rows, strict=True)))


@dataclass(frozen=True)
class TermRequest:
    """A quote's term lengths against staying flexible. ``improvement``: the yearly fall of
    the market price per token [fraction]; or ``successor`` available at ``available`` (a
    duration from the quote's date such as "18 month", or a date "2027-06")."""
    quote: Quote
    scenario: ScenarioSpec
    terms: tuple[float, ...] = (6, 12, 18, 24, 36, 48)  # [month]
    tolerance: float = 0.10  # largest acceptable premium [fraction]
    improvement: float | None = None
    successor: ScenarioSpec | None = None
    available: str | None = None


@dataclass(frozen=True)
class TermAnalysis:
    quote: Quote
    comparison: QuoteComparison
    rows: list[TermRow]
    longest: float | None  # [month]
    tolerance: float
    improvement: float | None
    successor_price: float | None  # [USD/Mtok]
    successor_month: float | None  # [month from the quote's start]

    def to_json(self) -> dict[str, Any]:
        return term_json(self.quote, self.comparison, self.rows, self.longest, self.tolerance)


def quotes_term(ctx: Context, req: TermRequest) -> TermAnalysis:
    """What each term length costs against waiting or switching; the longest term within
    the tolerance. Errors name the request's fields (``improvement``, ``available``...)."""
    (quote,) = with_rates(ctx, [req.quote])
    req = replace(req, quote=quote)
    start = quote_start(req.quote)
    if req.improvement is None and req.successor is None:
        raise InputError([("improvement", "give improvement, or successor and available")])
    if req.successor is not None and req.available is None:
        raise InputError([("available", "a successor needs the time it is available")])
    own = _AtQuotes(prepare(ctx, req.scenario), req.scenario)
    comparison = compare_quote(req.quote, own.for_quote(req.quote).result)
    successor_price = successor_month = None
    if req.successor is not None:
        try:
            successor_month = months_until(req.available, start)
        except UnitInputError as exc:
            raise InputError([("available", str(exc))]) from None
        succ = _AtQuotes(prepare(ctx, req.successor), req.successor)
        successor_price = compare_quote(req.quote,
                                        succ.for_quote(req.quote).result).own_cost_per_mtok
    rate = own.for_quote(req.quote).result.scenario.financing.cost_of_capital
    rows, longest = term_table(comparison.price_per_mtok, comparison.volume, rate,
                               list(req.terms), yearly_improvement=req.improvement,
                               successor_price=successor_price,
                               successor_month=successor_month, tolerance=req.tolerance)
    return TermAnalysis(req.quote, comparison, rows, longest, req.tolerance, req.improvement,
                        successor_price, successor_month)

