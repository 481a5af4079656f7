"""Profit at market prices, its calculation declared once: what :func:`profit_figures`
evaluates and what the workbook's Profit sheet writes as formulas are renderings of
:data:`PROFIT`, a declaration over the model's names (units checked when this module is
imported).

At the scenario's operating point an accelerator serves ``tokens_per_hour`` tokens of the
point's kind an hour, averaged over every hour (served or idle: the utilisation is in it),
which is ``tokens_per_hour / tokens_per_request`` requests of the workload's shape (ISL input,
OSL output tokens). Each request sells at the market's prices:

    revenue per request = (ISL x (1 - cached share) x input price
                           + ISL x cached share x cached-input price
                           + OSL x output price) / 10^6                       [USD]

so revenue an accelerator-hour is requests an hour x revenue per request. The revenue share
(a model licence, a platform fee) is paid out of revenue; the accelerator's cost an hour
(``cost_per_hour``: every hour, served or idle) is paid whatever is sold:

    profit per accelerator-hour = revenue x (1 - revenue share) - cost per hour  [USD/h]

and also per month (730 h), per GW-year of facility power (``power_facility``: the rack's
power per accelerator x PUE, on the scenario's power basis; 10^9 W / that many accelerators
for 8,760 h), as a margin on revenue, and as the **break-even market price**: the factor
``cost / net revenue`` on every market price at which profit is zero, each price times it,
and the market's price per million tokens of either kind (revenue per request over its ISL +
OSL tokens) times it. Tokens per dollar of cost count tokens of the operating point's kind,
as the cost per million tokens does.

Names: the market's inputs are ``market_``-prefixed (:data:`MARKET_INPUTS`, each a key of the
market table: ``market.price_input``...); the scenario's figures are the model's names
(``tokens_per_hour``, ``cost_per_hour``, ``power_facility``, ``workload_isl``...). Money
figures are also declared in the currency results are shown in (``<name>_shown``: times
``money_rate``), as the model's are.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model.declaration import Constant, Declaration, Input, Step
from ..model.evaluate import Evaluator
from ..model.steps import MODEL, model_input
from ..model.units import SHOWN_CURRENCY
from .market import PRICE_KINDS, MarketPrices

__all__ = ["PROFIT", "MARKET_INPUTS", "MODEL_NAMES", "NAMES", "SHOWN", "shown",
           "profit_figures", "market_inputs", "FIGURES", "RULES"]


def _market(name: str, unit: str, description: str) -> Input:
    return Input(f"market_{name}", unit, description, f"market.{name}")


MARKET_INPUTS = [
    _market("price_input", "USD/Mtok", "market price per million input tokens (not served "
                                       "from the prefix cache)"),
    _market("price_cached_input", "USD/Mtok", "market price per million input tokens served "
                                              "from the prefix cache"),
    _market("price_output", "USD/Mtok", "market price per million output tokens"),
    _market("cached_share", "dimensionless", "share of input tokens served from the prefix "
                                             "cache"),
    _market("revenue_share", "dimensionless", "share of revenue paid out of it (a model "
                                              "licence, a platform fee)"),
]
MODEL_NAMES = ("workload_isl", "workload_osl", "tokens_per_request", "tokens_per_hour",
               "cost_per_hour", "power_facility", "money_rate")
_WATTS_PER_GW = Constant("watts_per_gigawatt", 1e9, "W/GW", "watts in a gigawatt")

_STEPS = [
    Step("market_revenue_per_request", "USD",
         "(workload_isl * (1 - market_cached_share) * market_price_input + workload_isl * "
         "market_cached_share * market_price_cached_input + workload_osl * "
         "market_price_output) / tokens_per_mtok",
         "revenue of one request of the workload's shape at the market's prices"),
    Step("market_price_per_mtok", "USD/Mtok",
         "market_revenue_per_request / (workload_isl + workload_osl) * tokens_per_mtok",
         "the market's price per million tokens of either kind, at the workload's mix"),
    Step("requests_per_hour", "1/h", "tokens_per_hour / tokens_per_request",
         "requests served per accelerator an hour, averaged over all hours"),
    Step("revenue_per_hour", "USD/h", "requests_per_hour * market_revenue_per_request",
         "revenue per accelerator-hour at the market's prices"),
    Step("revenue_share_per_hour", "USD/h", "revenue_per_hour * market_revenue_share",
         "revenue share paid out per accelerator-hour"),
    Step("net_revenue_per_hour", "USD/h", "revenue_per_hour - revenue_share_per_hour",
         "revenue kept per accelerator-hour, after the revenue share"),
    Step("profit_per_hour", "USD/h", "net_revenue_per_hour - cost_per_hour",
         "profit per accelerator-hour: revenue kept less the cost of every hour"),
    Step("profit_margin", "dimensionless", "profit_per_hour / revenue_per_hour",
         "profit as a share of revenue"),
    Step("revenue_per_month", "USD/month", "revenue_per_hour * hours_per_year / "
                                           "months_per_year",
         "revenue per accelerator-month"),
    Step("cost_per_month", "USD/month", "cost_per_hour * hours_per_year / months_per_year",
         "cost per accelerator-month"),
    Step("profit_per_month", "USD/month", "profit_per_hour * hours_per_year / months_per_year",
         "profit per accelerator-month"),
    Step("accelerators_per_gw", "1/GW", "watts_per_gigawatt / power_facility",
         "accelerators a gigawatt of facility power runs"),
    Step("revenue_per_gw_year", "USD/GW/year",
         "revenue_per_hour * hours_per_year * accelerators_per_gw",
         "revenue per gigawatt-year of facility power"),
    Step("profit_per_gw_year", "USD/GW/year",
         "profit_per_hour * hours_per_year * accelerators_per_gw",
         "profit per gigawatt-year of facility power"),
    Step("break_even_factor", "dimensionless", "cost_per_hour / net_revenue_per_hour",
         "the factor on every market price at which profit is zero"),
    Step("break_even_price", "USD/Mtok", "market_price_per_mtok * break_even_factor",
         "break-even market price per million tokens of either kind, at the workload's mix"),
    *(Step(f"break_even_price_{k}", "USD/Mtok", f"market_price_{k} * break_even_factor",
           f"break-even market price per million {w} tokens (every price moved alike)")
      for k, w in zip(PRICE_KINDS, ("input", "cached input", "output"), strict=True)),
    Step("tokens_per_usd", "token/USD", "tokens_per_hour / cost_per_hour",
         "tokens of the operating point's kind per dollar of cost"),
]

# the money figures, also in the currency results are shown in
SHOWN = ["market_price_input", "market_price_cached_input", "market_price_output",
         "market_revenue_per_request", "market_price_per_mtok", "revenue_per_hour",
         "revenue_share_per_hour", "net_revenue_per_hour", "profit_per_hour",
         "revenue_per_month", "cost_per_month", "profit_per_month", "revenue_per_gw_year",
         "profit_per_gw_year", "break_even_price",
         *(f"break_even_price_{k}" for k in PRICE_KINDS)]


def shown(name: str) -> str:
    """The step of a figure in the currency results are shown in."""
    return f"{name}_shown"


_UNITS = {**{s.name: s.unit for s in _STEPS}, **{i.name: i.unit for i in MARKET_INPUTS}}
_DESCRIPTIONS = {**{s.name: s.description for s in _STEPS},
                 **{i.name: i.description for i in MARKET_INPUTS}}
_STEPS += [Step(shown(n), _UNITS[n].replace("USD", SHOWN_CURRENCY), f"{n} * money_rate",
                f"{_DESCRIPTIONS[n]}, in the currency results are shown in") for n in SHOWN]
_STEPS.append(Step(shown("tokens_per_usd"), f"token/{SHOWN_CURRENCY}",
                   "tokens_per_usd / money_rate", "tokens of the operating point's kind per "
                                                  "unit of cost in the currency results are "
                                                  "shown in"))

PROFIT = Declaration(
    [*MARKET_INPUTS, *map(model_input, MODEL_NAMES)], [],
    [MODEL.constants[n] for n in ("tokens_per_mtok", "hours_per_year", "months_per_year")]
    + [_WATTS_PER_GW], _STEPS)
"""The declared profit calculation; unit-checked at import."""


def _check() -> frozenset[str]:
    """The profit's own names: none is a name of the model's (they share a workbook)."""
    own = set(PROFIT.steps) | {i.name for i in MARKET_INPUTS} | {_WATTS_PER_GW.name}
    model = set(MODEL.inputs) | set(MODEL.enums) | set(MODEL.steps) | set(MODEL.constants)
    shared = own & model
    assert not shared, f"the profit redeclares the model's names {sorted(shared)}"
    return frozenset(own)


NAMES = _check()
"""Every name the profit declares (beside the model's it reads)."""

# the figures an answer reports, in order
FIGURES = [n for n in PROFIT.steps if not n.endswith("_shown")]

_EVALUATE = Evaluator(PROFIT)

RULES = [
    "revenue per accelerator-hour = tokens an hour (at the utilisation, over every hour) / "
    "tokens per request x the revenue of one request (ISL input tokens, the cached share of "
    "them at the cached-input price, and OSL output tokens, each at its market price)",
    "the revenue share is paid out of revenue; the accelerator's cost is paid every hour, "
    "served or idle",
    "a month is 730 hours; a GW-year is 8,760 hours of 10^9 W of facility power (rack power "
    "per accelerator x PUE, on the scenario's power basis)",
    "the break-even market price moves every market price by the same factor (cost / revenue "
    "kept) until profit is zero",
    "tokens per dollar of cost count tokens of the operating point's kind",
]


def market_inputs(market: MarketPrices) -> dict[str, float]:
    """The market's inputs of :data:`PROFIT` [USD/Mtok, fraction]."""
    return {"market_price_input": market.price_input,
            "market_price_cached_input": market.price_cached_input,
            "market_price_output": market.price_output,
            "market_cached_share": market.cached_share,
            "market_revenue_share": market.revenue_share}


def profit_figures(values: Mapping[str, Any], market: MarketPrices) -> dict[str, float]:
    """Every name of :data:`PROFIT` [its declared unit] for a scenario whose inputs and
    steps are ``values`` (the model's names: a result's values with its scenario's inputs),
    sold at ``market``'s prices."""
    env = {**{n: float(values[n]) for n in MODEL_NAMES}, **market_inputs(market)}
    out = {k: float(v) for k, v in _EVALUATE(env).items()}
    return {**env, **out}
