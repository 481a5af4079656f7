"""Writing cells with XlsxWriter: every formula with its cached result, every figure with the
number format of its name and unit, widths and row heights that show whole text.

Rows and columns are 1-based here (A1 is row 1, column 1), as the layout describes them.
A value the engine does not have (NaN) is an empty cell where a valid scenario may leave it
so (an absent optional input; a step that reads one, whose formula then gives empty text,
cached as such, shown as a dash by :func:`with_dash`), else the spreadsheet error ``#N/A``.

The workbook's font is Arial 10 (Liberation Sans in LibreOffice, with the same metrics): the
widths and row heights set here print alike in Excel and LibreOffice. A row is as tall as its
wrapped text in whichever of Arial and DejaVu Sans (what LibreOffice uses where neither Arial
nor Liberation Sans is installed) takes more lines, so it prints whole in either.
"""
from __future__ import annotations

import math
import re
from collections import namedtuple
from collections.abc import Iterable
from functools import cache, lru_cache
from io import StringIO
from typing import Any

from xlsxwriter.utility import xl_col_to_name, xl_rowcol_to_cell
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from ..display import excel_format
from .styles import STYLES

__all__ = ["Book", "Sheet", "col_name", "cell_ref", "cached", "NA", "EMPTY", "with_dash",
           "FONT", "ROW_PIXELS", "rows_for", "text_width", "plain_formula", "formula_xml",
           "number_xml", "xml_text"]

NA = "#N/A"
EMPTY = ""  # a formula's result where the engine has no value (see the module docstring)
DASH = "\u2013"
FONT = {"font_name": "Arial", "font_size": 10, "font_scheme": "none"}
ROW_PIXELS = 17  # a row of the default height, 12.75 pt, in pixels (96 an inch)
_ErrorValue = namedtuple("_ErrorValue", "error, format")
_EmptyText = namedtuple("_EmptyText", "formula, format")
_DEFAULT_WIDTH = 8.43  # a column's width when none is set [characters]
_LINE_HEIGHT = 11.6  # a line of wrapped 10 pt text [points] (Liberation Sans: 11.5)
_ROW_PADDING = 2.5  # [points] above and below a wrapped cell's lines


# functions of Excel 2007 and before: XlsxWriter has nothing to add to a formula of these alone
_PLAIN_FUNCTIONS = frozenset({
    "ABS", "AND", "CHOOSE", "COUNT", "COUNTIF", "IF", "INDEX", "INT", "LN", "MATCH", "MAX",
    "MIN", "NA", "NOT", "OR", "ROUND", "ROUNDUP", "ROWS", "SQRT", "SUM", "SUMIF",
    "SUMPRODUCT"})
