"""The Price page (``/``) and the Compare page (``/compare``): parse the query string, call
the application layer with the service's context, render. Each page has its downloads: the
workbook (``.xlsx``), the JSON the API answers for the same request (``.json``) and that
request as a curl line.

Every figure is read from the application layer's result; nothing is priced here.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl

import numpy as np
from flask import current_app, render_template, request

from .. import app
from ..model.errors import InputError, UnreachablePoint
from ..model.evaluate import Evaluator
from ..model.profile import shape_of
from ..model.results import Result
from ..model.steps import MODEL
from ..model.units import UnitInputError, parse_quantity
from ..render.report import assumed_line, flexible_line
from ..resources import fixtures_dir
from ..store import repo
from ..store.models import MAX_ID
from ..store.repo import role_allows
from .charts import COLOURS, Segment, Series, frontier_chart, hourly_chart, stacked_bar
from .disclosure import disclosure_lines
from .downloads import curl_line, json_response, xlsx_response
from .guard import computes
from .scenario_form import (
    FIELDS,
    ScenarioForm,
    form_catalog,
    hour_span,
    restate_bounds,
    scenario_form,
)
from .session import need, signed_in
from .site import blueprint

__all__ = ["HEADLINE", "BREAKDOWN", "EFFICIENCY", "COMPARE_ROWS", "fixture_scenarios",
           "MAX_SYSTEMS", "DEFAULT_COMPARE", "Choice", "system_choice", "saved_titles"]

HEADLINE = ("price_per_mtok_total", "cost_per_mtok_total", "price_per_mtok_input",
            "price_per_mtok_output")
BREAKDOWN = (("cost_per_mtok_energy", "Energy"), ("cost_per_mtok_capex", "Capital"),
             ("cost_per_mtok_opex", "Operating"))
EFFICIENCY = ("throughput", "power_per_accelerator", "throughput_per_kw", "tokens_per_kwh",
              "joules_per_token", "bandwidth_per_watt", "cost_per_hour",
              "capex_per_accelerator", "emissions_per_mtok")
COMPARE_ROWS = ("price_per_mtok_total", "price_per_mtok_input", "price_per_mtok_output",
                "cost_per_mtok_total", "cost_per_mtok_energy", "cost_per_mtok_capex",
                "cost_per_mtok_opex", "throughput", "power_per_accelerator", "tokens_per_kwh",
                "joules_per_token", "cost_per_hour")
MIN_SYSTEMS, MAX_SYSTEMS = 2, 6
DEFAULT_COMPARE = ("fixture:curve-gpt-oss-120b-h100", "fixture:curve-gpt-oss-120b-b200",
                   "fixture:curve-gpt-oss-120b-mi300x")
FRONTIER_SAMPLES = 80  # points along each drawn frontier line


def _services():
    return current_app.extensions["costmodel"]


def unit_of(name: str) -> str:
    return MODEL.steps[name].unit


# ---- Price -------------------------------------------------------------------------------------

def _price(form: ScenarioForm, ctx) -> app.Priced | None:
    """The form's scenario priced, or None with the errors beside their fields."""
    if not form.valid:
        return None
    try:
        return app.price(ctx, app.ScenarioSpec(app.InlineScenario(form.mapping)))
    except InputError as exc:
        form.add_errors(exc)
        return None


def _flexible_share(form: ScenarioForm, args) -> float | None:
    """The Price page's what-if ``flexible_share`` (a share of the load moved to the cheapest
    hours; a bare number in percent), kept in ``form.values``; None when blank; an error
    beside the field when it is not a share from 0 to 100%."""
    typed = text = str(args.get("flexible_share", "") or "").strip()[:200]
    form.values["flexible_share"] = text
    if not text:
        return None
    try:
        float(text)
        text = f"{text} %"
    except ValueError:
        pass
    try:
        share = parse_quantity(text, "dimensionless")
    except UnitInputError as exc:  # said in percent, as the field is typed
        form.errors["flexible_share"] = restate_bounds(str(exc), typed, "%", 0.01)
        return None
    if not 0 <= share <= 1:
        form.errors["flexible_share"] = restate_bounds(
            f"must be at most 1, got {share:g}", typed, "%", 0.01)
        return None
    return share


