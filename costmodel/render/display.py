"""How figures are shown to people: one set of rules for the web pages, the terminal and the
workbook's number formats, so a figure reads the same everywhere.

A figure's *style* follows from its name and unit: money per million tokens, whole money,
power, a fraction shown as a percentage, a count... Each style holds its rounding as bands of
magnitude (decimals that fit the size of the value) and renders that rounding twice: in Python
(:func:`format_number`) and as an Excel/LibreOffice number format (:func:`excel_format`), so a
cell and a page round alike. Labels and units are given in words for pages and terminals; the
unit symbols stay the engine's (``USD/Mtok``) in JSON.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ..model.units import CURRENCIES

__all__ = ["Style", "style_of", "format_number", "format_quantity", "format_input",
           "display_unit", "in_usd",
           "unit_words", "label", "excel_format", "format_ratio", "format_percent",
           "FRACTIONS", "COUNTS", "NO_VALUE", "NO_BREAK_EVEN", "CAPACITY_BREAK_EVEN",
           "FREE_MARGIN", "NOMINAL_TERM", "present_value_words", "NOT_STATED",
           "OPERATIONAL_ONLY", "EMBODIED_FIGURES", "not_stated", "figure_label"]

# The words every face (terminal, pages, workbooks) says for a figure that is not there, so
# one figure reads alike wherever it is shown.
NO_VALUE = "-"  # no value: a count that does not apply (a per-token offer's accelerators)
NO_BREAK_EVEN = "none up to 100%"  # no utilisation up to 100% brings our cost to the price
CAPACITY_BREAK_EVEN = "n/a (capacity)"  # a capacity price moves with utilisation as ours does
FREE_MARGIN = "not defined (free offer)"  # the margin on a price of 0
# No product carbon footprint given: no embodied figure (never 0), and the totals with
# embodied are the operational emissions alone, labelled so (docs/emissions.md)
NOT_STATED = "not stated"
OPERATIONAL_ONLY = "operational only: no embodied footprint stated"
EMBODIED_FIGURES = frozenset({"embodied_per_mtok", "embodied_per_hour",
                              "embodied_per_accelerator"})
_TOTALS_OPERATIONAL = {"emissions_total_per_mtok": "Operational only, location-based",
                       "emissions_market_total_per_mtok": "Operational only, market-based",
                       "emissions_total_per_hour": "Operational only, location, per hour",
                       "emissions_market_total_per_hour": "Operational only, market, per hour"}
# A term's money, named: the sum of its payments, and their present value at a rate
NOMINAL_TERM = "nominal over the term"


def present_value_words(rate: float) -> str:
    """``present value at 10.0%``: a term's payments discounted at ``rate`` [fraction a
    year]."""
    return f"present value at {format_percent(rate)}"


@dataclass(frozen=True)
class Style:
    """Rounding of one kind of figure.

    ``bands``: (lower bound of |value|, decimals) from the largest bound down; the first bound
    the value reaches applies, the last entry applies below all. ``percent``: the value is a
    fraction shown x100 with ``%``. ``thousands``: group digits by three. ``unit``: the unit
    as shown (``%/year`` for a rate per year kept as a fraction)."""
    name: str
    bands: tuple[tuple[float, int], ...]
    percent: bool = False
    thousands: bool = True
    unit: str | None = None  # None: the figure's own unit

    def decimals(self, value: float) -> int:
        v = abs(value) * (100 if self.percent else 1)
        for bound, places in self.bands:
            if v >= bound:
                return places
        return self.bands[-1][1]


def _s(name: str, *bands: tuple[float, int], **kw) -> Style:
    return Style(name, tuple(bands), **kw)


# Whole money (capex, present values, totals over a term); one band, so a negative total
# (a saving) keeps its sign in every spreadsheet.
MONEY = _s("money", (0, 0))
MONEY_SMALL = _s("money, small", (1, 2), (0.01, 4), (0, 6))  # a request's price
# Money per million tokens and per kWh: small figures keep 4 significant places.
MONEY_PER_MTOK = _s("money per Mtok", (1, 2), (0.01, 4), (0, 6))
MONEY_PER_KWH = _s("money per kWh", (1, 2), (0, 4))
MONEY_PER_HOUR = _s("money per hour", (100, 2), (0, 3))
# Money per power and month (a demand charge, a hosting rate): two decimals, as a tariff
# states it; small rates keep 4 places, as money per kWh does.
MONEY_PER_POWER = _s("money per kW per month", (1, 2), (0, 4))
WHOLE = _s("whole", (100, 0), (0, 1))  # W, token/s, token/kWh: thousands separated
SMALL = _s("small", (100, 1), (1, 2), (0, 4), thousands=False)  # J/token, GB/s/W
PERCENT = _s("percent", (0, 1), percent=True, thousands=False, unit="%")
PERCENT_PER_YEAR = _s("percent per year", (0, 1), percent=True, thousands=False,
                      unit="%/year")
RATIO = _s("ratio", (0, 2), thousands=False, unit="")  # PUE, output weight
COUNT = _s("count", (0, 0), unit="")
YEARS = _s("years", (0, 1), thousands=False)
GENERAL = _s("general", (1000, 0), (1, 2), (0, 4))

# Inputs and steps kept as fractions in the engine and shown as percentages.
FRACTIONS = frozenset({
    "utilisation", "idle_power", "node_psu_efficiency", "rack_power_delivery_efficiency",
    "financing_salvage", "pricing_gross_margin", "load_factor", "implied_margin",
    "break_even_utilisation", "premium_share", "monthly_discount_rate",
    # profit at market prices (costmodel.decisions.profit)
    "market_revenue_share", "market_cached_share", "profit_margin", "break_even_factor",
    # a decision for a demand (costmodel.render.workbook.decision_sheet)
    "decision_load_factor", "decision_input_share", "decision_cached_share",
    "decision_batch_share", "decision_monthly_rate", "decision_margin_share",
    "option_availability", "option_cached_fraction", "option_batch_discount",
    "option_utilisation"})
PER_YEAR_FRACTIONS = frozenset({"financing_cost_of_capital", "financing_maintenance",
                                "capital_recovery_factor", "decision_cost_of_capital"})
COUNTS = frozenset({"node_accelerators", "rack_nodes", "accelerators_per_rack",
                    "concurrency", "electricity_tariff_demand_period_hours",
                    "option_order", "option_flags", "option_offered", "option_accelerators",
                    "option_rank", "decision_best"})
RATIOS = frozenset({"facility_pue", "pricing_output_weight", "growth_factor"})
YEAR_COUNTS = frozenset({"life_years"})
# a request's and an agent's task's money (a task: a few cents to a few dollars)
SMALL_MONEY = frozenset({"price_per_request", "cost_per_request", "cost_per_task",
                         "price_per_task", "cost_per_task_energy", "cost_per_task_capex",
                         "cost_per_task_opex", "cost_per_thousand_tasks",
                         "price_per_thousand_tasks", "market_revenue_per_request"})

_BY_UNIT = {
    "USD": MONEY, "USD/year": MONEY, "USD/month": MONEY,
    "USD/Mtok": MONEY_PER_MTOK, "USD/kWh": MONEY_PER_KWH, "USD/h": MONEY_PER_HOUR,
    "USD/kW/month": MONEY_PER_POWER, "J": WHOLE,
    "W": WHOLE, "kW": SMALL, "token/s": WHOLE, "token/kWh": WHOLE, "token/s/kW": WHOLE,
    "token/h": WHOLE, "token": WHOLE, "Mtok/month": WHOLE, "gCO2e/h": WHOLE,
    "gCO2e/Mtok": WHOLE, "gCO2e/kWh": WHOLE, "token/s/user": WHOLE, "gCO2e": WHOLE,
    "gCO2e/task": SMALL, "tCO2e/year": SMALL,
    "J/token": SMALL, "GB/s/W": SMALL, "TB/s": SMALL, "ms": SMALL, "s": SMALL,
    "year": YEARS, "month": YEARS, "1/year": PERCENT_PER_YEAR,
    # profit at market prices: per GW-year, accelerators and requests, tokens per dollar
    "USD/GW/year": MONEY, "1/GW": WHOLE, "1/h": WHOLE, "token/USD": WHOLE,
}


def style_of(name: str | None, unit: str) -> Style:
    """The style of a figure: by its name where the unit alone says too little (a
    dimensionless fraction, count or ratio), else by its unit."""
    if name in FRACTIONS:
        return PERCENT
    if name in PER_YEAR_FRACTIONS:
        return PERCENT_PER_YEAR
    if name in COUNTS:
        return COUNT
    if name in RATIOS:
        return RATIO
    if name in YEAR_COUNTS:
        return YEARS
    if name in SMALL_MONEY:
        return MONEY_SMALL
    style = _BY_UNIT.get(unit)
    if style is None:  # money in another currency rounds as USD does (EUR/Mtok as USD/Mtok)
        style = _BY_UNIT.get(in_usd(unit), GENERAL)
    return style


_CODE = re.compile(r"(?<![A-Za-z_])[A-Z]{3}(?![A-Za-z_])")


def in_usd(unit: str) -> str:
    """``EUR/Mtok`` -> ``USD/Mtok``: a unit with every ISO 4217 currency code in it written
    as USD (the display rules are stated for USD; money in any currency reads alike)."""
    return _CODE.sub(lambda m: "USD" if m.group(0) in CURRENCIES else m.group(0), unit)


def display_unit(name: str | None, unit: str) -> str:
    """The unit as shown beside a figure: ``%`` for fractions, ``%/year`` for rates per year,
    nothing for counts and ratios, else the engine's unit."""
    style = style_of(name, unit)
    if style.unit is not None:
        return style.unit
    return "" if unit == "dimensionless" else unit