_FUNCTION = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\(")


class _Xml(str):
    """A cell's finished ``<c>`` element, written as it is: a figure or formula stored this
    way costs a string, not XlsxWriter's tuple, escaping and attribute lists twice over (a
    task's or a chargeback's sheet holds 10^5 of them)."""
    __slots__ = ()


_SURELY_HOLDS = 16_383  # characters: at most 32,766 UTF-16 units, within a cell's 32,767
_NOTHING = _Xml("")  # the last cell of a run written by its first (Sheet.put_row)
_ERROR_CODES = frozenset({"#DIV/0!", "#N/A", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!"})
_XML_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def plain_formula(formula: str) -> bool:
    """Whether ``formula`` (with or without its ``=``) calls functions of Excel 2007 and
    before alone, so it is written as it is (no ``_xlfn.`` prefix to add)."""
    return not formula.endswith("}") and set(_FUNCTION.findall(formula)) <= _PLAIN_FUNCTIONS


def xml_text(text: str) -> str:
    """Text as an XML element holds it (``&``, ``<`` and ``>`` escaped)."""
    return text.translate(_XML_TEXT)


def formula_xml(ref: str, xf: int, text: str, value: Any, *, escaped: bool = False) -> str:
    """The ``<c>`` element of a formula (``text``: plain, without ``=``; ``escaped``:
    already through :func:`xml_text`, as a template filled in with cell references is) and
    its cached result, as XlsxWriter writes it (``value``: as :func:`cached` gives it; empty
    text typed as text, which XlsxWriter would leave untyped, a number)."""
    formula = text if escaped else text.translate(_XML_TEXT)
    if value.__class__ is float:
        return f'<c r="{ref}" s="{xf}"><f>{formula}</f><v>{value!r}</v></c>'
    if isinstance(value, bool):
        return f'<c r="{ref}" s="{xf}" t="b"><f>{formula}</f><v>{int(value)}</v></c>'
    if isinstance(value, str):
        kind = "e" if value in _ERROR_CODES else "str"
        return (f'<c r="{ref}" s="{xf}" t="{kind}"><f>{formula}</f>'
                f'<v>{value.translate(_XML_TEXT)}</v></c>')
    return f'<c r="{ref}" s="{xf}"><f>{formula}</f><v>{value}</v></c>'


def number_xml(ref: str, xf: int, value: float | int) -> str:
    """The ``<c>`` element of a number, as XlsxWriter writes it."""
    return f'<c r="{ref}" s="{xf}"><v>{value:.16G}</v></c>'


class _Worksheet(Worksheet):
    """XlsxWriter writes error results only for formulas; an absent input is a plain ``#N/A``
    error value (the reader and the engine treat it as "not given"). A cell stored as
    :class:`_Xml` is written as it is."""

    def _prepare_formula(self, formula: str, expand_future_functions: bool = False) -> str:
        # XlsxWriter tries some 30 patterns of newer functions on every formula (most of the
        # time of writing a decision's Scan sheet); a formula of older functions alone is
        # only stripped of its "=", as those patterns would leave it
        if formula.startswith("=") and plain_formula(formula):
            return formula[1:]
        return super()._prepare_formula(formula, expand_future_functions)

    def __init__(self) -> None:
        super().__init__()
        # rows whose cells were written whole (0-based row -> their <c> elements in order)
        self.raw_rows: dict[int, str] = {}
        self._row_tag: str | None = None

    def _write_rows(self) -> None:
        if not self.raw_rows:
            super()._write_rows()
            return
        # XlsxWriter's loop over the rows, with the rows written whole put in their place
        self._calculate_spans()
        for row_num in range(self.dim_rowmin, self.dim_rowmax + 1):
            raw = self.raw_rows.get(row_num)
            if raw is not None:
                if self.table.get(row_num) or row_num in self.comments:
                    raise ValueError(f"row {row_num + 1} was written whole and cell by cell")
                info = self.row_info.get(row_num)
                if info is None:
                    self.fh.write(self._plain_row_tag(row_num))
                else:
                    self._write_row(row_num, None, info)
                self.fh.write(raw)
                self.fh.write("</row>")
                continue
            if row_num in self.row_info or row_num in self.comments or self.table[row_num]:
                span = self.row_spans.get(int(row_num / 16))
                if self.table[row_num]:
                    self._write_row(row_num, span, self.row_info.get(row_num))
                    for col_num in range(self.dim_colmin, self.dim_colmax + 1):
                        if col_num in self.table[row_num]:
                            self._write_cell(row_num, col_num, self.table[row_num][col_num])
                    self._xml_end_tag("row")
                else:
                    self._write_empty_row(row_num, span, self.row_info.get(row_num))

    def _plain_row_tag(self, row: int) -> str:
        """A ``<row>`` start tag of a row without a height or format of its own (no spans:
        they are optional), as XlsxWriter writes it."""
        if self._row_tag is None:
            fh, self.fh = self.fh, StringIO()
            try:
                self._write_row(0, None)
                self._row_tag = self.fh.getvalue().replace('r="1"', 'r="{}"', 1)
            finally:
                self.fh = fh
        return self._row_tag.format(row + 1)

    def _write_cell(self, row: int, col: int, cell: Any) -> None:
        if cell.__class__ is _Xml:
            self.fh.write(cell)
            return
        if isinstance(cell, _EmptyText):  # empty text, typed as text (XlsxWriter leaves
            attributes = [("r", xl_rowcol_to_cell(row, col))]  # "" untyped: a number)
            if cell.format is not None:
                attributes.append(("s", cell.format._get_xf_index()))
            attributes.append(("t", "str"))
            self._xml_formula_element(cell.formula, "", attributes)
            return
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


@cache
def col_name(col: int) -> str:
    """The letter(s) of a 1-based column."""
    return xl_col_to_name(col - 1)


def cell_ref(row: int, col: int, absolute: bool = False) -> str:
    """A1 reference of a 1-based cell (``$D$5`` when ``absolute``)."""
    if absolute:
        return f"${col_name(col)}${row}"
    return f"{col_name(col)}{row}"


def cached(value: Any, empty: bool = False) -> Any:
    """A formula's cached result: numbers as float, NaN as ``#N/A`` (as empty text when
    ``empty``: the formula gives "" where the engine has no value), infinity as ``#DIV/0!``
    (what a spreadsheet shows for a division by zero), text as is."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        v = float(value)
        if math.isnan(v):
            return EMPTY if empty else NA
        return "#DIV/0!" if math.isinf(v) else v
    return value


def rows_for(pixels: float) -> int:
    """Rows of the default height that a chart ``pixels`` tall covers (one more: its
    offset)."""
    return -(-int(pixels) // ROW_PIXELS) + 1


def with_dash(num_format: str | None) -> str:
    """A figure's number format that shows empty text (no value) as a dash: the format of
    :func:`costmodel.render.display.excel_format` (one section, or up to three with
    conditions) with a text section added."""
    text = f'"{DASH}"'
    if not num_format:
        return f"General;-General;General;{text}"
    sections = num_format.split(";")
    if not sections[0].startswith("["):  # positive;negative;zero;text
        plain = sections[0]
        return f"{plain};-{plain};{plain};{text}"
    if len(sections) == 2:  # one condition: its complement states the second
        condition = sections[0][1:].split("]", 1)[0]
        flipped = {">=": "<", ">": "<=", "<=": ">", "<": ">="}
        op = next(o for o in (">=", "<=", ">", "<") if condition.startswith(o))
        sections = [sections[0], f"[{flipped[op]}{condition[len(op):]}]{sections[1]}",
                    sections[1]]
    return ";".join([*sections, text])


# Arial's (and Liberation Sans's) advance widths [1/1000 em]: how much of a line text takes
_ARIAL = {" ": 278, "!": 278, '"': 355, "#": 556, "$": 556, "%": 889, "&": 667, "'": 191,
          "(": 333, ")": 333, "*": 389, "+": 584, ",": 278, "-": 333, ".": 278, "/": 278,
          ":": 278, ";": 278, "<": 584, "=": 584, ">": 584, "?": 556, "@": 1015, "[": 278,
          "\\": 278, "]": 278, "^": 469, "_": 556, "`": 333, "{": 334, "|": 260, "}": 334,
          "~": 584, **dict.fromkeys("0123456789", 556),
          **dict(zip("abcdefghijklmnopqrstuvwxyz",
                     (556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556,
                      556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500),
                     strict=True)),
          **dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                     (667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722,
                      778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611),
                     strict=True))}
# DejaVu Sans's: what LibreOffice sets Arial in where neither Arial nor a font with its
# metrics (Liberation Sans) is installed, as on a fresh Debian
_DEJAVU = {" ": 318, "!": 401, '"': 460, "#": 838, "$": 636, "%": 950, "&": 780, "'": 275,
           "(": 390, ")": 390, "*": 500, "+": 838, ",": 318, "-": 361, ".": 318, "/": 337,
           ":": 337, ";": 337, "<": 838, "=": 838, ">": 838, "?": 531, "@": 1000, "[": 390,
           "\\": 337, "]": 390, "^": 838, "_": 500, "`": 500, "{": 636, "|": 337, "}": 636,
           "~": 838, **dict.fromkeys("0123456789", 636),
           **dict(zip("abcdefghijklmnopqrstuvwxyz",
                      (613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634,
                       612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525),
                      strict=True)),
           **dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                      (684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748,
                       787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685),
                      strict=True))}
_Font = namedtuple("_Font", "widths, bold, digit")
# each font's bold is about this much wider; a column's width unit is the font's digit,
# so a column widens with the font that sets it
_FONTS = (_Font(_ARIAL, 1.08, 556), _Font(_DEJAVU, 1.13, 636))
_POINTS_PER_WIDTH = 5.4  # [points] of a line of Arial in a unit of column width (measured in
# LibreOffice: 5.55, less a margin)


def _points(text: str, size: float, bold: bool = False, font: _Font = _FONTS[0]) -> float:
    """How long ``text`` is in ``font`` (Arial) at ``size`` points [points]."""
    return sum(font.widths.get(c, font.digit) for c in text) * size / 1000 * \
        (font.bold if bold else 1.0)


def text_width(text: str, size: float = 10, bold: bool = False) -> float:
    """The column width ``text`` takes on one line in the wider of Arial and DejaVu Sans
    [characters]."""
    return max(_points(text, size, bold, f) / (_POINTS_PER_WIDTH * f.digit / _FONTS[0].digit)
               for f in _FONTS)


@lru_cache(maxsize=4096)  # labels, notes and names repeat along a workbook's rows
def _lines(text: str, width: float, size: float = 10, bold: bool = False) -> int:
    """Lines ``text`` takes wrapped at its spaces in ``width`` units of column width, in
    whichever of Arial and DejaVu Sans wraps it onto more (a row sized for both prints
    whole in either); a word longer than a line breaks where the line ends, as
    spreadsheets break it."""
    return max(_font_lines(text, width, size, bold, f) for f in _FONTS)


def _font_lines(text: str, width: float, size: float, bold: bool, font: _Font) -> int:
    line = width * _POINTS_PER_WIDTH * font.digit / _FONTS[0].digit
    space = _points(" ", size, bold, font)
    lines, used = 1, 0.0
    for word in text.split():
        w = _points(word, size, bold, font)
        if used and used + space + w <= line:
            used += space + w
            continue
        if used:
            lines += 1
        while w > line:  # a word longer than a line
            lines += 1
            w -= line
        used = w
    return lines


class Book:
    """An XlsxWriter workbook in memory, with one format per (style, number format)."""

    def __init__(self) -> None:
        from io import BytesIO
        self.buffer = BytesIO()
        self.wb = Workbook(self.buffer, {"in_memory": True, "strings_to_formulas": False,
                                         "strings_to_numbers": False,
                                         "strings_to_urls": False,
                                         "default_format_properties": dict(FONT),
                                         "default_row_height": 17})  # 12.75 pt
        self.sheets: list[Sheet] = []
        self._formats: dict[tuple[str, str | None], Any] = {}

    def format(self, style: str, num_format: str | None = None,
               align: str | None = None) -> Any:
        key = (style, num_format, align)
        fmt = self._formats.get(key)
        if fmt is None:
            props = dict(STYLES[style])
            if num_format:
                props["num_format"] = num_format
            if align:
                props["align"] = align
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
        # row, col, text, columns spanned, font size, bold
        self._wrapped: list[tuple[int, int, str, int, float, bool]] = []
        self._heights: dict[int, float] = {}
        self.last_row = 0
        self.last_col = 0
        # printing (set by print_setup): the scale, the rows repeated on every page, and
        # the blocks of rows (a table, a chart) that should not be cut by a page break
        self.print_scale = 1.0
        self.title_rows: tuple[int, int] | None = None
        self.page_points = 0.0  # the printable height of a page at 100 % [points]
        self.least_scale = 0.0  # fitted to the page width: the smallest scale to save a page
        self._blocks: list[tuple[int, int]] = []

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
            self._wrapped.append((row, col, value, span,
                                  STYLES[style].get("font_size", FONT["font_size"]),
                                  bool(STYLES[style].get("bold"))))
        self._seen(row, col)

    def number(self, row: int, col: int, value: float | int | None, style: str = "plain",
               num_format: str | None = None) -> None:
        """A figure; None leaves the cell blank (styled), NaN is ``#N/A``."""
        fmt = self.book.format(style, num_format)
        if value is None:
            self.ws.write_blank(row - 1, col - 1, None, fmt)
        elif isinstance(value, float) and not math.isfinite(value):
            if math.isnan(value):
                self.error(row, col, NA, style, num_format)
            else:  # XlsxWriter refuses it, and says so
                self.ws.write_number(row - 1, col - 1, value, fmt)
        else:
            self.put(row, col, number_xml(cell_ref(row, col), fmt._get_xf_index(), value))
        self._seen(row, col)

    def error(self, row: int, col: int, error: str = NA, style: str = "plain",
              num_format: str | None = None) -> None:
        fmt = self.book.format(style, num_format)
        self.ws.write_blank(row - 1, col - 1, None, fmt)  # sizes the sheet's dimensions
        self.ws.table[row - 1][col - 1] = _ErrorValue(error, fmt)
        self._seen(row, col)

    def formula(self, row: int, col: int, formula: str, value: Any, style: str = "calc",
                num_format: str | None = None, *, empty: bool = False,
                plain: bool | None = None) -> None:
        """A live formula and its computed result, cached so the file reads right before any
        recalculation. ``empty``: the formula gives empty text where the engine has no
        value (NaN), shown as a dash. ``plain``: whether it calls functions of Excel 2007
        and before alone (:func:`plain_formula`; None: looked at here)."""
        if empty:  # the dash where figures are: on the right
            num_format = with_dash(num_format)
        fmt = self.book.format(style, num_format, "right" if empty else None)
        result = cached(value, empty)
        text = formula[1:] if formula.startswith("=") else formula
        if plain is None:
            plain = plain_formula(text)
        if plain and text:  # (an empty formula: XlsxWriter's warning, no cell)
            self.put(row, col, formula_xml(cell_ref(row, col), fmt._get_xf_index(), text,
                                           result))
        else:
            self.ws.write_formula(row - 1, col - 1, "=" + text, fmt, result)
            if result == EMPTY:
                stored = self.ws.table[row - 1][col - 1]
                self.ws.table[row - 1][col - 1] = _EmptyText(stored.formula, fmt)
        self._seen(row, col)

    def put(self, row: int, col: int, xml: str) -> None:
        """A cell's finished ``<c>`` element (:func:`formula_xml`, :func:`number_xml`) at
        ``row``, ``col`` (1-based; the caller counts it in :attr:`last_row` and
        :attr:`last_col`)."""
        if self.ws._check_dimensions(row - 1, col - 1):
            raise ValueError(f"cell ({row}, {col}) is beyond a worksheet's bounds")
        self.ws.table[row - 1][col - 1] = _Xml(xml)

    def put_row(self, row: int, first_col: int, last_col: int, xml: str) -> None:
        """A run of cells' finished ``<c>`` elements, in column order, from ``first_col`` to
        ``last_col`` of ``row`` (1-based), where nothing else is written: one entry for the
        row where XlsxWriter keeps one a cell."""
        ws = self.ws
        if ws._check_dimensions(row - 1, first_col - 1) or \
                ws._check_dimensions(row - 1, last_col - 1):
            raise ValueError(f"row {row}, columns {first_col}-{last_col}: beyond a "
                             f"worksheet's bounds")
        cells = ws.table[row - 1]
        cells[first_col - 1] = _Xml(xml)
        if last_col > first_col:  # the row's span, as the sheet's spans are counted
            cells[last_col - 1] = _NOTHING

    def string_xml(self, ref: str, xf: int, text: str) -> str | None:
        """A text cell's ``<c>`` element (style ``xf``), the text kept once in the file's
        shared strings, as XlsxWriter writes it; None for text :meth:`text` must write
        (empty, or longer than a cell surely holds)."""
        if not text or len(text) > _SURELY_HOLDS:
            return None
        index = self.ws.str_table._get_shared_string_index(text)
        return f'<c r="{ref}" s="{xf}" t="s"><v>{index}</v></c>'

    def put_rows(self, first: int, last: int, first_col: int, last_col: int,
                 rows: dict[int, str]) -> None:
        """Whole rows: each row's (1-based) finished ``<c>`` elements in column order, all
        within rows ``first``..``last`` and columns ``first_col``..``last_col``, where
        nothing is written cell by cell."""
        ws = self.ws
        if ws._check_dimensions(first - 1, first_col - 1) or \
                ws._check_dimensions(last - 1, last_col - 1):
            raise ValueError(f"rows {first}-{last}, columns {first_col}-{last_col}: beyond "
                             f"a worksheet's bounds")
        ws.raw_rows.update((r - 1, xml) for r, xml in rows.items())
        self._seen(last, last_col)

    def xf(self, style: str, num_format: str | None = None, align: str | None = None) -> int:
        """The index of a style's format in the file (:meth:`put`'s cells carry it)."""
        return self.book.format(style, num_format, align)._get_xf_index()

    def figure(self, row: int, col: int, value: Any, name: str | None, unit: str,
               style: str = "plain", formula: str | None = None, *,
               empty: bool = False) -> None:
        """A figure formatted by its name and unit (display rules), as a value or formula
        (``empty``: see :meth:`formula`; a value: NaN leaves the cell blank)."""
        num_format = excel_format(name, unit)
        if formula is not None:
            self.formula(row, col, formula, value, style, num_format, empty=empty)
        elif empty and isinstance(value, float) and math.isnan(value):
            self.number(row, col, None, style, num_format)
        else:
            self.number(row, col, value, style, num_format)

    def paragraph(self, row: int, text: str, last_col: int, style: str = "note_wrap", *,
                  first_col: int = 1) -> None:
        """Text across columns ``first_col``..``last_col`` (merged), wrapped: nothing runs off
        the printed page."""
        self.text(row, first_col, text, style, span=last_col - first_col + 1)
        if last_col > first_col:
            self.ws.merge_range(row - 1, first_col - 1, row - 1, last_col - 1, text,
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

    def keep_together(self, first: int, last: int) -> None:
        """Rows ``first``..``last`` print on one page where they fit on one: a page break
        goes before them rather than through them."""
        self._blocks.append((first, last))

    def height(self, row: int, points: float) -> None:
        """At least ``points`` tall (a chart's rows, a title)."""
        self._heights[row] = max(self._heights.get(row, 0.0), points)

    def finish(self) -> None:
        """Rows tall enough for their wrapped text: spreadsheets do not grow the rows of a
        file when they open it (LibreOffice prints overlapping text otherwise)."""
        heights: dict[int, float] = {}
        for row, col, value, span, size, bold in self._wrapped:
            width = sum(self.width(c) for c in range(col, col + span))
            n = sum(_lines(part, width, size, bold) for part in value.split("\n"))
            if n > 1:
                points = _LINE_HEIGHT * size / FONT["font_size"] * n + _ROW_PADDING
                heights[row] = max(heights.get(row, 0.0), points)
        for row, points in heights.items():
            self.height(row, points)
        for row, points in self._heights.items():
            self.ws.set_row(row - 1, points)
        if self._blocks and self.page_points:
            self.ws.set_h_pagebreaks(sorted(set(self.ws.hbreaks) | set(self._page_breaks())))
        elif self.least_scale and not self.ws.hbreaks:
            self.ws.fit_to_pages(1, self._pages_tall())

    def _row_points(self, row: int) -> float:
        return self._heights.get(row, ROW_PIXELS * 0.75)

    def _pages_tall(self) -> int:
        """The fewest pages the sheet prints on, fitted to the width, at a scale no smaller
        than :attr:`least_scale` (a few rows over a page are drawn in rather than printed
        on a page of their own); 0: as many as it takes."""
        page = self.page_points
        titles = sum(self._row_points(r) for r in range(self.title_rows[0],
                                                           self.title_rows[1] + 1)) \
            if self.title_rows else 0.0
        total = sum(self._row_points(r) for r in range(1, self.last_row + 1))
        for pages in range(1, 50):
            # a page holds its titles and its share of the rows, less a row left over
            if page / (total / pages + titles + 2 * ROW_PIXELS) >= self.least_scale:
                return pages
        return 0

    def _page_breaks(self) -> list[int]:
        """Page breaks (XlsxWriter's: before the 0-based row) that keep each block on one
        page, filling pages from the top as the spreadsheet does."""
        tall = self._row_points
        titles = sum(tall(r) for r in range(self.title_rows[0], self.title_rows[1] + 1)) \
            if self.title_rows else 0.0
        page = self.page_points / self.print_scale - 12  # [points] less a safety line
        starts = {first: last for first, last in self._blocks}
        existing = {b + 1 for b in self.ws.hbreaks}  # as 1-based rows that start a page
        breaks, used, row = [], 0.0, 1
        while row <= self.last_row:
            if row in existing and row > 1:
                used = titles
            last = starts.get(row)
            if last is not None and used > titles:
                block = sum(tall(r) for r in range(row, last + 1))
                if used + block > page and titles + block <= page:
                    breaks.append(row - 1)
                    used = titles
            used += tall(row)
            if used > page:  # the spreadsheet's own break, before this row
                used = titles + tall(row)
            row += 1
        return breaks
