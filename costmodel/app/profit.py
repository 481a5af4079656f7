"""Profit at market prices (``costmodel profit``, ``POST /api/v1/profit``, the Price page's
Profit section): each scenario priced at its own operating point and sold at a market's
prices per million tokens.

A market (:class:`MarketSpec`) is a table as a face gives it: a catalog ``market_price``
entry named by reference (``catalog``), prices typed (any currency the scenario states a rate
for), the revenue share and the cached share. The entry is looked up in the context's catalog
(:func:`costmodel.decisions.market.resolve_market_ref`: the latest version, or the one on or
before a date), the prices resolved at the scenario's exchange rates
(:func:`costmodel.decisions.market.resolve_market`), and the profit figures evaluated from
the priced result's own steps (:mod:`costmodel.decisions.profit`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..decisions import profit as calc
from ..decisions.market import (
    PRICE_KINDS,
    MarketNotFound,
    MarketPrices,
    MarketRefError,
    resolve_market,
    resolve_market_ref,
)
from ..model.errors import InputError, UnknownReference
from ..model.inputs import Scenario
from ..model.results import quantity_json
from ..model.units import SHOWN_CURRENCY
from ..sources.catalog import split_sources
from .caps import MAX_SCENARIOS, check_count
from .context import Context
from .pricing import Priced, WorkbookFile, _filename, price
from .specs import ScenarioSpec

__all__ = ["MarketSpec", "ProfitRequest", "SystemProfit", "ProfitAnswer", "profit",
           "profit_workbook", "market_for", "sell", "render_profit_workbook", "profit_rules",
           "RULES"]

RULES = calc.RULES


def profit_rules() -> list[str]:
    """How the profit is computed, in words (every face shows them)."""
    return list(RULES)
KIND = "market_price"  # the catalog kind


@dataclass(frozen=True)
class MarketSpec:
    """A market as a face gives it: ``table`` (``catalog`` and typed values, a price's
    ``source`` beside it as a quantity table gives one), the path its errors are at
    (``where``), the input it is about (``subject``: a file, marked on its errors), and
    where typed prices come from (``given_by``, their source when they cite none; ``sources``:
    the source of a typed price by its field, over any other: an option that set it)."""
    table: Mapping[str, Any]
    where: str = "market"
    subject: str | None = None
    given_by: str = "given in the market table"
    sources: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProfitRequest:
    """The scenarios, and the market each is sold into (one a scenario, in order)."""
    specs: Sequence[ScenarioSpec]
    markets: Sequence[MarketSpec]


@dataclass(frozen=True)
class SystemProfit:
    """One scenario sold at one market: its priced result, the market's prices resolved and
    every name of the profit's declaration [its declared unit]."""
    priced: Priced
    market: MarketPrices
    figures: Mapping[str, float]

    @property
    def name(self) -> str:
        return self.priced.result.name

    @property
    def currency(self) -> str:
        return self.priced.result.currency

    def value(self, name: str) -> float:
        """A figure of :data:`costmodel.decisions.profit.PROFIT` [its unit, USD for money]."""
        return self.figures[name]

    def shown(self, name: str) -> tuple[float, str]:
        """A figure as the answer shows it: money in the currency results are shown in (its
        ``_shown`` step), with its unit; anything else as computed."""
        unit = calc.PROFIT.steps[name].unit if name in calc.PROFIT.steps else \
            calc.PROFIT.inputs[name].unit
        if self.currency != "USD" and (name in calc.SHOWN or name == "tokens_per_usd"):
            step = calc.shown(name)
            return self.figures[step], calc.PROFIT.steps[step].unit.replace(
                SHOWN_CURRENCY, self.currency)
        return self.figures[name], unit

    def q(self, name: str) -> dict[str, Any]:
        return quantity_json(*self.shown(name))

    def to_json(self) -> dict[str, Any]:
        r = self.priced.result
        cost, cost_unit = r.shown("cost_per_hour")
        return {
            "scenario": self.name,
            "market_prices": {**{k: self.q(f"market_price_{k}") for k in PRICE_KINDS},
                              "per_mtok": self.q("market_price_per_mtok")},
            "revenue_share": self.market.revenue_share,
            "cached_share": self.market.cached_share,
            "utilisation": r.scenario.utilisation,
            "revenue_per_request": self.q("market_revenue_per_request"),
            "requests_per_hour": self.q("requests_per_hour"),
            "revenue_per_hour": self.q("revenue_per_hour"),
            "revenue_share_per_hour": self.q("revenue_share_per_hour"),
            "net_revenue_per_hour": self.q("net_revenue_per_hour"),
            "cost_per_hour": quantity_json(cost, cost_unit),
            "profit_per_hour": self.q("profit_per_hour"),
            "profit_margin": _finite(self.value("profit_margin")),
            "revenue_per_month": self.q("revenue_per_month"),
            "cost_per_month": self.q("cost_per_month"),
            "profit_per_month": self.q("profit_per_month"),
            "accelerators_per_gw": self.q("accelerators_per_gw"),
            "revenue_per_gw_year": self.q("revenue_per_gw_year"),
            "profit_per_gw_year": self.q("profit_per_gw_year"),
            "break_even": {"factor": _finite(self.value("break_even_factor")),
                           "price_per_mtok": self.q("break_even_price"),
                           **{k: self.q(f"break_even_price_{k}") for k in PRICE_KINDS}},
            "tokens_per_usd": self.q("tokens_per_usd"),
            "cost_per_mtok": quantity_json(*r.shown("cost_per_mtok_total")),
            "token_kind": r.scenario.operating_point.token_kind,
            "disclosure": {**r.disclosure(sources=False), "market": self.market.to_json()},
        }


