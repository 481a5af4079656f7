"""A scenario, or a comparison of several, as an .xlsx model with live formulas.

Layout (every sheet keeps system *i* in the same column, D + i - 1):

- **Cover**: what was priced, when, by which engine, and the disclosure; the switches that can
  change in the workbook (boundary, basis, token kind, electricity price...) are formulas
  that follow the Inputs sheet.
- **Inputs**: the named constants, then every declared input, one row each, with its unit and
  a value per system; input cells are styled as inputs and validated (lists for categorical
  inputs, ranges for fractions and counts).
- **Calculations**: every declared step, one row each, the same formula along the row.
- **Results**: the cost stack per million tokens with a chart, prices, efficiency figures and,
  for a comparison, ratios to the first system.
- **Curves** (when an operating point was read off a curve): raw points, the frontier, the
  chosen point and a scatter chart.
- **Sources**: the provenance of every input, the defaults used and the conventions.
- **Lists** and **Meta** (hidden): the levels of categorical inputs, and what the engine was
  given, so an edited workbook can be read back and compared.

Names: every input, constant and step is a defined name spelled as in the scenario file (dots
as underscores) and the JSON result. A name spans its row's system columns, so a formula in
system *i*'s column reads system *i*'s value (the spreadsheet's implicit intersection) and
the same formula text serves every column. In a comparison each system's cells also carry
single-cell names with the suffix ``_s1``, ``_s2``, ... (``cost_per_mtok_total_s2``).
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from openpyxl import Workbook
from openpyxl.cell.cell import Cell
from openpyxl.chart import BarChart, Reference, ScatterChart, Series
from openpyxl.utils import get_column_letter, quote_sheetname
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.worksheet import Worksheet

from .. import __version__
from ..inputs import quantity_field
from ..model import MODEL
from ..results import ALLOCATION_RULE, CONVENTIONS, HEADLINE, Result
from ..sources.curve_point import CurveReading
from . import styles
from .excel_formula import levels_name, to_formula

__all__ = ["WorkbookSystem", "build_workbook", "save_workbook", "FIRST_COL", "SHEETS",
           "META_FORMAT", "suffixed"]

FIRST_COL = 4  # column D: the first system
SHEETS = ("Cover", "Inputs", "Calculations", "Results", "Sources", "Lists", "Meta")
META_FORMAT = "costmodel-workbook/1"
_CHUNK = 30000  # characters of JSON per Meta cell (a cell holds at most 32,767)
_FRONTIER_SAMPLES = 40
COUNT_INPUTS = {"node_accelerators", "rack_nodes"}


@dataclass
class WorkbookSystem:
    """One priced system: its result and, when read off a curve, the reading."""
    result: Result
    curve: CurveReading | None = None


def suffixed(name: str, index: int) -> str:
    """The single-cell name of system ``index`` (1-based) in a comparison."""
    return f"{name}_s{index}"


def text(cell: Cell, value: Any) -> Cell:
    """Write ``value`` as plain text: user-given text never becomes a formula."""
    cell.value = None if value is None else str(value)
    if cell.value is not None:
        cell.data_type = "s"
    return cell


class _Names:
    def __init__(self, wb: Workbook, n_systems: int):
        self.wb, self.n = wb, n_systems

    def add(self, name: str, sheet: str, ref: str) -> None:
        self.wb.defined_names[name] = DefinedName(name, attr_text=f"{quote_sheetname(sheet)}!{ref}")

    def row(self, name: str, sheet: str, row: int) -> None:
        """``name`` spans the system columns of ``row``; with several systems each cell also
        gets its suffixed single-cell name."""
        first, last = get_column_letter(FIRST_COL), get_column_letter(FIRST_COL + self.n - 1)
        self.add(name, sheet, f"${first}${row}" if self.n == 1 else
                 f"${first}${row}:${last}${row}")
        if self.n > 1:
            for i in range(self.n):
                self.add(suffixed(name, i + 1), sheet,
                         f"${get_column_letter(FIRST_COL + i)}${row}")


def build_workbook(systems: Sequence[WorkbookSystem], *, title: str | None = None,
                   generated: datetime | None = None,
                   quotes: Sequence[tuple[Any, Sequence[Any]]] = (),
                   sensitivity: Sequence[Any] = ()) -> Workbook:
    """The workbook for one or more priced systems (see the module docstring).

    ``quotes``: (quote, its comparison with each system) pairs for a Quotes sheet;
    ``sensitivity``: tornado, grid and Monte Carlo results for a Sensitivity sheet.
    """
    if not systems:
        raise ValueError("nothing to export")
    generated = generated or datetime.now(UTC)
    wb = Workbook()
    wb.calculation.fullCalcOnLoad = True  # Excel recomputes on open: no stale figures
    names = _Names(wb, len(systems))
    cover = wb.active
    cover.title = "Cover"
    inputs = wb.create_sheet("Inputs")
    calcs = wb.create_sheet("Calculations")
    results = wb.create_sheet("Results")
    curves = [s for s in systems if s.curve is not None]
    curve_sheet = wb.create_sheet("Curves") if curves else None
    sources = wb.create_sheet("Sources")
    lists = wb.create_sheet("Lists")
    meta = wb.create_sheet("Meta")

    _lists(lists, names)
    _inputs(inputs, systems, names)
    _calculations(calcs, systems, names)
    _results(results, systems, names)
    if curve_sheet is not None:
        _curves(curve_sheet, systems)
    if quotes:
        _quotes(wb.create_sheet("Quotes", index=wb.sheetnames.index("Sources")), systems,
                quotes)
    if sensitivity:
        from .sensitivity_sheet import write_sensitivity
        write_sensitivity(wb.create_sheet("Sensitivity", index=wb.sheetnames.index("Sources")),
                          sensitivity)
    _sources(sources, systems)
    _cover(cover, systems, title, generated)
    _meta(meta, systems, generated)
    lists.sheet_state = "hidden"
    meta.sheet_state = "hidden"
    for ws in wb.worksheets:  # printed, each sheet is one page wide, landscape
        ws.page_setup.orientation = "landscape"
        ws.sheet_properties.pageSetUpPr.fitToPage = True
        ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0
    return wb


def save_workbook(wb: Workbook, path: str | Path) -> Path:
    """Save atomically: a half-written file never replaces a good one."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        wb.save(tmp)
        tmp.replace(p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


# ---- sheets ----------------------------------------------------------------------------------

def _system_header(ws: Worksheet, row: int, systems: Sequence[WorkbookSystem],
                   first: Sequence[str], extra: Sequence[str] = ()) -> None:
    labels = [*first, *(s.result.name for s in systems), *extra]
    for col, label in enumerate(labels, 1):
        styles.header(text(ws.cell(row, col), label))


def _widths(ws: Worksheet, widths: dict[str, float]) -> None:
    for col, w in widths.items():
        ws.column_dimensions[col].width = w


def _lists(ws: Worksheet, names: _Names) -> None:
    text(ws.cell(1, 1), "Levels of the categorical inputs (named <input>_levels)").font = \
        styles.SECTION
    for col, enum in enumerate(MODEL.enums.values(), 1):
        styles.header(text(ws.cell(2, col), enum.name))
        for r, level in enumerate(enum.levels, 3):
            text(ws.cell(r, col), level)
        letter = get_column_letter(col)
        names.add(levels_name(enum.name), "Lists",
                  f"${letter}$3:${letter}${2 + len(enum.levels)}")


def _input_validation(ws: Worksheet) -> dict[str, DataValidation]:
    rules = {
        "fraction": DataValidation(type="decimal", operator="between", formula1="0",
                                   formula2="1", error="a fraction from 0 to 1",
                                   errorTitle="Out of range"),
        "positive": DataValidation(type="decimal", operator="greaterThan", formula1="0",
                                   error="must be greater than 0", errorTitle="Out of range"),
        "non_negative": DataValidation(type="decimal", operator="greaterThanOrEqual",
                                       formula1="0", error="must not be negative",
                                       errorTitle="Out of range"),
        "count": DataValidation(type="whole", operator="greaterThanOrEqual", formula1="1",
                                error="a whole number, at least 1", errorTitle="Out of range"),
        "pue": DataValidation(type="decimal", operator="greaterThanOrEqual", formula1="1",
                              error="PUE is at least 1", errorTitle="Out of range"),
    }
    for dv in rules.values():
        dv.showErrorMessage = True
        ws.add_data_validation(dv)
    return rules


def _rule_for(name: str, key: str) -> str:
    if name in COUNT_INPUTS:
        return "count"
    meta = quantity_field(key)
    if meta is None:
        return "non_negative"
    if meta.minimum is not None:
        return "pue"
    if meta.unit == "dimensionless" and meta.maximum is not None:
        return "fraction"
    return "positive" if meta.positive else "non_negative"


def _input_value(values: dict[str, float | int], name: str) -> Any:
    """A cell value for an input from :meth:`Scenario.to_inputs` magnitudes."""
    if name in MODEL.enums:
        return MODEL.enums[name].levels[int(values[name])]
    value = values[name]
    if isinstance(value, float) and math.isnan(value):
        return "#N/A"  # absent: formulas that use it give #N/A, as the engine gives null
    return int(value) if name in COUNT_INPUTS else value


def _key_of(name: str) -> str:
    return MODEL.inputs[name].key if name in MODEL.inputs else MODEL.enums[name].key


def _inputs(ws: Worksheet, systems: Sequence[WorkbookSystem], names: _Names) -> None:
    n = len(systems)
    text(ws.cell(1, 1), "Inputs: change the blue cells and every figure recomputes").font = \
        styles.TITLE
    text(ws.cell(2, 1), "Values are in the unit shown; the formulas assume that unit. "
                        "Names are the scenario keys with dots as underscores.").font = \
        styles.NOTE_FONT
    _system_header(ws, 4, systems, ["name", "description", "unit"],
                   [f"source: {s.result.name}" for s in systems])
    row = 5
    text(ws.cell(row, 1), "Constants").font = styles.SECTION
    for c in MODEL.constants.values():
        row += 1
        text(ws.cell(row, 1), c.name)
        text(ws.cell(row, 2), c.description)
        text(ws.cell(row, 3), c.unit)
        styles.constant_cell(ws.cell(row, FIRST_COL, c.value))
        names.add(c.name, "Inputs", f"${get_column_letter(FIRST_COL)}${row}")
    row += 2
    text(ws.cell(row, 1), "Inputs").font = styles.SECTION
    rules = _input_validation(ws)
    values = [s.result.scenario.to_inputs() for s in systems]
    for name in [*MODEL.inputs, *MODEL.enums]:
        row += 1
        key = _key_of(name)
        is_enum = name in MODEL.enums
        decl = MODEL.enums[name] if is_enum else MODEL.inputs[name]
        text(ws.cell(row, 1), name)
        text(ws.cell(row, 2), decl.description + (f" ({', '.join(decl.levels)})"
                                                   if is_enum else ""))
        text(ws.cell(row, 3), "" if is_enum else decl.unit)
        for i, s in enumerate(systems):
            cell = ws.cell(row, FIRST_COL + i)
            value = _input_value(values[i], name)
            if is_enum:
                text(cell, value)
            else:
                cell.value = value
            styles.input_cell(cell)
            source = text(ws.cell(row, FIRST_COL + n + i), s.result.provenance.get(key, ""))
            source.font, source.alignment = styles.NOTE_FONT, styles.WRAP
        span = (f"{get_column_letter(FIRST_COL)}{row}:"
                f"{get_column_letter(FIRST_COL + n - 1)}{row}")
        if is_enum:
            dv = DataValidation(type="list", formula1=levels_name(name),
                                allow_blank=False, showErrorMessage=True,
                                error=f"one of {', '.join(decl.levels)}",
                                errorTitle="Not a choice")
            ws.add_data_validation(dv)
            dv.add(span)
        else:
            rules[_rule_for(name, key)].add(span)
        names.row(name, "Inputs", row)
    _widths(ws, {"A": 34, "B": 60, "C": 14,
                 **{get_column_letter(FIRST_COL + i): 16 for i in range(n)},
                 **{get_column_letter(FIRST_COL + n + i): 60 for i in range(n)}})
    _fit_rows(ws)
    ws.freeze_panes = ws.cell(5, FIRST_COL)


def _calculations(ws: Worksheet, systems: Sequence[WorkbookSystem], names: _Names) -> None:
    n = len(systems)
    text(ws.cell(1, 1), "Calculations: the declared calculation, one step per row").font = \
        styles.TITLE
    text(ws.cell(2, 1), "Each row is the same formula for every system; the last column is "
                        "the engine's declaration of the step.").font = styles.NOTE_FONT
    _system_header(ws, 4, systems, ["name", "description", "unit"], ["declared as"])
    for row, step in enumerate(MODEL.steps.values(), 5):
        text(ws.cell(row, 1), step.name)
        text(ws.cell(row, 2), step.description)
        text(ws.cell(row, 3), step.unit)
        formula = "=" + to_formula(step.tree)
        for i in range(n):
            styles.calc_cell(ws.cell(row, FIRST_COL + i, formula))
        text(ws.cell(row, FIRST_COL + n), step.expression).font = styles.NOTE_FONT
        names.row(step.name, "Calculations", row)
    _widths(ws, {"A": 30, "B": 60, "C": 14, **{get_column_letter(FIRST_COL + i): 16
                                              for i in range(n)}})
    ws.freeze_panes = ws.cell(5, FIRST_COL)


RESULT_ROWS = ["cost_per_mtok_energy", "cost_per_mtok_capex", "cost_per_mtok_opex",
               "cost_per_mtok_total", "price_per_mtok_total", "price_per_mtok_input",
               "price_per_mtok_output", "power_per_accelerator", "throughput",
               "throughput_per_kw", "tokens_per_kwh", "joules_per_token", "bandwidth_per_watt",
               "emissions_per_mtok", "cost_per_hour", "capex_per_accelerator"]
assert set(RESULT_ROWS) == set(HEADLINE)


def _results(ws: Worksheet, systems: Sequence[WorkbookSystem], names: _Names) -> None:
    n = len(systems)
    text(ws.cell(1, 1), "Results: cost and price per million tokens").font = styles.TITLE
    text(ws.cell(2, 1), "Per token of the operating point's token kind; see Cover for what "
                        "each figure divides by.").font = styles.NOTE_FONT
    _system_header(ws, 4, systems, ["figure", "description", "unit"])
    for row, name in enumerate(RESULT_ROWS, 5):
        step = MODEL.steps[name]
        text(ws.cell(row, 1), name)
        text(ws.cell(row, 2), step.description)
        text(ws.cell(row, 3), step.unit)
        for i in range(n):
            styles.result_cell(ws.cell(row, FIRST_COL + i, f"={name}"))
    last = 4 + len(RESULT_ROWS)
    if n > 1:
        top = last + 2
        text(ws.cell(top, 1), f"Ratios to {systems[0].result.name}").font = styles.SECTION
        _system_header(ws, top + 1, systems, ["figure", "", ""])
        for k, name in enumerate(RESULT_ROWS):
            row = top + 2 + k
            text(ws.cell(row, 1), name)
            text(ws.cell(row, 3), "ratio")
            for i in range(n):
                styles.calc_cell(ws.cell(row, FIRST_COL + i,
                                         f"={name}/{suffixed(name, 1)}"))
        last = top + 1 + len(RESULT_ROWS)
    chart = BarChart()
    chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
    chart.title = "Cost per million tokens"
    chart.y_axis.title = "USD/Mtok"
    for row in range(5, 8):  # energy, capex, opex
        series = Series(Reference(ws, min_col=FIRST_COL, max_col=FIRST_COL + n - 1,
                                  min_row=row, max_row=row), title=RESULT_ROWS[row - 5]
                        .replace("cost_per_mtok_", ""))
        chart.series.append(series)
    chart.set_categories(Reference(ws, min_col=FIRST_COL, max_col=FIRST_COL + n - 1,
                                   min_row=4, max_row=4))
    chart.height, chart.width = 8, 16
    ws.add_chart(chart, f"A{last + 3}")
    _widths(ws, {"A": 26, "B": 50, "C": 12, **{get_column_letter(FIRST_COL + i): 18
                                              for i in range(n)}})


def _curves(ws: Worksheet, systems: Sequence[WorkbookSystem]) -> None:
    text(ws.cell(1, 1), "Curves: measured points, Pareto frontier and the chosen operating "
                        "point").font = styles.TITLE
    text(ws.cell(2, 1), "Data, not formulas: the chosen point's throughput is an input on the "
                        "Inputs sheet. Frontier read by PCHIP (monotone cubic).").font = \
        styles.NOTE_FONT
    row = 4
    for s in systems:
        if s.curve is None:
            continue
        c, sel, kind = s.curve.curve, s.curve.selection, s.curve.kind
        text(ws.cell(row, 1), f"{s.result.name}: curve {c.key.id}").font = styles.SECTION
        text(ws.cell(row + 1, 1), f"from {s.curve.origin}; {c.source}").font = styles.NOTE_FONT
        text(ws.cell(row + 2, 1), f"chosen: {sel.description}").font = styles.NOTE_FONT
        head = row + 3
        for col, label in enumerate(["concurrency", "interactivity [token/s/user]",
                                     f"{kind} throughput [token/s]", "on frontier",
                                     "ttft [s]", "e2e latency [s]", "power [W]"], 1):
            styles.header(text(ws.cell(head, col), label))
        try:
            frontier = c.frontier(kind)
            on = set(frontier.indices.tolist())
        except ValueError:
            frontier, on = None, set()
        y = c.throughput_of(kind)
        for k in range(len(c)):
            r = head + 1 + k
            for col, v in enumerate([c.concurrency[k], c.interactivity[k], y[k]], 1):
                ws.cell(r, col, None if np.isnan(v) else float(v))
            text(ws.cell(r, 4), "yes" if k in on else "no")
            for col, v in enumerate([c.ttft[k], c.e2e_latency[k], c.power[k]], 5):
                ws.cell(r, col, None if np.isnan(v) else float(v))
        points_end = head + len(c)
        # frontier sampled along the interpolation, and the chosen point, beside the points
        fcol = 9
        for col, label in enumerate(["frontier interactivity", "frontier throughput (PCHIP)",
                                     "chosen interactivity", "chosen throughput"], fcol):
            styles.header(text(ws.cell(head, col), label))
        samples = 0
        if frontier is not None and len(frontier.interactivity) >= 2:
            xs = np.linspace(frontier.interactivity[0], frontier.interactivity[-1],
                             _FRONTIER_SAMPLES)
            ys = frontier.read_many(xs)[2]
            for k, (x, v) in enumerate(zip(xs, ys, strict=True)):
                ws.cell(head + 1 + k, fcol, float(x))
                ws.cell(head + 1 + k, fcol + 1, float(v))
            samples = len(xs)
        if sel.interactivity is not None:
            ws.cell(head + 1, fcol + 2, float(sel.interactivity))
            ws.cell(head + 1, fcol + 3, float(sel.throughput))
        if frontier is not None:
            chart = ScatterChart()
            chart.title = c.key.id
            chart.style = 13
            chart.x_axis.title = "interactivity [token/s/user]"
            chart.y_axis.title = "throughput per accelerator [token/s]"
            pts = Series(Reference(ws, min_col=3, min_row=head + 1, max_row=points_end),
                         Reference(ws, min_col=2, min_row=head + 1, max_row=points_end),
                         title="measured")
            pts.marker.symbol = "circle"
            pts.graphicalProperties.line.noFill = True
            chart.series.append(pts)
            if samples:
                line = Series(Reference(ws, min_col=fcol + 1, min_row=head + 1,
                                        max_row=head + samples),
                              Reference(ws, min_col=fcol, min_row=head + 1,
                                        max_row=head + samples), title="Pareto frontier")
                line.marker.symbol = "none"
                chart.series.append(line)
            if sel.interactivity is not None:
                star = Series(Reference(ws, min_col=fcol + 3, min_row=head + 1),
                              Reference(ws, min_col=fcol + 2, min_row=head + 1),
                              title="chosen")
                star.marker.symbol = "diamond"
                star.marker.size = 10
                star.graphicalProperties.line.noFill = True
                chart.series.append(star)
            chart.height, chart.width = 8, 16
            ws.add_chart(chart, f"O{row}")
        row = max(points_end, head + samples) + 4
        row = max(row, head + 20)  # leave room for the chart
    _widths(ws, {"A": 14, "B": 18, "C": 20, "D": 12, "I": 18, "J": 22, "K": 18, "L": 18})


def _quotes(ws: Worksheet, systems: Sequence[WorkbookSystem],
            quotes: Sequence[tuple[Any, Sequence[Any]]]) -> None:
    """Each quote's price per million tokens (an input) and, per system, the margin it
    implies on our cost: live, so a changed input or price moves every margin."""
    n = len(systems)
    text(ws.cell(1, 1), "Quotes: price per million tokens at the operating point, and the "
                        "margin it implies on our own cost").font = styles.TITLE
    text(ws.cell(2, 1), "Implied margin = 1 - our cost per Mtok / the quote's price. A quote "
                        "with no operating point in writing is flagged.").font = \
        styles.NOTE_FONT
    _system_header(ws, 4, systems, ["quote", "vendor, form: quoted price", "quoted price"],
                   ["flags"])
    for row, (quote, comparisons) in enumerate(quotes, 5):
        text(ws.cell(row, 1), quote.name)
        if quote.form == "per_mtok":
            # blended over the request (ISL input + OSL output tokens) per counted token
            text(ws.cell(row, 2), f"{quote.vendor}, per_mtok: USD/Mtok")
            ws.cell(row, 3, comparisons[0].price_per_mtok)
            price = f"$C{row}"
        else:
            text(ws.cell(row, 2), f"{quote.vendor}, {quote.form}: USD per accelerator-hour")
            ws.cell(row, 3, _hourly(quote))
            price = None
        styles.input_cell(ws.cell(row, 3))
        for i in range(n):
            cost, tokens = (("cost_per_mtok_total", "tokens_per_hour") if n == 1 else
                            (suffixed("cost_per_mtok_total", i + 1),
                             suffixed("tokens_per_hour", i + 1)))
            per_mtok = price or f"($C{row}/{tokens}*tokens_per_mtok)"
            cell = ws.cell(row, FIRST_COL + i, f"=1-{cost}/{per_mtok}")
            cell.number_format = "0.0%"
            styles.result_cell(cell)
        flags = sorted({f for c in comparisons for f in c.flags})
        text(ws.cell(row, FIRST_COL + n), "; ".join(flags) or "none").alignment = styles.WRAP
    _widths(ws, {"A": 24, "B": 48, "C": 16, **{get_column_letter(FIRST_COL + i): 18
                                              for i in range(n)}})


def _hourly(quote: Any) -> float:
    """A capacity quote's price per accelerator-hour [USD/h]."""
    from ..quotes import HOURS_PER_MONTH
    if quote.form == "per_accelerator_hour":
        return quote.hourly_price
    return quote.monthly_price / quote.accelerators / HOURS_PER_MONTH


def _sources(ws: Worksheet, systems: Sequence[WorkbookSystem]) -> None:
    text(ws.cell(1, 1), "Sources: where every input came from").font = styles.TITLE
    for col, label in enumerate(["system", "input", "source"], 1):
        styles.header(text(ws.cell(3, col), label))
    row = 3
    for s in systems:
        for key, source in sorted(s.result.provenance.items()):
            row += 1
            text(ws.cell(row, 1), s.result.name)
            text(ws.cell(row, 2), key)
            text(ws.cell(row, 3), source).alignment = styles.WRAP
    row += 2
    text(ws.cell(row, 1), "Defaults used (illustrative assumptions unless a source is named)") \
        .font = styles.SECTION
    for s in systems:
        row += 1
        text(ws.cell(row, 1), s.result.name)
        text(ws.cell(row, 3), ", ".join(s.result.defaults_used) or "none").alignment = \
            styles.WRAP
    row += 2
    text(ws.cell(row, 1), "Conventions").font = styles.SECTION
    for line in [*CONVENTIONS, f"input/output prices: {ALLOCATION_RULE}"]:
        row += 1
        text(ws.cell(row, 1), line)
    _widths(ws, {"A": 30, "B": 34, "C": 120})
    _fit_rows(ws)


def _cover(ws: Worksheet, systems: Sequence[WorkbookSystem], title: str | None,
           generated: datetime) -> None:
    n = len(systems)
    text(ws.cell(1, 1), title or "costmodel: cost and price per million tokens").font = \
        styles.TITLE
    facts = [("generated", generated.isoformat(timespec="seconds")),
             ("engine", f"costmodel {__version__}"),
             ("systems", str(n)),
             ("how to use", "Change the blue cells on Inputs (units as shown); every figure "
                            "recomputes. Boundary, basis and token kind are lists.")]
    for row, (k, v) in enumerate(facts, 3):
        text(ws.cell(row, 1), k).font = styles.RESULT_FONT
        text(ws.cell(row, 2), v)
    top = 3 + len(facts) + 1
    text(ws.cell(top, 1), "Disclosure: what every figure divides by").font = styles.SECTION
    _system_header(ws, top + 1, systems, ["item", "", "unit"])
    # live items are formulas over the input names; the rest is what was priced
    live = [("power boundary", "=power_boundary", ""),
            ("power basis", "=power_basis", ""),
            ("power per accelerator", "=power_per_accelerator", "W"),
            ("token kind", "=operating_point_token_kind", ""),
            ("throughput per accelerator", "=throughput", "token/s"),
            ("electricity price", "=electricity_price", "USD/kWh"),
            ("utilisation", "=utilisation", ""),
            ("cost basis", "=accelerator_cost_basis", ""),
            ("rack power basis", "=accelerator_rack_power_basis", ""),
            ("economic life", "=financing_life", "year"),
            ("cost of capital", "=financing_cost_of_capital", "1/year"),
            ("cost per million tokens", "=cost_per_mtok_total", "USD/Mtok")]
    row = top + 1
    for label, formula, unit in live:
        row += 1
        text(ws.cell(row, 1), label)
        text(ws.cell(row, 3), unit)
        for i in range(n):
            styles.result_cell(ws.cell(row, FIRST_COL + i, formula))
    fixed = [("operating point", lambda d: d["operating_point"]["chosen"]),
             ("interactivity", lambda d: _q(d["operating_point"]["interactivity"])),
             ("time between tokens", lambda d: _q(d["operating_point"]["tbt"])),
             ("workload", lambda d: _workload(d["workload"])),
             ("electricity source", lambda d: d["electricity"]["source"] or "no source given"),
             ("electricity date", lambda d: d["electricity"]["date"] or "undated"),
             ("reference rate", lambda d: _rate(d["reference_rate"])),
             ("defaults used", lambda d: ", ".join(d["defaults_used"]) or "none")]
    disclosures = [s.result.disclosure() for s in systems]
    for label, get in fixed:
        row += 1
        text(ws.cell(row, 1), label)
        for i, d in enumerate(disclosures):
            text(ws.cell(row, FIRST_COL + i), get(d)).alignment = styles.WRAP
    _widths(ws, {"A": 26, "B": 3, "C": 10, **{get_column_letter(FIRST_COL + i): 40
                                              for i in range(n)}})
    _fit_rows(ws, first=top + 1)


def _fit_rows(ws: Worksheet, first: int = 1) -> None:
    """Tall enough rows for wrapped text: spreadsheets do not grow rows that a file sets up
    (LibreOffice prints them overlapping otherwise). About 1.1 characters a width unit."""
    for row in ws.iter_rows(min_row=first):
        lines = 1
        for c in row:
            if isinstance(c.value, str) and c.alignment is not None and c.alignment.wrap_text:
                width = ws.column_dimensions[c.column_letter].width or 10
                lines = max(lines, -(-len(c.value) // max(1, int(width * 1.1))))
        if lines > 1:
            ws.row_dimensions[row[0].row].height = 15 * lines


def _q(d: dict | None) -> str:
    if not d or d.get("value") is None:
        return "not stated"
    return f"{d['value']:.6g} {d['unit']}"


def _rate(r: dict | None) -> str:
    """The reference rate a system was priced from, as the disclosure states it."""
    if r is None:
        return "none"
    parts = [f"{r['key']} (version {r['version']}): {_q(r['hourly_price'])}, all-in power "
             f"{_q(r['all_in_power'])}; {r['status']}", r["all_in"],
             f"origin: {r['origin'] or 'no source given'}",
             *(f"departs from the rate: {x}" for x in r["departures"])]
    return "; ".join(parts)


def _workload(w: dict) -> str:
    parts = [w["model"], f"ISL {w['isl']['value']:g} / OSL {w['osl']['value']:g}",
             w["precision"], w["framework"],
             f"speculative decoding {w['speculative_decoding']}"
             if w["speculative_decoding"] else None]
    return ", ".join(p for p in parts if p)


def _meta(ws: Worksheet, systems: Sequence[WorkbookSystem], generated: datetime) -> None:
    """What the engine was given, per system, for reading an edited workbook back."""
    text(ws.cell(1, 1), META_FORMAT)
    text(ws.cell(1, 2), generated.isoformat(timespec="seconds"))
    text(ws.cell(1, 3), __version__)
    for i, s in enumerate(systems):
        payload = json.dumps({"scenario": s.result.scenario.to_data(),
                              "provenance": s.result.provenance,
                              "defaults_used": s.result.defaults_used},
                             ensure_ascii=False, allow_nan=False)
        chunks = [payload[k:k + _CHUNK] for k in range(0, len(payload), _CHUNK)]
        text(ws.cell(2 + i, 1), s.result.name)
        for j, chunk in enumerate(chunks):
            text(ws.cell(2 + i, 2 + j), chunk)
