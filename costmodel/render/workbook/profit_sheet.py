"""The Profit sheet: each system sold at its market's prices, live.

The profit's calculation is declared once (:mod:`costmodel.decisions.profit`); this module
writes its declaration as formulas, each with the engine's value cached, over named cells
(system *i* in column D + i - 1, as on every sheet; in a comparison each cell's name has the
suffix ``_s1``, ``_s2``...):

- **The market**, blue input cells per system: the price per million input, cached-input and
  output tokens (``market_price_input``, ``market_price_cached_input``,
  ``market_price_output``, USD/Mtok: a blended price is each kind's), the cached share and
  the revenue share; where each price comes from is written under the figures.
- **Per accelerator-hour**: a request's revenue, requests an hour, revenue, the revenue share
  paid, revenue kept, the cost of the hour (the scenario's ``cost_per_hour``, shown again),
  profit and the margin on revenue; **per month** and **per GW-year** of facility power;
  the **break-even** factor on every market price and the break-even prices; tokens per
  dollar of cost. With a currency other than USD, the money figures again in it.
- **Constants** of the profit's calculation (``watts_per_gigawatt``); the model's
  (``tokens_per_mtok``, ``hours_per_year``...) are on Inputs.

The scenario's figures (``tokens_per_hour``, ``cost_per_hour``, ``power_facility``,
``workload_isl``...) are the model's names on Inputs and Calculations, so a changed scenario
input, or a changed market price here, recomputes every profit figure.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...decisions import profit as calc
from ...decisions.market import PRICE_KINDS, MarketPrices
from ...model.units import SHOWN_CURRENCY
from ..display import display_unit, excel_format
from .excel_formula import Cell, cell_formula
from .layout import (
    FIRST_COL,
    NAME_COL,
    UNIT_COL,
    Names,
    WorkbookSystem,
    system_header,
    system_ref,
    system_width,
    words,
)
from .model_sheets import shown_currency
from .sheet import Sheet, cell_ref

__all__ = ["PROFIT_SHEET", "ProfitBook", "write_profit", "profit_values", "INPUT_ROWS",
           "FIGURE_ROWS"]

PROFIT_SHEET = "Profit"
INPUT_ROWS = tuple(i.name for i in calc.MARKET_INPUTS)
# the figures per system, in order (None: a blank row; "cost_per_hour": the model's, shown)
FIGURE_ROWS = ("market_revenue_per_request", "market_price_per_mtok", "requests_per_hour",
               None, "revenue_per_hour", "revenue_share_per_hour", "net_revenue_per_hour",
               "cost_per_hour", "profit_per_hour", "profit_margin", None,
               "revenue_per_month", "cost_per_month", "profit_per_month", None,
               "accelerators_per_gw", "revenue_per_gw_year", "profit_per_gw_year", None,
               "break_even_factor", "break_even_price",
               *(f"break_even_price_{k}" for k in PRICE_KINDS), None, "tokens_per_usd")
_RESULTS = {"profit_per_hour", "profit_margin", "profit_per_month", "profit_per_gw_year",
            "break_even_price"}
_CONSTANTS = ("watts_per_gigawatt",)
_LABELS = {"cost_per_hour": "Cost per accelerator-hour (every hour, served or idle)",
           "market_price_input": "Market price per million input tokens",
           "market_price_cached_input": "Market price per million cached input tokens",
           "market_price_output": "Market price per million output tokens"}
_UNITS = {"requests_per_hour": "request/h", "accelerators_per_gw": "accelerator/GW"}
_VALIDATION = {
    "price": {"validate": "decimal", "criteria": ">=", "value": 0,
              "error_message": "a price: must not be negative"},
    "market_cached_share": {"validate": "decimal", "criteria": "between", "minimum": 0,
                            "maximum": 1, "error_message": "a fraction from 0 to 1"},
    "market_revenue_share": {"validate": "decimal", "criteria": "between", "minimum": 0,
                             "maximum": 0.999999999, "error_message": "a fraction from 0 to "
                                                                      "below 1"},
}


@dataclass(frozen=True)
class ProfitBook:
    """Each system's market, in the systems' order."""
    markets: Sequence[MarketPrices]


def profit_values(system: WorkbookSystem, market: MarketPrices) -> dict[str, float]:
    """Every name of the profit's declaration for one system [its declared unit]: the
    engine's values, cached in the sheet."""
    r = system.result
    return calc.profit_figures({**r.scenario.to_inputs(), **r.values}, market)


def _unit(name: str, currency: str) -> str:
    if name in _UNITS:
        return _UNITS[name]
    decl = calc.PROFIT.steps.get(name) or calc.PROFIT.inputs.get(name) \
        or calc.PROFIT.constants.get(name)
    return display_unit(name, decl.unit).replace(SHOWN_CURRENCY, currency)


def _label(name: str) -> str:
    if name in _LABELS:
        return _LABELS[name]
    decl = calc.PROFIT.steps.get(name) or calc.PROFIT.inputs.get(name) \
        or calc.PROFIT.constants.get(name)
    return words(decl.description)


def _format(name: str) -> str:
    decl = calc.PROFIT.steps.get(name) or calc.PROFIT.inputs.get(name) \
        or calc.PROFIT.constants.get(name)
    unit = decl.unit
    if name.endswith("_shown"):
        base = name.removesuffix("_shown")
        return excel_format(base, _unit_of(base))
    return excel_format(name, unit)


def _unit_of(name: str) -> str:
    decl = calc.PROFIT.steps.get(name) or calc.PROFIT.inputs.get(name)
    return decl.unit


