"""How each sheet prints: landscape, its area, its header rows and name columns repeated on
every page, and a legible scale.

A sheet that fits one page wide at 70 % or more is fitted to the width; a wider one prints at
:data:`WIDE_SCALE` over several pages, its name and unit columns repeated on each, rather
than shrunk until nobody can read it. The width is estimated from the column widths the
export sets: a unit of width is the digit of the workbook's Arial 10, 7 pixels (7.2 allowed:
LibreOffice's Liberation Sans has Arial's metrics and measures a column about 2 % wider),
96 pixels an inch. The sheets are laid out to print one page wide at 85 % or more.

The estimate only chooses between fitting and :data:`WIDE_SCALE`: a fitted sheet is scaled
by the spreadsheet, with the font it has. Where Arial and a metric-compatible font are
missing (LibreOffice then sets the workbook in DejaVu Sans, whose digit is 14 % wider, and
widens every column with it) a fitted sheet prints smaller, never wider than its pages.
"""
from __future__ import annotations

from .sheet import Sheet

__all__ = ["print_setup", "page_scale", "MIN_SCALE", "WIDE_SCALE", "PRINTABLE_WIDTH",
           "PRINTABLE_HEIGHT", "SHRINK"]

MIN_SCALE = 0.70  # smallest scale fitted to a page
SHRINK = 0.93  # a sheet a few rows longer than its pages prints this much smaller, at least
WIDE_SCALE = 85  # [%] for sheets too wide to fit at MIN_SCALE
PAPER_A4 = 9
MARGIN = 0.5  # [inch] left and right
MARGIN_TOP = 0.5  # [inch] top and bottom (the page footer sits 0.3 inch from the edge)
# A4 landscape, 11.69 x 8.27 inch, less the margins: also inside US Letter's 11 x 8.5
PRINTABLE_WIDTH = 11.0 - 2 * MARGIN  # [inch]
PRINTABLE_HEIGHT = 8.27 - 2 * MARGIN_TOP  # [inch]
_PX_PER_INCH = 96.0
_PX_PER_CHAR = 7.2
_MARGIN_CHARS = 0.71


def column_inches(width: float, stored: bool = False) -> float:
    """A column of ``width`` characters, printed at 100 % [inch]. The file stores a width
    with about 0.71 character of cell margin added (``stored``: a width as read back)."""
    pixels = (width + (0 if stored else _MARGIN_CHARS)) * _PX_PER_CHAR
    return pixels / _PX_PER_INCH


def page_scale(sheet: Sheet, first_col: int, last_col: int, stored: bool = False) -> float:
    """The scale at which columns ``first_col``..``last_col`` fit one page wide (at most 1)."""
    inches = sum(column_inches(sheet.width(c), stored)
                 for c in range(first_col, last_col + 1))
    return min(1.0, PRINTABLE_WIDTH / inches) if inches else 1.0


def print_setup(sheet: Sheet, *, last_col: int | None = None, last_row: int | None = None,
                title_rows: tuple[int, int] | None = None, title_cols: int = 0,
                one_page: bool = False, page_cols: int | None = None) -> None:
    """Landscape A4 over A1:(last_col, last_row); ``title_rows`` (first, last, 1-based)
    repeat at the top of each page, the first ``title_cols`` columns on its left.
    ``one_page``: fit the whole area on one page (the Summary). ``page_cols``: a sheet
    wider than a page prints ``page_cols`` columns a page after its title columns (the
    Tariff's 24 hours of a day), fitted so that each page's columns fit its width."""
    ws = sheet.ws
    last_col = last_col or max(sheet.last_col, 1)
    last_row = last_row or max(sheet.last_row, 1)
    ws.set_landscape()
    ws.set_paper(PAPER_A4)
    ws.set_margins(left=MARGIN, right=MARGIN, top=MARGIN_TOP, bottom=MARGIN_TOP)
    ws.print_area(0, 0, last_row - 1, last_col - 1)
    ws.set_footer(f"&L{sheet.title}&RPage &P of &N")
    sheet.page_points = PRINTABLE_HEIGHT * 72
    if title_rows is not None:
        ws.repeat_rows(title_rows[0] - 1, title_rows[1] - 1)
        sheet.title_rows = title_rows
    if one_page:
        ws.fit_to_pages(1, 1)
        return
    if page_cols is not None:
        # fitted to as many pages wide as there are groups, each after a manual break
        # (LibreOffice keeps the breaks and scales until each group fits its page, in the
        # font it has); a fixed scale would let a wider font push columns onto pages of
        # their own
        breaks = list(range(title_cols + page_cols, last_col, page_cols))
        ws.fit_to_pages(len(breaks) + 1, 0)
        sheet.print_scale = page_scale(sheet, 1, title_cols + page_cols)
        ws.repeat_columns(0, title_cols - 1)
        ws.set_v_pagebreaks(breaks)
        return
    scale = page_scale(sheet, 1, last_col)
    if scale >= MIN_SCALE:
        ws.fit_to_pages(1, 0)  # one page wide, as many pages long as it takes (or a page
        sheet.print_scale = scale  # fewer, a little smaller: Sheet.finish)
        sheet.least_scale = max(MIN_SCALE, scale * SHRINK)
        return
    ws.set_print_scale(WIDE_SCALE)
    sheet.print_scale = WIDE_SCALE / 100
    if title_cols:
        ws.repeat_columns(0, title_cols - 1)
