"""The Task page (``/task``): an agent's task (many model calls, each waiting on the one
before) priced on each system picked: its latency as the user feels it, whether it meets a
latency target, and what it costs, as :func:`costmodel.app.price_task` answers it (``costmodel
task``, ``POST /api/v1/task``), with each system's latency by step drawn, the rules and the
disclosure, its JSON and the API call.

The systems are picked as on the Compare page (example scenarios, saved ones); the task is its
repeated form (``steps`` steps whose input starts at ``context`` tokens and grows by
``growth`` a step, ``cached_share`` of it from the prefix cache, ``output`` tokens each,
``tool_time`` before each but the first), with a ``target`` task latency read at a
``percentile``. A field the query does not name takes the example's (:data:`EXAMPLE`): a
first visit prices the issue's example agent on the three illustrative gpt-oss-120b curves.
A bare number typed in a field is in the field's unit; a share is a fraction or a
percentage (``0.8`` or ``80 %``), its bounds said in the unit typed.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import numpy as np
from flask import render_template, request

from .. import app
from ..app import saved as saved_scenarios
from ..app.caps import MAX_SCENARIOS, large_task, task_cells, task_workbook_too_large
from ..decisions.task import MAX_TASK_STEPS, validate_task
from ..http.services import services
from ..model.errors import InputError
from ..render import display
from ..render.report import money_line
from .charts import COLOURS, StepSeries, step_chart
from .disclosure import disclosure_lines
from .downloads import curl_line, json_response, xlsx_response
from .errors import error_page
from .guard import computes, heavy_if
from .pages import (
    DEFAULT_COMPARE,
    MAX_SYSTEMS,
    Choice,
    fixture_scenarios,
    in_currency,
    saved_titles,
    system_choice,
)
from .scenario_form import MONEY_FIELDS, FormCatalog, form_catalog, money_table, restate_bounds
from .session import need
from .site import blueprint

__all__ = ["TASK_FIELDS", "EXAMPLE", "DEFAULT_SYSTEMS", "TaskArgs", "task_args", "step_rows",
           "MAX_STEP_ROWS"]

# the task's fields: field -> (the task key, the unit a bare number is read in; "" a count,
# None a word)
TASK_FIELDS: dict[str, tuple[str, str | None]] = {
    "t_steps": ("steps", ""),
    "t_context": ("context", "token"),
    "t_growth": ("growth", "token"),
    "t_output": ("output", "token"),
    "t_cached_share": ("cached_share", "dimensionless"),
    "t_tool_time": ("tool_time", "s"),
    "t_target": ("target", "s"),
    "t_percentile": ("percentile", None),
    "t_cached_weight": ("cached_weight", "dimensionless"),
}
_FIELD_OF_KEY = {key: name for name, (key, _) in TASK_FIELDS.items()}
# issue 24's example agent: 40 steps, 8,000 tokens of context growing 1,500 a step, 300
# output tokens a step, 80 % of the input from the prefix cache, 1.2 s of tools before each
# step; the user needs it done in 120 s at the median
EXAMPLE = {"t_steps": "40", "t_context": "8000", "t_growth": "1500", "t_output": "300",
           "t_cached_share": "80 %", "t_tool_time": "1.2", "t_target": "120",
           "t_percentile": "median", "t_cached_weight": ""}
DEFAULT_SYSTEMS = DEFAULT_COMPARE  # the three illustrative gpt-oss-120b curves
MAX_TYPED = 60  # characters kept of a typed field
MAX_STEP_ROWS = 200  # rows of the table of latencies by step (runs of equal steps joined)
_WHOLE = re.compile(r"\d{1,3}(?:,\d{3})+|\d+")  # a whole number, digits grouped or not
_PERCENT = re.compile(r"\s*[-+]?[\d.eE+-]+\s*(?:%|percent)\s*")


@dataclass
class TaskArgs:
    """The task's fields as typed (``values``), the body of the task they mean (quantities
    as typed, a bare number with its field's unit), and the errors by field (``""``: the task
    as a whole)."""
    values: dict[str, str]
    body: dict[str, Any]
    errors: dict[str, str] = field(default_factory=dict)


def _typed(text: str, unit: str | None) -> Any:
    """A field's text for the task: a bare number with the field's unit (a share stays a
    number, steps a whole number); anything else as typed, for the engine to read."""
    if unit is None:
        return text
    if unit == "" and _WHOLE.fullmatch(text):  # exactly, however long
        return int(text.replace(",", ""))
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):  # no JSON number: the engine reads the text and says so
        return text
    if unit == "":  # a count typed as 4e1 is 40; 40.5 is the engine's to refuse
        return int(number) if number.is_integer() else number
    return number if unit == "dimensionless" else f"{text} {unit}"


def task_args(args) -> TaskArgs:
    """The task's fields from the query (a field it does not name is the example's), the
    task's body, and the errors a field has before any system is priced (the engine's words,
    a share's bounds in the unit typed)."""
    values = {name: str(args.get(name, EXAMPLE[name]))[:MAX_TYPED].strip()
              for name in TASK_FIELDS}
    body = {key: _typed(values[name], unit) for name, (key, unit) in TASK_FIELDS.items()
            if values[name]}
    ta = TaskArgs(values, body)
    steps = body.get("steps")
    if isinstance(steps, int) and steps > MAX_TASK_STEPS:  # said before anything is built
        ta.errors["t_steps"] = f"at most {MAX_TASK_STEPS:,} steps (got {values['t_steps']})"
        return ta
    try:
        validate_task(body)
    except InputError as exc:
        for path, message in exc.errors:
            place(ta, path, message)
    return ta


