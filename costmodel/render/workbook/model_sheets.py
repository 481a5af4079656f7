"""The live model: the Lists of categorical levels, the Inputs, the Calculations, and the hidden
Meta record of what the engine was given (the sheets the reader reads back)."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ... import __version__
from ...model.declaration import ChosenNames
from ...model.inputs import quantity_field
from ...model.results import HEADLINE
from ...model.steps import MODEL, SHOWN, shown
from ...model.units import SHOWN_CURRENCY
from ..display import display_unit, excel_format
from .excel_formula import MAY_BE_EMPTY, levels_name
from .layout import (
    COUNT_INPUTS,
    FIRST_COL,
    HEADER_ROW,
    META_FORMAT,
    NAME_COL,
    UNIT_COL,
    Names,
    WorkbookSystem,
    row_label,
    system_header,
    system_width,
)
from .sheet import Sheet, cell_ref, col_name
from .tariff_sheet import ProfileLayout

__all__ = ["write_lists", "write_inputs", "write_calculations", "write_meta", "write_meta_row",
           "input_value",
           "unit_shown_as", "used_inputs"]

_CHUNK = 30000  # characters of JSON per Meta cell (a cell holds at most 32,767)
_VALIDATION: dict[str, dict[str, Any]] = {
    "fraction": {"validate": "decimal", "criteria": "between", "minimum": 0, "maximum": 1,
                 "error_message": "a fraction from 0 to 1 (0% to 100%)"},
    "positive": {"validate": "decimal", "criteria": ">", "value": 0,
                 "error_message": "must be greater than 0"},
    "non_negative": {"validate": "decimal", "criteria": ">=", "value": 0,
                     "error_message": "must not be negative"},
    "count": {"validate": "integer", "criteria": ">=", "value": 1,
              "error_message": "a whole number, at least 1"},
    "pue": {"validate": "decimal", "criteria": ">=", "value": 1,
            "error_message": "PUE is at least 1"},
}


def write_lists(ws: Sheet, names: Names) -> None:
    ws.text(1, 1, "Levels of the categorical inputs (named <input>_levels)", "section")
    for col, enum in enumerate(MODEL.enums.values(), 1):
        ws.text(2, col, enum.name, "header")
        for r, level in enumerate(enum.levels, 3):
            ws.text(r, col, level)
        letter = col_name(col)
        names.add(levels_name(enum.name), "Lists",
                  f"${letter}$3:${letter}${2 + len(enum.levels)}")
    ws.set_widths({c: 28 for c in range(1, len(MODEL.enums) + 1)})
    ws.ws.hide()


def _rule_for(name: str, key: str) -> str:
    if name in COUNT_INPUTS:
        return "count"
    meta = quantity_field(key)
    if meta is None:
        return "non_negative"
    if meta.minimum is not None and meta.minimum >= 1:  # (a plausible bound below 1, e.g.
        return "pue"                                  # 1e-6 utilisation, is the reader's)
    if meta.unit == "dimensionless" and meta.maximum is not None:
        return "fraction"
    return "positive" if meta.positive else "non_negative"


def input_value(values: dict[str, float | int], name: str) -> Any:
    """A cell value for an input from :meth:`Scenario.to_inputs` magnitudes: the level's
    name for a categorical input, NaN for an absent one."""
    if name in MODEL.enums:
        return MODEL.enums[name].levels[int(values[name])]
    value = values[name]
    if isinstance(value, float) and math.isnan(value):
        return value
    return int(value) if name in COUNT_INPUTS else value


def _key_of(name: str) -> str:
    return MODEL.inputs[name].key if name in MODEL.inputs else MODEL.enums[name].key


def unit_shown_as(name: str, unit: str) -> str | None:
    """The number format of an Inputs unit cell: the cell keeps the engine's unit (what the
    formulas assume; the reader checks it) and shows the unit the value is displayed in
    (``%/year`` for a cost of capital kept as a fraction, nothing for a count)."""
    shown = display_unit(name, unit)
    if shown == unit:
        return None
    return ';;;"' + shown + '"' if shown else ";;;"


class _Used(ChosenNames):
    """The names an expression reads with its categorical inputs at given levels: a
    ``choose`` reads its selector and the option selected (the others are never computed)."""

    def choose(self, selector: str, options: tuple[frozenset, ...]) -> frozenset:
        return frozenset((selector,)) | super().choose(selector, options)


def used_inputs(system: WorkbookSystem) -> set[str]:
    """The inputs and categorical inputs a system's results read, its switches as they
    stand: the others are "not used in this scenario" (a rental price when the accelerators
    are owned, a flat price under a tariff). Its results: the headline figures, and the
    figures in another currency when it shows one."""
    scenario = system.result.scenario
    algebra = _Used(scenario.to_inputs())
    roots = [*HEADLINE, *([shown(n) for n in SHOWN] if system.result.currency != "USD"
                          else [])]
    return {n for n in MODEL.reached(roots, algebra) if n in MODEL.inputs or n in MODEL.enums}


@dataclass
class _Notes:
    """The sources of a comparison's inputs, numbered in the order the rows cite them."""
    numbers: dict[str, int] = field(default_factory=dict)

    def cite(self, source: str) -> str:
        if not source:
            return "\u2013"
        return f"[{self.numbers.setdefault(source, len(self.numbers) + 1)}]"


