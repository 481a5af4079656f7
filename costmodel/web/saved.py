"""The Saved-scenarios pages: list and search, a revision exactly as it was priced, two
revisions compared, and saving a scenario (new, or the next revision of one).

A revision keeps the result computed when it was saved (``ScenarioRevision.result``, the
API's ``result``): its page shows that stored result and its disclosure, not today's price.
Saving is the application layer's use case (:func:`costmodel.app.saved.save`, which ``POST
/api/v1/scenarios`` calls too): the scenario is priced, then saved; nothing is written when
anything is invalid or the signed-in key is not an editor's.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from flask import Response, current_app, redirect, render_template, request, url_for

from .. import app
from ..app import saved
from ..app.caps import scenario_name_error
from ..http.errors import Problem
from ..http.services import services
from ..model.errors import InputError
from ..render.display import format_input
from .disclosure import Line, disclosure_lines
from .guard import computes
from .scenario_form import FIELDS, scenario_form
from .session import need
from .site import blueprint

__all__ = ["Figure", "figures", "flatten", "input_changes", "figure_changes", "price_query",
           "api_errors"]

PAGE = 50  # scenarios a list page shows
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

# The headline figures of a stored result: (JSON key, part, display name); the name picks
# the label and the rounding (costmodel.render.display).
HEADLINE = (
    ("cost_per_mtok", "total", "cost_per_mtok_total"),
    ("price_per_mtok", "total", "price_per_mtok_total"),
    ("price_per_mtok", "input", "price_per_mtok_input"),
    ("price_per_mtok", "output", "price_per_mtok_output"),
    ("cost_per_mtok", "energy", "cost_per_mtok_energy"),
    ("cost_per_mtok", "capex", "cost_per_mtok_capex"),
    ("cost_per_mtok", "opex", "cost_per_mtok_opex"),
    ("cost_per_hour", None, "cost_per_hour"),
    ("power_per_accelerator", None, "power_per_accelerator"),
    ("throughput", None, "throughput"),
    ("throughput_per_kw", None, "throughput_per_kw"),
    ("tokens_per_kwh", None, "tokens_per_kwh"),
    ("joules_per_token", None, "joules_per_token"),
    ("capex_per_accelerator", None, "capex_per_accelerator"),
    ("emissions_per_mtok", None, "emissions_per_mtok"),
)
BREAKDOWN = ("cost_per_mtok_energy", "cost_per_mtok_capex", "cost_per_mtok_opex")


@dataclass(frozen=True)
class Figure:
    """One figure of a result: its display name, value [unit] (None: not computed)."""
    name: str
    value: float | None
    unit: str


def figures(result: Mapping[str, Any]) -> list[Figure]:
    """The headline figures of a result as JSON data (stored, or ``Result.to_json()``)."""
    out = []
    for key, part, name in HEADLINE:
        q = result.get(key)
        if part is not None and isinstance(q, Mapping):
            q = q.get(part)
        if isinstance(q, Mapping) and "unit" in q:
            v = q.get("value")
            out.append(Figure(name, float(v) if isinstance(v, int | float) else None,
                              str(q["unit"])))
    return out


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """A scenario mapping as dotted keys -> leaf values (a quantity ``{"value", "unit"}`` and
    a list are leaves): ``{"financing": {"life": "5 year"}}`` -> ``{"financing.life": ...}``."""
    if isinstance(data, Mapping) and not _is_quantity(data) and data:
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: data} if prefix else {"": data}


def _is_quantity(v: Any) -> bool:
    return isinstance(v, Mapping) and set(v) <= {"value", "unit", "source"} and "value" in v


def shown(value: Any) -> str:
    """An input value as people read it: ``5 year``, ``0.1``, a table as JSON."""
    if value is None:
        return "-"
    if _is_quantity(value):  # (numbers by the display rules: never hundreds of digits)
        return f"{format_input(float(value['value']))} {value.get('unit', '')}".strip() \
            if isinstance(value["value"], int | float) else format_input(value["value"])
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return format_input(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class InputChange:
    key: str
    old: str  # "-" when the key is absent (an engine default applied)
    new: str


def input_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[InputChange]:
    """The inputs that differ between two scenario mappings, key by key (dotted keys, in
    the order of the keys' names)."""
    a, b = flatten(old), flatten(new)
    return [InputChange(k, shown(a.get(k)), shown(b.get(k)))
            for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


@dataclass(frozen=True)
class FigureChange:
    name: str
    unit: str
    old: float | None
    new: float | None

    @property
    def change(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old

    @property
    def ratio(self) -> float | None:
        if self.old is None or self.new is None or self.old == 0:
            return None
        return self.new / self.old


def figure_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FigureChange]:
    """How the headline figures moved: old, new (their change and ratio as properties)."""
    a = {f.name: f for f in figures(old)}
    return [FigureChange(f.name, f.unit, a[f.name].value if f.name in a else None, f.value)
            for f in figures(new) if f.name in a or f.value is not None]


class _Stored:
    """A stored result's JSON where :func:`disclosure_lines` expects a Result."""

    def __init__(self, data: Mapping[str, Any]):
        self._data = data

    def disclosure(self) -> Mapping[str, Any]:
        return self._data


def disclosure_of(result: Mapping[str, Any]) -> list[Line] | None:
    """A stored result's disclosure in the Price page's words; None when it was written by
    an engine whose disclosure lacks a field those words need (the page then lists what
    it holds)."""
    d = result.get("disclosure")
    if not isinstance(d, Mapping):
        return None
    try:
        return disclosure_lines(_Stored(d))  # type: ignore[arg-type]
    except (KeyError, TypeError, AttributeError, ValueError):
        return None


# ---- a saved mapping as the Price page's query ---------------------------------------------

_FRACTION_FIELDS = {"utilisation": "utilisation", "financing.cost_of_capital": "cost_of_capital",
                    "financing.salvage": "salvage", "pricing.gross_margin": "margin"}
_TYPED_FIELDS = {"accelerator.price": "accelerator_price", "electricity.price":
                 "electricity_price", "financing.life": "life"}


def _quantity_text(value: Any) -> str | None:
    if _is_quantity(value):
        return shown(value)
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:g}"
    return None


def price_query(mapping: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The Price page's query string for a saved scenario mapping, and the dotted keys the
    Price form cannot carry (they would be left out if it is saved from there)."""
    values = {k: "" for k in FIELDS}
    flat = flatten(mapping)
    used: set[str] = set()

    def take(key: str) -> Any:
        used.add(key)
        return flat.get(key)

    values["name"] = str(take("name") or "")
    acc = mapping.get("accelerator")
    values["accelerator"] = str(acc if isinstance(acc, str) else take("accelerator.catalog")
                                or "")
    used.add("accelerator")
    if isinstance(acc, Mapping) and acc.get("rate"):
        values["financing"], values["rate"] = "rent", str(take("accelerator.rate"))
    else:
        values["financing"] = "own"
    values["system"] = str(take("system") or "")
    op = mapping.get("operating_point")
    used.add("operating_point")
    if isinstance(op, str):
        values["point"] = op
    elif isinstance(op, Mapping) and isinstance(op.get("curve"), str):
        values["point"] = "curve:" + str(take("operating_point.curve"))
        take("operating_point.token_kind")
        at = op.get("at")
        take("operating_point.at")
        if isinstance(at, Mapping):
            values["interactivity"] = _quantity_text(take("operating_point.at.interactivity")) \
                or ""
            values["percentile"] = str(take("operating_point.at.percentile") or "median")
    elect = mapping.get("electricity")
    if isinstance(elect, str):
        values["electricity"] = elect
        used.add("electricity")
    elif isinstance(elect, Mapping) and "catalog" in elect and "price" not in elect:
        values["electricity"] = str(take("electricity.catalog"))
    elif isinstance(elect, Mapping) and isinstance(elect.get("tariff"), str):
        values["electricity_kind"] = "tariff"
        values["tariff"] = str(take("electricity.tariff"))
    load = mapping.get("load")
    if isinstance(load, Mapping):
        for key in ("hourly", "weekend"):
            row = load.get(key)
            if isinstance(row, list) and all(isinstance(x, int | float) and
                                             not isinstance(x, bool) for x in row):
                values[f"load_{key}"] = ", ".join(f"{x:.12g}" for x in row)
                take(f"load.{key}")
        if values["load_hourly"]:
            values["load"] = "custom"
    for key, field in _TYPED_FIELDS.items():
        if key in flat:
            values[field] = _quantity_text(take(key)) or ""
    for key, field in _FRACTION_FIELDS.items():
        v = take(key) if key in flat else None
        if isinstance(v, int | float) and not isinstance(v, bool):
            values[field] = f"{v * 100:.12g} %"  # a bare number on the form is a percentage
        elif v is not None:
            values[field] = _quantity_text(v) or ""
    for key, field in (("power.boundary", "boundary"), ("power.basis", "basis")):
        values[field] = str(take(key) or "")
    code = flat.get("money.currency")
    if isinstance(code, str) and code != "USD":  # the currency shown and its rate
        values["currency"] = str(take("money.currency"))
        for name, field in (("rate", "fx_rate"), ("date", "fx_date"), ("source", "fx_source")):
            key = f"money.fx.{code}.{name}"
            if key in flat:
                values[field] = _quantity_text(take(key)) or ""
    dropped = sorted(k for k in flat if k not in used and k != "description")
    return urlencode([(k, values[k]) for k in FIELDS]), dropped


# ---- reading ---------------------------------------------------------------------------------

def _revision(scenario_id: int, number: int | None):
    """(scenario row data, revision data) as plain dicts; :class:`saved.NotFound` (a 404 page
    in words) when absent."""
    scenario, rev = saved.revision(services(), scenario_id, number)  # NotFound: the 404 page
    return ({"id": scenario.id, "name": scenario.name, "latest": scenario.latest_revision},
            {"number": rev.number, "created_at": rev.created_at,
             "created_by": rev.created_by, "created_by_key_id": rev.created_by_key_id,
             "engine_version": rev.engine_version,
             "content_hash": rev.content_hash, "scenario": rev.scenario,
             "result": rev.result})


def _id(value: int) -> int:
    if not 1 <= value <= saved.MAX_ID:
        raise saved.NotFound(f"no scenario or revision {value}")
    return value


@blueprint.get("/saved")
def saved_list():
    need("read")
    q = request.args.get("q", "").strip()[:200]
    try:
        page = max(1, int(request.args.get("page", "1")))
    except ValueError:
        page = 1
    rows, total = saved.scenarios(services(), q=q or None, limit=PAGE,
                                  offset=(page - 1) * PAGE)
    items = [{"id": r.id, "name": r.name, "latest": r.latest_revision,
              "created_at": r.created_at} for r in rows]
    return render_template("web/saved.html", items=items, total=total, q=q, page=page,
                           pages=max(1, math.ceil(total / PAGE)))


@blueprint.get("/saved/<int:scenario_id>")
def saved_scenario(scenario_id: int):
    need("read")
    _id(scenario_id)
    scenario, history = saved.history(services(), scenario_id)
    revisions = []
    for rev in history:
        head = {f.name: f for f in figures(rev.result)}
        revisions.append({"number": rev.number, "created_at": rev.created_at,
                          "created_by": rev.created_by,
                          "created_by_key_id": rev.created_by_key_id,
                          "engine_version": rev.engine_version,
                          "cost": head.get("cost_per_mtok_total"),
                          "price": head.get("price_per_mtok_total")})
    info = {"id": scenario.id, "name": scenario.name, "latest": scenario.latest_revision,
            "created_at": scenario.created_at}
    return render_template("web/saved_scenario.html", scenario=info, revisions=revisions)


@blueprint.get("/saved/<int:scenario_id>/revisions/<int:number>")
def saved_revision(scenario_id: int, number: int):
    need("read")
    scenario, rev = _revision(_id(scenario_id), _id(number))
    query, dropped = price_query(rev["scenario"])
    return render_template("web/saved_revision.html", scenario=scenario, rev=rev,
                           figures=figures(rev["result"]), inputs=flatten(rev["scenario"]),
                           lines=disclosure_of(rev["result"]),
                           shown=shown, price_query=query, dropped=dropped,
                           breakdown=BREAKDOWN)


@blueprint.get("/saved/<int:scenario_id>/revisions/<int:number>.json")
@computes("GET", "/api/v1/scenarios/{scenario_id}/revisions/{number}")
def saved_revision_json(scenario_id: int, number: int):
    need("read")
    _, rev = saved.revision(services(), _id(scenario_id), _id(number))
    return Response(current_app.json.dumps(rev.to_json()), mimetype="application/json", headers={
        "Content-Disposition": f'attachment; filename="scenario-{scenario_id}-revision-'
                              f'{number}.json"'})


@blueprint.get("/saved/<int:scenario_id>/revisions/<int:number>/workbook")
@computes("GET", "/api/v1/scenarios/{scenario_id}/workbook")
def saved_revision_workbook(scenario_id: int, number: int):
    need("read")
    spec = app.ScenarioSpec(app.SavedRevision(_id(scenario_id), _id(number)))
    with services().sessions(write=False) as s:
        book = app.workbook(services().context(s), [spec])
    return Response(book.content, mimetype=XLSX, headers={
        "Content-Disposition": f'attachment; filename="{book.filename}"'})


@blueprint.get("/saved/<int:scenario_id>/diff")
def saved_diff(scenario_id: int):
    need("read")
    _id(scenario_id)
    try:
        a, b = int(request.args.get("a", "")), int(request.args.get("b", ""))
    except ValueError:
        return redirect(url_for("web.saved_scenario", scenario_id=scenario_id), code=303)
    scenario, old = _revision(scenario_id, _id(a))
    _, new = _revision(scenario_id, _id(b))
    return render_template("web/saved_diff.html", scenario=scenario, old=old, new=new,
                           inputs=input_changes(old["scenario"], new["scenario"]),
                           moved=figure_changes(old["result"], new["result"]))


# ---- saving ----------------------------------------------------------------------------------

def _scenario_choices() -> list[dict]:
    rows, _ = saved.scenarios(services(), limit=500)
    return [{"id": r.id, "name": r.name, "latest": r.latest_revision} for r in rows]


def _save_page(form, status: int = 200, *, errors: dict[str, str] | None = None,
               result: dict | None = None, target: str = "new", saved_name: str = "",
               moved: dict | None = None):
    """The save page: the scenario's inputs and price, a name or a scenario to revise.
    ``moved``: the scenario the save was refused for, having moved on since the page."""
    if result is None and form.valid:
        try:
            result = saved.priced(services(), form.mapping)
        except InputError as exc:
            form.add_errors(api_errors(exc), prefix="scenario.")
    return render_template("web/saved_new.html", form=form, errors=errors or {},
                           result=result, figures=figures(result) if result else [],
                           lines=disclosure_of(result) if result else None,
                           inputs=flatten(form.mapping), shown=shown,
                           choices=(choices := _scenario_choices()), target=target,
                           based_on=" ".join(f"{c['id']}:{c['latest']}" for c in choices),
                           saved_name=saved_name, moved=moved), status


def _based_on(text: str, scenario_id: int) -> int | None:
    """The revision of ``scenario_id`` the page showed when it was opened (the hidden field
    ``based_on``: "id:revision id:revision ..."); None when the page sent none."""
    for pair in text.split():
        sid, _, number = pair.partition(":")
        if sid == str(scenario_id) and number.isdigit():
            return int(number)
    return None


def api_errors(exc: InputError) -> InputError:
    """The error with the API's paths and words (a hint added where the API adds one)."""
    return InputError([(e["path"], e["message"]) for e in Problem.from_input(exc).errors])


@blueprint.get("/saved/new")
@computes("POST", "/api/v1/price")
def saved_new():
    """Save the scenario of a Price-page query (``/saved/new?<the Price page's query>``)."""
    need("read")
    form = scenario_form(request.args)
    return _save_page(form, target=request.args.get("target", "new"),
                      saved_name=form.values["name"])


@blueprint.post("/saved/new")
@computes("POST", "/api/v1/scenarios", access="write")
def saved_new_post():
    """Save the posted scenario as a new saved scenario (``target=new``, ``saved_name``) or
    as the next revision of scenario ``target``; priced first, nothing written if invalid."""
    form = scenario_form(request.form)
    target = request.form.get("target", "new").strip()
    saved_name = request.form.get("saved_name", "").strip()
    who = need("write")  # refused before anything is priced or written
    errors: dict[str, str] = {}
    scenario_id = None
    if target != "new":
        try:
            scenario_id = _id(int(target))
        except ValueError:
            errors["target"] = f"expected 'new' or a saved scenario's id, got {target!r}"
    else:
        if (wrong := scenario_name_error(saved_name)) is not None:
            errors["saved_name"] = wrong
    if errors or not form.valid:
        return _save_page(form, 422, errors=errors, target=target, saved_name=saved_name)
    based_on = None if scenario_id is None else \
        _based_on(request.form.get("based_on", ""), scenario_id)
    try:  # a revision: 404, or moved on, before pricing (and again under the lock)
        done = saved.save(services(), form.mapping, who,
                          name=saved_name if scenario_id is None else None,
                          scenario_id=scenario_id,
                          expect=None if based_on is None else saved.based_on(based_on))
    except saved.Stale as exc:  # saved by someone else since this page was opened
        moved = {"id": scenario_id, "based_on": based_on, "latest": exc.latest.number,
                 "by": exc.latest.created_by, "by_key_id": exc.latest.created_by_key_id}
        return _save_page(form, 409, target=target, saved_name=saved_name, moved=moved)
    except InputError as exc:
        form.add_errors(api_errors(exc), prefix="scenario.")
        return _save_page(form, 422, target=target, saved_name=saved_name)
    except saved.NotFound as exc:
        errors["target"] = str(exc)
        return _save_page(form, 422, errors=errors, target=target, saved_name=saved_name)
    where, created = (done.revision.scenario_id, done.revision.number), done.created
    return redirect(url_for("web.saved_revision", scenario_id=where[0], number=where[1],
                            saved=1 if created else "same"), code=303)


@blueprint.post("/saved/<int:scenario_id>/revisions/<int:number>/restore")
@computes("POST", "/api/v1/scenarios/{scenario_id}/revisions", access="write")
def saved_restore(scenario_id: int, number: int):
    """Save revision ``number``'s inputs again as the latest revision (priced today)."""
    who = need("write")
    try:
        done = saved.restore(services(), _id(scenario_id), _id(number), who)
    except InputError as exc:  # inputs that priced then but not with today's catalog: the
        # error page says why, in the API's words; nothing was saved
        raise api_errors(exc) from None
    where, created = done.revision.number, done.created
    return redirect(url_for("web.saved_revision", scenario_id=scenario_id, number=where,
                            saved=1 if created else "same"), code=303)