class _Layout:
    """How a name reads in system ``i``'s formula: a per-system name (the market's, the
    profit's figures, the model's) by its cell, a constant by its name."""

    def __init__(self, n: int):
        self.n = n

    def resolve(self, name: str, cell: Cell) -> str:
        if name in calc.PROFIT.constants:
            return name
        return system_ref(name, cell.system, self.n)

    def formula(self, name: str, i: int) -> str:
        return "=" + cell_formula(calc.PROFIT.steps[name].tree, self.resolve, Cell(system=i))


def write_profit(ws: Sheet, systems: Sequence[WorkbookSystem], book: ProfitBook,
                 names: Names) -> None:
    """The Profit sheet (see the module docstring): each block names the systems above its
    columns."""
    n = len(systems)
    values = [profit_values(s, m) for s, m in zip(systems, book.markets, strict=True)]
    currency = shown_currency(systems)
    layout = _Layout(n)
    last_col = FIRST_COL + n - 1
    ws.set_widths({1: 46, NAME_COL: 24, UNIT_COL: 13,
                   **{FIRST_COL + i: system_width(systems) for i in range(n)}})
    ws.text(1, 1, "Profit at market prices: revenue, cost and profit per accelerator-hour, "
                  "per month and per GW-year", "title")
    ws.paragraph(2, "Blue cells are each system's market: the price per million tokens of "
                    "each kind (USD; a blended price is every kind's) and the shares. Change "
                    "one, or an input on Inputs, and every figure recomputes.", last_col)
    ws.paragraph(3, "; ".join(calc.RULES) + ".", last_col)
    # -- the market ----------------------------------------------------------------------------
    row = 5
    ws.header(row, system_header(systems, ["the market", "name", "unit"]))
    top = row
    for name in INPUT_ROWS:
        row += 1
        _row_head(ws, row, name, currency)
        for i, v in enumerate(values):
            ws.number(row, FIRST_COL + i, v[name], "input", _format(name))
        rule = _VALIDATION["price" if name.startswith("market_price_") else name]
        ws.ws.data_validation(row - 1, FIRST_COL - 1, row - 1, last_col - 1,
                              {**rule, "error_title": "Out of range"})
        names.row(name, PROFIT_SHEET, row)
    ws.keep_together(top, row)
    # -- each system ---------------------------------------------------------------------------
    row += 2
    top = row
    ws.header(row, system_header(systems, ["each system", "name", "unit"]))
    for name in FIGURE_ROWS:
        row += 1
        if name is None:
            continue
        _row_head(ws, row, name, currency)
        for i, (s, v) in enumerate(zip(systems, values, strict=True)):
            if name == "cost_per_hour":  # the scenario's own figure, shown here
                ws.formula(row, FIRST_COL + i, "=" + system_ref(name, i, n),
                           s.result.values[name], "calc", excel_format(name, "USD/h"))
                continue
            ws.formula(row, FIRST_COL + i, layout.formula(name, i), v[name],
                       "result" if name in _RESULTS else "calc", _format(name))
        if name != "cost_per_hour":
            names.row(name, PROFIT_SHEET, row)
    ws.keep_together(top, row)
    # -- in the currency results are shown in --------------------------------------------------
    if any(s.result.currency != "USD" for s in systems):
        row += 2
        top = row
        ws.header(row, system_header(systems, [f"in {currency}", "name", "unit"]))
        for name in [*calc.SHOWN, "tokens_per_usd"]:
            step = calc.shown(name)
            row += 1
            _row_head(ws, row, step, currency, _label(name) + f", in {currency}")
            for i, v in enumerate(values):
                ws.formula(row, FIRST_COL + i, layout.formula(step, i), v[step], "calc",
                           _format(step))
            names.row(step, PROFIT_SHEET, row)
        ws.keep_together(top, row)
    # -- where each market price comes from ----------------------------------------------------
    row += 2
    top = row
    ws.text(row, 1, "Where each system's market prices come from", "section")
    for s, m in zip(systems, book.markets, strict=True):
        row += 1
        ws.paragraph(row, f"{s.result.name}. {_citation(m)}", last_col, "source")
    ws.keep_together(top, row)
    # -- constants -----------------------------------------------------------------------------
    row += 2
    top = row
    ws.text(row, 1, "Constants of the profit's calculation (the model's are on Inputs)",
            "section")
    for name in _CONSTANTS:
        row += 1
        constant = calc.PROFIT.constants[name]
        _row_head(ws, row, name, currency)
        ws.number(row, FIRST_COL, constant.value, "constant", "0.0E+00")
        names.add(name, PROFIT_SHEET, cell_ref(row, FIRST_COL, absolute=True))
    ws.keep_together(top, row)


def _row_head(ws: Sheet, row: int, name: str, currency: str, label: str | None = None) -> None:
    ws.text(row, 1, label or _label(name), "wrap")
    ws.text(row, NAME_COL, name, "name")
    ws.text(row, UNIT_COL, _unit(name, currency))


def _citation(m: MarketPrices) -> str:
    """Where a market's prices come from, in words: what they are (the entry, its date), each
    price's source, the citation and the rules applied. No figure: the cells above hold them,
    and may be edited."""
    parts: list[str] = [f"Market: {m.label}"]
    if m.key:
        parts.append(f"catalog entry {m.key}")
    if m.basis == "blended":
        parts.append(f"a blended price ({m.sources.get('input')})")
    else:
        parts += [f"{k.replace('_', ' ')} price: {m.sources.get(k)}" for k in PRICE_KINDS]
    if m.source:
        parts.append(f"source: {m.source}")
    if m.note:
        parts.append(f"note: {m.note}")
    if m.converted:
        parts.append(f"typed in {', '.join(m.converted)}, converted to USD at the scenario's "
                     f"stated rates")
    parts += list(m.ruled)
    parts.append("the revenue and cached shares are above, the utilisation on Inputs "
                 "(utilisation)")
    return "; ".join(parts) + "."
