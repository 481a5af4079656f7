"""The Task sheet: an agent's task priced on each system, live.

The task's calculation is declared once (:mod:`costmodel.decisions.task_calculation`); this
module writes its declarations as formulas, each with the engine's value cached, over named
cells:

- **The task**: the latency target (``task_target``) and the cached token's weight
  (``task_cached_weight``), blue input cells; the task's totals (``task_input``,
  ``task_cached``, ``task_output``, ``task_tool_time``: ``SUM`` of the steps' columns).
- **Each system**, one column each (system *i* in column D + i - 1, as on every sheet): the
  operating point the engine chose (``task_interactivity``, ``task_ttft``: values, read off
  the curve, not formulas, with where they came from), the task's input-token equivalents and
  latency (``task_weighted``, ``task_latency``: ``SUM`` of the system's step columns), whether
  it meets the target, a request's cost by part (``request_cost_<part>``, from the system's
  ``cost_per_mtok_<part>`` and ``tokens_per_request``), and the task's cost by part, price,
  per thousand tasks, energy [kWh] and tasks an hour per accelerator.
- **Constants** of the task's calculation (``task_users``, ``tasks_per_thousand``,
  ``latency_tolerance``); the model's (``tokens_per_mtok``...) are on Inputs.
- **Steps**, one row each: its input, cached and output tokens and the tool time before it
  (blue input cells, the columns named ``step_input``, ``step_cached``, ``step_output``,
  ``step_tool_time``), then per system its input-token equivalents and latency (columns
  ``step_weighted`` and ``step_latency``, suffixed ``_s1``, ``_s2``... in a comparison).

A declared step without a cell of its own (a step's decoding time, the task's energy in J)
is written inline where it is read. The scenario's figures are the model's names on Inputs
and Calculations, so a changed scenario input or step recomputes every task figure; the
operating point stays where the engine read it (the curve is not a formula).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...decisions import task_calculation as calc
from ...decisions.task import TOOL_RULE, TTFT_RULE, Steps, Task
from ...model.declaration import Declaration, Node, names_in
from ...model.steps import MODEL
from ..display import display_unit, excel_format
from .excel_formula import MAY_BE_EMPTY, Cell, cell_formula
from .layout import (
    FIRST_COL,
    NAME_COL,
    UNIT_COL,
    Names,
    WorkbookSystem,
    system_header,
    system_ref,
    words,
)
from .sheet import (
    EMPTY,
    Sheet,
    cell_ref,
    col_name,
    formula_xml,
    number_xml,
    plain_formula,
    xml_text,
)

__all__ = ["TASK_SHEET", "TaskPoint", "TaskBook", "write_task", "task_values", "STEP_COLUMNS",
           "SYSTEM_ROWS", "MEETS_FORMAT"]

TASK_SHEET = "Task"
# the steps' own columns: B.. (the step's number in A)
STEP_COLUMNS = ("step_input", "step_cached", "step_output", "step_tool_time")
_PER_STEP = ("step_weighted", "step_latency")  # per system, after the steps' own columns
_TASK_ROWS = ("task_input", "task_cached", "task_output", "task_tool_time")
# the figures per system, in order (None: a blank row between groups)
SYSTEM_ROWS = ("task_weighted", "task_latency", "task_meets", None,
               *(f"request_cost_{p}" for p in calc.PARTS), "task_requests", None,
               *(f"task_cost_{p}" for p in calc.PARTS), "task_price", "task_cost_thousand",
               "task_price_thousand", "task_energy_kwh", "tasks_per_hour")
_CONSTANTS = ("task_users", "tasks_per_thousand", "latency_tolerance")
MEETS_FORMAT = '"yes";"yes";"no";"\u2013"'
_LABELS = {  # the sheet's words where a declaration's description is not a row's
    "step_input": "Input tokens (new and cached)",
    "step_cached": "of them cached",
    "step_output": "Output tokens",
    "step_tool_time": "Tool time before the step",
    "step_weighted": "Input-token equivalents",
    "step_latency": "Latency of the step",
    "task_input": "Input tokens (new and cached)",
    "task_cached": "  of them cached",
    "task_output": "Output tokens",
    "task_tool_time": "Tool time",
}
_UNITS = {"tasks_per_hour": "task/h", "task_requests": "request", "task_meets": "yes/no",
          "task_users": "user", "tasks_per_thousand": "task", "task_cached_weight": "fraction",
          "latency_tolerance": "fraction", "pricing_output_weight": "ratio"}
_SOURCE = "\u2190 "  # a value's source, beside it


@dataclass(frozen=True)
class TaskPoint:
    """Where one system was read for the task: ``interactivity`` [token/s/user] and ``ttft``
    [s] (None: none, counted as 0 s), how each was chosen, and what differs from the measured
    configuration (``notes``)."""
    interactivity: float | None
    ttft: float | None
    how: str
    ttft_from: str
    notes: Sequence[str] = field(default_factory=tuple)


@dataclass(frozen=True)
class TaskBook:
    """The task and each system's point, in the systems' order."""
    task: Task
    steps: Steps
    points: Sequence[TaskPoint]


# ---- the calculation's values ---------------------------------------------------------------

def task_values(book: TaskBook, system: WorkbookSystem, point: TaskPoint) -> dict[str, Any]:
    """Every name of the task's calculation for one system [its declared unit]: the engine's
    values, cached in the sheet (per step: arrays; NaN where the system has none)."""
    r = system.result
    figures = {**r.scenario.to_inputs(), **r.values}
    steps = book.steps
    env: dict[str, Any] = {n: getattr(steps, f) for n, f in calc.STEP_FIELDS.items()}
    env.update(task_cached_weight=book.task.cached_weight,
               pricing_output_weight=figures["pricing_output_weight"],
               task_interactivity=math.nan if point.interactivity is None
               else point.interactivity,
               task_ttft=0.0 if point.ttft is None else point.ttft)
    values: dict[str, Any] = dict(env)
    values.update({f"request_cost_{p}": v for p, v in calc.request_costs(figures).items()})
    values.update(calc.evaluate(calc.STEP, env, calc.STEP.steps))
    for name, step_name in calc.SUMS.items():
        values[name] = calc.total(values[step_name])
    task_env = {n: values[n] if n in values else figures[n] for n in calc.TASK.inputs
                if n != "task_target"}
    task_env["task_target"] = math.nan if book.task.target is None else book.task.target
    values.update(calc.evaluate(calc.TASK, task_env, calc.TASK.steps))
    if book.task.target is None or point.interactivity is None:
        values["task_meets"] = math.nan
    return values


# ---- where each name sits, and its formula ---------------------------------------------------

_DECLARATIONS: tuple[Declaration, ...] = calc.STAGES
_STEPS = {n: s for d in _DECLARATIONS for n, s in d.steps.items()}
_UNIT = {**{n: s.unit for n, s in _STEPS.items()},
         **{n: i.unit for d in _DECLARATIONS for n, i in d.inputs.items()},
         **{n: c.unit for d in _DECLARATIONS for n, c in d.constants.items()},
         **{n: _STEPS[s].unit if s in _STEPS else calc.STEP.inputs[s].unit
            for n, s in calc.SUMS.items()}}
_DESCRIPTION = {**{n: s.description for n, s in _STEPS.items()},
                **{n: i.description for d in _DECLARATIONS for n, i in d.inputs.items()},
                **{n: c.description for d in _DECLARATIONS for n, c in d.constants.items()}}
# the names that differ by system: the point, the scenario's, and what reads them
_SYSTEM_INPUTS = {"task_interactivity", "task_ttft"}


def _reads(name: str) -> frozenset[str]:
    """Every name ``name`` reads, through the steps and sums it reads."""
    if name in calc.SUMS:
        inner = calc.SUMS[name]
        return frozenset((inner,)) | _reads(inner)
    if name not in _STEPS:
        return frozenset()
    direct = names_in(_STEPS[name].tree)
    return frozenset(direct).union(*(_reads(n) for n in direct))


def _per_system(name: str) -> bool:
    def own(n: str) -> bool:
        return n in _SYSTEM_INPUTS or n in MODEL.inputs or n in MODEL.steps
    return own(name) or any(own(n) for n in _reads(name))


def _label(name: str) -> str:
    return _LABELS.get(name) or words(_DESCRIPTION[name])


def _unit(name: str) -> str:
    return _UNITS.get(name) or display_unit(name, _UNIT[name])


_FORMATS = {"task_meets": MEETS_FORMAT, "task_users": "0", "tasks_per_thousand": "#,##0",
            "latency_tolerance": "0E+00"}


def _format(name: str) -> str:
    if name in _FORMATS:
        return _FORMATS[name]
    unit = _UNIT[name]
    if unit == "USD":  # a task's cost: cents, and smaller (a request's)
        return excel_format("cost_per_request", unit)
    if name == "task_cached_weight":
        return excel_format("pricing_output_weight", unit)
    return excel_format(name if name in MODEL.inputs else None, unit)


_ROW = "\0row\0"  # a step's row in a formula, filled in row by row


class _Layout:
    """Where the sheet puts each name: a step's column, a named cell (per system or the
    task's), or inline (a declared step without a cell)."""

    def __init__(self, n: int, first_step_col: int, points: Sequence[TaskPoint]):
        self.n = n
        self.columns = {name: 2 + k for k, name in enumerate(STEP_COLUMNS)}
        self.system_columns = {name: first_step_col + k * n for k, name in enumerate(_PER_STEP)}
        self.missing = [p.interactivity is None for p in points]

    def resolve(self, name: str, cell: Cell) -> str:
        if name in self.columns:
            return f"{col_name(self.columns[name])}{_ROW}"
        if name in self.system_columns:
            return f"{col_name(self.system_columns[name] + cell.system)}{_ROW}"
        if name in _STEPS and name not in _SHOWN:
            return f"({self.text(name, cell.system)})"
        if name in calc.SUMS and name not in _SHOWN:
            return self.sum(name, cell.system)
        if _per_system(name):
            return system_ref(name, cell.system, self.n)
        return name

    def column_name(self, name: str, i: int) -> str:
        """The defined name of a system's step column."""
        return system_ref(name, i, self.n)

    def sum(self, name: str, i: int) -> str:
        inner = calc.SUMS[name]
        column = self.column_name(inner, i) if inner in self.system_columns else inner
        return f"SUM({column})"

    def text(self, name: str, i: int) -> str:
        """``name``'s declaration as formula text (no ``=``) for system ``i``."""
        if name in calc.SUMS:
            return self.sum(name, i)
        node: Node = _STEPS[name].tree
        return cell_formula(node, self.resolve, Cell(system=i))

    def formula(self, name: str, i: int) -> str:
        """:meth:`text`, empty where what it needs is (the target, the point's
        interactivity)."""
        text = self.text(name, i)
        reads = _reads(name) | {name}
        guards = []
        if "task_target" in reads:
            guards.append("task_target")
        if self.missing[i] and "task_interactivity" in reads:
            guards.append(system_ref("task_interactivity", i, self.n))
        for ref in reversed(guards):
            text = f'IF({ref}="","",{text})'
        return text


