"""A scenario, or a comparison of several, as an .xlsx model with live formulas whose results
are cached: the file reads right before any recalculation (previews, mail clients, pandas,
openpyxl ``data_only``), and Excel or LibreOffice recompute it when an input changes.

Written with XlsxWriter (openpyxl cannot store a formula's cached result; it stays the
reader's library). Sheets, in order:

- **Decision** (for a decision): a demand, each offer's bill and rank, the recommendation,
  where it holds and the break-evens, live (:mod:`.decision_sheet`); **Scan**, after the
  analyses, the search it rests on.
- **Summary**: the answer per system (in a comparison, with the ratios to the first system),
  the cost stack chart, the key assumptions (live) and the disclosure in a few lines; one
  printed page.
- **Task** (when asked for): an agent's task priced on each system, its steps as rows, live
  (:mod:`.task_sheet`).
- **Profit** (when asked for): each system sold at its market's prices, revenue, cost and
  profit per accelerator-hour, per month and per GW-year, live (:mod:`.profit_sheet`).
- **Cover**: what was priced, when, by which engine, and the disclosure; the switches that can
  change in the workbook (boundary, basis, token kind, electricity price...) are formulas
  that follow the Inputs sheet.
- **Inputs**: the choices, the inputs they use, those not used in this scenario (grouped, a
  note beside each, an absent one an empty cell), then the named constants; one row each,
  its words, name, unit, a value per system and its source (printed beside it); input cells
  are styled as inputs and validated (lists for categorical inputs, ranges for fractions
  and counts).
- **Calculations**: every declared step, one row each: its words, name = declaration, unit,
  and the same formula along the row (a step that reads a profile names each system's
  blocks).
- **Tariff** (when a system has a tariff or a load shape): rates, demand charges, calendar
  weights and load by hour, and the profile steps, live (:mod:`.tariff_sheet`).
- **Results**: the cost stack per million tokens with a chart, prices, efficiency figures and,
  for a comparison, ratios to the first system.
- **Curves** (when an operating point was read off a curve): raw points, the frontier, the
  chosen point and a scatter chart.
- **Quotes**, **Sensitivity** (when asked for): see their modules.
- **Sources**: the provenance of every input, the defaults used and the conventions.
- **Lists** and **Meta** (hidden): the levels of categorical inputs, and what the engine was
  given, so an edited workbook can be read back and compared.

Names: see :mod:`costmodel.render.workbook.layout`. Figures carry the number format of their name
and
unit (:func:`costmodel.render.display.excel_format`); each sheet prints landscape, one page
wide, with its header rows repeated (:mod:`costmodel.render.workbook.print_setup`); an empty
cell, never an error value, stands where the engine has no value
(:mod:`costmodel.render.workbook.excel_formula`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from .chargeback_sheet import CHARGEBACK_SHEET, ChargebackBook, write_chargeback
from .cover import write_cover, write_sources
from .curves_sheet import write_curves
from .decision_sheet import DECISION_SHEET, SCAN_SHEET, write_decision
from .layout import (
    COUNT_INPUTS,
    DECISION_RECORD,
    FIRST_COL,
    HEADER_ROW,
    META_FORMAT,
    SHEETS,
    Names,
    WorkbookSystem,
    record_row,
    suffixed,
)
from .model_sheets import (
    write_calculations,
    write_inputs,
    write_lists,
    write_meta,
    write_meta_row,
)
from .print_setup import print_setup
from .profit_sheet import PROFIT_SHEET, ProfitBook, write_profit
from .quotes_sheet import write_quotes
from .results_sheet import RESULT_ROWS, write_results
from .sheet import Book
from .summary import write_summary
from .tariff_sheet import TARIFF_SHEET, ProfileLayout, write_tariff
from .task_sheet import TASK_SHEET, TaskBook, write_task

__all__ = ["WorkbookSystem", "ExportedWorkbook", "build_workbook", "save_workbook",
           "FIRST_COL", "SHEETS", "META_FORMAT", "COUNT_INPUTS", "RESULT_ROWS", "suffixed"]


@dataclass(frozen=True)
class ExportedWorkbook:
    """A finished .xlsx file in memory."""
    content: bytes

    def save(self, target: str | Path | IO[bytes]) -> None:
        """Write the file to a path or a binary stream."""
        if isinstance(target, (str, Path)):
            Path(target).write_bytes(self.content)
        else:
            target.write(self.content)


def build_workbook(systems: Sequence[WorkbookSystem], *, title: str | None = None,
                   generated: datetime | None = None,
                   quotes: Sequence[tuple[Any, Sequence[Any]]] = (),
                   sensitivity: Sequence[Any] = (),
                   task: TaskBook | None = None,
                   profit: ProfitBook | None = None,
                   decision: Any = None,
                   chargeback: ChargebackBook | None = None) -> ExportedWorkbook:
    """The workbook for one or more priced systems (see the module docstring).

    ``quotes``: (quote, its comparison with each system) pairs for a Quotes sheet;
    ``sensitivity``: tornado, grid and Monte Carlo results for a Sensitivity sheet;
    ``task``: a task and each system's point for a Task sheet; ``profit``: each system's
    market for a Profit sheet; ``decision``: a :class:`.decision_sheet.DecisionBook` for the
    Decision and Scan sheets (the systems are the decision's own builds); ``chargeback``:
    a period's ledger for a Chargeback sheet (the systems are its pools).
    """
    if not systems:
        raise ValueError("nothing to export")
    generated = generated or datetime.now(UTC)
    n = len(systems)
    book = Book()
    names = Names(book, n)
    profiles = ProfileLayout([s.result.scenario for s in systems])
    order = [*([CHARGEBACK_SHEET] if chargeback is not None else []),
             *([DECISION_SHEET] if decision is not None else []),
             "Summary", *([TASK_SHEET] if task is not None else []),
             *([PROFIT_SHEET] if profit is not None else []), "Cover", "Inputs",
             "Calculations",
             *([TARIFF_SHEET] if profiles else []), "Results",
             *(["Curves"] if any(s.curve is not None for s in systems) else []),
             *(["Quotes"] if quotes else []), *(["Sensitivity"] if sensitivity else []),
             *([SCAN_SHEET] if decision is not None else []),
             "Sources", "Lists", "Meta"]
    sheets = {title_: book.add_sheet(title_) for title_ in order}
    last_system = FIRST_COL + n - 1
    write_lists(sheets["Lists"], names)
    write_inputs(sheets["Inputs"], systems, names)
    # with the sources column: each source prints beside the figure it supports
    print_setup(sheets["Inputs"], last_col=last_system + 1,
                title_rows=(HEADER_ROW, HEADER_ROW), title_cols=3)
    if chargeback is not None:
        header = write_chargeback(sheets[CHARGEBACK_SHEET], sheets["Inputs"], systems,
                                  chargeback, names, _input_cells(book, "utilisation", n))
        print_setup(sheets[CHARGEBACK_SHEET], title_rows=header, title_cols=2)
    write_calculations(sheets["Calculations"], systems, names, profiles)
    print_setup(sheets["Calculations"], last_col=last_system,
                title_rows=(HEADER_ROW, HEADER_ROW), title_cols=3)
    if profiles:
        write_tariff(sheets[TARIFF_SHEET], systems, profiles, names)
        # a day's 24 hours a page, the names repeated on the left, the hours on top
        print_setup(sheets[TARIFF_SHEET], title_rows=(4, 4), title_cols=1, page_cols=24)
    write_results(sheets["Results"], systems)
    print_setup(sheets["Results"], last_col=last_system, title_rows=(HEADER_ROW, HEADER_ROW),
                title_cols=3)
    if "Curves" in sheets:
        write_curves(sheets["Curves"], systems)
        print_setup(sheets["Curves"], title_rows=(1, 2))
    if quotes:
        write_quotes(sheets["Quotes"], systems, quotes)
        print_setup(sheets["Quotes"], last_col=last_system, title_rows=(1, 3), title_cols=3)
    if sensitivity:
        from .sensitivity_sheet import write_sensitivity
        write_sensitivity(sheets["Sensitivity"], sensitivity)
        print_setup(sheets["Sensitivity"], title_rows=(1, 2))
    if task is not None:
        header = write_task(sheets[TASK_SHEET], systems, task, names)
        print_setup(sheets[TASK_SHEET], title_rows=header, title_cols=1)
    if profit is not None:
        write_profit(sheets[PROFIT_SHEET], systems, profit, names)
        print_setup(sheets[PROFIT_SHEET], last_col=last_system, title_cols=3)
    if decision is not None:
        header, exported = write_decision(sheets[DECISION_SHEET], sheets[SCAN_SHEET], decision,
                                          names)
        print_setup(sheets[DECISION_SHEET], title_rows=header, title_cols=3)
        print_setup(sheets[SCAN_SHEET], title_rows=(4, 4), title_cols=2)
    write_sources(sheets["Sources"], systems)
    print_setup(sheets["Sources"], title_rows=(3, 3))
    header = write_cover(sheets["Cover"], systems, title, generated)
    print_setup(sheets["Cover"], last_col=last_system, title_rows=(header, header))
    write_summary(sheets["Summary"], systems, title, generated)
    write_meta(sheets["Meta"], systems, generated)
    if decision is not None and decision.record is not None:
        write_meta_row(sheets["Meta"], record_row(n), DECISION_RECORD,
                       {**decision.record, "inputs": exported})
    return ExportedWorkbook(book.close())


def _input_cells(book: Book, name: str, n: int) -> list[str]:
    """The Inputs cells (A1, absolute) of an input's name, one a system."""
    wanted = [name] if n == 1 else [suffixed(name, i + 1) for i in range(n)]
    found = {d[0]: d[2].rpartition("!")[2] for d in book.wb.defined_names}
    return [found[w] for w in wanted]


def save_workbook(wb: ExportedWorkbook, path: str | Path) -> Path:
    """Save atomically: a half-written file never replaces a good one."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        wb.save(tmp)
        tmp.replace(p)
    finally:
        tmp.unlink(missing_ok=True)
    return p
