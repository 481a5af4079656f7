"""The Sensitivity sheet: tornado, grid and Monte Carlo results as data with charts.

These are the engine's results at export (a million draws do not belong in cell formulas);
the sheet says so, and the Inputs sheet stays the live model.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openpyxl.chart import BarChart, Reference, Series
from openpyxl.formatting.rule import ColorScaleRule
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from ..sensitivity import Grid, MonteCarlo, Tornado
from . import styles
from .export import text

__all__ = ["write_sensitivity"]


def write_sensitivity(ws: Worksheet, analyses: Sequence[Any]) -> None:
    text(ws.cell(1, 1), "Sensitivity and uncertainty").font = styles.TITLE
    text(ws.cell(2, 1), "Results computed by the engine at export (not formulas): change an "
                        "input on the Inputs sheet and re-run the analysis to update them."
         ).font = styles.NOTE_FONT
    row = 4
    for analysis in analyses:
        if isinstance(analysis, Tornado):
            row = _tornado(ws, analysis, row)
        elif isinstance(analysis, Grid):
            row = _grid(ws, analysis, row)
        elif isinstance(analysis, MonteCarlo):
            row = _montecarlo(ws, analysis, row)
        else:
            raise TypeError(f"not a sensitivity result: {type(analysis).__name__}")
        row += 2
    for col, width in {"A": 34, "B": 16, "C": 18, "D": 18, "E": 18, "F": 18, "G": 18}.items():
        ws.column_dimensions[col].width = width


def _header(ws: Worksheet, row: int, labels: Sequence[str]) -> None:
    for col, label in enumerate(labels, 1):
        styles.header(text(ws.cell(row, col), label))


def _tornado(ws: Worksheet, t: Tornado, row: int) -> int:
    text(ws.cell(row, 1), f"Tornado: {t.output} [{t.unit}], base {t.base:.6g}; each input "
                          f"alone, default -/+ {t.swing:.0%}").font = styles.SECTION
    _header(ws, row + 1, ["input", "unit", "low", "high", f"at low - base [{t.unit}]",
                          f"at high - base [{t.unit}]", f"swing [{t.unit}]", "note"])
    first = row + 2
    for k, bar in enumerate(t.bars):
        r = first + k
        text(ws.cell(r, 1), bar.key)
        text(ws.cell(r, 2), bar.unit)
        for col, v in enumerate([bar.low, bar.high, bar.output_low - t.base,
                                 bar.output_high - t.base, bar.swing], 3):
            ws.cell(r, col, float(v))
        text(ws.cell(r, 8), bar.note or "")
    last = first + len(t.bars) - 1
    if t.bars:
        chart = BarChart()
        chart.type, chart.grouping, chart.overlap = "bar", "clustered", 100
        chart.title = f"Tornado: change in {t.output}"
        chart.x_axis.title = "input"
        chart.y_axis.title = f"change [{t.unit}]"
        for col, title in ((5, "input low"), (6, "input high")):
            chart.series.append(Series(Reference(ws, min_col=col, min_row=first, max_row=last),
                                       title=title))
        chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
        chart.x_axis.scaling.orientation = "maxMin"  # the largest swing on top
        chart.x_axis.tickLblPos = "low"  # input names left of the bars, not across them
        chart.height, chart.width = max(6, 0.6 * len(t.bars)), 16
        ws.add_chart(chart, f"J{row}")
    return max(last, row + 2 + int(max(6, 0.6 * len(t.bars)) * 2))


def _grid(ws: Worksheet, g: Grid, row: int) -> int:
    text(ws.cell(row, 1), f"Grid: {g.output} [{g.unit}] over {g.y.key} [{g.y.unit}] (rows) "
                          f"and {g.x.key} [{g.x.unit}] (columns)").font = styles.SECTION
    styles.header(text(ws.cell(row + 1, 1), f"{g.y.key} \\ {g.x.key}"))
    for j, x in enumerate(g.x.values, 2):
        styles.header(ws.cell(row + 1, j, float(x)))
    for i, y in enumerate(g.y.values):
        r = row + 2 + i
        styles.header(ws.cell(r, 1, float(y)))
        for j in range(len(g.x.values)):
            ws.cell(r, 2 + j, float(g.values[i, j]))
    last_row = row + 1 + len(g.y.values)
    last_col = get_column_letter(1 + len(g.x.values))
    ws.conditional_formatting.add(f"B{row + 2}:{last_col}{last_row}",
                                  ColorScaleRule(start_type="min", start_color="63BE7B",
                                                 mid_type="percentile", mid_value=50,
                                                 mid_color="FFEB84", end_type="max",
                                                 end_color="F8696B"))
    return last_row


def _montecarlo(ws: Worksheet, m: MonteCarlo, row: int) -> int:
    text(ws.cell(row, 1), f"Monte Carlo: {m.output} [{m.unit}], {m.draws:,} draws, seed "
                          f"{m.seed}").font = styles.SECTION
    stats = [("P10", m.p10), ("P50", m.p50), ("P90", m.p90), ("mean", m.mean), ("std", m.std),
             ("min", m.min), ("max", m.max), ("base", m.base)]
    for k, (label, value) in enumerate(stats):
        text(ws.cell(row + 1 + k, 1), f"{label} [{m.unit}]")
        styles.result_cell(ws.cell(row + 1 + k, 2, float(value)))
    r = row + 2 + len(stats)
    text(ws.cell(r, 1), "distributions").font = styles.SECTION
    for key, dist in m.to_json()["distributions"].items():
        r += 1
        text(ws.cell(r, 1), key)
        text(ws.cell(r, 2), dist["text"])
    r += 2
    _header(ws, r, [f"bin from [{m.unit}]", f"bin to [{m.unit}]", "draws"])
    first = r + 1
    for k, count in enumerate(m.counts):
        ws.cell(first + k, 1, float(m.edges[k]))
        ws.cell(first + k, 2, float(m.edges[k + 1]))
        ws.cell(first + k, 3, int(count))
    last = first + len(m.counts) - 1
    chart = BarChart()
    chart.type, chart.gapWidth = "col", 0
    chart.title = f"{m.output}: {m.draws:,} draws"
    chart.x_axis.title = f"{m.output} [{m.unit}]"
    chart.y_axis.title = "draws"
    chart.series.append(Series(Reference(ws, min_col=3, min_row=first, max_row=last),
                               title="draws"))
    chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
    chart.height, chart.width = 8, 16
    ws.add_chart(chart, f"J{row}")
    return max(last, row + 18)