_SHOWN = {*_PER_STEP, *SYSTEM_ROWS, *_TASK_ROWS} - {None}


def _empty_format(name: str) -> bool:
    """The formula may give empty text: its cell shows a dash."""
    return bool((_reads(name) | {name}) & MAY_BE_EMPTY)


# ---- the sheet ------------------------------------------------------------------------------

def write_task(ws: Sheet, systems: Sequence[WorkbookSystem], book: TaskBook,
               names: Names) -> tuple[int, int]:
    """The Task sheet (see the module docstring); returns the rows of the steps' header
    (first, last), repeated on each printed page."""
    n = len(systems)
    task, steps = book.task, book.steps
    values = [task_values(book, s, p) for s, p in zip(systems, book.points, strict=True)]
    first_step_col = 2 + len(STEP_COLUMNS)
    last_col = first_step_col + len(_PER_STEP) * n - 1
    layout = _Layout(n, first_step_col, book.points)
    width = 13.5  # a system's name wraps on three lines at most
    ws.set_widths({1: 42, NAME_COL: 17, UNIT_COL: 10,
                   **{c: width for c in range(FIRST_COL, max(last_col, FIRST_COL + n - 1) + 1)}})
    title = f"Task{': ' + task.name if task.name else ''}: {len(steps):,} steps, each "
    ws.text(1, 1, title + "waiting on the one before; its latency and cost on each system",
            "title")
    ws.paragraph(2, "Blue cells are the task's settings and steps: change one, or an input on "
                    "Inputs, and every figure recomputes. The operating point (interactivity "
                    "and TTFT) is where the engine read each system's curve for the task, a "
                    "value: a changed step does not read the curve again.", last_col)
    ws.paragraph(3, f"Each step takes its tool time + TTFT + output tokens / interactivity; "
                    f"{TTFT_RULE}; {TOOL_RULE}. A task's cost is its input-token equivalents "
                    f"at the scenario's cost of one (a request of the workload's shape "
                    f"costs cost per million tokens x tokens per request, and weighs its "
                    f"input + output weight x output tokens).", last_col)
    # -- the task ------------------------------------------------------------------------------
    row = 5
    ws.header(row, ["the task", "name", "unit", "value"])
    top = row
    row += 1
    _named(ws, names, row, "task_target", task.target, "input",
           "the latency the buyer needs; empty: no target")
    row += 1
    _named(ws, names, row, "task_cached_weight", task.cached_weight, "input",
           "0 to 1; 1: a cached token costs what a new one does")
    row += 1
    ws.text(row, 1, "Percentile the curves are read at")
    ws.text(row, FIRST_COL, task.percentile)
    ws.text(row, FIRST_COL + 1, _SOURCE + "a value: the curve read at it", "note")
    row += 1
    ws.text(row, 1, "Steps")
    ws.text(row, UNIT_COL, "step")
    ws.formula(row, FIRST_COL, f"ROWS({STEP_COLUMNS[0]})", len(steps), "calc", "#,##0")
    for name in _TASK_ROWS:
        row += 1
        _calc_row(ws, row, name, [layout.formula(name, 0)], [values[0][name]])
        names.add(name, TASK_SHEET, cell_ref(row, FIRST_COL, absolute=True))
    ws.keep_together(top, row)
    # -- each system ---------------------------------------------------------------------------
    row += 2
    top = row
    ws.header(row, system_header(systems, ["each system", "name", "unit"]))
    row += 1
    for key in ("task_interactivity", "task_ttft"):
        _point_row(ws, row, key, [_point_value(p, key) for p in book.points])
        names.row(key, TASK_SHEET, row)
        row += 1
    ws.text(row, 1, "Output token's weight in input tokens", "wrap")
    ws.text(row, NAME_COL, "pricing_output_weight", "name")
    ws.text(row, UNIT_COL, _UNITS["pricing_output_weight"])
    for i, s in enumerate(systems):
        ws.formula(row, FIRST_COL + i, "=" + system_ref("pricing_output_weight", i, n),
                   s.result.scenario.pricing.output_weight, "calc",
                   excel_format("pricing_output_weight", "dimensionless"))
    for name in SYSTEM_ROWS:
        row += 1
        if name is None:
            continue
        _calc_row(ws, row, name, [layout.formula(name, i) for i in range(n)],
                  [v[name] for v in values],
                  "result" if name.startswith(("task_cost_", "task_price", "task_latency",
                                               "task_meets")) else "calc")
        names.row(name, TASK_SHEET, row)
    ws.keep_together(top, row)
    # -- where each point was read -------------------------------------------------------------
    row += 2
    top = row
    ws.text(row, 1, "Where each system's point was read, and how the task differs from the "
                    "measured configuration", "section")
    for s, p in zip(systems, book.points, strict=True):
        row += 1
        ws.paragraph(row, f"{s.result.name}. Interactivity: {p.how}. TTFT: {p.ttft_from}."
                          + (f" Notes: {'; '.join(p.notes)}." if p.notes else ""),
                     last_col, "source")
    ws.keep_together(top, row)
    # -- constants -----------------------------------------------------------------------------
    row += 2
    top = row
    ws.text(row, 1, "Constants of the task's calculation (the model's are on Inputs)",
            "section")
    for name in _CONSTANTS:
        row += 1
        constant = next(d.constants[name] for d in _DECLARATIONS if name in d.constants)
        _named(ws, names, row, name, constant.value, "constant")
    ws.keep_together(top, row)
    # -- the steps -----------------------------------------------------------------------------
    row += 2
    ws.text(row, 1, "Steps: change the blue cells (a row's tokens, its tool time) and every "
                    "figure above recomputes", "section")
    row += 1
    header = row
    labels = ["step"] + [f"{_label(c)}, {_unit(c)}" for c in STEP_COLUMNS]
    ws.header(row, labels)
    ws.header(row + 1, [""] * len(labels))
    for name in _PER_STEP:
        first = layout.system_columns[name]
        text = f"{_label(name)}, {_unit(name)}"
        if n > 1:
            ws.ws.merge_range(row - 1, first - 1, row - 1, first + n - 2, text,
                              ws.book.format("header"))
        ws.text(row, first, text, "header", span=n)
        for i, s in enumerate(systems):
            ws.text(row + 1, first + i, s.result.name, "header")
    row += 1
    _write_steps(ws, names, row + 1, steps, values, layout, systems)
    return header, header + 1