# a figure this large (or an input this far from 1) is shown in scientific notation with
# SIGNIFICANT digits: written out, 4e298 USD/Mtok is 400 characters and widens any page
LONG = 1e15
SIGNIFICANT = 3


def format_number(value: float | None, unit: str = "", name: str | None = None) -> str:
    """The figure rounded by its style, digits grouped by three (``1,234.5``); a missing or
    non-finite value is ``-``. Percent styles multiply by 100 and add no sign. A figure of
    :data:`LONG` or more is ``3.96e+298``."""
    if value is None or not math.isfinite(value):
        return "-"
    style = style_of(name, unit)
    if value == 0 and not style.percent:
        return "0"
    places = style.decimals(value)
    shown = value * 100 if style.percent else value
    if abs(shown) >= LONG:
        return f"{shown:.{SIGNIFICANT}g}"
    return f"{shown:,.{places}f}" if style.thousands else f"{shown:.{places}f}"


_NUMBER_TEXT = re.compile(r"\s*([-+]?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?)(.*)",
                          re.DOTALL)
_PLAIN_DIGITS = 16  # a number written with more characters than this is rewritten short


def format_input(value: Any) -> str:
    """An input as written (``0.1``, ``5 year``, ``1e-300``): a number in six significant
    digits at most (scientific notation far from 1); a quantity's text with a number written
    longer than :data:`_PLAIN_DIGITS` characters (``0.000...1 token/s``) rewritten so, the
    rest of the text as it is."""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) < 10**_PLAIN_DIGITS:
            return str(value)
        digits = str(abs(value)) if value.bit_length() < 10_000 else None
        if digits is None:  # (beyond what str() writes)
            return "a number too long to show"
        mantissa = f"{digits[0]}.{digits[1:6]}".rstrip("0").rstrip(".")
        return f"{'-' if value < 0 else ''}{mantissa}e+{len(digits) - 1}"
    text = str(value)
    m = _NUMBER_TEXT.match(text)
    if m is None or len(m.group(1)) <= _PLAIN_DIGITS:
        return text
    try:
        number = float(m.group(1).replace("_", ""))
    except (ValueError, OverflowError):
        return text
    return f"{number:g}{m.group(2)}"


