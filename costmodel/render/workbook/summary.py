"""The Summary sheet, first in the workbook and one printed page: the answer (cost and price
per million tokens per system), in a comparison the ratios to the first system, the cost
stack chart, the key assumptions (live) and the disclosure in a few lines."""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ... import __version__
from ..display import label
from .cover import describe, headline_currency, write_live, write_rate
from .layout import FIRST_COL, WorkbookSystem, system_header, system_width
from .print_setup import print_setup
from .results_sheet import STACK, cost_stack_chart, write_ratios
from .sheet import Sheet, rows_for

__all__ = ["write_summary", "ANSWER", "ASSUMPTIONS", "RATIOS"]

ANSWER = ["cost_per_mtok_total", "price_per_mtok_total"]
# a comparison's answer: each system's figures over the first system's
RATIOS = ["cost_per_mtok_total", "cost_per_mtok_energy", "cost_per_mtok_capex",
          "cost_per_mtok_opex", "throughput", "power_per_accelerator"]
ASSUMPTIONS = [("Power boundary", "power_boundary"),
               ("Token kind", "operating_point_token_kind"),
               ("Throughput per accelerator", "throughput"),
               ("Power per accelerator", "power_per_accelerator"),
               ("Utilisation", "utilisation"),
               ("Electricity price (per kWh drawn)", "electricity_effective_price"),
               ("Cost of capital", "financing_cost_of_capital"),
               ("Economic life", "financing_life"),
               ("Gross margin", "pricing_gross_margin")]
_DISCLOSED = ("operating point", "workload", "electricity source")
_CHART_HEIGHT = 160  # [pixels]
_SPACER = 6.0  # [points] between the tables: the page is one page tall


def write_summary(ws: Sheet, systems: Sequence[WorkbookSystem], title: str | None,
                  generated: datetime) -> None:
    n = len(systems)
    ws.text(1, 1, title or "Cost and price per million tokens", "title")
    last_col = FIRST_COL + n - 1
    # wide enough that the disclosure takes few lines: the page is one page tall
    width = system_width(systems, least=22 if n == 1 else 27, most=30)
    ws.set_widths({1: 36, 2: 1, 3: 12, **{FIRST_COL + i: width for i in range(n)}})
    ws.paragraph(2, f"costmodel {__version__}, {generated.isoformat(timespec='seconds')}. "
                    f"Live: change the blue cells on Inputs and this page follows.", last_col)
    ws.header(4, system_header(systems, ["The answer", "", "unit"]))
    rows: dict[str, int] = {}
    row = 4
    # money in the systems' currency where they share one, the rate it is converted at
    # beside it (live: the figures follow an edited rate)
    currency = headline_currency(systems)
    for name in ANSWER:
        row += 1
        rows[name] = row
        write_live(ws, row, systems, label(name), name, "result", currency)
    for name, _ in STACK:
        row += 1
        rows[name] = row
        write_live(ws, row, systems, "  of which " + label(name).replace(
            " per million tokens", "").lower(), name, "calc", currency)
    if currency != "USD":
        row = write_rate(ws, row + 1, systems, currency)
    if n > 1:
        row += 2
        ws.height(row - 1, _SPACER)
        ws.header(row, ["Ratios to system 1", "", "unit", *([""] * n)])
        row = write_ratios(ws, row + 1, systems, RATIOS, with_names=False)
    row += 2
    ws.height(row - 1, _SPACER)
    ws.header(row, ["Key assumptions", "", "unit", *([""] * n)])
    for text, name in ASSUMPTIONS:
        row += 1
        write_live(ws, row, systems, text, name, "calc")
    row += 2
    ws.height(row - 1, _SPACER)
    ws.header(row, ["Disclosure", "", "", *([""] * n)])
    items = describe()
    said = [{key: items[key](s.result.disclosure()) for key in _DISCLOSED} for s in systems]
    # what every system shares is said once, then each system's own, a paragraph each
    shared = [key for key in _DISCLOSED if n > 1 and all(x[key] == said[0][key]
                                                         for x in said)]
    if shared:
        row += 1
        ws.paragraph(row, "Every system: " + "; ".join(f"{key} {said[0][key]}"
                                                      for key in shared), last_col, "wrap")
    for s, own in zip(systems, said, strict=True):
        row += 1
        ws.paragraph(row, f"{s.result.name}: " + "; ".join(
            f"{key} {text}" for key, text in own.items() if key not in shared),
            last_col, "wrap")
    row += 1
    ws.paragraph(row, "Defaults used, sources and conventions: see the Cover and Sources "
                      "sheets; every step: Calculations.", last_col)
    chart_row = row + 1
    pixels = int((36 + 1 + 12 + width * n) * 7)
    chart = cost_stack_chart(ws, rows, n, 4, width=min(max(420, pixels), 900),
                             height=_CHART_HEIGHT, currency=currency)
    ws.ws.insert_chart(chart_row - 1, 0, chart, {"x_offset": 4, "y_offset": 2})
    ws.last_row = max(ws.last_row, chart_row + rows_for(_CHART_HEIGHT + 2))
    ws.ws.activate()
    print_setup(ws, last_col=FIRST_COL + n - 1, one_page=True)