def _finite(value: float) -> float | None:
    return value if value == value and abs(value) != float("inf") else None


@dataclass(frozen=True)
class ProfitAnswer:
    systems: list[SystemProfit]

    @property
    def most_profitable(self) -> str:
        """The system with the most profit per accelerator-hour (in USD)."""
        return max(self.systems, key=lambda s: s.value("profit_per_hour")).name

    def to_json(self) -> dict[str, Any]:
        return {"engine": {"name": "costmodel", "version": __version__},
                "systems": [s.to_json() for s in self.systems],
                "most_profitable": self.most_profitable,
                "rules": RULES}


def _entry(ctx: Context, ref: Any, where: str) -> tuple[str, dict, dict] | None:
    """The catalog entry a market's ``catalog`` reference names: (key, data, sources); None
    when it names none (a reference that is not text is the table's validation's to say)."""
    if not isinstance(ref, str):
        return None
    for fresh in (False, True):
        catalog = ctx.catalog(fresh)
        try:
            key = resolve_market_ref(ref, catalog.keys(KIND))
        except MarketRefError as exc:
            raise InputError([(f"{where}.catalog", str(exc))]) from None
        except MarketNotFound as exc:
            if fresh:  # another writer may have added it a moment ago: looked again
                known = ", ".join(catalog.keys(KIND)) or "none"
                raise UnknownReference(f"{where}.catalog", f"{exc} (known: {known})",
                                       kind=KIND, key=ref) from None
            continue
        entry = catalog.get(KIND, key, f"{where}.catalog")
        return key, entry.data, entry.provenance
    raise AssertionError("unreachable")


def market_for(ctx: Context, spec: MarketSpec, scenario: Scenario) -> MarketPrices:
    """The prices ``spec`` means for ``scenario`` (its exchange rates read the typed prices
    and the entry's); InputError at ``spec.where`` + the field."""
    try:
        if not isinstance(spec.table, Mapping):
            raise InputError([(spec.where, "a market must be a table/object")])
        plain, cited = split_sources(dict(spec.table))
        entry = _entry(ctx, plain.get("catalog"), spec.where)
        return resolve_market(plain, entry, scenario.money.rates, where=spec.where,
                              given_by=spec.given_by, sources={**cited, **spec.sources})
    except InputError as exc:
        raise exc.about(spec.subject) from None


def sell(ctx: Context, priced: Priced, market: MarketSpec) -> SystemProfit:
    """A priced scenario sold at ``market``'s prices (the Price page's Profit section: the
    scenario it has priced already)."""
    r = priced.result
    prices = market_for(ctx, market, r.scenario)
    figures = calc.profit_figures({**r.scenario.to_inputs(), **r.values}, prices)
    return SystemProfit(priced, prices, figures)


def _system(ctx: Context, spec: ScenarioSpec, market: MarketSpec, sources: bool
            ) -> SystemProfit:
    return sell(ctx, price(ctx, spec, sources=sources), market)


def profit(ctx: Context, request: ProfitRequest, *, sources: bool = False) -> ProfitAnswer:
    """Each scenario sold at its market (see the module docstring); ``sources``: each result
    with its per-input sources (a workbook's Sources sheet)."""
    check_count(ctx, len(request.specs), MAX_SCENARIOS, "scenarios", "scenarios")
    if len(request.markets) != len(request.specs):
        raise ValueError("one market a scenario")
    return ProfitAnswer([_system(ctx, s, m, sources)
                         for s, m in zip(request.specs, request.markets, strict=True)])


def profit_workbook(ctx: Context, request: ProfitRequest,
                    title: str | None = None) -> WorkbookFile:
    """The scenarios' workbook (live formulas) with a Profit sheet: each market's prices and
    shares as input cells and every profit figure a formula over the scenarios' named cells
    (:mod:`costmodel.render.workbook.profit_sheet`)."""
    return render_profit_workbook(profit(ctx, request, sources=True).systems, title=title)


def render_profit_workbook(systems: Sequence[SystemProfit],
                           title: str | None = None) -> WorkbookFile:
    """The workbook of systems sold already (:func:`profit_workbook`)."""
    from ..render.workbook.export import WorkbookSystem, build_workbook
    from ..render.workbook.profit_sheet import ProfitBook
    book = ProfitBook([s.market for s in systems])
    wb = build_workbook([WorkbookSystem(s.priced.result, s.priced.curve) for s in systems],
                        title=title or "Profit at market prices", profit=book)
    return WorkbookFile(wb.content, "profit_" + _filename([s.name for s in systems]))