def _named(ws: Sheet, names: Names, row: int, name: str, value: float | None, style: str,
           note: str | None = None) -> None:
    """A task-wide named value in column D (an input, a constant)."""
    ws.text(row, 1, _label(name), "wrap")
    ws.text(row, NAME_COL, name, "name")
    ws.text(row, UNIT_COL, _unit(name))
    ws.number(row, FIRST_COL, value, style, _format(name))
    if note:
        ws.text(row, FIRST_COL + 1, _SOURCE + note, "note")
    names.add(name, TASK_SHEET, cell_ref(row, FIRST_COL, absolute=True))


def _point_value(point: TaskPoint, key: str) -> float | None:
    if key == "task_ttft":
        return 0.0 if point.ttft is None else point.ttft
    return point.interactivity


def _point_row(ws: Sheet, row: int, name: str, values: Sequence[float | None]) -> None:
    ws.text(row, 1, _label(name) + " (a value)", "wrap")
    ws.text(row, NAME_COL, name, "name")
    ws.text(row, UNIT_COL, _unit(name))
    for i, v in enumerate(values):
        ws.number(row, FIRST_COL + i, v, "constant", _format(name))


def _calc_row(ws: Sheet, row: int, name: str, formulas: Sequence[str], values: Sequence[Any],
              style: str = "calc") -> None:
    ws.text(row, 1, _label(name), "wrap")
    ws.text(row, NAME_COL, name, "name")
    ws.text(row, UNIT_COL, _unit(name))
    for i, (formula, value) in enumerate(zip(formulas, values, strict=True)):
        _formula(ws, row, FIRST_COL + i, name, formula, value, style)


