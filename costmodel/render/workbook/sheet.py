"""Writing cells with XlsxWriter: every formula with its cached result, every figure with the
number format of its name and unit, widths and row heights that show whole text.

Rows and columns are 1-based here (A1 is row 1, column 1), as the layout describes them.
A value the engine does not have (NaN: an absent optional input, a step that uses one) is the
spreadsheet error ``#N/A``, as a plain value or as a formula's cached result.
"""
from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Iterable
from typing import Any

from xlsxwriter.utility import xl_col_to_name, xl_rowcol_to_cell
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from ..display import excel_format
from .styles import STYLES

__all__ = ["Book", "Sheet", "col_name", "cell_ref", "cached", "NA"]

NA = "#N/A"
_ErrorValue = namedtuple("_ErrorValue", "error, format")
_DEFAULT_WIDTH = 8.43  # a column's width when none is set [characters]
_LINE_HEIGHT = 15.0  # a line of 11 pt text [points]
_CHARS_PER_WIDTH = 1.0  # characters of body text that fit one unit of column width (at
# least: LibreOffice's substitute fonts are wider than Calibri)


class _Worksheet(Worksheet):
    """XlsxWriter writes error results only for formulas; an absent input is a plain ``#N/A``
    error value (the reader and the engine treat it as "not given")."""

    def _write_cell(self, row: int, col: int, cell: Any) -> None:
        if not isinstance(cell, _ErrorValue):
            super()._write_cell(row, col, cell)
            return
        attributes: list[tuple[str, Any]] = [("r", xl_rowcol_to_cell(row, col))]
        if cell.format is not None:
            attributes.append(("s", cell.format._get_xf_index()))
        attributes.append(("t", "e"))
        self._xml_start_tag("c", attributes)
        self._xml_data_element("v", cell.error)
        self._xml_end_tag("c")


def col_name(col: int) -> str:
    """The letter(s) of a 1-based column."""
    return xl_col_to_name(col - 1)


def cell_ref(row: int, col: int, absolute: bool = False) -> str:
    """A1 reference of a 1-based cell (``$D$5`` when ``absolute``)."""
    return xl_rowcol_to_cell(row - 1, col - 1, absolute, absolute)


