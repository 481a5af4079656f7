"""The Tariff sheet: each system's profiles (energy rates by month and hour, demand charges,
the calendar's weights, the load shape) as live blocks of cells, and the profile steps as
blocks of formulas over them; the Calculations sheet's reductions (``SUMPRODUCT``, ``MAX``)
read these blocks, so an edited rate or load recomputes every figure.

A block is ``months`` rows (1, or 12 for a tariff with seasons), or one row a demand period
(its hours, charge and months billed; a tariff without one has a row that bills nothing), by
``hours`` columns (24, or 48: a weekday's hours, then a weekend day's); a profile by month or
by period alone is one column. Each system with a profile has its own blocks, one under
another; a system without one reads ``NA()`` in the branches that would use it (never taken
while its choices stand). Block names: the input or step name (one system), or with ``_sN``
(several).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...model.declaration import ROWS, names_in
from ...model.inputs import Scenario
from ...model.profile import (
    AXES,
    MONTH_NAMES,
    PROFILE_ITEMS,
    PROFILE_STEPS,
    hourly_profile,
    period_labels,
    slot_labels,
)
from ...model.steps import MODEL
from ..display import excel_format
from .excel_formula import NOT_AVAILABLE, Cell, cell_formula, to_formula
from .layout import Names, WorkbookSystem, suffixed, system_ref
from .sheet import Sheet, cell_ref, text_width

__all__ = ["ProfileLayout", "PROFILE_STEPS", "reads_profiles", "write_tariff",
           "TARIFF_SHEET"]

TARIFF_SHEET = "Tariff"
_ITEMS = PROFILE_ITEMS
_AXES = AXES
_FIRST = 2  # column B: hour 00 (column A labels a block's months or periods)
_DAY = 24  # hours a page across: a weekday's, then a weekend day's
# calendar weights are conventions, not choices: shown as constants
_CALENDAR = {"tariff_month_weight", "tariff_months_billed", "hour_weight",
             "electricity_tariff_demand_period_months"}


def _row_axis(name: str) -> str | None:
    """The axis a profile's rows run along (month or period), None for one row."""
    return next((a for a in ROWS if a in _AXES[name]), None)


def reads_profiles(step: str) -> bool:
    """Whether a step's formula names a profile (so it is written per system)."""
    return bool(names_in(MODEL.steps[step].tree) & _AXES.keys())


@dataclass(frozen=True)
class _Block:
    row: int  # first row (1-based)
    rows: int
    cols: int
    name: str  # the block's defined name

    def ref(self, month: int | None, hour: int | None) -> str:
        """One cell (month, hour), a column (month None), a row (hour None), or the whole
        block (both None), on the Tariff sheet."""
        r0, r1 = (self.row, self.row + self.rows - 1) if month is None else \
            (self.row + month,) * 2
        c0, c1 = (_FIRST, _FIRST + self.cols - 1) if hour is None else (_FIRST + hour,) * 2
        first = cell_ref(r0, c0, absolute=True)
        if (r0, c0) == (r1, c1):
            return f"{TARIFF_SHEET}!{first}"
        return f"{TARIFF_SHEET}!{first}:{cell_ref(r1, c1, absolute=True)}"


class ProfileLayout:
    """Where each system's profiles sit, their values, and how a formula names them."""

    def __init__(self, scenarios: Sequence[Scenario]):
        self.n = len(scenarios)
        self.blocks: dict[tuple[int, str], _Block] = {}
        self.values: dict[tuple[int, str], np.ndarray] = {}
        self.shapes: dict[int, tuple[int, int]] = {}
        self.titles: dict[int, int] = {}  # system -> its title row
        row = 3
        for i, scenario in enumerate(scenarios):
            profile = hourly_profile(scenario)
            if profile is None:
                continue
            self.shapes[i] = (profile.months, profile.hours)
            self.titles[i] = row
            row += 2  # the title, then the hours' header
            for name in _ITEMS:
                value = profile.values[name]
                if not np.all(np.isfinite(value)):
                    continue  # a profile this system does not have
                full = value.shape
                label = name if self.n == 1 else suffixed(name, i + 1)
                # a line naming the block, then its rows
                self.blocks[i, name] = _Block(row + 2, full[0], full[1], label)
                self.values[i, name] = value
                row += full[0] + 2
            row += 2
        self.last_row = row

    def __bool__(self) -> bool:
        return bool(self.shapes)

    def resolve(self, name: str, cell: Cell) -> str:
        """A name's text in a formula written at ``cell`` (see :func:`cell_formula`)."""
        axes = _AXES.get(name)
        if axes is None:  # a scalar: its single cell (constants have only one)
            return name if name in MODEL.constants else system_ref(name, cell.system, self.n)
        block = self.blocks.get((cell.system, name))
        if block is None:
            return NOT_AVAILABLE
        rows = _row_axis(name)
        want_row = rows is not None and rows not in cell.reduced
        want_hour = "hour" in axes and "hour" not in cell.reduced
        if (want_row and cell.month is None) or (want_hour and cell.hour is None):
            raise ValueError(f"{name} is read outside its block and any reduction")
        if not want_row and not want_hour:
            return block.name
        return block.ref(cell.month if want_row else None if block.rows > 1 else 0,
                         cell.hour if want_hour else None if block.cols > 1 else 0)

    def step_formulas(self, step: str) -> list[str]:
        """A Calculations row's formula for each system (``=...``): the same text along the
        row, unless the step reads a profile."""
        tree = MODEL.steps[step].tree
        if not reads_profiles(step):
            return ["=" + to_formula(tree)] * self.n
        return ["=" + cell_formula(tree, self.resolve, Cell(i)) for i in range(self.n)]