def _what_if(priced: app.Priced, share: float, form: ScenarioForm) -> app.FlexibleShift | None:
    try:
        return app.shift_flexible(priced, share)
    except InputError as exc:
        for path, message in exc.errors:
            form.errors.setdefault(path if path == "flexible_share" else "", message)
        return None


def profile_view(result: Result) -> dict[str, Any] | None:
    """The chart and table of the energy rate (the year's average of each hour) and the load
    (fraction of the hour serving) by hour, from the declared calculation's profile steps;
    None when the scenario has neither a tariff nor a load shape.

    ``rows``: per hour of the day, ``(hour text, [(rate, load) per day type])`` [USD/kWh,
    fraction]; ``days``: the day types (weekdays and weekend days when the tariff or the
    load tells them apart)."""
    shape = shape_of(result.scenario)
    if shape is None:
        return None
    hours = shape[1]
    got = Evaluator(MODEL, outputs=["tariff_rate_by_hour", "load_by_hour"])(
        result.scenario.to_inputs())
    raw_rate = np.asarray(got["tariff_rate_by_hour"], dtype=float)
    rate = None if np.isnan(raw_rate).all() else \
        np.broadcast_to(raw_rate, (1, hours))[0].tolist()
    load = np.broadcast_to(np.asarray(got["load_by_hour"], dtype=float), (1, hours))[0].tolist()
    flat = None
    if rate is None:
        flat = (result.disclosure()["electricity"].get("price") or {}).get("value")
    shown_rate = rate if rate is not None else ([flat] * hours if flat is not None else None)
    days = ["Weekdays", "Weekend days"] if hours == 48 else ["Every day"]
    rows = []
    for h in range(24):
        rows.append((hour_span(h), [(shown_rate[h + 24 * d] if shown_rate else None,
                                     load[h + 24 * d]) for d in range(len(days))]))
    return {"chart": hourly_chart(rate, load, flat), "rows": rows, "days": days,
            "tariff": rate is not None, "shaped": result.scenario.load is not None}


def _tokens(n: float) -> str:
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.6g}"


def per_request_view(result: Result) -> dict[str, Any]:
    """The price and the cost of one request [USD] (the engine's ``price_per_request`` and
    ``cost_per_request``) with their denominator: the tokens of the counted kind in one
    request of the workload (``tokens_per_request``: ISL + OSL for mixed tokens, the OSL
    for output tokens, the ISL for input tokens), and that denominator in words."""
    s = result.scenario
    kind, isl, osl = s.operating_point.token_kind, s.workload.isl, s.workload.osl
    tokens = result.value("tokens_per_request")
    if kind == "mixed":
        words = (f"{_tokens(isl)} input + {_tokens(osl)} output tokens = "
                 f"{_tokens(tokens)} tokens")
    elif kind == "output":
        words = (f"{_tokens(osl)} output tokens (the figures per million are per output "
                 f"token: the {_tokens(isl)} input tokens are paid for in them)")
    else:
        words = (f"{_tokens(isl)} input tokens (the figures per million are per input token: "
                 f"the {_tokens(osl)} output tokens are paid for in them)")
    return {"price": result.value("price_per_request"),
            "cost": result.value("cost_per_request"), "tokens": tokens,
            "tokens_text": _tokens(tokens), "words": words, "model": s.workload.model}


def save_offer(session, args) -> dict[str, Any]:
    """What the Price page offers for saving the scenario on screen (saved through the Saved
    page's ``POST /saved/new``, the same use case and repository): ``can``: the signed-in
    key may write; ``who``: that key (None signed out); ``origin``: the saved scenario the
    page was opened from (``from_saved=<id>``), its name, latest revision and ``based_on``
    (``based_on=<n>``: its latest revision when the page was opened from it, which a save as
    its next revision expects); ``missing``: a ``from_saved`` id no scenario has."""
    who = signed_in()
    offer: dict[str, Any] = {"who": who, "can": who is not None and
                             role_allows(who.role, "editor"), "origin": None, "missing": None}
    raw = str(args.get("from_saved", "")).strip()
    if raw:
        if not (raw.isdigit() and 1 <= int(raw) <= MAX_ID):
            offer["missing"] = raw[:20]
            return offer
        try:
            row = repo.scenario_get(session, int(raw))
        except repo.NotFound:
            offer["missing"] = raw
            return offer
        based = str(args.get("based_on", "")).strip()
        based_on = int(based) if based.isdigit() and 1 <= int(based) <= row.latest_revision \
            else row.latest_revision
        offer["origin"] = {"id": row.id, "name": row.name, "latest": row.latest_revision,
                           "based_on": based_on}
    return offer


