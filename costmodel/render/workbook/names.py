"""Cells behind a workbook's defined names (a name covers one cell or one row of systems)."""
from __future__ import annotations

from openpyxl.cell.cell import Cell
from openpyxl.workbook.workbook import Workbook

__all__ = ["named_cells", "name_target"]


def name_target(wb: Workbook, name: str) -> tuple[str, str] | None:
    """(sheet, A1 range without ``$``) of a defined name, or None if it is missing or does not
    point at exactly one range on a sheet of this workbook."""
    dn = wb.defined_names.get(name)
    if dn is None:
        return None
    dests = list(dn.destinations)
    if len(dests) != 1 or dests[0][0] not in wb.sheetnames:
        return None
    sheet, ref = dests[0]
    return sheet, ref.replace("$", "")


def named_cells(wb: Workbook, name: str) -> list[Cell]:
    """The cells a defined name covers, left to right (KeyError if it is not usable)."""
    target = name_target(wb, name)
    if target is None:
        raise KeyError(name)
    cells = wb[target[0]][target[1]]
    if not isinstance(cells, tuple):
        return [cells]
    return [c for row in cells for c in (row if isinstance(row, tuple) else (row,))]
