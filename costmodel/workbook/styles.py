"""Cell styles of the workbook, following financial-modelling practice (FAST): inputs stand out
(blue on pale yellow), constants are grey, calculations black, results bold on green."""
from __future__ import annotations

from openpyxl.cell.cell import Cell
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side

_thin = Side(style="thin", color="BFBFBF")
BORDER = Border(left=_thin, right=_thin, top=_thin, bottom=_thin)

TITLE = Font(bold=True, size=14)
SECTION = Font(bold=True, size=11, color="1F3864")
HEADER_FONT = Font(bold=True, color="FFFFFF")
HEADER_FILL = PatternFill("solid", fgColor="1F3864")
INPUT_FONT = Font(color="0000FF")
INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
CONSTANT_FILL = PatternFill("solid", fgColor="EDEDED")
RESULT_FONT = Font(bold=True)
RESULT_FILL = PatternFill("solid", fgColor="E2EFDA")
NOTE_FONT = Font(italic=True, color="595959")
WRAP = Alignment(wrap_text=True, vertical="top")


def header(cell: Cell) -> None:
    cell.font, cell.fill, cell.border = HEADER_FONT, HEADER_FILL, BORDER


def input_cell(cell: Cell) -> None:
    cell.font, cell.fill, cell.border = INPUT_FONT, INPUT_FILL, BORDER


def constant_cell(cell: Cell) -> None:
    cell.fill, cell.border = CONSTANT_FILL, BORDER


def calc_cell(cell: Cell) -> None:
    cell.border = BORDER


def result_cell(cell: Cell) -> None:
    cell.font, cell.fill, cell.border = RESULT_FONT, RESULT_FILL, BORDER