def _formula(ws: Sheet, row: int, col: int, name: str, formula: str, value: Any,
             style: str) -> None:
    """A figure's formula and its cached value: empty (a dash) where the engine has none
    and the formula gives empty text (no target, no interactivity)."""
    value = float(value)
    if name == "task_meets":  # yes or no, by its number format; a dash without a target
        ws.formula(row, col, "=" + formula, EMPTY if math.isnan(value) else value, style,
                   _format(name))
        return
    ws.formula(row, col, "=" + formula, value, style, _format(name),
               empty=_empty_format(name) or '=""' in formula)


_VALIDATION = {
    "step_output": {"validate": "decimal", "criteria": ">", "value": 0,
                    "error_message": "output tokens: more than 0"},
    **{name: {"validate": "decimal", "criteria": ">=", "value": 0,
              "error_message": "must not be negative"}
       for name in ("step_input", "step_cached", "step_tool_time")},
}


def _write_steps(ws: Sheet, names: Names, first: int, steps: Steps,
                 values: Sequence[dict[str, Any]], layout: _Layout,
                 systems: Sequence[WorkbookSystem]) -> None:
    """One row a step from ``first``: its number, its inputs, and per system its figures
    (each formula written once per system, its row filled in)."""
    n = len(systems)
    last = first + len(steps) - 1
    sheet = ws.ws
    templates = {(name, i): layout.formula(name, i) for name in _PER_STEP for i in range(n)}
    plain = {key: plain_formula(t) for key, t in templates.items()}
    escaped = {key: xml_text(t) for key, t in templates.items()}  # a row number needs none
    number = ws.xf("plain", "0")
    inputs = {name: ws.xf("input", _format(name)) for name in STEP_COLUMNS}
    calcs = {name: ws.xf("calc", _format(name)) for name in _PER_STEP}
    columns = {name: np.asarray(getattr(steps, f), dtype=float).tolist()
               for name, f in calc.STEP_FIELDS.items()}
    # each system's figures as lists of floats, a step's column of cells each
    per_step = {(name, i): (np.broadcast_to(np.asarray(values[i][name], dtype=float),
                                            (len(steps),)).tolist())
                for name in _PER_STEP for i in range(n)}
    # each row's cells in column order: ("n", ...) the step's number, ("in", name) an input,
    # ("fig", (name, i)) a system's figure
    cells: list[tuple[int, str, Any]] = [(1, "n", None)]
    cells += [(col, "in", name) for name, col in layout.columns.items()]
    cells += [(layout.system_columns[key[0]] + key[1], "fig", key) for key in templates]
    cells.sort(key=lambda c: c[0])
    if len({c[0] for c in cells}) != len(cells) or cells[0][0] != 1:
        raise ValueError("the Task sheet's step columns overlap")
    letters = {col: col_name(col) for col, _, _ in cells}
    last_col = cells[-1][0]
    inputs_in = [key for _, kind, key in cells if kind == "in"]
    figures_in = [key for _, kind, key in cells if kind == "fig"]
    # a row whose figures all have a value, every formula plain: one format string fills it
    # (the row number, the step's number, its inputs, then its figures)
    whole = np.ones(len(steps), dtype=bool)
    for key in figures_in:
        whole &= ~np.isnan(np.asarray(per_step[key]))
    if not all(plain.values()):
        whole[:] = False
    parts, arg = [], 2
    for col, kind, key in cells:
        at = f'<c r="{letters[col]}{{0}}" s="'
        if kind == "n":
            parts.append(f'{at}{number}"><v>{{1}}</v></c>')
        elif kind == "in":
            parts.append(f'{at}{inputs[key]}"><v>{{{arg}:.16G}}</v></c>')
            arg += 1
        else:
            text = escaped[key].replace("{", "{{").replace("}", "}}").replace(_ROW, "{0}")
            parts.append(f'{at}{calcs[key[0]]}"><f>{text}</f><v>{{{arg}!r}}</v></c>')
            arg += 1
    row_xml = "".join(parts).format
    values_of = zip(*(columns[key] for key in inputs_in), *(per_step[key] for key in figures_in),
                    strict=True)
    rows: dict[int, str] = {}
    for k, (row_values, fast) in enumerate(zip(values_of, whole.tolist(), strict=True)):
        r = first + k
        if fast:
            rows[r] = row_xml(r, k + 1, *row_values)
            continue
        row = str(r)
        xml: list[str] = []
        start = previous = 1  # the run's first column, and the last cell's
        for col, kind, key in cells:
            if not xml:
                start = col
            ref = letters[col] + row
            if kind == "n":
                xml.append(number_xml(ref, number, k + 1))
            elif kind == "in":
                xml.append(number_xml(ref, inputs[key], columns[key][k]))
            else:
                cached = per_step[key][k]
                if math.isnan(cached) or not plain[key]:  # no interactivity: a dash
                    if xml:
                        ws.put_row(r, start, previous, "".join(xml))
                        xml = []
                    ws.formula(r, col, templates[key].replace(_ROW, row), cached, "calc",
                               _format(key[0]), empty=math.isnan(cached), plain=plain[key])
                    continue
                xml.append(formula_xml(ref, calcs[key[0]], escaped[key].replace(_ROW, row),
                                       cached, escaped=True))
            previous = col
        if xml:
            ws.put_row(r, start, last_col, "".join(xml))
    if rows:
        ws.put_rows(first, last, 1, last_col, rows)
    ws.last_row, ws.last_col = max(ws.last_row, last), max(ws.last_col,
                                                            max(layout.system_columns.values())
                                                            + n - 1)
    for name, col in layout.columns.items():
        letter = col_name(col)
        names.add(name, TASK_SHEET, f"${letter}${first}:${letter}${last}")
        sheet.data_validation(first - 1, col - 1, last - 1, col - 1,
                              {**_VALIDATION[name], "error_title": "Out of range"})
    for name, col in layout.system_columns.items():
        for i in range(n):
            letter = col_name(col + i)
            names.add(layout.column_name(name, i), TASK_SHEET,
                      f"${letter}${first}:${letter}${last}")
