"""The Curves sheet: for each system read off a curve, the measured points, the Pareto frontier
as read (PCHIP) and the chosen point, with a scatter chart whose every series shows in Excel
and LibreOffice (markers for the measured points, a larger red diamond for the chosen point,
a line for the frontier)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..display import excel_format
from .chart_text import set_title
from .layout import WorkbookSystem
from .sheet import Sheet, rows_for
from .styles import SERIES_COLOURS

__all__ = ["write_curves"]

_FRONTIER_SAMPLES = 24
_FCOL = 9  # column I: the frontier and the chosen point
_LAST_COL = 12  # column L: the last printed
_CHART_HEIGHT = 320  # [pixels]
_CHART_ROWS = rows_for(_CHART_HEIGHT)  # rows under the points that the chart covers


def write_curves(ws: Sheet, systems: Sequence[WorkbookSystem]) -> None:
    ws.text(1, 1, "Curves: measured points, Pareto frontier and the chosen operating point",
            "title")
    ws.text(2, 1, "Data, not formulas: the chosen point's throughput is an input on the "
                  "Inputs sheet. Frontier read by PCHIP (monotone cubic).", "note")
    row = 4
    tps_user = excel_format(None, "token/s/user")
    tps = excel_format(None, "token/s")
    seconds = excel_format(None, "s")
    watts = excel_format(None, "W")
    count = excel_format("concurrency", "")
    for s in systems:
        if s.curve is None:
            continue
        top = row
        c, sel, kind = s.curve.curve, s.curve.selection, s.curve.kind
        ws.text(row, 1, f"{s.result.name}: curve {c.key.id}", "section")
        for k, note in enumerate([f"from {s.curve.origin}; {c.source}",
                                  f"chosen: {sel.description}"], 1):
            # across the printed width, wrapped: no text runs off the page
            ws.text(row + k, 1, note, "note_wrap", span=_LAST_COL)
            ws.ws.merge_range(row + k - 1, 0, row + k - 1, _LAST_COL - 1, note,
                              ws.book.format("note_wrap"))
        head = row + 3
        ws.header(head, ["concurrency", "interactivity [token/s/user]",
                         f"{kind} throughput [token/s]", "on frontier", "TTFT [s]",
                         "end-to-end latency [s]", "power [W]"])
        try:
            frontier = c.frontier(kind)
            on = set(frontier.indices.tolist())
        except ValueError:
            frontier, on = None, set()
        y = c.throughput_of(kind)
        formats = [count, tps_user, tps, None, seconds, seconds, watts]
        for k in range(len(c)):
            r = head + 1 + k
            values = [c.concurrency[k], c.interactivity[k], y[k], None, c.ttft[k],
                      c.e2e_latency[k], c.power[k]]
            for col, (v, fmt) in enumerate(zip(values, formats, strict=True), 1):
                if fmt is None:
                    ws.text(r, col, "yes" if k in on else "no")
                elif not np.isnan(v):
                    ws.number(r, col, float(v), "plain", fmt)
        points_end = head + len(c)
        ws.header(head, ["frontier interactivity [token/s/user]",
                         "frontier throughput (PCHIP) [token/s]",
                         "chosen interactivity [token/s/user]", "chosen throughput [token/s]"],
                  first_col=_FCOL)
        samples = 0
        if frontier is not None and len(frontier.interactivity) >= 2:
            xs = np.linspace(frontier.interactivity[0], frontier.interactivity[-1],
                             _FRONTIER_SAMPLES)
            ys = frontier.read_many(xs)[2]
            for k, (x, v) in enumerate(zip(xs, ys, strict=True)):
                ws.number(head + 1 + k, _FCOL, float(x), "plain", tps_user)
                ws.number(head + 1 + k, _FCOL + 1, float(v), "plain", tps)
            samples = len(xs)
        if sel.interactivity is not None:
            ws.number(head + 1, _FCOL + 2, float(sel.interactivity), "result", tps_user)
            ws.number(head + 1, _FCOL + 3, float(sel.throughput), "result", tps)
        if frontier is not None:  # under the points, beside the frontier samples
            _chart(ws, c.key.id, head, points_end, samples, sel.interactivity is not None)
        end = max(points_end + 1 + (_CHART_ROWS if frontier is not None else 0),
                  head + samples)
        ws.keep_together(top, end)  # each curve, its table and its chart on one page
        ws.last_row = max(ws.last_row, end)  # the chart too, in the print area
        row = end + 3
    ws.set_widths({1: 12, 2: 15, 3: 15, 4: 10, 5: 10, 6: 12, 7: 10, 8: 2, 9: 12, 10: 13,
                   11: 12, 12: 12})
    ws.ws.freeze_panes(3, 0)


def _chart(ws: Sheet, title: str, head: int, points_end: int, samples: int,
           chosen: bool) -> None:
    sheet = ws.title
    chart = ws.book.wb.add_chart({"type": "scatter"})
    first = head  # 0-based row of the first data row = head (1-based header row)
    chart.add_series({
        "name": "measured",
        "categories": [sheet, first, 1, points_end - 1, 1],
        "values": [sheet, first, 2, points_end - 1, 2],
        "marker": {"type": "circle", "size": 6,
                   "fill": {"color": SERIES_COLOURS["measured"]},
                   "border": {"color": "#404040"}},
        "line": {"none": True},
    })
    if samples:
        chart.add_series({
            "name": "Pareto frontier (PCHIP)",
            "categories": [sheet, first, _FCOL - 1, first + samples - 1, _FCOL - 1],
            "values": [sheet, first, _FCOL, first + samples - 1, _FCOL],
            "marker": {"type": "none"},
            "line": {"color": SERIES_COLOURS["frontier"], "width": 2},
        })
    if chosen:
        chart.add_series({
            "name": "chosen point",
            "categories": [sheet, first, _FCOL + 1, first, _FCOL + 1],
            "values": [sheet, first, _FCOL + 2, first, _FCOL + 2],
            "marker": {"type": "diamond", "size": 12,
                       "fill": {"color": SERIES_COLOURS["chosen"]},
                       "border": {"color": "#000000"}},
            "line": {"none": True},
        })
    set_title(chart, {"name": title, "name_font": {"size": 11}})  # a curve id: literal text
    chart.set_x_axis({"name": "interactivity [token/s/user]",
                      "num_format": "#,##0",
                      "major_gridlines": {"visible": True, "line": {"color": "#E0E0E0"}}})
    chart.set_y_axis({"name": "throughput per accelerator [token/s]",
                      "num_format": "#,##0",
                      "major_gridlines": {"visible": True, "line": {"color": "#E0E0E0"}}})
    chart.set_legend({"position": "bottom"})
    chart.set_size({"width": 600, "height": _CHART_HEIGHT})
    ws.ws.insert_chart(points_end + 1, 0, chart, {"x_offset": 4})