def _listing(indices: list[int]) -> str:
    return ", ".join(str(i + 1) for i in indices)


def _row_note(name: str, systems: Sequence[WorkbookSystem], used: list[set[str]],
              values: list[dict[str, Any]], notes: _Notes | None) -> tuple[str, str]:
    """(text, style) of an input's source cell: its source (a single system) or the numbers
    of its sources (a comparison, one per system, in the list under the table), and what
    is not used or not given."""
    key = _key_of(name)
    n = len(systems)
    absent = [i for i in range(n) if name in MODEL.inputs
              and isinstance(values[i][name], float) and math.isnan(values[i][name])]
    unused = [i for i in range(n) if name not in used[i]]
    sources = [s.result.provenance.get(key, "") for s in systems]
    parts = []
    if len(unused) == n:
        parts.append("not used in this scenario" if n == 1 else "not used")
    elif unused:
        parts.append(f"not used by system {_listing(unused)}")
    missing = [i for i in absent if i not in unused]
    if missing:  # (a comparison's column is narrow)
        parts.append("not given: the figures that need it show \u2013" if n == 1 else
                     "not given" if len(missing) == n else
                     f"not given for system {_listing(missing)}")
    if notes is None:
        if sources[0]:
            parts.append(sources[0])
    elif any(sources):
        cited = [notes.cite(src) for src in sources]
        parts.append(cited[0] if len(set(cited)) == 1 else " ".join(cited))
    style = "unused" if (unused or missing) and not any(sources) else "source"
    return "; ".join(parts), style


def shown_currency(systems: Sequence[WorkbookSystem]) -> str:
    """How a unit names the currency results are shown in: its code when every system
    shows the same one."""
    codes = {s.result.currency for s in systems}
    return codes.pop() if len(codes) == 1 else "currency"


def write_inputs(ws: Sheet, systems: Sequence[WorkbookSystem], names: Names) -> int:
    """The Inputs sheet: the choices, the inputs used, those not used in this scenario, the
    constants; each with its source beside it (a comparison: the numbers of its sources,
    listed under the table). Returns the last row of the table."""
    n = len(systems)
    source_col = FIRST_COL + n
    notes = _Notes() if n > 1 else None
    ws.text(1, 1, "Inputs: change the blue cells and every figure recomputes", "title")
    ws.set_widths({1: 48, NAME_COL: 24, UNIT_COL: 12,
                   **{FIRST_COL + i: system_width(systems) for i in range(n)},
                   source_col: 50 if n == 1 else 14})
    ws.paragraph(2, "Values are in the unit shown; fractions show as percentages (type 10% or "
                    "0.1). The name beside each input is its scenario key with dots as "
                    "underscores. An empty cell is an input the scenario does not give.",
                 source_col)
    ws.header(HEADER_ROW, system_header(systems, ["input", "name", "unit"],
                                        ["source" if n == 1 else "sources (below)"]))
    values = [s.result.scenario.to_inputs() for s in systems]
    used = [used_inputs(s) for s in systems]
    currency = shown_currency(systems)
    scalar = [m for m in MODEL.inputs if not MODEL.inputs[m].axes]  # profiles: Tariff
    choices = [m for m in MODEL.enums if any(m in u for u in used)]
    inputs = [m for m in scalar if any(m in u for u in used)]
    idle = [m for m in [*MODEL.enums, *scalar] if not any(m in u for u in used)]
    ranges: dict[str, list[str]] = {}
    span = lambda r: f"{cell_ref(r, FIRST_COL)}:{cell_ref(r, FIRST_COL + n - 1)}"  # noqa: E731
    row = HEADER_ROW
    sections = [("Choices: which inputs the calculation uses", choices),
                ("Inputs", inputs),
                ("Not used in this scenario: the choices above select other inputs (the "
                 "cells stay live)" if n == 1 else "Not used in these scenarios: the "
                 "choices above select other inputs (the cells stay live)", idle)]
    for title, group in sections:
        if not group:
            continue
        row += 1
        ws.text(row, 1, title, "section")
        for name in group:
            row += 1
            is_enum = name in MODEL.enums
            decl = MODEL.enums[name] if is_enum else MODEL.inputs[name]
            ws.text(row, 1, row_label(name) + (f" ({', '.join(decl.levels)})" if is_enum
                                               else ""), "wrap")
            ws.text(row, NAME_COL, name, "name")
            if not is_enum:
                shown_as = unit_shown_as(name, decl.unit)
                if SHOWN_CURRENCY in decl.unit:  # the rate: EUR/USD
                    shown_as = ';;;"' + decl.unit.replace(SHOWN_CURRENCY, currency) + '"'
                ws.ws.write_string(row - 1, UNIT_COL - 1, decl.unit,
                                   ws.book.format("plain", shown_as))
            for i in range(n):
                value = input_value(values[i], name)
                if is_enum:
                    ws.text(row, FIRST_COL + i, value, "input")
                else:  # an absent optional input: an empty input cell
                    ws.figure(row, FIRST_COL + i, value, name, decl.unit, "input", empty=True)
            text, style = _row_note(name, systems, used, values, notes)
            ws.text(row, source_col, text, style)
            if is_enum:
                ws.ws.data_validation(row - 1, FIRST_COL - 1, row - 1, FIRST_COL + n - 2, {
                    "validate": "list", "source": "=" + levels_name(name),
                    "error_title": "Not a choice", "error_message": f"one of "
                                                                    f"{', '.join(decl.levels)}"})
            else:
                ranges.setdefault(_rule_for(name, _key_of(name)), []).append(span(row))
            names.row(name, "Inputs", row)
    row += 2
    ws.text(row, 1, "Conversion constants", "section")
    for c in MODEL.constants.values():
        row += 1
        ws.text(row, 1, row_label(c.name), "wrap")
        ws.text(row, NAME_COL, c.name, "name")
        ws.text(row, UNIT_COL, c.unit)
        ws.figure(row, FIRST_COL, c.value, c.name, c.unit, "constant")
        names.add(c.name, "Inputs", cell_ref(row, FIRST_COL, absolute=True))
    for rule, spans in ranges.items():
        first = spans[0].split(":")[0]
        ws.ws.data_validation(first, {**_VALIDATION[rule], "multi_range": " ".join(spans),
                                      "error_title": "Out of range"})
    ws.ws.freeze_panes(HEADER_ROW, FIRST_COL - 1)
    last = row
    if notes is not None and notes.numbers:
        row += 2
        ws.text(row, 1, "Sources of the inputs above (the numbers beside each input, one per "
                        "system in the order of the columns)", "section")
        for source, number in notes.numbers.items():
            row += 1
            ws.paragraph(row, f"[{number}] {source}", source_col, "source")
            ws.height(row, 10.5)  # a line of 8 pt text (more where it wraps)
    ws.last_row = max(ws.last_row, row)
    return last


