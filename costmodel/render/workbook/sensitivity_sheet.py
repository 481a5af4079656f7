"""The Sensitivity sheet: tornado, grid and Monte Carlo results as data with charts.

These are the engine's results at export (a million draws do not belong in cell formulas);
the sheet says so, and the Inputs sheet stays the live model. Every figure is formatted by
the name and unit of what it measures.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...decisions.sensitivity import Grid, MonteCarlo, Tornado
from ..display import display_unit, excel_format
from .chart_text import set_axis, set_title
from .sheet import Sheet, rows_for
from .styles import SERIES_COLOURS

__all__ = ["write_sensitivity"]

_COUNT = excel_format("node_accelerators", "dimensionless")  # a whole count (draws)


def _name(key: str) -> str:
    """An input's scenario key as its workbook name (``electricity.price`` ->
    ``electricity_price``), which the display rules know it by."""
    return key.replace(".", "_")


def _unit(name: str, unit: str) -> str:
    shown = display_unit(name, unit)
    return f" [{shown}]" if shown else ""


def write_sensitivity(ws: Sheet, analyses: Sequence[Any]) -> None:
    ws.text(1, 1, "Sensitivity and uncertainty", "title")
    ws.text(2, 1, "Results computed by the engine at export (not formulas): change an input "
                  "on the Inputs sheet and re-run the analysis to update them.", "note")
    row = 4
    breaks = []
    for analysis in analyses:
        if row > 4:  # each analysis starts a printed page: no chart cut in two
            breaks.append(row - 1)
        if isinstance(analysis, Tornado):
            row = _tornado(ws, analysis, row, breaks)
        elif isinstance(analysis, Grid):
            row = _grid(ws, analysis, row)
        elif isinstance(analysis, MonteCarlo):
            row = _montecarlo(ws, analysis, row)
        else:
            raise TypeError(f"not a sensitivity result: {type(analysis).__name__}")
        row += 2
    ws.ws.set_h_pagebreaks(breaks)
    ws.set_widths({1: 34, 2: 14, 3: 16, 4: 16, 5: 16, 6: 16, 7: 16, 8: 18})
    ws.ws.freeze_panes(3, 0)


def _tornado(ws: Sheet, t: Tornado, row: int, breaks: list[int]) -> int:
    out = _unit(t.output, t.unit)
    out_fmt = excel_format(t.output, t.unit)
    ws.text(row, 1, f"Tornado: {t.output}{out}, base {t.base:.6g}; each input alone, "
                    f"default -/+ {t.swing:.0%}", "section")
    ws.header(row + 1, ["input", "unit", "low", "high", f"at low - base{out}",
                        f"at high - base{out}", f"swing{out}", "note"])
    first = row + 2
    for k, bar in enumerate(t.bars):
        r = first + k
        name = _name(bar.key)
        ws.text(r, 1, bar.key)
        ws.text(r, 2, display_unit(name, bar.unit))
        for col, v in ((3, bar.low), (4, bar.high)):
            ws.number(r, col, float(v), "plain", excel_format(name, bar.unit))
        for col, v in ((5, bar.output_low - t.base), (6, bar.output_high - t.base),
                       (7, bar.swing)):
            ws.number(r, col, float(v), "plain", out_fmt)
        ws.text(r, 8, bar.note or "", "wrap")
    last = first + len(t.bars) - 1
    height = max(6, len(t.bars))
    if t.bars:
        chart = ws.book.wb.add_chart({"type": "bar"})
        for col, title, colour in ((4, "input low", SERIES_COLOURS["capex"]),
                                   (5, "input high", SERIES_COLOURS["energy"])):
            chart.add_series({"name": title,
                              "categories": [ws.title, first - 1, 0, last - 1, 0],
                              "values": [ws.title, first - 1, col, last - 1, col],
                              "fill": {"color": colour}, "overlap": 100, "gap": 40})
        set_title(chart, {"name": f"Tornado: change in {t.output}", "name_font": {"size": 11}})
        chart.set_y_axis({"reverse": True, "label_position": "low",
                          "num_font": {"size": 8}})
        set_axis(chart, "x", {"name": f"change{out}", "num_format": "General",  # ticks vary
                              "major_gridlines": {"visible": True,
                                                  "line": {"color": "#E0E0E0"}}})
        chart.set_legend({"position": "bottom"})
        chart.set_size({"width": 560, "height": 60 + 24 * height})
        ws.ws.insert_chart(last + 1, 0, chart, {"x_offset": 4, "y_offset": 8})
        breaks.append(last + 1)  # the chart on a page of its own, under the table
    return last + 1 + rows_for(60 + 24 * height + 8)


def _grid(ws: Sheet, g: Grid, row: int) -> int:
    x_name, y_name = _name(g.x.key), _name(g.y.key)
    ws.text(row, 1, f"Grid: {g.output}{_unit(g.output, g.unit)} over {g.y.key}"
                    f"{_unit(y_name, g.y.unit)} (rows) and {g.x.key}{_unit(x_name, g.x.unit)}"
                    f" (columns)", "section")
    ws.text(row + 1, 1, f"{g.y.key} \\ {g.x.key}", "header")
    for j, x in enumerate(g.x.values, 2):
        ws.number(row + 1, j, float(x), "header", excel_format(x_name, g.x.unit))
    fmt = excel_format(g.output, g.unit)
    for i, y in enumerate(g.y.values):
        r = row + 2 + i
        ws.number(r, 1, float(y), "header", excel_format(y_name, g.y.unit))
        for j in range(len(g.x.values)):
            ws.number(r, 2 + j, float(g.values[i, j]), "calc", fmt)
    last_row = row + 1 + len(g.y.values)
    ws.ws.conditional_format(row + 1, 1, last_row - 1, len(g.x.values), {
        "type": "3_color_scale", "min_color": "#63BE7B", "mid_type": "percentile",
        "mid_value": 50, "mid_color": "#FFEB84", "max_color": "#F8696B"})
    return last_row


def _montecarlo(ws: Sheet, m: MonteCarlo, row: int) -> int:
    out = _unit(m.output, m.unit)
    fmt = excel_format(m.output, m.unit)
    ws.text(row, 1, f"Monte Carlo: {m.output}{out}, {m.draws:,} draws, seed {m.seed}",
            "section")
    stats = [("P10", m.p10), ("P50", m.p50), ("P90", m.p90), ("mean", m.mean), ("std", m.std),
             ("min", m.min), ("max", m.max), ("base", m.base)]
    for k, (text, value) in enumerate(stats):
        ws.text(row + 1 + k, 1, f"{text}{out}")
        ws.number(row + 1 + k, 2, float(value), "result", fmt)
    r = row + 2 + len(stats)
    ws.text(r, 1, "distributions", "section")
    for key, dist in m.to_json()["distributions"].items():
        r += 1
        ws.text(r, 1, key)
        ws.text(r, 2, dist["text"])
    r += 2
    ws.header(r, [f"bin from{out}", f"bin to{out}", "draws"])
    first = r + 1
    for k, count in enumerate(m.counts):
        ws.number(first + k, 1, float(m.edges[k]), "plain", fmt)
        ws.number(first + k, 2, float(m.edges[k + 1]), "plain", fmt)
        ws.number(first + k, 3, int(count), "plain", _COUNT)
    last = first + len(m.counts) - 1
    chart = ws.book.wb.add_chart({"type": "column"})
    chart.add_series({"name": "draws",
                      "categories": [ws.title, first - 1, 0, last - 1, 0],
                      "values": [ws.title, first - 1, 2, last - 1, 2],
                      "fill": {"color": SERIES_COLOURS["capex"]}, "gap": 0,
                      "border": {"color": "#FFFFFF", "width": 0.25}})
    set_title(chart, {"name": f"{m.output}: {m.draws:,} draws", "name_font": {"size": 11}})
    set_axis(chart, "x", {"name": f"{m.output}{out}", "num_format": fmt,
                          "num_font": {"rotation": -45, "size": 8}})
    chart.set_y_axis({"name": "draws", "num_format": _COUNT})
    chart.set_legend({"none": True})
    chart.set_size({"width": 560, "height": 300})
    ws.ws.insert_chart(row, 4, chart, {"x_offset": 8})
    return max(last, row + rows_for(300))
