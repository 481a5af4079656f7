"""Where things sit in an exported workbook: the contract the reader relies on.

Every sheet keeps system *i* (1-based) in column D + i - 1 (:data:`FIRST_COL`). On Inputs,
Calculations and Results a row leads with its words in column A (:func:`row_label`), keeps
its code name in column B (:data:`NAME_COL`) and its unit in column C (:data:`UNIT_COL`, the
engine's unit on Inputs, which the reader checks). Names are the scenario keys with dots as
underscores; a name spans its row's system columns, and in a comparison each system's cell
also has a single-cell name with the suffix ``_s1``, ``_s2``...
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...model.results import Result
from ...model.steps import MODEL, SHOWN, shown
from ...sources.curve_point import CurveReading
from .sheet import Book, cell_ref

__all__ = ["FIRST_COL", "SHEETS", "META_FORMAT", "COUNT_INPUTS", "WorkbookSystem", "suffixed",
           "Names", "system_ref", "HEADER_ROW", "system_columns",
           "system_header", "system_width", "NAME_COL", "UNIT_COL", "row_label", "words",
           "DECISION_RECORD", "record_row"]

NAME_COL = 2  # column B: the code name of a row (its words are in column A)
UNIT_COL = 3  # column C: the unit
FIRST_COL = 4  # column D: the first system
HEADER_ROW = 4  # the row naming the systems on Inputs, Calculations, Results
SHEETS = ("Summary", "Cover", "Inputs", "Calculations", "Results", "Sources", "Lists", "Meta")
META_FORMAT = "costmodel-workbook/1"
DECISION_RECORD = "decision"  # the Meta row's label of the request a decision answered
COUNT_INPUTS = {"node_accelerators", "rack_nodes", "electricity_site_accelerators"}


@dataclass
class WorkbookSystem:
    """One priced system: its result and, when read off a curve, the reading."""
    result: Result
    curve: CurveReading | None = None


def record_row(n_systems: int) -> int:
    """The Meta row of a decision's request: below the systems' rows (2 .. n + 1), after a
    blank one, so the systems' list ends where it did."""
    return 2 + n_systems + 1


def suffixed(name: str, index: int) -> str:
    """The single-cell name of system ``index`` (1-based) in a comparison."""
    return f"{name}_s{index}"


def system_ref(name: str, i: int, n: int) -> str:
    """How a formula outside the system row names system ``i``'s (0-based) value: the
    single-cell ``_sN`` name in a comparison, so no formula depends on where it sits."""
    return name if n == 1 else suffixed(name, i + 1)


class Names:
    """Defined names of the workbook."""

    def __init__(self, book: Book, n_systems: int):
        self.book, self.n = book, n_systems

    def add(self, name: str, sheet: str, ref: str) -> None:
        self.book.define_name(name, sheet, ref)

    def row(self, name: str, sheet: str, row: int) -> None:
        """``name`` spans the system columns of ``row``; with several systems each cell also
        gets its suffixed single-cell name."""
        first = cell_ref(row, FIRST_COL, absolute=True)
        last = cell_ref(row, FIRST_COL + self.n - 1, absolute=True)
        self.add(name, sheet, first if self.n == 1 else f"{first}:{last}")
        if self.n > 1:
            for i in range(self.n):
                self.add(suffixed(name, i + 1), sheet,
                         cell_ref(row, FIRST_COL + i, absolute=True))


def system_columns(n: int) -> range:
    return range(FIRST_COL, FIRST_COL + n)


def system_header(systems: Sequence[WorkbookSystem], first: Sequence[str],
                  extra: Sequence[str] = ()) -> list[str]:
    return [*first, *(s.result.name for s in systems), *extra]


def system_width(systems: Sequence[WorkbookSystem], least: float = 16,
                 most: float = 20) -> float:
    """A system column wide enough for its figures and, wrapped on two lines at most, its
    name."""
    longest = max(len(s.result.name) for s in systems)
    return max(least, min(most, longest / 2 + 3))


def words(text: str) -> str:
    """A description as a row's label: its first letter capitalised."""
    return text[:1].upper() + text[1:]


_SHOWN = {shown(n): n for n in SHOWN}


def row_label(name: str) -> str:
    """The words a row of an input, categorical input, constant or step leads with: its
    declared description (a figure in the currency results are shown in: its USD figure's)."""
    if name in _SHOWN:
        return words(MODEL.steps[_SHOWN[name]].description) + \
            ", in the currency results are shown in"
    for table in (MODEL.inputs, MODEL.enums, MODEL.constants, MODEL.steps):
        if name in table:
            return words(table[name].description)
    raise KeyError(name)