def write_calculations(ws: Sheet, systems: Sequence[WorkbookSystem], names: Names,
                       profiles: ProfileLayout) -> int:
    """The Calculations sheet, every step's formula with the engine's value cached (the
    profile steps are on the Tariff sheet): the step in words, its name and declaration,
    its unit, and the same formula along the row."""
    n = len(systems)
    ws.text(1, 1, "Calculations: the declared calculation, one step per row", "title")
    ws.set_widths({1: 44 if n == 1 else 40, NAME_COL: 64 if n == 1 else 46, UNIT_COL: 11,
                   **{FIRST_COL + i: system_width(systems) for i in range(n)}})
    ws.paragraph(2, "Each row is the same formula for every system, written from the "
                    "engine's declaration beside it (name = declaration). A dash: no value "
                    "(an input it needs is not given).", FIRST_COL + n - 1)
    ws.header(HEADER_ROW, system_header(systems, ["step", "name = declaration", "unit"]))
    row = HEADER_ROW
    for row, name in enumerate(MODEL.scalar_steps, HEADER_ROW + 1):
        step = MODEL.steps[name]
        ws.text(row, 1, row_label(step.name), "wrap")
        ws.text(row, NAME_COL, f"{step.name} = {step.expression}", "code_wrap")
        ws.text(row, UNIT_COL, display_unit(step.name, step.unit).replace(
            SHOWN_CURRENCY, shown_currency(systems)))
        empty = step.name in MAY_BE_EMPTY
        for i, (s, formula) in enumerate(zip(systems, profiles.step_formulas(name),
                                             strict=True)):
            ws.formula(row, FIRST_COL + i, formula, s.result.values[step.name], "calc",
                       excel_format(step.name, step.unit), empty=empty)
        names.row(step.name, "Calculations", row)
    ws.ws.freeze_panes(HEADER_ROW, FIRST_COL - 1)
    return row


def write_meta(ws: Sheet, systems: Sequence[WorkbookSystem], generated: datetime) -> None:
    """What the engine was given, per system, for reading an edited workbook back."""
    ws.text(1, 1, META_FORMAT)
    ws.text(1, 2, generated.isoformat(timespec="seconds"))
    ws.text(1, 3, __version__)
    for i, s in enumerate(systems):
        write_meta_row(ws, 2 + i, s.result.name, {"scenario": s.result.scenario.to_data(),
                                                  "provenance": s.result.provenance,
                                                  "defaults_used": s.result.defaults_used})
    ws.ws.hide()


def write_meta_row(ws: Sheet, row: int, label: str, data: Any) -> None:
    """A Meta row: its label in column A, ``data`` as JSON in chunks a cell holds after it."""
    payload = json.dumps(data, ensure_ascii=False, allow_nan=False)
    ws.text(row, 1, label)
    for j, k in enumerate(range(0, len(payload), _CHUNK)):
        ws.text(row, 2 + j, payload[k:k + _CHUNK])
