"""The live model: the Lists of categorical levels, the Inputs, the Calculations, and the hidden
Meta record of what the engine was given (the sheets the reader reads back)."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ... import __version__
from ...model.inputs import quantity_field
from ...model.steps import MODEL
from ..display import display_unit, excel_format
from .excel_formula import levels_name
from .layout import (
    COUNT_INPUTS,
    FIRST_COL,
    HEADER_ROW,
    META_FORMAT,
    Names,
    WorkbookSystem,
    system_header,
    system_width,
)
from .sheet import Sheet, cell_ref, col_name
from .tariff_sheet import ProfileLayout

__all__ = ["write_lists", "write_inputs", "write_calculations", "write_meta", "input_value",
           "unit_shown_as"]

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


def write_inputs(ws: Sheet, systems: Sequence[WorkbookSystem], names: Names) -> int:
    """The Inputs sheet; returns its last row."""
    n = len(systems)
    ws.text(1, 1, "Inputs: change the blue cells and every figure recomputes", "title")
    ws.set_widths({1: 30, 2: 34, 3: 12, **{FIRST_COL + i: system_width(systems)
                                          for i in range(n)},
                   **{FIRST_COL + n + i: 48 for i in range(n)}})
    ws.paragraph(2, "Values are in the unit shown; fractions show as percentages (type 10% or "
                    "0.1). Names are the scenario keys with dots as underscores.",
                 FIRST_COL + n - 1)
    ws.header(HEADER_ROW, system_header(systems, ["name", "description", "unit"],
                                        [f"source: {s.result.name}" for s in systems]))
    row = HEADER_ROW + 1
    ws.text(row, 1, "Constants", "section")
    for c in MODEL.constants.values():
        row += 1
        ws.text(row, 1, c.name)
        ws.text(row, 2, c.description, "wrap")
        ws.text(row, 3, c.unit)
        ws.figure(row, FIRST_COL, c.value, c.name, c.unit, "constant")
        names.add(c.name, "Inputs", cell_ref(row, FIRST_COL, absolute=True))
    row += 2
    ws.text(row, 1, "Inputs", "section")
    ranges: dict[str, list[str]] = {}
    values = [s.result.scenario.to_inputs() for s in systems]
    span = lambda r: f"{cell_ref(r, FIRST_COL)}:{cell_ref(r, FIRST_COL + n - 1)}"  # noqa: E731
    for name in [*MODEL.inputs, *MODEL.enums]:
        if name in MODEL.inputs and MODEL.inputs[name].axes:
            continue  # a profile: on the Tariff sheet
        row += 1
        key = _key_of(name)
        is_enum = name in MODEL.enums
        decl = MODEL.enums[name] if is_enum else MODEL.inputs[name]
        ws.text(row, 1, name)
        ws.text(row, 2, decl.description + (f" ({', '.join(decl.levels)})" if is_enum
                                             else ""), "wrap")
        if not is_enum:
            shown = unit_shown_as(name, decl.unit)
            ws.ws.write_string(row - 1, 2, decl.unit, ws.book.format("plain", shown))
        for i, s in enumerate(systems):
            value = input_value(values[i], name)
            if is_enum:
                ws.text(row, FIRST_COL + i, value, "input")
            else:
                ws.figure(row, FIRST_COL + i, value, name, decl.unit, "input")
            ws.text(row, FIRST_COL + n + i, s.result.provenance.get(key, ""), "note_wrap")
        if is_enum:
            ws.ws.data_validation(row - 1, FIRST_COL - 1, row - 1, FIRST_COL + n - 2, {
                "validate": "list", "source": "=" + levels_name(name),
                "error_title": "Not a choice", "error_message": f"one of "
                                                                f"{', '.join(decl.levels)}"})
        else:
            ranges.setdefault(_rule_for(name, key), []).append(span(row))
        names.row(name, "Inputs", row)
    for rule, spans in ranges.items():
        first = spans[0].split(":")[0]
        ws.ws.data_validation(first, {**_VALIDATION[rule], "multi_range": " ".join(spans),
                                      "error_title": "Out of range"})
    ws.ws.freeze_panes(HEADER_ROW, FIRST_COL - 1)
    return row


def write_calculations(ws: Sheet, systems: Sequence[WorkbookSystem], names: Names,
                       profiles: ProfileLayout) -> int:
    """The Calculations sheet, every step's formula with the engine's value cached (the
    profile steps are on the Tariff sheet)."""
    n = len(systems)
    ws.text(1, 1, "Calculations: the declared calculation, one step per row", "title")
    ws.set_widths({1: 28, 2: 34, 3: 12, **{FIRST_COL + i: system_width(systems)
                                          for i in range(n)}, FIRST_COL + n: 36})
    ws.paragraph(2, "Each row is the same formula for every system; the last column is the "
                    "engine's declaration of the step.", FIRST_COL + n - 1)
    ws.header(HEADER_ROW, system_header(systems, ["name", "description", "unit"],
                                        ["declared as"]))
    row = HEADER_ROW
    for row, name in enumerate(MODEL.scalar_steps, HEADER_ROW + 1):
        step = MODEL.steps[name]
        ws.text(row, 1, step.name)
        ws.text(row, 2, step.description, "wrap")
        ws.text(row, 3, display_unit(step.name, step.unit))
        for i, (s, formula) in enumerate(zip(systems, profiles.step_formulas(name),
                                             strict=True)):
            ws.formula(row, FIRST_COL + i, formula, s.result.values[step.name], "calc",
                       excel_format(step.name, step.unit))
        ws.text(row, FIRST_COL + n, step.expression, "note_wrap")
        names.row(step.name, "Calculations", row)
    ws.ws.freeze_panes(HEADER_ROW, FIRST_COL - 1)
    return row


def write_meta(ws: Sheet, systems: Sequence[WorkbookSystem], generated: datetime) -> None:
    """What the engine was given, per system, for reading an edited workbook back."""
    ws.text(1, 1, META_FORMAT)
    ws.text(1, 2, generated.isoformat(timespec="seconds"))
    ws.text(1, 3, __version__)
    for i, s in enumerate(systems):
        payload = json.dumps({"scenario": s.result.scenario.to_data(),
                              "provenance": s.result.provenance,
                              "defaults_used": s.result.defaults_used},
                             ensure_ascii=False, allow_nan=False)
        ws.text(2 + i, 1, s.result.name)
        for j, k in enumerate(range(0, len(payload), _CHUNK)):
            ws.text(2 + i, 2 + j, payload[k:k + _CHUNK])
    ws.ws.hide()