@blueprint.get("/")
@computes("POST", "/api/v1/price")
def price_page():
    need("read")
    form = scenario_form(request.args)
    share = _flexible_share(form, request.args)
    with _services().sessions(write=False) as session:
        ctx = _services().context(session)
        catalog = form_catalog(ctx)
        form.check_tariff(catalog)
        priced = _price(form, ctx)
        shift = _what_if(priced, share, form) if priced is not None and share is not None \
            else None
        save = save_offer(session, request.args)
    if share is not None and shift is None:
        priced = None  # a what-if that cannot be answered: nothing is shown as priced
    view = None
    if priced is not None:
        r = priced.result
        view = {
            "profile": profile_view(r),
            "per_request": per_request_view(r),
            "what_if": flexible_line(shift) if shift is not None else None,
            "result": r,
            "breakdown": stacked_bar([Segment(text, r.value(n) or 0.0, COLOURS[i])
                                      for i, (n, text) in enumerate(BREAKDOWN)],
                                     unit_of("cost_per_mtok_total"), "cost_per_mtok_total"),
            "frontier": frontier_chart(_series([priced], [r.name]),
                                       priced.curve.selection.interactivity, "read here")
            if priced.curve is not None else None,
            "disclosure": disclosure_lines(r),
            "sources": sorted(r.provenance.items()),
            "assumed": assumed_line(r),
        }
    status = 200 if priced is not None else 422
    return render_template("web/price.html", form=form, catalog=catalog, view=view,
                           headline=HEADLINE, breakdown=BREAKDOWN, efficiency=EFFICIENCY,
                           unit_of=unit_of, save=save, fields=FIELDS,
                           curl=curl_line("/api/v1/price", form.price_request())), status


def _priced_or_page(form: ScenarioForm):
    with _services().sessions(write=False) as session:
        ctx = _services().context(session)
        priced = _price(form, ctx)
        catalog = form_catalog(ctx) if priced is None else None
    if priced is None:  # nothing computed from an invalid form: the page says why
        return None, (render_template("web/price.html", form=form, catalog=catalog, view=None,
                                      headline=HEADLINE, breakdown=BREAKDOWN,
                                      efficiency=EFFICIENCY, unit_of=unit_of,
                                      curl=curl_line("/api/v1/price", form.price_request())),
                      422)
    return priced, None


@blueprint.get("/price.xlsx")
@computes("POST", "/api/v1/workbook")
def price_workbook():
    need("read")
    priced, page = _priced_or_page(scenario_form(request.args))
    return page or xlsx_response(app.render_workbook([priced]))


@blueprint.get("/price.json")
@computes("POST", "/api/v1/price")
def price_json():
    need("read")
    priced, page = _priced_or_page(scenario_form(request.args))
    return page or json_response(priced.result.to_json(), "price.json")