def format_quantity(value: float | None, unit: str, name: str | None = None) -> str:
    """The figure and its display unit: ``0.0680 USD/Mtok``, ``10.0 %/year``, ``8``."""
    number = format_number(value, unit, name)
    shown = display_unit(name, unit)
    if number == "-" or not shown:
        return number
    return f"{number}{shown}" if shown.startswith("%") else f"{number} {shown}"


def format_percent(value: float | None) -> str:
    """A fraction as a percentage with one decimal: ``0.125`` -> ``12.5%``."""
    return format_quantity(value, "dimensionless", "utilisation")


def format_ratio(value: float | None) -> str:
    """A ratio to a baseline: two decimals up to 100x, ``0.010x`` below 0.1x."""
    if value is None or not math.isfinite(value):
        return "-"
    places = 3 if abs(value) < 0.1 else 2
    return f"{value:,.{places}f}x"


def excel_format(name: str | None, unit: str) -> str:
    """The Excel/LibreOffice number format that rounds like :func:`format_number`: bands
    become conditions on the value (two at most, Excel's limit), percent styles use ``%``."""
    style = style_of(name, unit)

    def code(places: int) -> str:
        whole = "#,##0" if style.thousands else "0"
        return whole + ("." + "0" * places if places else "") + ("%" if style.percent else "")

    bands = list(style.bands)
    if len(bands) == 1:
        return code(bands[0][1])
    scale = 0.01 if style.percent else 1
    # Excel allows two conditions and a default section; drop the middle bands beyond that.
    if len(bands) > 3:
        bands = [bands[0], bands[1], bands[-1]]
    sections = [f"[>={bound * scale:g}]{code(places)}" for bound, places in bands[:-1]]
    return ";".join([*sections, code(bands[-1][1])])