def place(ta: TaskArgs, path: str, message: str) -> None:
    """An error at ``task.<key>`` beside its field (a share's bounds in the unit typed); the
    task's own (``task``) above the fields."""
    key = path.removeprefix("task").lstrip(".").split(".")[0].split("[")[0]
    name = _FIELD_OF_KEY.get(key, "")
    typed = ta.values.get(name, "")
    if name in ("t_cached_share", "t_cached_weight") and _PERCENT.fullmatch(typed):
        message = restate_bounds(message, typed, "%", 0.01)
    ta.errors.setdefault(name, message)


# ---- the systems ---------------------------------------------------------------------------

def _system_values() -> list[str]:
    """The systems the query names (``sys``, repeated); none named: the example's."""
    if "sys" not in request.args:
        return list(DEFAULT_SYSTEMS)
    return [v.strip() for v in request.args.getlist("sys") if v.strip()][:MAX_SYSTEMS]


def money_args() -> SimpleNamespace:
    """The Currency fields as typed (``values``: :data:`MONEY_FIELDS`) and their errors
    (``errors``, filled when read: :func:`money_table`), as the Compare page takes them."""
    return SimpleNamespace(values={k: str(request.args.get(k, "") or "").strip()[:200]
                                   for k in MONEY_FIELDS}, errors={})


FACTOR_FIELDS = ("carbon", "market_carbon")  # the grid factors set on every system


def factor_args() -> SimpleNamespace:
    """The grid factor pickers (catalog keys: :data:`FACTOR_FIELDS`, the Price page's) as
    chosen, and their errors (``errors``, filled when checked)."""
    return SimpleNamespace(values={k: str(request.args.get(k, "") or "").strip()[:200]
                                   for k in FACTOR_FIELDS}, errors={})


def _with_factors(choice: Choice, factors: dict[str, str]) -> Choice:
    """``choice`` with the picked catalog grid factors (``electricity.carbon``,
    ``electricity.market_carbon``) set as overrides, in the spec priced and in the API
    body, as ``--set`` does: in place of a system's own factor for that basis."""
    overrides = {f"electricity.{k}": v for k, v in factors.items() if v}
    if not overrides:
        return choice
    spec = app.ScenarioSpec(choice.spec.source, (*choice.spec.overrides,
                                                 *app.overrides_from_mapping(overrides)),
                            choice.spec.subject)
    body = {**choice.body, "overrides": {**choice.body.get("overrides", {}), **overrides}}
    return Choice(choice.value, choice.title, spec, body)


def _check_factors(factors: SimpleNamespace, catalog: FormCatalog) -> None:
    """An unknown grid factor key, said beside its picker."""
    known = {"carbon": {k for k, _ in catalog.grid_factors},
             "market_carbon": {k for k, _ in catalog.market_factors}}
    for name, value in factors.values.items():
        if value and value not in known[name]:
            factors.errors[name] = f"unknown catalog entry {value!r}: choose one from the list"