# ---- Compare -----------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def fixture_scenarios() -> dict[str, tuple[str, dict[str, Any]]]:
    """The example scenarios shipped in fixtures/scenarios: ``fixture:<name>`` -> (title,
    mapping); a curve file named there is found by its curve id in the service's curves."""
    root = fixtures_dir() / "scenarios"
    out = {}
    for path in sorted(root.rglob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        stem = path.relative_to(root).with_suffix("").as_posix()
        out[f"fixture:{stem}"] = (str(data.get("name") or stem), data)
    return out


@dataclass(frozen=True)
class Choice:
    """One system picked for the comparison: the spec to price and the API body's entry."""
    value: str
    title: str
    spec: app.ScenarioSpec
    body: dict[str, Any]


def saved_titles(session) -> dict[int, str]:
    """The saved scenarios a system slot offers: id -> title (the latest hundred)."""
    rows, _ = repo.scenario_list(session, q=None, limit=100, offset=0)
    return {r.id: f"saved: {r.name} (revision {r.latest_revision})" for r in rows}


def system_choice(value: str, index: int, saved: dict[int, str]) -> Choice:
    """A system slot's value (``fixture:<name>``, ``saved:<id>`` or ``form:<price page
    query>``) as a spec; InputError at ``systems[i]`` when it names nothing."""
    subject = f"scenarios[{index}]."
    kind, _, ref = value.partition(":")
    if kind == "fixture" and value in fixture_scenarios():
        title, data = fixture_scenarios()[value]
        return Choice(value, title, app.ScenarioSpec(app.InlineScenario(data), (), subject),
                      {"scenario": data})
    if kind == "saved" and ref.isdigit() and int(ref) in saved:
        sid = int(ref)
        return Choice(value, saved[sid], app.ScenarioSpec(app.SavedRevision(sid), (), subject),
                      {"scenario_id": sid})
    if kind == "form":
        form = scenario_form(dict(parse_qsl(ref, keep_blank_values=True)))
        if form.errors:
            field, message = next(iter(form.errors.items()))
            raise InputError([(f"systems[{index}]", f"{field}: {message}")])
        title = form.values["name"] or f"{form.values['accelerator']} (from the Price page)"
        return Choice(value, title, app.ScenarioSpec(app.InlineScenario(form.mapping), (),
                                                     subject), {"scenario": form.mapping})
    raise InputError([(f"systems[{index}]", f"no scenario {value!r}: pick one from the list")])


def _reading(how: str, typed: str) -> tuple[app.Reading, dict[str, Any], str | None]:
    """(reading, the API body's keys for it, error beside the interactivity field)."""
    if how == "matched":
        return app.MATCHED, {"matched": True}, None
    if how == "named":
        try:
            text = typed.strip()
            try:
                float(text)
                text = f"{text} token/s/user"
            except ValueError:
                pass
            value = parse_quantity(text, "token/s/user", allow_zero=False)
        except UnitInputError as exc:
            return app.OWN_POINT, {}, str(exc)
        return app.AtInteractivity(value), {"at_interactivity": text}, None
    return app.OWN_POINT, {}, None


def _series(systems: list[app.Priced], titles: list[str]) -> list[Series]:
    out = []
    for i, (p, title) in enumerate(zip(systems, titles, strict=True)):
        s = Series(title, colour=COLOURS[i % len(COLOURS)])
        reading = p.curve
        if reading is not None:
            sel = reading.selection
            frontier = reading.curve.frontier(reading.kind, sel.percentile, sel.ttft_max)
            s.points = list(zip(frontier.interactivity.tolist(), frontier.throughput.tolist(),
                                strict=True))
            if len(frontier.interactivity) >= 2:
                xs = np.linspace(frontier.interactivity[0], frontier.interactivity[-1],
                                 FRONTIER_SAMPLES)
                ys = frontier.read_many(xs)[2]
                s.line = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)
                          if math.isfinite(y)]
            if sel.interactivity is not None:
                s.chosen = (sel.interactivity, sel.throughput)
        else:
            op = p.result.scenario.operating_point
            inter, thr = op.effective_interactivity, p.result.value("throughput")
            if inter is not None and thr is not None:
                s.chosen = (inter, thr)
        out.append(s)
    return out


def _unreachable(ctx, choices: list[Choice], reading: app.Reading
                 ) -> tuple[list[dict[str, Any]], app.Compared | None]:
    """For a named interactivity some curve cannot reach: each system that cannot, with its
    best reachable interactivity [token/s/user] and the reason in words; and the systems at
    their own points (for the frontiers chart), when they price there."""
    out = []
    for c in choices:
        try:
            app.compare(ctx, [c.spec], reading)
        except UnreachablePoint as exc:
            out.append({"title": c.title, "best": exc.best, "message": exc.errors[0][1]})
        except InputError:
            continue  # said by the comparison's own error
    try:
        own = app.compare(ctx, [c.spec for c in choices], app.OWN_POINT)
    except InputError:
        own = None
    return out, own