# -- words -----------------------------------------------------------------------------------
_LABELS = {
    "cost_per_mtok_total": "Cost per million tokens",
    "cost_per_mtok_energy": "Energy cost per million tokens",
    "cost_per_mtok_capex": "Capital cost per million tokens",
    "cost_per_mtok_opex": "Operating cost per million tokens",
    "price_per_mtok_total": "Price per million tokens",
    "price_per_mtok_input": "Price per million input tokens",
    "price_per_mtok_output": "Price per million output tokens",
    "power_per_accelerator": "Power per accelerator",
    "throughput": "Throughput per accelerator",
    "throughput_per_kw": "Throughput per kW",
    "tokens_per_kwh": "Tokens per kWh",
    "joules_per_token": "Energy per token",
    "bandwidth_per_watt": "Memory bandwidth per watt",
    "capex_per_accelerator": "Capital cost per accelerator",
    "cost_per_hour": "Cost per accelerator-hour",
    # (short: a label prints in one line of a workbook's label column, in any font)
    "emissions_per_mtok": "Location-based emissions",
    "emissions_market_per_mtok": "Market-based emissions",
    "embodied_per_mtok": "Embodied emissions",
    "emissions_total_per_mtok": "With embodied, location-based",
    "emissions_market_total_per_mtok": "With embodied, market-based",
    "emissions_per_hour": "Location-based per accelerator-hour",
    "emissions_market_per_hour": "Market-based per accelerator-hour",
    "embodied_per_hour": "Embodied per accelerator-hour",
    "embodied_per_accelerator": "Embodied emissions per accelerator",
    "grid_factor_location": "Location-based factor per kWh",
    "grid_factor_market": "Market-based factor per kWh",
    "energy_cost_per_hour": "Electricity per accelerator-hour",
    "capex_per_hour": "Capital per accelerator-hour",
    "opex_per_hour": "Operating cost per accelerator-hour",
    "maintenance_per_hour": "Maintenance per accelerator-hour",
    "hosting_per_hour": "Hosting per accelerator-hour",
    "average_power": "Average power per accelerator",
    "tokens_per_hour": "Tokens per accelerator-hour",
    "price_per_request": "Price per request",
    "cost_per_request": "Cost per request",
    "tokens_per_request": "Tokens per request",
    "cost_per_task": "Cost per task",
    "price_per_task": "Price per task",
    "cost_per_task_energy": "Energy cost per task",
    "cost_per_task_capex": "Capital cost per task",
    "cost_per_task_opex": "Operating cost per task",
    "cost_per_thousand_tasks": "Cost per thousand tasks",
    "price_per_thousand_tasks": "Price per thousand tasks",
    "energy_per_task": "Energy per task",
    "tasks_per_hour": "Tasks per accelerator-hour",
    "utilisation": "Utilisation",
    "idle_power": "Idle power (share of operating power)",
    "financing_cost_of_capital": "Cost of capital",
    "financing_life": "Economic life",
    "financing_salvage": "Salvage value (share of capex)",
    "financing_maintenance": "Maintenance (share of capex a year)",
    "pricing_gross_margin": "Gross margin",
    "electricity_price": "Electricity price",
    "facility_pue": "PUE",
    # inputs (by name or dotted key), as "defaults used" names them
    "node_accelerators": "Accelerators per node",
    "node_host_power": "Host power per node",
    "node_psu_efficiency": "Node power-supply efficiency",
    "node_price": "Node price (besides accelerators)",
    "rack_nodes": "Nodes per rack",
    "rack_switch_power": "Switch power per rack",
    "rack_other_power": "Other power per rack",
    "rack_power_delivery_efficiency": "Rack power-delivery efficiency",
    "rack_price": "Network and rack price",
    "facility_hosting": "Hosting price",
    "pricing_output_weight": "Output-token weight",
    "electricity_carbon_intensity": "Carbon intensity of electricity",
    "electricity_market_carbon_intensity": "Market-based emission factor",
    "accelerator_embodied": "Embodied emissions of an accelerator",
    "node_embodied": "Embodied emissions of a node",
    "accelerator_price": "Accelerator price",
    "accelerator_rated_power": "Rated power (TDP)",
    "accelerator_measured_power": "Measured power",
    "workload_isl": "Input tokens per request (ISL)",
    "workload_osl": "Output tokens per request (OSL)",
}