def _cell_value(value: float) -> float:
    return float(value) if math.isfinite(value) else math.nan


def _across(ws: Sheet, row: int, text: str, style: str, days: int) -> None:
    """``text`` over each day's hours (merged, wrapped), not in column A: column A is
    repeated beside each day's page, and text running out of it would print cut there."""
    for day in range(days):
        first = _FIRST + day * _DAY
        ws.paragraph(row, text, first + _DAY - 1, style, first_col=first)


def write_tariff(ws: Sheet, systems: Sequence[WorkbookSystem], layout: ProfileLayout,
                 names: Names) -> None:
    """The Tariff sheet (only written when some system has a tariff or a load shape).
    It prints a day's hours a page across, column A repeated on each: the titles and each
    block's line are written over each day's hours, so every page carries them whole."""
    widest = max(hours for _, hours in layout.shapes.values())
    days = -(-widest // _DAY)
    _across(ws, 1, "Tariff and load by hour: change the blue cells and every figure "
                   "recomputes", "title", days)
    # the row labels print whole: a demand period's ("period 1 (Jun-Sep)") is the longest
    labels = [label for s in systems if s.result.scenario.electricity.tariff is not None
              for label in period_labels(s.result.scenario.electricity.tariff)]
    ws.set_widths({1: max([12.0, *(text_width(x) + 1.0 for x in labels)]),
                   **{_FIRST + h: 6.5 for h in range(widest)}})
    _across(ws, 2, "Hours are local time (00 = 00:00-01:00); 'we' columns are weekend "
                   "days. Weekdays weigh 5/7 of the year and weekend days 2/7; a month "
                   "weighs its days in a 365-day year.", "note_wrap", days)
    for i, (months, hours) in layout.shapes.items():
        s = systems[i]
        scenario = s.result.scenario
        tariff, title = scenario.electricity.tariff, layout.titles[i]
        what = "flat price" if tariff is None else \
            f"tariff {tariff.name}" + (f", {tariff.utility}" if tariff.utility else "") + \
            (f", effective {tariff.effective}" if tariff.effective else "")
        load = "load shape by hour" if scenario.load is not None else "utilisation in " \
                                                                      "every hour"
        _across(ws, title, f"{s.result.name}: {what}; {load}", "section_wrap",
                -(-hours // _DAY))
        ws.header(title + 1, ["hour", *slot_labels(hours)])
        rows = {"month": [MONTH_NAMES[m] if months == 12 else "all year"
                          for m in range(months)],
                "period": period_labels(tariff)}
        for (system, name), block in layout.blocks.items():
            if system != i:
                continue
            _write_block(ws, block, name, layout, i, rows)
            names.add(block.name, TARIFF_SHEET,
                      block.ref(None, None).split("!", 1)[1])
    ws.ws.freeze_panes(0, 1)


def _write_block(ws: Sheet, block: _Block, name: str, layout: ProfileLayout, system: int,
                 labels: dict[str, list[str]]) -> None:
    """One block: its rows labelled (months, or demand periods), input cells or formulas."""
    is_input = name in MODEL.inputs
    item = MODEL.inputs[name] if is_input else MODEL.steps[name]
    value = layout.values[system, name]
    # one line above the block: its name, what it is, its unit (over each day's hours)
    _across(ws, block.row - 1, f"{name}: {item.description} [{item.unit}]", "label_wrap",
            -(-block.cols // _DAY))
    fmt = excel_format(name, item.unit)
    style = "constant" if name in _CALENDAR else "input" if is_input else "calc"
    rows = _row_axis(name)
    for r in range(block.rows):
        if rows is not None:
            ws.text(block.row + r, 1, labels[rows][r])
        for c in range(block.cols):
            v = _cell_value(value[r, c])
            if is_input:
                ws.number(block.row + r, _FIRST + c, v, style, fmt)
            else:
                cell = Cell(system, r if rows is not None else None,
                            c if "hour" in _AXES[name] else None)
                text = cell_formula(MODEL.steps[name].tree, layout.resolve, cell,
                                    scalar=False)
                ws.formula(block.row + r, _FIRST + c, "=" + text, v, style, fmt)