def _priced(values: list[str], ta: TaskArgs, money: SimpleNamespace,
            book: bool = False, factors: SimpleNamespace | None = None) -> dict[str, Any]:
    """The task priced on the systems: ``answer`` (None with the errors by field in
    ``errors``: ``sys<i>`` a slot, ``systems`` the systems as a whole; the task's in
    ``ta.errors``; the currency's in ``money.errors``), the ``choices`` and the saved
    scenarios offered; ``book``: also its workbook (``workbook``). Every system is shown in
    the currency typed (``money``), as on the Compare page, and with the grid factors
    picked (``factors``; their errors in ``factors.errors``), as on the Price page."""
    errors: dict[str, str] = {}
    answer = workbook = None
    factors = factors or factor_args()
    table, _ = money_table(money.values, money.errors)
    saved = saved_titles()  # (its own read: one connection at a time)
    with services().sessions(write=False) as session:
        ctx = services().context(session)
        catalog = form_catalog(ctx)
        _check_factors(factors, catalog)
        choices: list[Choice] = []
        for i, v in enumerate(values):
            if v in values[:i]:
                errors[f"sys{i}"] = "chosen twice: choose another system, or none"
                continue
            try:
                choices.append(system_choice(v, i, saved))
            except InputError as exc:
                errors[f"sys{i}"] = exc.errors[0][1]
        if not values:
            errors["systems"] = f"pick 1 to {min(MAX_SYSTEMS, MAX_SCENARIOS)} systems"
        if not errors and not ta.errors and not money.errors and not factors.errors:
            try:
                if table is not None:
                    choices = [in_currency(ctx, c, table) for c in choices]
                choices = [_with_factors(c, factors.values) for c in choices]
                task_request = app.TaskRequest([c.spec for c in choices],
                                               validate_task(ta.body))
                answer = app.price_task(ctx, task_request)
                if book:
                    workbook = app.task_workbook(ctx, task_request)
            except InputError as exc:
                _place_priced(exc, choices, ta, errors)
            except saved_scenarios.NotFound as exc:  # deleted since the list was shown
                index = next((i for i, c in enumerate(choices) if c.value.startswith("saved:")),
                             None)
                errors["systems" if index is None else f"sys{index}"] = str(exc)
    return {"answer": answer, "choices": choices, "errors": errors, "saved": saved,
            "workbook": workbook, "catalog": catalog}


def _place_priced(exc: InputError, choices: list[Choice], ta: TaskArgs,
                  errors: dict[str, str]) -> None:
    """An error of pricing beside the system (its slot) or the task field it is about."""
    index = next((i for i, c in enumerate(choices) if exc.subject is not None
                  and c.spec.subject == exc.subject), None)
    if index is not None:
        errors[f"sys{index}"] = "; ".join(f"{p}: {m}" if p else m for p, m in exc.errors)
        return
    for path, message in exc.errors:
        if path == "task" or path.startswith("task."):
            place(ta, path, message)
        else:
            errors.setdefault("systems", f"{path}: {message}" if path else message)


# ---- what the page shows -------------------------------------------------------------------

def step_rows(names: list[str], per_step: list[np.ndarray]) -> tuple[list[dict], bool]:
    """The latencies by step as a table: consecutive steps whose latencies (as shown) are
    the same on every system joined in one row (``steps``: ``1`` or ``2-40``; ``cells``: each
    system's latency a step, shown); at most :data:`MAX_STEP_ROWS` rows (True when cut)."""
    n = max((len(v) for v in per_step), default=0)
    rows: list[dict] = []
    for k in range(n):
        cells = [display.format_quantity(float(v[k]), "s") if k < len(v) else "-"
                 for v in per_step]
        if rows and rows[-1]["cells"] == cells:
            rows[-1]["last"] = k + 1
            continue
        if len(rows) == MAX_STEP_ROWS:
            return _spans(rows), True
        rows.append({"first": k + 1, "last": k + 1, "cells": cells})
    return _spans(rows), False


def _spans(rows: list[dict]) -> list[dict]:
    for r in rows:
        r["steps"] = f"{r['first']:,}" if r["first"] == r["last"] else \
            f"{r['first']:,}\u2013{r['last']:,}"
    return rows


def _emission_rows(answer: app.TaskAnswer, j: dict) -> list[tuple[str, str, str]]:
    """The grams per task the systems have (a basis some system has a factor for): (key of
    ``emissions_per_task``, heading, unit words); the totals say whether they count embodied
    emissions (a row is shared: with embodied where some system gives a footprint)."""
    stated = any(s.priced.result.embodied_stated for s in answer.systems)
    total = "with embodied" if stated else "operational only"
    rows = [("location", "CO2e per task, location-based"),
            ("market", "CO2e per task, market-based"),
            ("location_total", f"CO2e per task, {total}, location"),
            ("market_total", f"CO2e per task, {total}, market")]
    return [(key, heading, "grams a task") for key, heading in rows
            if any((s["emissions_per_task"].get(key) or {}).get("value") is not None
                   for s in j["systems"])]