def _compare_args() -> dict[str, Any]:
    values = request.args.getlist("sys")
    if not values and "at" not in request.args:
        values = list(DEFAULT_COMPARE)
        how = "matched"
    else:
        how = request.args.get("at", "own")
    values = [v for v in values if v][:MAX_SYSTEMS]
    return {"values": values, "how": how if how in ("own", "matched", "named") else "own",
            "interactivity": request.args.get("interactivity", "").strip()[:200]}


def _compare(args: dict[str, Any]):
    """Everything the Compare page and its downloads need."""
    errors: dict[str, str] = {}
    with _services().sessions(write=False) as session:
        ctx = _services().context(session)
        saved = saved_titles(session)
        choices: list[Choice] = []
        for i, v in enumerate(args["values"]):
            try:
                choices.append(system_choice(v, i, saved))
            except InputError as exc:
                errors[f"sys{i}"] = exc.errors[0][1]
        if len(args["values"]) < MIN_SYSTEMS:
            errors["systems"] = f"pick {MIN_SYSTEMS} to {MAX_SYSTEMS} systems"
        reading, reading_body, bad = _reading(args["how"], args["interactivity"])
        if bad:
            errors["interactivity"] = bad
        compared = unreachable = own = None
        if not errors:
            try:
                compared = app.compare(ctx, [c.spec for c in choices], reading)
            except UnreachablePoint:
                unreachable, own = _unreachable(ctx, choices, reading)
            except InputError as exc:
                where = exc.subject or ""
                index = next((i for i, c in enumerate(choices) if c.spec.subject == where), None)
                message = "; ".join(f"{p}: {m}" if p else m for p, m in exc.errors)
                errors[f"sys{index}" if index is not None else "systems"] = message
    body = {"scenarios": [c.body for c in choices], **reading_body}
    return {"choices": choices, "compared": compared, "unreachable": unreachable,
            "own": own, "errors": errors, "saved": saved, "body": body}


@blueprint.get("/compare")
@computes("POST", "/api/v1/compare")
def compare_page():
    need("read")
    args = _compare_args()
    out = _compare(args)
    compared: app.Compared | None = out["compared"]
    chart = None
    target = None
    if compared is not None:
        titles = [c.title for c in out["choices"]]
        if args["how"] != "own":
            first = compared.systems[0].curve
            target = first.selection.interactivity if first is not None else None
        label = ("matched" if args["how"] == "matched" else "target") if target else ""
        chart = frontier_chart(_series(compared.systems, titles), target, label)
    elif out["own"] is not None:  # unreachable: the frontiers end before the target
        own = out["own"]
        target = _reading(args["how"], args["interactivity"])[0]
        chart = frontier_chart(_series(own.systems, [c.title for c in out["choices"]]),
                               target.value, "target")
        target = None
    slots = args["values"] + [""] * (MAX_SYSTEMS - len(args["values"]))
    status = 200 if compared is not None else (200 if out["unreachable"] else 422)
    return render_template(
        "web/compare.html", args=args, slots=slots, fixtures=fixture_scenarios(),
        saved=out["saved"], errors=out["errors"], compared=compared, chart=chart,
        unreachable=out["unreachable"], choices=out["choices"], rows=COMPARE_ROWS,
        unit_of=unit_of, target=target, colours=COLOURS, query=request.query_string.decode(),
        curl=curl_line("/api/v1/compare", out["body"])), status


def _compared_or_page():
    args = _compare_args()
    out = _compare(args)
    if out["compared"] is None:
        return None, compare_page()
    return out, None


@blueprint.get("/compare.xlsx")
@computes("POST", "/api/v1/workbook")
def compare_workbook():
    need("read")
    out, page = _compared_or_page()
    return page or xlsx_response(app.render_workbook(out["compared"].systems))


@blueprint.get("/compare.json")
@computes("POST", "/api/v1/compare")
def compare_json():
    need("read")
    out, page = _compared_or_page()
    return page or json_response(out["compared"].comparison.to_json(), "compare.json")