_UNIT_WORDS = {
    "USD/Mtok": "USD per million tokens", "USD/kWh": "USD per kWh", "USD/h": "USD per hour",
    "USD/year": "USD per year", "USD/month": "USD per month",
    "USD/kW/month": "USD per kW per month", "token/s": "tokens per second",
    "token/s/kW": "tokens per second per kW", "token/kWh": "tokens per kWh",
    "token/h": "tokens per hour", "J/token": "joules per token",
    "GB/s/W": "GB/s per watt", "W": "watts", "kW": "kilowatts", "token": "tokens",
    "gCO2e/Mtok": "g CO2e per million tokens", "gCO2e/h": "g CO2e per hour",
    "gCO2e/kWh": "g CO2e per kWh", "token/s/user": "tokens per second per user",
    "gCO2e": "g CO2e", "gCO2e/task": "g CO2e per task", "tCO2e/year": "t CO2e per year",
    "ms": "milliseconds", "s": "seconds", "year": "years", "month": "months",
    "%/year": "% a year", "Mtok/month": "million tokens per month", "TB/s": "TB/s",
    "J": "joules", "kWh": "kWh", "task/h": "tasks per hour",
}


def not_stated(name: str, embodied_stated: bool) -> bool:
    """Whether figure ``name`` is an embodied one of a scenario that states no footprint
    (shown as :data:`NOT_STATED`, not as a dash for a missing input)."""
    return not embodied_stated and name in EMBODIED_FIGURES


def figure_label(name: str, embodied_stated: bool = True) -> str:
    """:func:`label`, except that a total with embodied emissions of a scenario (or of every
    system shown) that states no product carbon footprint reads as operational only."""
    if not embodied_stated and name in _TOTALS_OPERATIONAL:
        return _TOTALS_OPERATIONAL[name]
    return label(name)


def label(name: str) -> str:
    """A figure's or input's name in words: ``cost_per_mtok_energy`` -> ``Energy cost per
    million tokens``; an input by its dotted key too (``node.psu_efficiency``); names without
    a label read as their words."""
    for key in (name, name.replace(".", "_")):
        if key in _LABELS:
            return _LABELS[key]
    words = name.replace(".", " ").replace("_", " ").replace("mtok", "million tokens")
    return words[:1].upper() + words[1:]


def unit_words(unit: str) -> str:
    """A unit in words for people (``USD/Mtok`` -> ``USD per million tokens``, ``EUR/Mtok``
    -> ``EUR per million tokens``); units without words stay as written."""
    words = _UNIT_WORDS.get(unit)
    if words is None:
        usd = in_usd(unit)
        code = unit.partition("/")[0]
        words = _UNIT_WORDS[usd].replace("USD", code, 1) \
            if usd != unit and usd in _UNIT_WORDS and usd.startswith("USD") else unit
    return words