def _view(answer: app.TaskAnswer, choices: list[Choice]) -> dict[str, Any]:
    """Everything the answer shows, from the answer's own figures."""
    j = answer.to_json()
    names = [s["scenario"] for s in j["systems"]]
    colours = [COLOURS[i % len(COLOURS)] for i in range(len(names))]
    timed = [(s, c) for s, c in zip(answer.systems, colours, strict=True)
             if s.latency is not None]
    target = answer.task.target
    per_step = step_chart([StepSeries(s.name, s.latency.per_step, c) for s, c in timed],
                          title="Each step's latency, by system",
                          axis="Latency of the step [s]", css_class="steps")
    with np.errstate(over="ignore"):  # a sum past the largest float is drawn as none
        sums = [np.cumsum(s.latency.per_step) for s, _ in timed]
    waited = step_chart([StepSeries(s.name, total, c)
                         for (s, c), total in zip(timed, sums, strict=True)],
                        title="The time the user has waited after each step, by system",
                        axis="Waited so far [s]", css_class="waited", target=target,
                        target_label=f"target {display.format_quantity(target, 's')}"
                        if target is not None else "")
    rows, cut = step_rows([s.name for s, _ in timed], [s.latency.per_step for s, _ in timed])
    return {"json": j, "systems": list(zip(j["systems"], colours, answer.systems,
                                           strict=True)),
            "per_step_chart": per_step, "waited_chart": waited, "step_rows": rows,
            "step_names": [s.name for s, _ in timed], "rows_cut": cut,
            "disclosure": [(s.name, disclosure_lines(s.priced.result))
                           for s in answer.systems],
            "titles": [c.title for c in choices],
            "emission_rows": _emission_rows(answer, j),
            "currency": answer.money.currency,
            "money_note": None if answer.money.usd else money_line(answer.money.disclosure)}


def _query(values: list[str], ta: TaskArgs, money: SimpleNamespace,
           factors: SimpleNamespace | None = None) -> str:
    return urlencode([("sys", v) for v in values] + list(ta.values.items())
                     + [(k, v) for k, v in money.values.items() if v]
                     + [(k, v) for k, v in (factors.values.items() if factors else ()) if v])


def _request_body(choices: list[Choice], ta: TaskArgs) -> dict[str, Any]:
    """The body of the equivalent ``POST /api/v1/task``."""
    return {"scenarios": [c.body for c in choices], "task": ta.body}


def _large(values: list[str], ta: TaskArgs) -> bool:
    """Whether the task asked is heavy work: more than MAX_TASK_CELLS steps x systems."""
    return large_task(task_cells(app.steps_asked(ta.body), len(values)))


@blueprint.get("/task")
@computes("POST", "/api/v1/task")
def task_page():
    need("read")
    values, ta, money = _system_values(), task_args(request.args), money_args()
    with heavy_if(_large(values, ta)):  # the answer and its charts, drawn
        return _task_page(values, ta, money)


def _task_page(values: list[str], ta: TaskArgs, money: SimpleNamespace):
    factors = factor_args()
    out = _priced(values, ta, money, factors=factors)
    answer = out["answer"]
    slots = values + [""] * (MAX_SYSTEMS - len(values))
    return render_template(
        "web/task.html", ta=ta, slots=slots, fixtures=fixture_scenarios(),
        saved=out["saved"], errors=out["errors"],
        view=_view(answer, out["choices"]) if answer is not None else None,
        percentiles=FormCatalog.percentiles, max_steps=MAX_TASK_STEPS, money_form=money,
        factors_form=factors, catalog=out["catalog"],
        query=_query(values, ta, money, factors), curl=curl_line("/api/v1/task",
                                                 _request_body(out["choices"], ta))), \
        200 if answer is not None else 422


@blueprint.get("/task.json")
@computes("POST", "/api/v1/task")
def task_json():
    """The answer as ``POST /api/v1/task`` gives it, or the page with its errors."""
    need("read")
    values, ta = _system_values(), task_args(request.args)
    with heavy_if(_large(values, ta)):
        out = _priced(values, ta, money_args())
        if out["answer"] is None:
            return task_page()
        return json_response(out["answer"].to_json(), "task.json")


@blueprint.get("/task.xlsx")
@computes("POST", "/api/v1/task", heavy=True)
def task_xlsx():
    """The task as a workbook of live formulas (its Task sheet over the systems' sheets), or
    the page with its errors; a 413 page, before anything is priced, for a task over the
    workbook's bound (MAX_TASK_CELLS steps x systems)."""
    need("read")
    values, ta = _system_values(), task_args(request.args)
    why = task_workbook_too_large(app.steps_asked(ta.body), len(values))
    if why is not None:
        return error_page(413, why, "The workbook would be too large")
    out = _priced(values, ta, money_args(), book=True)
    if out["workbook"] is None:
        return task_page()
    return xlsx_response(out["workbook"])
