"""The Results sheet: the headline figures per system (live, with the engine's values cached),
ratios to the first system, and the cost stack chart."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...model.results import HEADLINE
from ...model.steps import MODEL, SHOWN, shown
from ..display import display_unit, figure_label, label
from .excel_formula import MAY_BE_EMPTY, ratio_formula
from .layout import (
    FIRST_COL,
    HEADER_ROW,
    NAME_COL,
    UNIT_COL,
    WorkbookSystem,
    suffixed,
    system_header,
    system_width,
)
from .sheet import NA, Sheet, rows_for
from .styles import SERIES_COLOURS

__all__ = ["write_results", "RESULT_ROWS", "STACK", "cost_stack_chart", "ratio",
           "write_ratios", "RATIO_FORMAT"]

RESULT_ROWS = ["cost_per_mtok_energy", "cost_per_mtok_capex", "cost_per_mtok_opex",
               "cost_per_mtok_total", "price_per_mtok_total", "price_per_mtok_input",
               "price_per_mtok_output", "power_per_accelerator", "throughput",
               "throughput_per_kw", "tokens_per_kwh", "joules_per_token", "bandwidth_per_watt",
               "emissions_per_mtok", "emissions_market_per_mtok", "embodied_per_mtok",
               "emissions_total_per_mtok", "emissions_market_total_per_mtok", "cost_per_hour",
               "capex_per_accelerator"]
assert set(RESULT_ROWS) == set(HEADLINE)
STACK = (("cost_per_mtok_energy", "energy"), ("cost_per_mtok_capex", "capex"),
         ("cost_per_mtok_opex", "opex"))


_CHART_HEIGHT = 240  # [pixels]
RATIO_FORMAT = '0.00"\u00d7"'  # 0.14x: a ratio to the first system


_MAY_BE_ZERO = frozenset(n for n in RESULT_ROWS if MODEL.steps[n].unit == "gCO2e/Mtok")


def ratio(a: float, b: float) -> Any:
    """``a / b`` as a spreadsheet computes it: an error where it has no value."""
    if math.isnan(a) or math.isnan(b):
        return NA
    return "#DIV/0!" if b == 0 else a / b


def write_ratios(ws: Sheet, row: int, systems: Sequence[WorkbookSystem], names: Sequence[str],
                 *, with_names: bool = True) -> int:
    """Rows of ratios to the first system from ``row`` (live: each system's figure over the
    first's; empty where a figure has none); returns the last row written."""
    stated = any(s.result.embodied_stated for s in systems)  # (totals: operational only?)
    for k, name in enumerate(names):
        r = row + k
        ws.text(r, 1, figure_label(name, stated))
        if with_names:
            ws.text(r, NAME_COL, name, "name")
        ws.text(r, UNIT_COL, "ratio")
        first = systems[0].result.values[name]
        # an emission figure may be 0 (a contract's 0 g/kWh): its
        # ratio is empty there, as the engine's is null, never #DIV/0!
        zero = name in _MAY_BE_ZERO
        empty = name in MAY_BE_EMPTY or zero
        for i, s in enumerate(systems):
            value = ratio(s.result.values[name], first)
            if empty and (value == NA or value == "#DIV/0!"):
                value = math.nan
            text = ratio_formula(name, name, suffixed(name, 1))
            if zero:
                first_ref = suffixed(name, 1)
                text = f'=IF(OR({first_ref}="",{first_ref}=0),"",{text[1:]})'
            ws.formula(r, FIRST_COL + i, text, value, "calc", RATIO_FORMAT, empty=empty)
    return row + len(names) - 1


def cost_stack_chart(ws: Sheet, rows: dict[str, int], n: int, header_row: int,
                     *, width: int = 560, height: int = 300, currency: str = "USD") -> Any:
    """A stacked column chart of energy, capital and operating cost per million tokens, one
    column per system, from ``rows`` (step name -> row on ``ws``, in ``currency``)."""
    chart = ws.book.wb.add_chart({"type": "column", "subtype": "stacked"})
    sheet = ws.title
    last = FIRST_COL - 1 + n - 1
    for name, short in STACK:
        r = rows[name] - 1
        chart.add_series({
            "name": label(name).replace(" per million tokens", ""),
            "categories": [sheet, header_row - 1, FIRST_COL - 1, header_row - 1, last],
            "values": [sheet, r, FIRST_COL - 1, r, last],
            "fill": {"color": SERIES_COLOURS[short]},
            "border": {"color": "#404040", "width": 0.5},
            "gap": 80,
        })
    chart.set_title({"name": "Cost per million tokens", "name_font": {"size": 12}})
    chart.set_y_axis({"name": f"{currency} per million tokens", "num_format": "#,##0.00",
                      "major_gridlines": {"visible": True, "line": {"color": "#D9D9D9"}}})
    chart.set_x_axis({"num_font": {"size": 9}})
    chart.set_legend({"position": "bottom"})
    chart.set_size({"width": width, "height": height})
    return chart


def _in_currency(ws: Sheet, systems: Sequence[WorkbookSystem], last: int) -> int:
    """Where a system's results are shown in another currency: the money figures in it (each
    the USD figure times money_rate on Inputs, live); returns the last row written."""
    currencies = [s.result.currency for s in systems]
    if all(c == "USD" for c in currencies):
        return last
    top = last + 2
    ws.text(top, 1, "In each system's currency (the USD figure x money_rate on Inputs)",
            "section")
    ws.header(top + 1, system_header(systems, ["figure", "name", "unit"]))
    ws.text(top + 2, 1, "Currency")
    for i, code in enumerate(currencies):
        ws.text(top + 2, FIRST_COL + i, code)
    one = currencies[0] if len(set(currencies)) == 1 else "currency"
    for k, name in enumerate(SHOWN, top + 3):
        unit = MODEL.steps[name].unit
        ws.text(k, 1, label(name))
        ws.text(k, NAME_COL, shown(name), "name")
        ws.text(k, UNIT_COL, display_unit(name, unit).replace("USD", one))
        for i, s in enumerate(systems):
            ws.figure(k, FIRST_COL + i, s.result.values[shown(name)], name, unit, "result",
                      formula=f"={shown(name)}")
    return top + 2 + len(SHOWN)


def write_results(ws: Sheet, systems: Sequence[WorkbookSystem]) -> None:
    n = len(systems)
    ws.text(1, 1, "Results: cost and price per million tokens", "title")
    ws.paragraph(2, "Per token of the operating point's token kind; see Cover for what each "
                    "figure divides by. A dash: no value (an input it needs is not given).",
                 FIRST_COL + n - 1)
    ws.header(HEADER_ROW, system_header(systems, ["figure", "name", "unit"]))
    rows: dict[str, int] = {}
    stated = any(s.result.embodied_stated for s in systems)  # (a row's label is shared)
    for row, name in enumerate(RESULT_ROWS, HEADER_ROW + 1):
        step = MODEL.steps[name]
        rows[name] = row
        ws.text(row, 1, figure_label(name, stated))
        ws.text(row, NAME_COL, name, "name")
        ws.text(row, UNIT_COL, display_unit(name, step.unit))
        for i, s in enumerate(systems):
            ws.figure(row, FIRST_COL + i, s.result.values[name], name, step.unit, "result",
                      formula=f"={name}", empty=name in MAY_BE_EMPTY)
    last = HEADER_ROW + len(RESULT_ROWS)
    ws.keep_together(1, last)
    if n > 1:
        top = last + 2
        ws.text(top, 1, f"Ratios to system 1, {systems[0].result.name}", "section")
        ws.header(top + 1, system_header(systems, ["figure", "name", "unit"]))
        last = write_ratios(ws, top + 2, systems, RESULT_ROWS)
        ws.keep_together(top, last)
    top = last + 2
    last = _in_currency(ws, systems, last)
    if last >= top:
        ws.keep_together(top, last)
    chart = cost_stack_chart(ws, rows, n, HEADER_ROW, width=640, height=_CHART_HEIGHT)
    ws.ws.insert_chart(last + 1, 0, chart, {"x_offset": 4, "y_offset": 4})
    ws.keep_together(last + 2, last + 1 + rows_for(_CHART_HEIGHT + 4))  # never cut in two
    ws.set_widths({1: 34, NAME_COL: 22, UNIT_COL: 11,
                   **{FIRST_COL + i: system_width(systems) for i in range(n)}})
    ws.ws.freeze_panes(HEADER_ROW, FIRST_COL - 1)
    ws.last_row = max(ws.last_row, last + 1 + rows_for(_CHART_HEIGHT + 4))  # the chart