def cached(value: Any) -> Any:
    """A formula's cached result: numbers as float, NaN as ``#N/A``, infinity as
    ``#DIV/0!`` (what a spreadsheet shows for a division by zero), text as is."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        v = float(value)
        if math.isnan(v):
            return NA
        return "#DIV/0!" if math.isinf(v) else v
    return value


def _lines(text: str, per_line: int) -> int:
    """Lines ``text`` takes wrapped at word boundaries, ``per_line`` characters a line."""
    lines, used = 1, 0
    for word in text.split():
        need = len(word) if used == 0 else used + 1 + len(word)
        if need <= per_line:
            used = need
            continue
        extra, rest = divmod(len(word), per_line)  # a word longer than a line breaks
        if used:
            lines += 1
        lines += extra - (1 if extra and not rest else 0)
        used = rest if rest else (per_line if extra else 0)
    return lines


class Book:
    """An XlsxWriter workbook in memory, with one format per (style, number format)."""

    def __init__(self) -> None:
        from io import BytesIO
        self.buffer = BytesIO()
        self.wb = Workbook(self.buffer, {"in_memory": True, "strings_to_formulas": False,
                                         "strings_to_numbers": False,
                                         "strings_to_urls": False})
        self.sheets: list[Sheet] = []
        self._formats: dict[tuple[str, str | None], Any] = {}

    def format(self, style: str, num_format: str | None = None) -> Any:
        key = (style, num_format)
        fmt = self._formats.get(key)
        if fmt is None:
            props = dict(STYLES[style])
            if num_format:
                props["num_format"] = num_format
            fmt = self._formats[key] = self.wb.add_format(props)
        return fmt

    def add_sheet(self, title: str) -> Sheet:
        sheet = Sheet(self, self.wb.add_worksheet(title, worksheet_class=_Worksheet), title)
        self.sheets.append(sheet)
        return sheet

    def sheet(self, title: str) -> Sheet:
        return next(s for s in self.sheets if s.title == title)

    def define_name(self, name: str, sheet: str, ref: str) -> None:
        if self.wb.define_name(name, f"={sheet}!{ref}") != 0:
            raise ValueError(f"not a usable defined name: {name!r}")

    def close(self) -> bytes:
        for sheet in self.sheets:
            sheet.finish()
        self.wb.close()
        return self.buffer.getvalue()


class Sheet:
    """One worksheet being written; remembers widths and wrapped text to size rows."""

    def __init__(self, book: Book, ws: Worksheet, title: str):
        self.book, self.ws, self.title = book, ws, title
        self.widths: dict[int, float] = {}
        # row, col, text, columns spanned, characters a unit of width holds
        self._wrapped: list[tuple[int, int, str, int, float]] = []
        self._heights: dict[int, float] = {}
        self.last_row = 0
        self.last_col = 0

    def _seen(self, row: int, col: int) -> None:
        self.last_row, self.last_col = max(self.last_row, row), max(self.last_col, col)

    # -- cells ---------------------------------------------------------------------------------
    def text(self, row: int, col: int, value: Any, style: str = "plain", *,
             span: int = 1) -> None:
        """Plain text, never a formula however it starts (``=HYPERLINK(...)`` stays text).
        ``span``: columns the text may run into when it wraps (for row heights)."""
        if value is None or value == "":
            if style != "plain":
                self.ws.write_blank(row - 1, col - 1, None, self.book.format(style))
            return
        value = str(value)
        self.ws.write_string(row - 1, col - 1, value, self.book.format(style))
        if STYLES[style].get("text_wrap"):
            per_width = _CHARS_PER_WIDTH * (0.85 if STYLES[style].get("bold") else 1.0)
            if span > 1:  # text across merged columns loses less to the cell margins
                per_width *= 1.1
            self._wrapped.append((row, col, value, span, per_width))
        self._seen(row, col)

    def number(self, row: int, col: int, value: float | int | None, style: str = "plain",
               num_format: str | None = None) -> None:
        """A figure; None leaves the cell blank (styled), NaN is ``#N/A``."""
        fmt = self.book.format(style, num_format)
        if value is None:
            self.ws.write_blank(row - 1, col - 1, None, fmt)
        elif isinstance(value, float) and math.isnan(value):
            self.error(row, col, NA, style, num_format)
        else:
            self.ws.write_number(row - 1, col - 1, value, fmt)
        self._seen(row, col)

    def error(self, row: int, col: int, error: str = NA, style: str = "plain",
              num_format: str | None = None) -> None:
        fmt = self.book.format(style, num_format)
        self.ws.write_blank(row - 1, col - 1, None, fmt)  # sizes the sheet's dimensions
        self.ws.table[row - 1][col - 1] = _ErrorValue(error, fmt)
        self._seen(row, col)

    def formula(self, row: int, col: int, formula: str, value: Any, style: str = "calc",
                num_format: str | None = None) -> None:
        """A live formula and its computed result, cached so the file reads right before any
        recalculation."""
        if not formula.startswith("="):
            formula = "=" + formula
        self.ws.write_formula(row - 1, col - 1, formula, self.book.format(style, num_format),
                              cached(value))
        self._seen(row, col)

    def figure(self, row: int, col: int, value: Any, name: str | None, unit: str,
               style: str = "plain", formula: str | None = None) -> None:
        """A figure formatted by its name and unit (display rules), as a value or formula."""
        num_format = excel_format(name, unit)
        if formula is not None:
            self.formula(row, col, formula, value, style, num_format)
        else:
            self.number(row, col, value, style, num_format)

    def paragraph(self, row: int, text: str, last_col: int, style: str = "note_wrap") -> None:
        """Text across columns A..``last_col`` (merged), wrapped: nothing runs off the printed
        page."""
        self.text(row, 1, text, style, span=last_col)
        if last_col > 1:
            self.ws.merge_range(row - 1, 0, row - 1, last_col - 1, text,
                                self.book.format(style))

    def header(self, row: int, labels: Iterable[str], first_col: int = 1) -> None:
        for col, label in enumerate(labels, first_col):
            self.text(row, col, label, "header")

    # -- layout --------------------------------------------------------------------------------
    def set_widths(self, widths: dict[int, float]) -> None:
        for col, w in widths.items():
            self.widths[col] = w
            self.ws.set_column(col - 1, col - 1, w)

    def width(self, col: int) -> float:
        return self.widths.get(col, _DEFAULT_WIDTH)

    def height(self, row: int, points: float) -> None:
        """At least ``points`` tall (a chart's rows, a title)."""
        self._heights[row] = max(self._heights.get(row, 0.0), points)

    def finish(self) -> None:
        """Rows tall enough for their wrapped text: spreadsheets do not grow the rows of a
        file when they open it (LibreOffice prints overlapping text otherwise)."""
        lines: dict[int, int] = {}
        for row, col, value, span, per_width in self._wrapped:
            width = sum(self.width(c) for c in range(col, col + span))
            per_line = max(1, int(width * per_width))
            n = sum(_lines(part, per_line) for part in value.split("\n"))
            lines[row] = max(lines.get(row, 1), n)
        for row, n in lines.items():
            if n > 1:
                self.height(row, _LINE_HEIGHT * n + 2)
        for row, points in self._heights.items():
            self.ws.set_row(row - 1, points)
